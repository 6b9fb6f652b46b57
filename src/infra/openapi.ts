// The OpenAPI 3.0.3 description of the Infra API, made from the command definitions so it cannot
// drift from what the server does.
import { splitParameters } from '../platform/openapi.js';
import type { Command } from './command.js';

export const API_VERSION = '2.10';

const ENVELOPE = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'OK on success; ERROR, FAULT (bad parameters), ACCESS_DENIED or RATE_LIMIT on failure' },
    message: { type: 'string' },
    data: { description: 'command-specific result' },
    matches: { type: 'integer', description: 'total count of a list, whatever the window' },
    error: { type: 'object', additionalProperties: { type: 'string' }, description: 'per-parameter problems of a FAULT' },
    retryAfter: { type: 'integer', description: 'seconds to wait after a RATE_LIMIT (also the Retry-After header)' },
  },
};

function operationId(method: string, cmd: string): string {
  return `${method.toLowerCase()}_${cmd.replace(/\./g, '_')}`;
}

export function openApiDocument(commands: Command[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const c of commands) {
    const family = c.cmd.split('.')[0];
    tags.add(family);
    const method = c.rest.method.toLowerCase();
    // What a client may send: a command with a normalise step accepts more shapes than its handler
    // sees. OpenAPI 3.0: no `const` or type null, and a union of literals is an enum (platform/openapi.ts).
    const split = splitParameters(c.normalise?.input ?? c.params, c.rest.path, '3.0');
    const parameters: Record<string, unknown>[] = split.inPath.map((p) => ({ name: p.name, in: 'path', required: true, schema: p.schema }));
    const rest = Object.fromEntries(split.rest.map((p) => [p.name, p.schema]));
    const required = split.rest.filter((p) => p.required).map((p) => p.name);
    const op: Record<string, unknown> = {
      operationId: operationId(method, c.cmd),
      summary: c.summary,
      description: `${c.summary}. Command: \`${c.cmd}\`.`,
      tags: [family],
      'x-vendor-cmd': c.cmd,
      parameters,
      responses: { '200': { description: 'envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } } },
    };
    if (c.access === 'public') op.security = [];
    if (method === 'get' || method === 'delete') {
      for (const [name, s] of Object.entries(rest)) parameters.push({ name, in: 'query', required: required.includes(name), schema: s });
    } else {
      op.requestBody = {
        required: required.length > 0,
        content: { 'application/json': { schema: { type: 'object', properties: rest, ...(required.length ? { required } : {}) } } },
      };
    }
    (paths[c.rest.path] ??= {})[method] = op;
  }
  tags.add('cmd');
  paths['/json.php'] = {
    post: {
      operationId: 'post_cmd',
      summary: 'Command style: run any command',
      description:
        "The body carries `cmd` (a command name such as `apiuser.getall`) and that command's parameters. Answers put the result under the command's resource-named top-level keys and `data`.",
      tags: ['cmd'],
      'x-vendor-cmd': 'cmd',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/CommandPayload' } } },
      },
      responses: { '200': { description: 'envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } } },
    },
  };
  return {
    openapi: '3.0.3',
    info: { title: 'Keel Infrastructure API', version: API_VERSION, description: 'Servers, networks, storage, DNS, billing, accounts and security, by command or REST.' },
    servers: [{ url: `/api/rest/v${API_VERSION}` }],
    tags: [...tags].sort().map((name) => ({ name })),
    security: [{ bearerAuth: [] }, { basicApiKey: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From session.login (jwt=1) or POST /customer/jsonwebtoken; also accepted as the JWTSESSIONID cookie' },
        basicApiKey: { type: 'http', scheme: 'basic', description: 'API key uuid as user name and secret as password; or APIUUID/APISECRET in the JSON body' },
      },
      schemas: {
        Envelope: ENVELOPE,
        CommandPayload: {
          type: 'object',
          required: ['cmd'],
          properties: { cmd: { type: 'string', enum: commands.map((c) => c.cmd).sort() } },
          additionalProperties: true,
        },
      },
    },
  };
}

// The OpenAPI 3.1 description of the Chat API (Zulip's REST API v1 as Keel serves it), made from the
// endpoint definitions so it cannot drift from what the server accepts; GET /api/v1/openapi.json serves it.
import { splitParameters, type DeclaredParameter, type JsonSchema } from '../platform/openapi.js';
import { openApiMarkdown } from '../platform/openapi-markdown.js';
import type { Endpoint } from './endpoint.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from './version.js';

/** A group of endpoints (one file of src/chat/endpoints), which becomes a tag. */
export interface EndpointArea {
  name: string;
  description: string;
  endpoints: readonly Endpoint[];
}

const DESCRIPTION = [
  `Keel's Chat service speaks Zulip's REST API (feature level ${ZULIP_FEATURE_LEVEL}), so unmodified Zulip clients work against it.`,
  '',
  "Parameters are sent as Zulip's clients send them: in the query of a GET, and as form fields (`application/x-www-form-urlencoded`, or `multipart/form-data`) of any other request; the query is read for every method too. " +
    'A parameter declared as a string is taken as sent; every other parameter is JSON-encoded (`true`, `[9]`, `{"new": 5}`), which this document marks with `application/json` ' +
    '(`content` of a query parameter, `encoding` of a form field). A parameter whose type admits a string also takes text that is not JSON as that string.',
  '',
  "Every request may also send `client`, the client's name (otherwise the User-Agent names it). Parameters an endpoint does not declare are ignored and listed in the answer's `ignored_parameters_unsupported`.",
  '',
  'Answers are JSON: `{"result": "success", "msg": "", ...}`, or `{"result": "error", "msg": "...", "code": "..."}` with a 4xx status.',
].join('\n');

const JSON_SUCCESS: JsonSchema = {
  type: 'object',
  required: ['result', 'msg'],
  properties: {
    result: { const: 'success' },
    msg: { type: 'string' },
    ignored_parameters_unsupported: { type: 'array', items: { type: 'string' }, description: 'The parameters sent that this endpoint does not take.' },
  },
  additionalProperties: true,
  description: 'A successful answer: the fields of each endpoint beside `result` and `msg`.',
};

const JSON_ERROR: JsonSchema = {
  type: 'object',
  required: ['result', 'msg', 'code'],
  properties: {
    result: { const: 'error' },
    msg: { type: 'string', description: 'What went wrong, in words.' },
    code: { type: 'string', description: 'BAD_REQUEST, REQUEST_VARIABLE_MISSING, UNAUTHORIZED, RATE_LIMIT_HIT, ...' },
    var_name: { type: 'string', description: 'The parameter at fault, for a bad or missing one.' },
  },
  additionalProperties: true,
  description: 'An error answer.',
};

/** Whether the wire form of a value of this schema is its text as given (a string), not JSON. */
const sentAsText = (s: JsonSchema) => s.type === 'string';

/** Booleans and numbers: a query parameter's plain form is the same text JSON writes. */
const primitive = (s: JsonSchema) => s.type === 'boolean' || s.type === 'integer' || s.type === 'number';

function admitsString(s: JsonSchema): boolean {
  return s.type === 'string' || (Array.isArray(s.anyOf) && s.anyOf.some((b) => admitsString(b as JsonSchema)));
}

/** The schema as documented: a union that admits a string says that text which is not JSON is taken as it is. */
function documented(p: DeclaredParameter): JsonSchema {
  if (sentAsText(p.schema) || !admitsString(p.schema)) return p.schema;
  const note = 'Text that is not JSON is taken as a string.';
  return { ...p.schema, description: p.schema.description ? `${p.schema.description} ${note}` : note };
}

/** A decoder fills in a parameter with a default, so only one without is required on the wire. */
const wireRequired = (p: DeclaredParameter) => p.required && !p.hasDefault;

function queryParameter(p: DeclaredParameter): JsonSchema {
  const schema = documented(p);
  const { description, ...rest } = schema;
  const out: JsonSchema = { name: p.name, in: 'query', required: wireRequired(p) };
  if (typeof description === 'string') out.description = description;
  if (sentAsText(p.schema) || primitive(p.schema)) out.schema = rest;
  else out.content = { 'application/json': { schema: rest } };
  return out;
}

function formBody(params: DeclaredParameter[]): JsonSchema | undefined {
  if (params.length === 0) return undefined;
  const required = params.filter(wireRequired).map((p) => p.name);
  const encoding: Record<string, JsonSchema> = {};
  for (const p of params) if (!sentAsText(p.schema)) encoding[p.name] = { contentType: 'application/json' };
  const schema: JsonSchema = { type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, documented(p)])) };
  if (required.length) schema.required = required;
  const media: JsonSchema = { schema };
  if (Object.keys(encoding).length) media.encoding = encoding;
  return { required: required.length > 0, content: { 'application/x-www-form-urlencoded': media } };
}

/** An operation id from the summary ("Get a user" is get-a-user): unique, since summaries are. */
export function operationId(e: Endpoint): string {
  return e.summary
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const AUTH_NOTE: Record<Endpoint['auth'], string> = {
  none: 'No authentication.',
  user: "Authentication: HTTP Basic with the user's email and API key.",
  spectator: "Authentication: HTTP Basic with the user's email and API key, or none at all (a spectator of a realm open to them).",
};

function operation(e: Endpoint, tag: string): JsonSchema {
  const { inPath, rest } = splitParameters(e.params, e.path, '3.1');
  const parameters: JsonSchema[] = inPath.map((p) => {
    const out: JsonSchema = { name: p.name, in: 'path', required: true, schema: p.schema };
    if (typeof p.schema.description === 'string') out.description = p.schema.description;
    return out;
  });
  const op: JsonSchema = { operationId: operationId(e), summary: e.summary, description: AUTH_NOTE[e.auth], tags: [tag] };
  if (e.auth === 'none') op.security = [];
  if (e.auth === 'spectator') op.security = [{ basicAuth: [] }, {}];
  if (e.method === 'GET') parameters.push(...rest.map(queryParameter));
  if (parameters.length) op.parameters = parameters;
  const body = e.method === 'GET' ? undefined : formBody(rest);
  if (body) op.requestBody = body;
  const success = e.document
    ? { description: 'The document itself, as the whole body.', content: { 'application/json': { schema: { type: 'object' } } } }
    : { description: 'Success.', content: { 'application/json': { schema: { $ref: '#/components/schemas/JsonSuccess' } } } };
  op.responses = {
    '200': success,
    default: { description: 'An error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/JsonError' } } } },
  };
  return op;
}

/** The whole document; throws if two definitions share an operation id (their summaries). */
export function chatOpenApiDocument(areas: readonly EndpointArea[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const ids = new Set<string>();
  for (const area of areas) {
    for (const e of area.endpoints) {
      const op = operation(e, area.name);
      if (ids.has(op.operationId as string)) throw new Error(`two chat endpoints have the summary "${e.summary}"`);
      ids.add(op.operationId as string);
      (paths[e.path] ??= {})[e.method.toLowerCase()] = op;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Keel Chat API', version: ZULIP_VERSION, description: DESCRIPTION, 'x-zulip-feature-level': ZULIP_FEATURE_LEVEL },
    servers: [{ url: '/api/v1' }],
    tags: areas.map((a) => ({ name: a.name, description: a.description })),
    security: [{ basicAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        basicAuth: { type: 'http', scheme: 'basic', description: "The user's email address as user name and API key as password (from POST /fetch_api_key, or the zuliprc file)." },
      },
      schemas: { JsonSuccess: JSON_SUCCESS, JsonError: JSON_ERROR },
    },
  };
}

/** docs/chat-api.md: the document as Markdown (scripts/docs.ts writes it; a test keeps the file current). */
export function chatApiMarkdown(doc: JsonSchema): string {
  return openApiMarkdown(
    doc,
    [
      '<!-- Generated by `npm run docs` from the endpoint definitions (src/chat/endpoints/, through src/chat/openapi.ts). Do not edit: a test fails when this file differs from what they produce. -->',
      '',
      'The same description, as an OpenAPI 3.1 document, is served by every Keel at `GET /api/v1/openapi.json` (no authentication).',
    ].join('\n'),
  );
}

// The Infra HTTP listener: reads a request in any of the shapes clients send, finds its command,
// authenticates, checks permission and parameters, runs it and writes the envelope.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Call, Command, InfraServices, Principal } from '../command.js';
import { accessDenied, InfraError } from '../errors.js';
import { checkParams } from '../params.js';
import { allows } from '../permissions.js';
import { PrincipalCache } from '../principal-cache.js';
import { openApiDocument } from '../openapi.js';
import { errorBody, okBody } from './envelope.js';
import { takeCredentials } from './credentials.js';
import { Router } from './router.js';
import { answerWhenDurable } from '../../platform/http/durable.js';

const BODY_LIMIT = 10 * 1024 * 1024;

/** Query parameters as a plain object; a repeated key (or key[]) becomes a list. */
function queryParams(search: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of search) {
    const list = rawKey.endsWith('[]');
    const key = list ? rawKey.slice(0, -2) : rawKey;
    const prev = out[key];
    if (prev === undefined) out[key] = list ? [value] : value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** The body as a JSON object, whatever the Content-Type says; empty means {}. */
function bodyParams(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  const text = String(raw).trim();
  if (text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InfraError('ERROR', `Malformed JSON in the request body: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InfraError('ERROR', 'Malformed request body: expected a JSON object');
  }
  return value as Record<string, unknown>;
}

/** Fastify leaves a GET body unread; clients may still send one (Go sends {}), so read it here. */
function readUnparsedBody(req: FastifyRequest): Promise<string | undefined> {
  const h = req.headers;
  if (req.body !== undefined || (!h['content-length'] && !h['transfer-encoding']) || h['content-length'] === '0') {
    return Promise.resolve(req.body as string | undefined);
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.raw.on('data', (c: Buffer) => {
      size += c.length;
      if (size > BODY_LIMIT) reject(new InfraError('ERROR', 'Request body too large'));
      else chunks.push(c);
    });
    req.raw.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.raw.on('error', reject);
  });
}

export function createInfraServer(services: InfraServices, commands: Command[]): FastifyInstance {
  const router = new Router(commands);
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT, keepAliveTimeout: 65_000, return503OnClosing: true });
  answerWhenDurable(app, () => services.db.synced());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  let openapi: string | undefined;
  const principals = new PrincipalCache(services.db, services.clock);

  async function authenticate(command: Command, creds: ReturnType<typeof takeCredentials>): Promise<Principal | undefined> {
    const access = command.access ?? 'permission';
    if (access === 'public') return undefined;
    let principal: Principal | null = null;
    if (creds.kind === 'apikey') principal = await principals.forApiKey(creds.uuid, creds.secret);
    else if (creds.kind === 'jwt') principal = await principals.forJwt(services.jwt, creds.token);
    if (!principal) throw accessDenied();
    if (access === 'permission' && !allows(principal.permissions, command.cmd)) {
      throw accessDenied(`this API user lacks the permission ${command.cmd}`);
    }
    return principal;
  }

  async function handle(req: FastifyRequest, reply: FastifyReply): Promise<string> {
    const url = new URL(req.url, 'http://x');
    const apiPath = Router.apiPath(url.pathname);
    let style: 'cmd' | 'rest' = 'rest';
    try {
      if (apiPath === null) throw new InfraError('ERROR', `Unknown path ${url.pathname}: the API lives under /api/rest/v2.10/`);
      const target = router.find(req.method, apiPath);
      if (target.kind === 'openapi') {
        openapi ??= JSON.stringify(openApiDocument(commands));
        return openapi;
      }
      if (target.kind === 'none') throw new InfraError('ERROR', `Unknown REST path ${req.method} ${apiPath}`);
      if (target.kind === 'wrong-method') {
        throw new InfraError('ERROR', `Method ${req.method} is not allowed on ${apiPath}; use ${target.allowed.join(' or ')}`);
      }
      const params = { ...queryParams(url.searchParams), ...bodyParams(await readUnparsedBody(req)) };
      let command: Command;
      if (target.kind === 'cmd') {
        style = 'cmd';
        const name = params.cmd;
        delete params.cmd;
        if (name === undefined || name === '') throw new InfraError('FAULT', 'Missing parameter cmd', { cmd: 'is required' });
        if (typeof name !== 'string') throw new InfraError('FAULT', 'Invalid parameter cmd: must be a string', { cmd: 'must be a string' });
        const found = router.byName.get(name);
        if (!found) throw new InfraError('ERROR', `Unknown command: ${name}`);
        command = found;
      } else {
        command = target.command;
        Object.assign(params, target.pathParams);
      }
      const creds = takeCredentials(req.headers as { authorization?: string; cookie?: string }, params);
      const principal = await authenticate(command, creds);
      const checked = checkParams(command.params, params) as Record<string, unknown>;
      const call: Call = {
        services,
        principal,
        style,
        setCookie(name, value, maxAge) {
          reply.header('set-cookie', `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax`);
        },
      };
      return JSON.stringify(okBody(await command.handler(call, checked), style));
    } catch (err) {
      if (err instanceof InfraError) return JSON.stringify(errorBody(err));
      services.log.error('infra request failed', { method: req.method, path: url.pathname, error: (err as Error).stack });
      return JSON.stringify({ code: 'FAULT', message: 'Internal server error' });
    }
  }

  app.route({
    method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'],
    url: '/*',
    handler: async (req, reply) => {
      const body = await handle(req, reply);
      reply.code(200).header('content-type', 'application/json; charset=utf-8');
      return body;
    },
  });
  return app;
}

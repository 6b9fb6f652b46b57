// The Infra HTTP listener, on the shared core (platform/http/): Infra's dialect only. It reads a
// request in any of the shapes clients send (json.php or REST, the body as JSON whatever the
// Content-Type, on any method, merged over the query), finds its command, authenticates, checks
// permission and parameters, runs it and writes the envelope (HTTP 200 with code and message).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Call, Command, InfraServices, Principal } from '../command.js';
import { envelopeText, InfraError, infraErrors, infraProblems, RateLimited } from '../errors.js';
import { checkParams } from '../params.js';
import { allows } from '../permissions.js';
import { PrincipalCache } from '../principal-cache.js';
import { openApiDocument } from '../openapi.js';
import { errorBody, okText } from './envelope.js';
import { takeCredentials } from './credentials.js';
import { Router } from './router.js';
import { closeAfterRefusal, type ConnectionCap, type HttpTimeouts } from '../../platform/http/connections.js';
import { BodyTooLarge, ClientGone, bodyLimit, hasBody, readBody } from '../../platform/http/body.js';
import { Listener, type HttpService } from '../../platform/http/listener.js';
import { splitTarget } from '../../platform/http/target.js';

/** The body limit of a request whose headers carry valid credentials; OPEN_BODY_LIMIT (platform/http) before that. */
export const BODY_LIMIT = 10 * 1024 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
const INTERNAL_ERROR = envelopeText(infraErrors.internalError());

/** What createInfraServer gives: the shared listener's interface. */
export type InfraServer = HttpService;

/** Query parameters as a plain object; a repeated key (or key[]) becomes a list. */
function queryParams(query: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // URLSearchParams decodes leniently (a malformed escape stays as written) and reads + as a space.
  for (const [rawKey, value] of new URLSearchParams(query)) {
    const list = rawKey.endsWith('[]');
    const key = list ? rawKey.slice(0, -2) : rawKey;
    const prev = out[key];
    if (prev === undefined) out[key] = list ? [value] : value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** The body as a JSON object, whatever the Content-Type says; empty means {}. */
function bodyParams(raw: string): Record<string, unknown> {
  const text = raw.trim();
  if (text === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw infraErrors.malformedJson({ reason: (err as Error).message });
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw infraErrors.bodyNotObject();
  }
  return value as Record<string, unknown>;
}

/** What a client is told of a body over its limit. */
function tooLarge(limit: number): InfraError {
  return limit < BODY_LIMIT ? infraErrors.bodyTooLargeOpen({ limit, credentialedLimit: BODY_LIMIT }) : infraErrors.bodyTooLarge({ limit });
}

/** Whether a principal was found for header credentials (the body limit: platform/http/body.ts). */
const found = (principal: Principal | null): boolean => principal !== null;

export interface InfraHttpOptions {
  /** Shared with the other listeners of the process; by default one of its own, from the open-files limit. */
  cap?: ConnectionCap;
  timeouts?: Partial<HttpTimeouts>;
}

export function createInfraServer(services: InfraServices, commands: Command[], options: InfraHttpOptions = {}): InfraServer {
  const router = new Router(commands);
  const principals = new PrincipalCache(services.db, services.clock);
  let openapi: string | undefined;

  /**
   * Whether the headers carry valid credentials (HTTP Basic, a Bearer JWT or the session cookie):
   * asked only for a body announced over OPEN_BODY_LIMIT or not announced (chunked).
   */
  function headerCredentialsValid(req: IncomingMessage): boolean | Promise<boolean> {
    const creds = takeCredentials(req.headers as { authorization?: string; cookie?: string }, {});
    if (creds.kind === 'apikey') {
      const principal = principals.forApiKey(creds.uuid, creds.secret);
      return principal instanceof Promise ? principal.then(found) : found(principal);
    }
    if (creds.kind === 'jwt') return principals.forJwt(services.jwt, creds.token).then(found);
    return false;
  }

  /** Who is calling: answered at once for a cached API key, which is nearly every request. */
  function authenticate(command: Command, creds: ReturnType<typeof takeCredentials>): Principal | undefined | Promise<Principal> {
    const access = command.access ?? 'permission';
    if (access === 'public') return undefined;
    if (creds.kind === 'apikey') {
      const found = principals.forApiKey(creds.uuid, creds.secret);
      return found instanceof Promise ? found.then((p) => admit(command, access, p)) : admit(command, access, found);
    }
    if (creds.kind === 'jwt') return principals.forJwt(services.jwt, creds.token).then((p) => admit(command, access, p));
    throw infraErrors.accessDenied();
  }

  /** The principal, if it may call the command: any valid one, or one whose permissions name it. */
  function admit(command: Command, access: 'authenticated' | 'permission', principal: Principal | null): Principal {
    if (!principal) throw infraErrors.accessDenied();
    if (access === 'permission' && !allows(principal.permissions, command.cmd)) {
      throw infraErrors.permissionMissing({ cmd: command.cmd });
    }
    return principal;
  }

  /** The answer's JSON text; `setCookie` is called for session.login. */
  async function answer(req: IncomingMessage, path: string, query: string, setCookie: Call['setCookie']): Promise<string> {
    const method = req.method ?? 'GET';
    const apiPath = Router.apiPath(path);
    if (apiPath === null) throw infraErrors.unknownPath({ path });
    const target = router.find(method, apiPath);
    if (target.kind === 'openapi') return (openapi ??= JSON.stringify(openApiDocument(commands)));
    if (target.kind === 'none') throw infraErrors.unknownRestPath({ method, path: apiPath });
    if (target.kind === 'wrong-method') {
      throw infraErrors.methodNotAllowed({ method, path: apiPath, allowed: target.allowed.join(' or ') });
    }
    let body: Record<string, unknown> = {};
    if (hasBody(req)) {
      const limit = bodyLimit(req, BODY_LIMIT, () => headerCredentialsValid(req));
      body = bodyParams((await readBody(req, limit instanceof Promise ? await limit : limit)).toString('utf8'));
    }
    // The parsed body is this request's own object, so without a query it is used as it is. Spread,
    // not Object.assign: a "__proto__" key in the body must stay a plain key.
    const params = query === '' ? body : { ...queryParams(query), ...body };
    let command: Command;
    let style: 'cmd' | 'rest' = 'rest';
    if (target.kind === 'cmd') {
      style = 'cmd';
      const name = params.cmd;
      // Set to undefined, not deleted: a deleted key turns the object into a slow dictionary.
      params.cmd = undefined;
      if (name === undefined || name === '') throw infraErrors.missingParameter({ name: 'cmd' });
      if (typeof name !== 'string') throw infraErrors.invalidParameter({ name: 'cmd', problem: infraProblems.text() });
      const found = router.byName.get(name);
      if (!found) throw infraErrors.unknownCommand({ cmd: name });
      command = found;
    } else {
      command = target.command;
      Object.assign(params, target.pathParams);
    }
    const creds = takeCredentials(req.headers as { authorization?: string; cookie?: string }, params);
    const who = authenticate(command, creds);
    const principal = who instanceof Promise ? await who : who;
    const ip = services.limits.client(req.socket.remoteAddress ?? '', req.headers);
    services.limits.charge(principal, ip);
    const checked = checkParams(command.params, params, command.normalise) as Record<string, unknown>;
    const call: Call = { services, principal, style, ip, setCookie };
    return okText(await command.handler(call, checked), style);
  }

  async function respond(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let path = req.url ?? '/';
    let cookie: string | undefined;
    let body: string;
    try {
      const target = splitTarget(path);
      // An absolute-form target with a bad host or port ("http://[::1/..."): the client's error.
      if (!target) throw infraErrors.malformedTarget();
      path = target.path;
      body = await answer(req, path, target.query, (name, value, maxAge) => {
        cookie = `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax`;
      });
    } catch (err) {
      if (err instanceof ClientGone) return;
      let refused = err;
      if (err instanceof BodyTooLarge) {
        // The unread rest is not waited for: the connection closes after the answer.
        closeAfterRefusal(res);
        refused = tooLarge(err.limit);
      }
      if (refused instanceof RateLimited) res.setHeader('retry-after', String(refused.retryAfter));
      if (refused instanceof InfraError) body = JSON.stringify(errorBody(refused));
      else {
        services.log.error('infra request failed', { method: req.method, path, error: (err as Error).stack });
        body = INTERNAL_ERROR;
      }
    }
    const headers: OutgoingHttpHeaders = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) };
    if (cookie !== undefined) headers['set-cookie'] = cookie;
    const written = listener.answer(res, 200, headers, body, (err) => {
      services.log.error('infra answer not durable', { method: req.method, path, error: (err as Error).stack });
      return INTERNAL_ERROR;
    });
    if (written) await written;
  }

  const listener = new Listener(
    {
      name: 'infra',
      log: services.log,
      store: services.db,
      cap: options.cap,
      timeouts: options.timeouts,
      // Malformed HTTP, refused by node's parser: the Infra envelope, and the connection closed; the server carries on.
      malformed: (_status, reason) => envelopeText(infraErrors.malformedHttp({ reason })),
    },
    (req, res) => {
      respond(req, res).catch((err: unknown) => {
        services.log.error('infra answer failed', { method: req.method, path: req.url, error: (err as Error).stack });
        res.destroy();
      });
    },
  );
  return listener;
}

// The Infra HTTP listener: reads a request in any of the shapes clients send, finds its command,
// authenticates, checks permission and parameters, runs it and writes the envelope.
//
// Plain node:http, not fastify (DESIGN.md's default), by measurement: this transport has its own
// router, reads the body itself (JSON whatever the Content-Type, on any method) and writes one JSON
// envelope with HTTP 200, so fastify's routing, content-type parsers, hooks and reply cost CPU and
// bring nothing. `npm run bench -- infra-http` (apiuser.get over HTTP Basic, SQLite, 2 cores), old
// and new back to back: server CPU per request REST 75-80 -> 64-71 us, command style 97-113 -> 89-95 us
// (details in docs/design.md). Chat keeps fastify (forms, multipart, schemas).
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { InjectOptions, Response as InjectResponse } from 'light-my-request';
import type { Call, Command, InfraServices, Principal } from '../command.js';
import { envelopeText, InfraError, infraErrors, infraProblems, RateLimited } from '../errors.js';
import { checkParams } from '../params.js';
import { allows } from '../permissions.js';
import { PrincipalCache } from '../principal-cache.js';
import { openApiDocument } from '../openapi.js';
import { errorBody, okText } from './envelope.js';
import { takeCredentials } from './credentials.js';
import { Router } from './router.js';
import { endWhenDurable } from '../../platform/http/durable.js';
import { answerMalformedHttp, closeAfterRefusal, ConnectionCap, createHttpServer, OPEN_BODY_LIMIT, type HttpTimeouts } from '../../platform/http/connections.js';

/** The body limit of a request whose headers carry valid credentials; OPEN_BODY_LIMIT before that. */
export const BODY_LIMIT = 10 * 1024 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';
const INTERNAL_ERROR = envelopeText(infraErrors.internalError());
// Path segments the URL parser would rewrite ("." and ".." segments, backslashes): rare, so those
// requests, and absolute-form targets, take the WHATWG parser; everything else is split by hand.
const NEEDS_URL_PARSER = /\/(?:\.|%2e)|\\/i;

export interface InfraServer {
  /** The node:http server (its address once listening). */
  readonly server: http.Server;
  listen(at: { host: string; port: number; backlog?: number }): Promise<void>;
  /** Stops accepting, ends idle keep-alive connections, and resolves once every connection is gone. */
  close(): Promise<void>;
  /** Runs a request without a socket (tests), through light-my-request. */
  inject(options: InjectOptions | string): Promise<InjectResponse>;
}

/** The request target as a raw (still percent-encoded) path and the query after `?`. */
function splitTarget(target: string): { path: string; query: string } {
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  let query = q < 0 ? '' : target.slice(q + 1);
  // The regular expression only when the path holds a piece of what it looks for.
  if (path.charCodeAt(0) !== 47 /* / */ || ((path.includes('/.') || path.includes('%') || path.includes('\\')) && NEEDS_URL_PARSER.test(path))) {
    let url: URL;
    try {
      url = new URL(target, 'http://x');
    } catch {
      // An absolute-form target with a bad host or port ("http://[::1/..."): the client's error.
      throw infraErrors.malformedTarget();
    }
    path = url.pathname;
    query = url.search.slice(1);
  }
  const hash = query.indexOf('#');
  return { path, query: hash < 0 ? query : query.slice(0, hash) };
}

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

class BodyTooLarge extends InfraError {
  constructor(limit: number) {
    const { entry, values } = limit < BODY_LIMIT
      ? { entry: infraErrors.bodyTooLargeOpen, values: { limit, credentialedLimit: BODY_LIMIT } }
      : { entry: infraErrors.bodyTooLarge, values: { limit } };
    super(entry, values);
  }
}

/** The body limit for a request whose header credentials were looked up: found or not. */
const limitFor = (principal: Principal | null): number => (principal ? BODY_LIMIT : OPEN_BODY_LIMIT);

/** The client went away mid-body: nobody to answer. */
class ClientGone extends Error {}

function bodyText(chunks: Buffer[]): string {
  return chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

/**
 * The body as text, read on any method (the Go client sends {} with GET) when the request announces
 * one (hasBody). Read in flowing mode: the parser hands each chunk straight to the
 * 'data' listener (no buffering, no 'readable' tick), and a body with a Content-Length is answered as
 * soon as that many bytes came, without waiting for 'end'; chunked bodies end at 'end'. Over `limit`,
 * refused without reading further (or at all, when announced).
 */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const expected = chunked || length === undefined ? -1 : Number(length);
  if (expected > limit) return Promise.reject(new BodyTooLarge(limit));
  // No named closure here: tsx compiles with esbuild's keepNames, which renames every named closure
  // with Object.defineProperty each time it is made, a slow path of V8's (about 2 us per request here).
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (c: Buffer) => {
      if (settled) return;
      size += c.length;
      // Over the limit (chunked): refused at once, and the rest read and dropped so the client can
      // finish sending; the connection closes after the answer.
      if (size > limit) {
        settled = true;
        chunks = [];
        reject(new BodyTooLarge(limit));
        return;
      }
      chunks.push(c);
      if (size === expected) {
        settled = true;
        resolve(bodyText(chunks));
      }
    });
    // Also when fewer bytes than announced end the message (light-my-request in tests).
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(bodyText(chunks));
    });
    // Gone before the body was whole: nobody to answer. ('error' is emitted only to listeners.)
    req.on('close', () => {
      if (!settled) {
        settled = true;
        reject(new ClientGone());
      }
    });
  });
}

/** Malformed HTTP, refused by node's parser: the Infra envelope, and the connection closed; the server carries on. */
const onClientError = answerMalformedHttp((_status, reason) => envelopeText(infraErrors.malformedHttp({ reason })));

/** Whether the request announces a body (the Go client sends {} with GET). */
const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

export interface InfraHttpOptions {
  /** Shared with the other listeners of the process; by default one of its own, from the open-files limit. */
  cap?: ConnectionCap;
  timeouts?: Partial<HttpTimeouts>;
}

export function createInfraServer(services: InfraServices, commands: Command[], options: InfraHttpOptions = {}): InfraServer {
  const router = new Router(commands);
  const principals = new PrincipalCache(services.db, services.clock);
  let openapi: string | undefined;
  let closing = false;

  /**
   * How much of the body may be read: BODY_LIMIT when the headers carry valid credentials, else
   * OPEN_BODY_LIMIT (credentials sent in the body fit in that). Looked up only for a body announced
   * over OPEN_BODY_LIMIT or not announced (chunked): nothing more is read before that.
   */
  function bodyLimit(req: IncomingMessage): number | Promise<number> {
    const length = req.headers['content-length'];
    if (length !== undefined && Number(length) <= OPEN_BODY_LIMIT) return OPEN_BODY_LIMIT;
    const creds = takeCredentials(req.headers as { authorization?: string; cookie?: string }, {});
    if (creds.kind === 'apikey') {
      const found = principals.forApiKey(creds.uuid, creds.secret);
      return found instanceof Promise ? found.then(limitFor) : limitFor(found);
    }
    if (creds.kind === 'jwt') return principals.forJwt(services.jwt, creds.token).then(limitFor);
    return OPEN_BODY_LIMIT;
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
      const limit = bodyLimit(req);
      body = bodyParams(await readBody(req, limit instanceof Promise ? await limit : limit));
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
      path = target.path;
      body = await answer(req, path, target.query, (name, value, maxAge) => {
        cookie = `${name}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax`;
      });
    } catch (err) {
      if (err instanceof ClientGone) return;
      if (err instanceof BodyTooLarge) closeAfterRefusal(res);
      if (err instanceof RateLimited) res.setHeader('retry-after', String(err.retryAfter));
      if (err instanceof InfraError) body = JSON.stringify(errorBody(err));
      else {
        services.log.error('infra request failed', { method: req.method, path, error: (err as Error).stack });
        body = INTERNAL_ERROR;
      }
    }
    // Connections still open when close() began end after their answer.
    if (closing) res.shouldKeepAlive = false;
    const headers: OutgoingHttpHeaders = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) };
    if (cookie !== undefined) headers['set-cookie'] = cookie;
    const written = endWhenDurable(res, services.db, headers, body, (err) => {
      services.log.error('infra answer not durable', { method: req.method, path, error: (err as Error).stack });
      return INTERNAL_ERROR;
    });
    if (written) await written;
  }

  const dispatch = (req: IncomingMessage, res: ServerResponse): void => {
    respond(req, res).catch((err: unknown) => {
      services.log.error('infra answer failed', { method: req.method, path: req.url, error: (err as Error).stack });
      res.destroy();
    });
  };

  const server = createHttpServer({ cap: options.cap ?? new ConnectionCap(), timeouts: options.timeouts, log: services.log, name: 'infra' }, dispatch);
  server.on('clientError', onClientError);

  return {
    server,
    listen({ host, port, backlog }) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port, backlog }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    close() {
      closing = true;
      if (!server.listening) return Promise.resolve();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
    async inject(options) {
      // A dev dependency: loaded only by the tests that call this.
      // biome-ignore lint/correctness/noUndeclaredDependencies: until item 1 of issue 13 takes inject() out of production code
      const { default: inject } = await import('light-my-request');
      return inject(dispatch, options);
    },
  };
}

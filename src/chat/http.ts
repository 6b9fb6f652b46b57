// The Chat HTTP listener (Zulip's REST API under /api/v1): reads parameters from the query and from
// form or multipart bodies, finds the endpoint definition, authenticates, decodes parameters by
// their declared types, runs the handler and writes Zulip's envelope with Zulip's HTTP statuses.
// Fastify reads the bodies; a GET without one (long-poll re-polls are most of a busy server's
// requests) goes from node:http straight to the same dispatch, without fastify's per-request objects.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { LATER, type ChatCall, type ChatResult, type ChatServices, type Endpoint, type LateAnswer } from './endpoint.js';
import type { ChatUser, Realm } from './tables.js';
import {
  bodyTooLarge, ChatError, internalServerError, invalidRequestTarget, lengthRequired, malformedBody, malformedHttp, malformedPathEscape, methodNotAllowed,
  routeNotFound, uriTooLong,
} from './errors.js';
import { serializeWithText } from '../platform/db/fast/json-text.js';
import { decodeParams } from './params.js';
import { rerunAfterRace } from './store-races.js';
import { ChatRouter } from './router.js';
import { RequestCache } from './auth.js';
import { answerWhenDurable, endWhenDurable, type DurableFailure } from '../platform/http/durable.js';
import { answerMalformedHttp, closeAfterRefusal, closeAfterUnreadBody, ConnectionCap, createHttpServer, OPEN_BODY_LIMIT, type HttpTimeouts } from '../platform/http/connections.js';

/** The body limit of a request whose headers carry a valid API key; OPEN_BODY_LIMIT before that. */
const BODY_LIMIT = 25 * 1024 * 1024;
const PREFIX = '/api/v1';

/** Zulip names the sending client after the `client` parameter, else the User-Agent's first product. */
export function clientName(param: string | undefined, userAgent: string | undefined): string {
  if (param) return param;
  const m = /^([^\s/]+)/.exec(userAgent ?? '');
  return m ? m[1] : 'Unspecified';
}

/** Adds the text values of a query or form to `out`: the last of a repeated key wins, as Django's QueryDict.get does. */
function addTextParams(out: Record<string, string>, source: unknown): void {
  if (source instanceof URLSearchParams) {
    source.forEach((v, k) => (out[k] = v));
  } else if (source && typeof source === 'object') {
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      const last = Array.isArray(v) ? v[v.length - 1] : v;
      if (typeof last === 'string') out[k] = last;
    }
  }
}

/** Characters a URL parser leaves as they are in a path: no dot segments, escapes or fragments to resolve. */
const PLAIN_PATH = /^[A-Za-z0-9_\-/~!$&'()*+,;=:@]*$/;
const NO_QUERY = new URLSearchParams();

/**
 * The path and query of a request target, as `new URL(target, base)` gives them; a plain target (the
 * usual case) is split without building a URL.
 */
export function splitTarget(target: string): { pathname: string; searchParams: URLSearchParams } {
  const q = target.indexOf('?');
  const pathname = q < 0 ? target : target.slice(0, q);
  if (pathname.startsWith('/') && !pathname.startsWith('//') && PLAIN_PATH.test(pathname) && !target.includes('#', q)) {
    return { pathname, searchParams: q < 0 || q === target.length - 1 ? NO_QUERY : new URLSearchParams(target.slice(q + 1)) };
  }
  let url: URL;
  try {
    url = new URL(target, 'http://x');
  } catch {
    // An absolute-form target with a broken authority (`http://[`): the client's mistake.
    throw invalidRequestTarget();
  }
  return { pathname: url.pathname, searchParams: url.searchParams };
}

/** Whether a request announces a body; fastify takes those (and ignores a GET's, as Zulip reads GET parameters from the query). */
const hasBody = (req: IncomingMessage) => req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

/**
 * Runs `gone` if the client goes away before the answer is written ('close' before the finish).
 * True, without running it, when the client is gone already.
 */
function onClientGone(res: ServerResponse, gone: () => void): boolean {
  if (res.destroyed && !res.writableFinished) return true;
  res.once('close', () => {
    if (!res.writableFinished) gone();
  });
  return false;
}

/** Aborted when the client goes away before the answer is written. */
function goneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  if (onClientGone(res, () => gone.abort())) gone.abort();
  return gone.signal;
}

/** An answer in Zulip's envelope, as dispatch gives it. */
interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** What every request of one listener shares: the services, whether the server is closing, and how answers are written. */
class Listener {
  /** Set when the server starts closing: answers from then on ask the client to close the connection. */
  closing = false;
  readonly services: ChatServices;
  // Made once, not for every answer.
  private readonly notDurable: (err: unknown) => DurableFailure;

  constructor(services: ChatServices) {
    this.services = services;
    this.notDurable = (err) => {
      services.log.error('chat answer not durable', { error: (err as Error).stack });
      return { status: 500, body: INTERNAL_ERROR };
    };
  }

  /** Writes a JSON answer straight to the response once the store is flushed (the durable-answer rule of durable.ts). */
  async write(res: ServerResponse, status: number, body: string | Buffer, extra?: Record<string, string>): Promise<void> {
    // As fastify writes the other answers.
    const headers: OutgoingHttpHeaders = { ...extra, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) };
    if (this.closing) headers.connection = 'close';
    try {
      const written = endWhenDurable(res, this.services.db, headers, body, this.notDurable, status);
      if (written) await written;
    } catch (err) {
      this.services.log.error('chat answer failed', { error: (err as Error).stack });
      res.destroy();
    }
  }
}

/**
 * A late answer (ChatCall.later), written straight to the response in Zulip's envelope: the
 * framework's objects for the request are not needed for it. `gone` runs if the client goes away first.
 */
class LateResponse implements LateAnswer {
  private readonly res: ServerResponse;
  private readonly head: string;
  private readonly listener: Listener;

  constructor(res: ServerResponse, ignored: string[], listener: Listener, gone: () => void) {
    this.res = res;
    this.listener = listener;
    this.head = ignored.length ? `{"result":"success","msg":"","ignored_parameters_unsupported":${JSON.stringify(ignored)},` : '{"result":"success","msg":"",';
    // Gone already: told once the handler has parked.
    if (onClientGone(res, gone)) process.nextTick(gone);
  }

  send(fields: readonly (string | Buffer)[]): void {
    // One buffer, copied into piece by piece: no string of the whole answer is built.
    let size = Buffer.byteLength(this.head) + 1;
    for (const f of fields) size += typeof f === 'string' ? Buffer.byteLength(f) : f.length;
    const body = Buffer.allocUnsafe(size);
    let at = body.write(this.head);
    for (const f of fields) at += typeof f === 'string' ? body.write(f, at) : f.copy(body, at);
    body[at] = 0x7d; // }
    void this.listener.write(this.res, 200, body);
  }

  fail(error: ChatError): void {
    const answer = errorAnswer(error);
    void this.listener.write(this.res, answer.status, JSON.stringify(answer.body), answer.headers);
  }
}

function envelope(result: Record<string, unknown>, ignored: string[]): Answer {
  const body: Record<string, unknown> = { result: 'success', msg: '', ...result };
  if (ignored.length) body.ignored_parameters_unsupported = ignored;
  return { status: 200, body };
}

const errorAnswer = (err: ChatError): Answer => ({ status: err.status, body: { result: 'error', msg: err.message, code: err.code, ...err.extra }, headers: err.headers });
const INTERNAL: Answer = errorAnswer(internalServerError());
const INTERNAL_ERROR = JSON.stringify(INTERNAL.body);

function send(reply: FastifyReply, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): string | Buffer {
  reply.code(status).header('content-type', 'application/json');
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return serializeWithText(body);
}

/** What dispatch reads of a request, whoever parsed it. */
interface ChatRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed form (URLSearchParams or multipart fields), if the request had a body. */
  body: unknown;
  ip: string;
  res: ServerResponse;
  /** Called before a handler answers later: takes the response out of the framework's hands. */
  detach(): void;
}

/** One request's ChatCall (a class: its methods are not made again for every request). */
class Call implements ChatCall {
  readonly services: ChatServices;
  readonly realm: Realm;
  readonly user: ChatUser | undefined;
  readonly client: string;
  readonly ip: string;
  private readonly request: ChatRequest;
  private readonly ignored: string[];
  private readonly listener: Listener;
  private gone: AbortSignal | undefined;

  constructor(services: ChatServices, realm: Realm, user: ChatUser | undefined, client: string, request: ChatRequest, ignored: string[], listener: Listener) {
    this.services = services;
    this.realm = realm;
    this.user = user;
    this.client = client;
    this.ip = request.ip;
    this.request = request;
    this.ignored = ignored;
    this.listener = listener;
  }

  // Made when a handler asks (a parked poll): an AbortController per request costs ~5% of a ping.
  get signal(): AbortSignal {
    return (this.gone ??= goneSignal(this.request.res));
  }

  later(gone: () => void): LateAnswer {
    this.request.detach();
    return new LateResponse(this.request.res, this.ignored, this.listener, gone);
  }
}

const NOTHING_TO_DETACH = () => {};

/** A body fastify may read without authenticating first: announced, and within OPEN_BODY_LIMIT. */
const smallBody = (req: IncomingMessage): boolean => {
  const length = req.headers['content-length'];
  return length !== undefined && req.headers['transfer-encoding'] === undefined && Number(length) <= OPEN_BODY_LIMIT;
};

export interface ChatHttpOptions {
  /** Shared with the other listeners of the process; by default one of its own, from the open-files limit. */
  cap?: ConnectionCap;
  timeouts?: Partial<HttpTimeouts>;
}

export function createChatServer(services: ChatServices, endpoints: Endpoint[], options: ChatHttpOptions = {}): FastifyInstance {
  const router = new ChatRouter(endpoints);
  // A realm found deactivated (by another process: this one ends the queues at its own commit) loses its queues.
  const cache = new RequestCache(services.db, services.clock, services.rootDomain, (realmId) => services.events.endRealmQueues(realmId));
  const listener = new Listener(services);
  // Long-polls park for up to the heartbeat (50 s) and clients wait 90 s
  // (event_queue_longpoll_timeout_seconds); parked polls are busy connections, which neither the
  // timeouts nor the connection cap close (platform/http/connections.ts). A socket may carry any
  // number of polls (maxRequestsPerSocket 0, node's default).
  const server = createHttpServer({ cap: options.cap ?? new ConnectionCap(), timeouts: options.timeouts, log: services.log, name: 'chat' }, (req, res) => {
    // While closing, fastify answers 503 (return503OnClosing).
    if (req.method === 'GET' && req.url!.startsWith(`${PREFIX}/`) && !hasBody(req) && !listener.closing) void direct(req, res);
    else if (!hasBody(req) || smallBody(req) || listener.closing) app.routing(req, res);
    else void admitBody(req, res);
  });
  // Fastify's router refuses a path with a broken %-escape, or too long a segment, before any hook:
  // answered in Zulip's envelope, the first as dispatch answers it.
  const frameworkErrors = (err: Error & { code?: string }, req: FastifyRequest, reply: FastifyReply) => {
    const refusal = err.code === 'FST_ERR_BAD_URL' ? malformedPathEscape() : err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? uriTooLong() : undefined;
    const status = refusal?.status ?? 500;
    if (status === 500) {
      services.log.error('chat request failed', { method: req.method, path: req.url, error: err.stack });
      return reply.send(send(reply, 500, INTERNAL.body));
    }
    services.log.debug('chat request refused', { method: req.method, path: req.url, status, error: err.message });
    return reply.send(send(reply, status, errorAnswer(refusal!).body));
  };
  // Malformed HTTP that node's parser refuses before any request exists (431, 400, 408): in Zulip's envelope too.
  const clientErrorHandler = answerMalformedHttp((_status, reason) => JSON.stringify(errorAnswer(malformedHttp({ reason })).body));
  const app = Fastify({ serverFactory: () => server, logger: false, bodyLimit: BODY_LIMIT, return503OnClosing: true, frameworkErrors, clientErrorHandler });
  // Parked polls end at shutdown rather than holding the close up until their heartbeat. The
  // listener's close (right after this hook) drops idle keep-alive sockets once, while the polls
  // just answered are still being written: their sockets would then hold the close for the
  // keep-alive timeout (65 s). Answers written from here on ask the client to close the connection.
  app.addHook('preClose', (done) => {
    listener.closing = true;
    services.events.close();
    done();
  });
  app.addHook('onSend', (req, reply, payload, done) => {
    if (listener.closing) reply.header('connection', 'close');
    // A body not read to its end (a multipart parser that stopped early on a malformed body, and the
    // handler answered what it had): node leaves a body alone once a reader started on it, so its
    // unread rest would stay in the connection and the next request there would wait for ever.
    else if (!req.raw.complete) closeAfterUnreadBody(req.raw, reply.raw);
    done(null, payload);
  });
  // Presence not yet written reaches the store before the database is closed.
  app.addHook('onClose', async () => {
    await services.presence.close();
  });
  answerWhenDurable(app, () => services.db.synced());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, new URLSearchParams(body as string)));
  // Zulip reads parameters only from forms; any other body is read and set aside.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, _body, done) => done(null, undefined));
  void app.register(multipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: BODY_LIMIT, fields: 1000 } });

  /** Finds the endpoint, authenticates, decodes and runs the handler; undefined when it answers later. Never rejects. */
  async function dispatch(r: ChatRequest): Promise<Answer | undefined> {
    let path = r.url;
    try {
      const url = splitTarget(r.url);
      path = url.pathname;
      // As Zulip's host middleware: a subdomain no realm has is refused before routing.
      // Cached, the realm and the user come without a promise, and are not awaited (no microtask hop).
      const realmOrRead = cache.realm(r.headers.host);
      const realm = realmOrRead instanceof Promise ? await realmOrRead : realmOrRead;
      const match = router.find(r.method, url.pathname.slice(PREFIX.length) || '/');
      if (match.kind === 'none') throw routeNotFound();
      if (match.kind === 'wrong-method') {
        throw methodNotAllowed({ allowed: match.allowed });
      }
      const { endpoint } = match;
      const raw: Record<string, string> = {};
      addTextParams(raw, url.searchParams);
      addTextParams(raw, r.body);
      Object.assign(raw, match.pathParams);
      // A spectator sends no Authorization header at all (an empty one counts as none, as in Zulip).
      const authenticate = endpoint.auth === 'user' || (endpoint.auth === 'spectator' && !!r.headers.authorization);
      const userOrRead = authenticate ? cache.user(realm, r.headers.authorization) : undefined;
      const user = userOrRead instanceof Promise ? await userOrRead : userOrRead;
      // Charged to its user or client address (a trusted proxy's X-Forwarded-For: domain/rate-limit.ts);
      // the X-RateLimit-* headers go on the response now, so every answer carries them, later ones
      // and errors included.
      r.ip = services.limits.client(r.ip, r.headers);
      const limits = services.limits.charge(endpoint.path, user?.id, r.ip);
      if (limits) for (const name in limits) r.res.setHeader(name, limits[name]);
      const { values, ignored } = decodeParams(endpoint.params, raw);
      const call = new Call(services, realm, user, clientName(raw.client, r.headers['user-agent']), r, ignored, listener);
      let result: ChatResult;
      try {
        result = await endpoint.handler(call, values);
      } catch (err) {
        // A lost unique-key race: run again on freshly decoded values (the first run may have changed them).
        result = await rerunAfterRace(err, () => endpoint.handler(call, decodeParams(endpoint.params, raw).values));
      }
      if (result === LATER) return undefined;
      return endpoint.document ? { status: 200, body: result } : envelope(result, ignored);
    } catch (err) {
      if (err instanceof ChatError) return errorAnswer(err);
      services.log.error('chat request failed', { method: r.method, path, error: (err as Error).stack });
      return INTERNAL;
    }
  }

  /** Requests whose handler ran (their body was read): an error reported for one after that is the server's. */
  const handled = new WeakSet<FastifyRequest>();

  async function handle(req: FastifyRequest, reply: FastifyReply): Promise<string | Buffer | undefined> {
    handled.add(req);
    const answer = await dispatch({ method: req.method, url: req.url, headers: req.headers, body: req.body, ip: req.ip, res: reply.raw, detach: () => reply.hijack() });
    return answer && send(reply, answer.status, answer.body, answer.headers);
  }

  /**
   * A body that is large or of unknown length (chunked): fastify reads it (up to BODY_LIMIT) only if
   * the Authorization header holds a valid API key. Otherwise it is refused before any of it is
   * read: 413 over OPEN_BODY_LIMIT, 411 without a Content-Length (credentials sent in a body, as to
   * fetch_api_key, fit in OPEN_BODY_LIMIT, and clients announce such small bodies' length).
   */
  async function admitBody(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let known = false;
    if (req.headers.authorization) {
      try {
        const realm = cache.realm(req.headers.host);
        const user = cache.user(realm instanceof Promise ? await realm : realm, req.headers.authorization);
        known = !!(user instanceof Promise ? await user : user);
      } catch (err) {
        // Bad credentials: the body is refused below. Anything else is the store failing.
        if (!(err instanceof ChatError)) {
          services.log.error('chat request failed', { method: req.method, path: req.url, error: (err as Error).stack });
          closeAfterRefusal(res);
          await listener.write(res, 500, INTERNAL_ERROR);
          return;
        }
      }
    }
    if (known) {
      app.routing(req, res);
      return;
    }
    const chunked = req.headers['content-length'] === undefined;
    const refusal = chunked ? lengthRequired({ limit: OPEN_BODY_LIMIT }) : bodyTooLarge({ openLimit: OPEN_BODY_LIMIT, limit: BODY_LIMIT });
    // The unread body is not waited for: the connection closes after the answer.
    closeAfterRefusal(res);
    await listener.write(res, refusal.status, JSON.stringify(errorAnswer(refusal).body));
  }

  /** A bodiless GET, from node:http: answered as a late answer is, once the store is flushed. */
  async function direct(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = await dispatch({ method: 'GET', url: req.url!, headers: req.headers, body: undefined, ip: req.socket.remoteAddress ?? '', res, detach: NOTHING_TO_DETACH });
    if (!answer) return;
    let body: string | Buffer;
    try {
      body = serializeWithText(answer.body);
    } catch (err) {
      // As fastify's error handler answers a handler whose result cannot be serialized.
      services.log.error('chat request failed', { method: req.method, path: req.url, error: (err as Error).stack });
      await listener.write(res, 500, INTERNAL_ERROR);
      return;
    }
    await listener.write(res, answer.status, body, answer.headers);
  }

  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'], url: `${PREFIX}/*`, handler: handle });
  app.setNotFoundHandler((_req, reply) => send(reply, 404, errorAnswer(routeNotFound()).body));
  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    // Failures to read the request (too large, broken multipart, a bad content type) arrive here
    // before the handler ran: the client's fault, answered 400 unless the reader gave a 4xx status.
    // After it, only a server fault (the store failing to flush in onSend) can.
    const given = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : undefined;
    const status = given ?? (handled.has(req) ? 500 : 400);
    if (status === 500) {
      services.log.error('chat request failed', { method: req.method, path: req.url, error: err.stack });
      return send(reply, 500, INTERNAL.body);
    }
    // One client could fill the logs with its bad requests: no stack, and only when debugging.
    services.log.debug('chat request refused', { method: req.method, path: req.url, status, error: err.message });
    // The rest of a body its reader gave up on is never read: the connection could carry no next request.
    reply.header('connection', 'close');
    return send(reply, status, { result: 'error', msg: given ? err.message : malformedBody({ reason: err.message }).message, code: 'BAD_REQUEST' });
  });
  return app;
}

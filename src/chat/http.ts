// The Chat HTTP listener (Zulip's REST API under /api/v1), on the shared core (platform/http/):
// Chat's dialect only: parameters from the query and from form or multipart bodies (the last of a
// repeated key wins), the endpoint found and authenticated, parameters decoded by their declared
// types, the handler run, and Zulip's envelope written with Zulip's HTTP statuses.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { LATER, type ChatCall, type ChatResult, type ChatServices, type Endpoint, type LateAnswer } from './endpoint.js';
import type { ChatUser, Realm } from './tables.js';
import { bodyTooLarge, bodyTooLargeWithKey, ChatError, internalServerError, invalidRequestTarget, lengthRequired, malformedBody, malformedHttp, methodNotAllowed, routeNotFound } from './errors.js';
import { serializeAsPieces } from '../platform/db/fast/json-text.js';
import { decodeParams } from './params.js';
import { rerunAfterRace } from './store-races.js';
import { ChatRouter } from './router.js';
import { RequestCache } from './auth.js';
import { addTextParams, BODY_LIMIT, BodyError, readForm, type Form } from './forms.js';
import { bodyLength, type AnswerBody, type DurableFailure } from '../platform/http/durable.js';
import { acceptsGzip, gzipShared } from '../platform/http/gzip-pieces.js';
import { closeAfterRefusal, closeAfterUnreadBody, OPEN_BODY_LIMIT, type ConnectionCap, type HttpTimeouts } from '../platform/http/connections.js';
import { BodyTooLarge, ClientGone, hasBody, smallBody } from '../platform/http/body.js';
import { goneSignal, Listener, onClientGone, type HttpService } from '../platform/http/listener.js';
import { splitTarget } from '../platform/http/target.js';
import { emojiDataFile } from './domain/emoji.js';
import { errorPage, registrationPage, registrationRoute, type Page, type RegistrationRoute } from './pages.js';
import { loginPage, loginRoute, logoutPage } from './login-pages.js';
import { sessionUser } from './domain/sessions.js';
import { pipeline } from 'node:stream/promises';
import { EXPORT_URL_PREFIX, exportFile } from './exports/download.js';
import { serveUploadPath, type UploadServing } from './uploads-http.js';
import { TusEndpoint, type TusAuthenticator } from './tus.js';
import { AVATARS_PREFIX, serveAvatarFile } from './avatars-http.js';

const PREFIX = '/api/v1';
const JSON_TYPE = 'application/json; charset=utf-8';
/** The methods Chat's routes use (HEAD as GET's, answered 405); others are no route at all (404). */
const ROUTED = new Set(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'PUT']);

/** Zulip names the sending client after the `client` parameter, else the User-Agent's first product. */
export function clientName(param: string | undefined, userAgent: string | undefined): string {
  if (param) return param;
  const m = /^([^\s/]+)/.exec(userAgent ?? '');
  return m ? m[1] : 'Unspecified';
}

const NO_QUERY = new URLSearchParams();

/**
 * GET /user_uploads/{realm_id_str}/{filename}: Zulip's `filename` is the rest of the path_id, slashes
 * and all (`<random>/<name>`); the router's parameters are one segment each, so the rest is handed to
 * it as one segment (its slashes escaped, which the router decodes back).
 */
function uploadPathAsOneSegment(path: string): string {
  const m = /^(\/user_uploads\/[^/]+\/)(.+)$/.exec(path);
  return m && m[2].includes('/') ? m[1] + m[2].replaceAll('/', '%2F') : path;
}

/** An answer in Zulip's envelope, as dispatch gives it. */
interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** From the endpoint (Endpoint.gzipShared): its shared text may be answered gzipped. */
  gzipShared?: true;
}

/**
 * What a gzipped answer says beside its body; the plain answer of an endpoint that may gzip says
 * `vary` too, so an HTTP cache between never hands one client's form to another.
 */
const GZIP_HEADERS = { 'content-encoding': 'gzip', vary: 'accept-encoding' };
const VARY_HEADERS = { vary: 'accept-encoding' };

/** How every answer of one listener is written: Zulip's JSON, once the store is flushed. */
class Writer {
  private readonly listener: Listener;
  // Made once, not for every answer.
  private readonly notDurable: (err: unknown) => DurableFailure;
  private readonly pageNotDurable: (err: unknown) => DurableFailure;

  constructor(listener: Listener, services: ChatServices) {
    this.listener = listener;
    this.notDurable = (err) => {
      services.log.error('chat answer not durable', { error: (err as Error).stack });
      return { status: 500, body: INTERNAL_ERROR };
    };
    this.pageNotDurable = (err) => {
      services.log.error('chat page not durable', { error: (err as Error).stack });
      return { status: 500, body: errorPage(500, 'Internal server error').html };
    };
  }

  /** Writes a JSON answer once the store is flushed (the durable-answer rule of durable.ts); undefined when written at once. Never rejects. */
  write(res: ServerResponse, status: number, body: AnswerBody, extra?: Record<string, string>): Promise<void> | undefined {
    // One literal when there is nothing extra (most answers): a spread of undefined still clones.
    const headers: OutgoingHttpHeaders = extra ? { ...extra, 'content-type': JSON_TYPE, 'content-length': bodyLength(body) } : { 'content-type': JSON_TYPE, 'content-length': bodyLength(body) };
    return this.listener.answer(res, status, headers, body, this.notDurable);
  }

  /** Writes an HTML page (chat/pages.ts) once the store is flushed: never framed, cached or followed by a Referer (its URL holds a key). */
  page(res: ServerResponse, p: Page): Promise<void> | undefined {
    const headers: OutgoingHttpHeaders = {
      ...p.headers,
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(p.html),
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    };
    return this.listener.answer(res, p.status, headers, p.html, this.pageNotDurable);
  }
}

/**
 * A late answer (ChatCall.later), written straight to the response in Zulip's envelope. `gone` runs
 * if the client goes away first.
 */
class LateResponse implements LateAnswer {
  private readonly res: ServerResponse;
  private readonly head: string;
  private readonly writer: Writer;

  constructor(res: ServerResponse, ignored: string[], writer: Writer, gone: () => void) {
    this.res = res;
    this.writer = writer;
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
    void this.writer.write(this.res, 200, body);
  }

  fail(error: ChatError): void {
    const answer = errorAnswer(error);
    void this.writer.write(this.res, answer.status, JSON.stringify(answer.body), answer.headers);
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
const NOT_FOUND = JSON.stringify(errorAnswer(routeNotFound()).body);
/** What a request that arrives while the server closes is told (the text it has had since Chat ran on fastify). */
const CLOSING = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';

/** What dispatch reads of a request. */
interface ChatRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The form's text values (query first, then the body's), if the request had a form body. */
  body: URLSearchParams | Form | undefined;
  ip: string;
  res: ServerResponse;
  /** The request with its body unread, for an endpoint that streams it (Endpoint.streamsBody). */
  stream?: IncomingMessage;
}

/** One request's ChatCall (a class: its methods are not made again for every request). */
class Call implements ChatCall {
  readonly services: ChatServices;
  readonly realm: Realm;
  readonly user: ChatUser | undefined;
  readonly client: string;
  readonly ip: string;
  readonly request: IncomingMessage | undefined;
  private readonly chatRequest: ChatRequest;
  private readonly ignored: string[];
  private readonly writer: Writer;
  private gone: AbortSignal | undefined;

  constructor(services: ChatServices, realm: Realm, user: ChatUser | undefined, client: string, request: ChatRequest, ignored: string[], writer: Writer) {
    this.services = services;
    this.realm = realm;
    this.user = user;
    this.client = client;
    this.ip = request.ip;
    this.chatRequest = request;
    this.request = request.stream;
    this.ignored = ignored;
    this.writer = writer;
  }

  // Made when a handler asks (a parked poll): an AbortController per request costs ~5% of a ping.
  get signal(): AbortSignal {
    return (this.gone ??= goneSignal(this.chatRequest.res));
  }

  later(gone: () => void): LateAnswer {
    return new LateResponse(this.chatRequest.res, this.ignored, this.writer, gone);
  }
}

export interface ChatHttpOptions {
  /** Shared with the other listeners of the process; by default one of its own, from the open-files limit. */
  cap?: ConnectionCap;
  timeouts?: Partial<HttpTimeouts>;
  /** The staging directory of unfinished resumable uploads (chat/tus.ts); without it /api/v1/tus is not served. */
  tusDir?: string;
}

export function createChatServer(services: ChatServices, endpoints: Endpoint[], options: ChatHttpOptions = {}): HttpService {
  const router = new ChatRouter(endpoints);
  // The paths (under /api/v1, without parameters) of endpoints that stream their own body.
  // A realm found deactivated (by another process: this one ends the queues at its own commit) loses its queues.
  const cache = new RequestCache(services.db, services.clock, services.rootDomain, (realmId) => services.events.endRealmQueues(realmId));
  // Long-polls park for up to the heartbeat (50 s) and clients wait 90 s
  // (event_queue_longpoll_timeout_seconds); parked polls are busy connections, which neither the
  // timeouts nor the connection cap close (platform/http/connections.ts). A socket may carry any
  // number of polls (maxRequestsPerSocket 0, node's default).
  const listener = new Listener(
    {
      name: 'chat',
      log: services.log,
      store: services.db,
      cap: options.cap,
      timeouts: options.timeouts,
      // Malformed HTTP that node's parser refuses before any request exists (431, 400, 408): in Zulip's envelope too.
      malformed: (_status, reason) => JSON.stringify(errorAnswer(malformedHttp({ reason })).body),
      // Parked polls end at shutdown rather than holding the close up until their heartbeat; their
      // answers, written from here on, ask the client to close the connection (else their sockets
      // would hold the close for the keep-alive timeout).
      onClosing: () => services.events.close(),
      // Presence not yet written reaches the store before the database is closed.
      onClosed: () => {
        tus?.close();
        return services.presence.close();
      },
    },
    (req, res) => void handle(req, res),
  );
  const writer = new Writer(listener, services);
  const uploadServing: UploadServing = {
    services,
    realm: (host) => cache.realm(host),
    user: (realm, header) => cache.user(realm, header),
    sessionUser: (realm, cookie) => sessionUser(services.db.kysely, realm, cookie, services.clock.now()),
    writeError: (res, err) => {
      const answer = errorAnswer(err);
      return writer.write(res, answer.status, JSON.stringify(answer.body), answer.headers) ?? Promise.resolve();
    },
  };
  /** Whether a body goes unread to its endpoint (Endpoint.streamsBody): multipart bodies only. */
  const streamsBody = (method: string, url: string, type: string | undefined): boolean => {
    if (!type?.toLowerCase().startsWith('multipart/')) return false;
    const target = splitTarget(url);
    if (!target) return false;
    try {
      const match = router.find(method, target.path.slice(PREFIX.length) || '/');
      return match.kind === 'found' && match.value.streamsBody === true;
    } catch {
      // A broken %-escape: dispatch answers it, after the form is read as any other.
      return false;
    }
  };
  // Who may use the resumable upload endpoint: the API key in the Authorization header (HTTP Basic,
  // as every Chat request); bad or absent credentials are no user, as Zulip then tries its session.
  // Then a browser's session cookie (domain/sessions.ts), as Zulip's tusd hook accepts the session too.
  const apiKeyUser: TusAuthenticator = async (req, realm) => {
    if (!req.headers.authorization) return undefined;
    try {
      const user = cache.user(realm, req.headers.authorization);
      return user instanceof Promise ? await user : user;
    } catch (err) {
      if (err instanceof ChatError) return undefined;
      throw err;
    }
  };
  const cookieUser: TusAuthenticator = (req, realm) => sessionUser(services.db.kysely, realm, req.headers.cookie, services.clock.now());
  const tus = options.tusDir === undefined ? undefined : new TusEndpoint(services, options.tusDir, (host) => cache.realm(host), [apiKeyUser, cookieUser]);

  /** Finds the endpoint, authenticates, decodes and runs the handler; undefined when it answers later. Never rejects. */
  async function dispatch(r: ChatRequest): Promise<Answer | undefined> {
    let path = r.url;
    try {
      const url = splitTarget(r.url);
      // An absolute-form target with a broken authority (`http://[`): the client's mistake.
      if (!url) throw invalidRequestTarget();
      path = url.path;
      // As Zulip's host middleware: a subdomain no realm has is refused before routing.
      // Cached, the realm and the user come without a promise, and are not awaited (no microtask hop).
      const realmOrRead = cache.realm(r.headers.host);
      const realm = realmOrRead instanceof Promise ? await realmOrRead : realmOrRead;
      const match = router.find(r.method, uploadPathAsOneSegment(url.path.slice(PREFIX.length)) || '/');
      if (match.kind === 'none') throw routeNotFound();
      if (match.kind === 'wrong-method') {
        throw methodNotAllowed({ allowed: match.allowed });
      }
      const endpoint = match.value;
      // Only an endpoint that streams its body is handed it; any other's was read as a form (or not at all).
      if (!endpoint.streamsBody) r.stream = undefined;
      const raw: Record<string, string> = {};
      addTextParams(raw, url.query === '' ? NO_QUERY : new URLSearchParams(url.query));
      addTextParams(raw, r.body);
      Object.assign(raw, match.params);
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
      const call = new Call(services, realm, user, clientName(raw.client, r.headers['user-agent']), r, ignored, writer);
      let result: ChatResult;
      try {
        result = await endpoint.handler(call, values);
      } catch (err) {
        // A lost unique-key race: run again on freshly decoded values (the first run may have changed them).
        result = await rerunAfterRace(err, () => endpoint.handler(call, decodeParams(endpoint.params, raw).values));
      }
      if (result === LATER) return undefined;
      // A document endpoint (GET /openapi.json) answers its result as the whole body, outside the envelope.
      if (endpoint.document) return { status: 200, body: result };
      const answer = envelope(result, ignored);
      if (endpoint.gzipShared) answer.gzipShared = true;
      return answer;
    } catch (err) {
      if (err instanceof ChatError) return errorAnswer(err);
      services.log.error('chat request failed', { method: r.method, path, error: (err as Error).stack });
      return INTERNAL;
    }
  }

  /**
   * Whether a body that is large or of unknown length (chunked) may be read (up to BODY_LIMIT): only
   * if the Authorization header holds a valid API key. Otherwise it is refused before any of it is
   * read: 413 over OPEN_BODY_LIMIT, 411 without a Content-Length (credentials sent in a body, as to
   * fetch_api_key, fit in OPEN_BODY_LIMIT, and clients announce such small bodies' length). False
   * once the refusal is written.
   */
  async function admitBody(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (req.headers.authorization) {
      try {
        const realm = cache.realm(req.headers.host);
        const user = cache.user(realm instanceof Promise ? await realm : realm, req.headers.authorization);
        if (user instanceof Promise ? await user : user) return true;
      } catch (err) {
        // Bad credentials: the body is refused below. Anything else is the store failing.
        if (!(err instanceof ChatError)) {
          services.log.error('chat request failed', { method: req.method, path: req.url, error: (err as Error).stack });
          closeAfterRefusal(res);
          await writer.write(res, 500, INTERNAL_ERROR);
          return false;
        }
      }
    }
    const chunked = req.headers['content-length'] === undefined;
    const refusal = chunked ? lengthRequired({ limit: OPEN_BODY_LIMIT }) : bodyTooLarge({ openLimit: OPEN_BODY_LIMIT, limit: BODY_LIMIT });
    // The unread body is not waited for: the connection closes after the answer.
    closeAfterRefusal(res);
    await writer.write(res, refusal.status, JSON.stringify(errorAnswer(refusal).body));
    return false;
  }

  /** A request's body could not be read: refused in the envelope, and the connection closed after. */
  async function refuseBody(req: IncomingMessage, res: ServerResponse, err: Error): Promise<void> {
    const refusal = err instanceof BodyTooLarge ? bodyTooLargeWithKey() : err instanceof BodyError ? err.refusal : malformedBody({ reason: err.message });
    const status = refusal.status;
    // One client could fill the logs with its bad requests: no stack, and only when debugging.
    services.log.debug('chat request refused', { method: req.method, path: req.url, status, error: err.message });
    // The rest of a body its reader gave up on is never read: the connection could carry no next request.
    closeAfterUnreadBody(req, res);
    await writer.write(res, status, JSON.stringify(errorAnswer(refusal).body));
  }

  /** A registration, login or logout page: the realm by Host, the form's fields (a small urlencoded body), charged to the client's address. */
  async function servePage(req: IncomingMessage, res: ServerResponse, route: RegistrationRoute | 'login' | 'logout'): Promise<void> {
    if (listener.closing) res.shouldKeepAlive = false;
    const fields: Record<string, string> = {};
    if (req.method === 'POST' && hasBody(req)) {
      if (!smallBody(req)) {
        closeAfterRefusal(res);
        await writer.page(res, errorPage(413, 'The form is too large.'));
        return;
      }
      try {
        addTextParams(fields, (await readForm(req, OPEN_BODY_LIMIT)).params);
      } catch (err) {
        if (err instanceof ClientGone) return;
        closeAfterUnreadBody(req, res);
        await writer.page(res, errorPage(400, 'The form could not be read.'));
        return;
      }
    }
    let answer: Page;
    try {
      const realmOrRead = cache.realm(req.headers.host);
      const realm = realmOrRead instanceof Promise ? await realmOrRead : realmOrRead;
      const peer = req.socket.remoteAddress ?? '';
      const ip = services.limits.client(peer, req.headers);
      const secure = services.limits.https(peer, req.headers);
      const pagePath = typeof route === 'string' ? `/accounts/${route}` : route.kind === 'link' ? '/join' : '/accounts/do_confirm';
      const limits = services.limits.charge(pagePath, undefined, ip);
      if (limits) for (const name in limits) res.setHeader(name, limits[name]);
      const r = { method: req.method!, cookie: req.headers.cookie, ip, secure };
      if (route === 'login') answer = await loginPage(services, realm, r, fields);
      else if (route === 'logout') answer = await logoutPage(services, r, fields);
      else answer = await registrationPage(services, realm, route, req.method!, fields, secure);
    } catch (err) {
      if (err instanceof ChatError) {
        if (err.headers) for (const name in err.headers) res.setHeader(name, err.headers[name]);
        answer = errorPage(err.status, err.message);
      } else {
        services.log.error('chat page failed', { method: req.method, error: (err as Error).stack });
        answer = errorPage(500, 'Internal server error');
      }
    }
    await writer.page(res, answer);
  }

  /** A realm export's tarball at its export_url (exports/download.ts): administrators only, authenticated as API calls are. */
  async function serveExport(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const realmOrRead = cache.realm(req.headers.host);
      const realm = realmOrRead instanceof Promise ? await realmOrRead : realmOrRead;
      const userOrRead = cache.user(realm, req.headers.authorization);
      const file = await exportFile(services, realm, userOrRead instanceof Promise ? await userOrRead : userOrRead, req.url!);
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': file.size, 'content-disposition': `attachment; filename="${file.name}"`, 'cache-control': 'private, no-store' });
      if (req.method === 'HEAD') {
        file.stream.destroy();
        res.end();
        return;
      }
      await pipeline(file.stream, res).catch(() => {});
    } catch (err) {
      if (!(err instanceof ChatError)) services.log.error('chat request failed', { method: req.method, path: req.url, error: (err as Error).stack });
      const answer = err instanceof ChatError ? errorAnswer(err) : INTERNAL;
      if (res.headersSent) res.destroy();
      else await writer.write(res, answer.status, JSON.stringify(answer.body), answer.headers);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method!;
    if ((method === 'GET' || method === 'HEAD') && req.url!.startsWith(EXPORT_URL_PREFIX)) {
      await serveExport(req, res);
      return;
    }
    // The one static file Chat serves: the emoji name table register's server_emoji_data_url names.
    if ((method === 'GET' || method === 'HEAD') && req.url === emojiDataFile().path) {
      await writer.write(res, 200, emojiDataFile().body, { 'cache-control': 'public, max-age=31536000, immutable' });
      return;
    }
    // The registration pages invitation links lead to (chat/pages.ts): HTML, outside the API.
    const route = method === 'GET' || method === 'HEAD' || method === 'POST' ? registrationRoute(req.url!) : undefined;
    if (route) {
      await servePage(req, res, route);
      return;
    }
    // The login and logout pages of a browser (chat/login-pages.ts): HTML too.
    const login = loginRoute(req.url!);
    if (login) {
      await servePage(req, res, login);
      return;
    }
    // Uploaded files: downloads, thumbnails and temporary URLs outside /api/v1 (uploads-http.ts).
    if ((method === 'GET' || method === 'HEAD') && req.url!.startsWith('/user_uploads/')) {
      await serveUploadPath(uploadServing, req, res);
      return;
    }
    // The images made of uploads (emoji, avatars, the realm icon and logos), public as in Zulip.
    if ((method === 'GET' || method === 'HEAD') && req.url!.startsWith(AVATARS_PREFIX)) {
      try {
        await serveAvatarFile(services.files, req, res);
      } catch (err) {
        services.log.error('chat request failed', { method, path: req.url, error: (err as Error).stack });
        if (!res.headersSent) await writer.write(res, 500, INTERNAL_ERROR);
        else res.destroy();
      }
      return;
    }
    // The resumable upload endpoint speaks tus, not Zulip's API: its own methods, bodies and answers.
    const isTus = tus !== undefined && TusEndpoint.owns(req.url);
    if (!isTus && (!ROUTED.has(method) || !req.url!.startsWith(`${PREFIX}/`))) {
      await writer.write(res, 404, NOT_FOUND);
      return;
    }
    if (listener.closing) {
      res.shouldKeepAlive = false;
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': CLOSING.length });
      res.end(CLOSING);
      return;
    }
    if (isTus) {
      await tus.handle(req, res);
      return;
    }
    let body: URLSearchParams | Form | undefined;
    let whole = true;
    let stream: IncomingMessage | undefined;
    if (hasBody(req)) {
      if (!smallBody(req) && !(await admitBody(req, res))) return;
      // A multipart body to an endpoint that reads its own (an image upload) is left to it.
      if (streamsBody(method, req.url!, req.headers['content-type'])) stream = req;
      else
        try {
          ({ params: body, whole } = await readForm(req));
        } catch (err) {
          if (!(err instanceof ClientGone)) await refuseBody(req, res, err as Error);
          return;
        }
    }
    const answer = await dispatch({ method, url: req.url!, headers: req.headers, body, ip: req.socket.remoteAddress ?? '', res, stream });
    // Answered later (a parked poll), by LateResponse.
    if (!answer) return;
    // A streamed body its handler did not read to the end (it refused the request first).
    if (stream && !stream.complete) whole = false;
    // A body not read to its end (a multipart parser that stopped early, and the handler answered
    // what it had): its unread rest would stay in the connection and the next request there would
    // wait for ever.
    if (!whole) closeAfterUnreadBody(req, res);
    let text: AnswerBody;
    let headers = answer.headers;
    try {
      // Gzipped from the shared text's compression (made once per text), for clients that accept it;
      // undefined (answered as before) when the answer carries no shared text long enough.
      const gzipped = answer.gzipShared && answer.status === 200 && acceptsGzip(req.headers['accept-encoding']) ? gzipShared(answer.body) : undefined;
      if (gzipped) headers = headers ? { ...headers, ...GZIP_HEADERS } : GZIP_HEADERS;
      else if (answer.gzipShared && answer.status === 200) headers = headers ? { ...headers, ...VARY_HEADERS } : VARY_HEADERS;
      text = gzipped ?? serializeAsPieces(answer.body);
    } catch (err) {
      // A handler's result that cannot be serialized: the server's fault.
      services.log.error('chat request failed', { method, path: req.url, error: (err as Error).stack });
      await writer.write(res, 500, INTERNAL_ERROR);
      return;
    }
    await writer.write(res, answer.status, text, headers);
  }

  return listener;
}

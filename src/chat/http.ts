// The Chat HTTP listener (Zulip's REST API under /api/v1): reads parameters from the query and from
// form or multipart bodies, finds the endpoint definition, authenticates, decodes parameters by
// their declared types, runs the handler and writes Zulip's envelope with Zulip's HTTP statuses.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { LATER, type ChatCall, type ChatServices, type Endpoint, type LateAnswer } from './endpoint.js';
import { ChatError } from './errors.js';
import { serializeWithText } from './json-text.js';
import { decodeParams } from './params.js';
import { ChatRouter } from './router.js';
import { RequestCache } from './auth.js';
import { answerWhenDurable, endWhenDurable } from '../platform/http/durable.js';

const BODY_LIMIT = 25 * 1024 * 1024;
const PREFIX = '/api/v1';

/** Zulip names the sending client after the `client` parameter, else the User-Agent's first product. */
export function clientName(param: string | undefined, userAgent: string | undefined): string {
  if (param) return param;
  const m = /^([^\s/]+)/.exec(userAgent ?? '');
  return m ? m[1] : 'Unspecified';
}

/** Text values only: the last of a repeated key wins, as Django's QueryDict.get does. */
function textParams(source: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (source instanceof URLSearchParams) {
    for (const [k, v] of source) out[k] = v;
  } else if (source && typeof source === 'object') {
    for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
      const last = Array.isArray(v) ? v[v.length - 1] : v;
      if (typeof last === 'string') out[k] = last;
    }
  }
  return out;
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
  const url = new URL(target, 'http://x');
  return { pathname: url.pathname, searchParams: url.searchParams };
}

/** Aborted when the client goes away before the answer is written ('close' before the finish). */
function goneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  if (res.destroyed && !res.writableFinished) gone.abort();
  else {
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
  }
  return gone.signal;
}

const INTERNAL_ERROR = JSON.stringify({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });

/**
 * A late answer (ChatCall.later), written straight to the response in Zulip's envelope once the
 * store is flushed: the framework's objects for the request are not needed for it. `gone` runs if
 * the client goes away first.
 */
function lateAnswer(res: ServerResponse, services: ChatServices, ignored: string[], closing: () => boolean, gone: () => void): LateAnswer {
  const head = `{"result":"success","msg":"",${ignored.length ? `"ignored_parameters_unsupported":${JSON.stringify(ignored)},` : ''}`;
  if (res.destroyed && !res.writableFinished) process.nextTick(gone); // gone already: once the handler has parked
  else {
    res.on('close', () => {
      if (!res.writableFinished) gone();
    });
  }
  return {
    send(fields) {
      const body = `${head}${fields}}`;
      const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      if (closing()) headers.connection = 'close';
      endWhenDurable(res, () => services.db.synced(), headers, body, (err) => {
        services.log.error('chat answer not durable', { error: (err as Error).stack });
        return { status: 500, body: INTERNAL_ERROR };
      }).catch((err: unknown) => {
        services.log.error('chat answer failed', { error: (err as Error).stack });
        res.destroy();
      });
    },
  };
}

function send(reply: FastifyReply, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): string | Buffer {
  reply.code(status).header('content-type', 'application/json');
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return serializeWithText(body);
}

export function createChatServer(services: ChatServices, endpoints: Endpoint[]): FastifyInstance {
  const router = new ChatRouter(endpoints);
  const cache = new RequestCache(services.db, services.clock, services.rootDomain);
  // Long-polls park for up to the heartbeat (50 s) and clients wait 90 s
  // (event_queue_longpoll_timeout_seconds): requests may live 120 s, idle keep-alive sockets 65 s
  // (longer than common proxies' 60 s), and a socket may carry any number of polls.
  const app = Fastify({
    logger: false, bodyLimit: BODY_LIMIT, keepAliveTimeout: 65_000, requestTimeout: 120_000, return503OnClosing: true,
  });
  app.server.maxRequestsPerSocket = 0;
  app.server.headersTimeout = 60_000;
  // Parked polls end at shutdown rather than holding the close up until their heartbeat. The
  // listener's close (right after this hook) drops idle keep-alive sockets once, while the polls
  // just answered are still being written: their sockets would then hold the close for the
  // keep-alive timeout (65 s). Answers written from here on ask the client to close the connection.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    services.events.close();
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
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

  async function handle(req: FastifyRequest, reply: FastifyReply): Promise<string | Buffer | undefined> {
    const url = splitTarget(req.url);
    try {
      // As Zulip's host middleware: a subdomain no realm has is refused before routing.
      const realm = await cache.realm(req.headers.host);
      const path = url.pathname.slice(PREFIX.length) || '/';
      const match = router.find(req.method, path);
      if (match.kind === 'none') throw new ChatError('BAD_REQUEST', 'Not Found', { status: 404 });
      if (match.kind === 'wrong-method') {
        throw new ChatError('BAD_REQUEST', 'Method Not Allowed', { status: 405, headers: { allow: match.allowed.join(', ') } });
      }
      const { endpoint } = match;
      const raw = { ...textParams(url.searchParams), ...textParams(req.body), ...match.pathParams };
      const user = endpoint.auth === 'user' ? await cache.user(realm.id, req.headers.authorization) : undefined;
      const { values, ignored } = decodeParams(endpoint.params, raw);
      const call: ChatCall = {
        services, realm, user, client: clientName(raw.client, req.headers['user-agent']), ip: req.ip,
        // Made when a handler asks (a parked poll): an AbortController per request costs ~5% of a ping.
        get signal() {
          const signal = goneSignal(reply.raw);
          Object.defineProperty(this, 'signal', { value: signal });
          return signal;
        },
        later(gone) {
          reply.hijack();
          return lateAnswer(reply.raw, services, ignored, () => closing, gone);
        },
      };
      const result = await endpoint.handler(call, values);
      if (result === LATER) return undefined;
      const body: Record<string, unknown> = { result: 'success', msg: '', ...result };
      if (ignored.length) body.ignored_parameters_unsupported = ignored;
      return send(reply, 200, body);
    } catch (err) {
      if (err instanceof ChatError) {
        return send(reply, err.status, { result: 'error', msg: err.message, code: err.code, ...err.extra }, err.headers);
      }
      services.log.error('chat request failed', { method: req.method, path: url.pathname, error: (err as Error).stack });
      return send(reply, 500, { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });
    }
  }

  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'], url: `${PREFIX}/*`, handler: handle });
  app.setNotFoundHandler((_req, reply) => send(reply, 404, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' }));
  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    // Body parsing failures (too large, broken multipart) arrive here before the handler.
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) services.log.error('chat request failed', { method: req.method, path: req.url, error: err.stack });
    return send(reply, status, { result: 'error', msg: status === 500 ? 'Internal server error' : err.message, code: status === 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST' });
  });
  return app;
}

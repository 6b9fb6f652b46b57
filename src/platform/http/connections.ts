// What both HTTP listeners (Infra and Chat) share about connections: one cap on open connections,
// derived from the process's open-files limit, that closes idle connections first; the header, idle
// and request timeouts; and the body limit that applies until a request is authenticated.
//
// Without these, about 20,000 idle sockets used up the open files, and accept() then failed for
// everyone. Parked Chat long-polls (up to 50 s each, 10,000 and more on a busy server) are busy
// connections: the cap never closes them to make room.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { Server, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../log.js';

/**
 * The most a request body may hold before its request is authenticated from its headers. Where the
 * credentials come in the body (Infra's APIUUID/APISECRET, session.login, Chat's fetch_api_key),
 * that body is small, so this limit applies to it too.
 */
export const OPEN_BODY_LIMIT = 64 * 1024;

export interface HttpTimeouts {
  /**
   * Until a request's headers are complete (node's headersTimeout), and, for a connection that sends
   * nothing at all, from the connect on (node's header clock starts only at the first byte).
   */
  headersMs: number;
  /** Until the whole request, body included, has arrived (node's requestTimeout). */
  requestMs: number;
  /** An idle keep-alive connection, between requests (longer than common proxies' 60 s). */
  keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = { headersMs: 20_000, requestMs: 120_000, keepAliveMs: 65_000 };

export interface OpenFilesLimit {
  soft: number;
  hard: number;
}

const parseLimit = (v: string): number => (v === 'unlimited' ? Infinity : Number(v));

/**
 * This process's open-files limit (RLIMIT_NOFILE). Node has no getrlimit: Linux shows it in
 * /proc/self/limits; elsewhere a shell started from here inherits it and `ulimit` prints it.
 * Undefined when neither works (Windows).
 */
export function readOpenFilesLimit(): OpenFilesLimit | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m) return { soft: parseLimit(m[1]), hard: parseLimit(m[2]) };
  } catch {
    // Not Linux: ask a shell.
  }
  try {
    const [soft, hard] = execFileSync('sh', ['-c', 'ulimit -Sn; ulimit -Hn'], { encoding: 'utf8', timeout: 2_000, stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split(/\s+/);
    const limit = { soft: parseLimit(soft), hard: parseLimit(hard) };
    return Number.isNaN(limit.soft) || Number.isNaN(limit.hard) ? undefined : limit;
  } catch {
    return undefined;
  }
}

/** The cap where the open-files limit is unknown or unlimited. */
const CAP_WITHOUT_LIMIT = 100_000;

/**
 * Open connections allowed under a soft open-files limit: the rest (a tenth, at least 128) is kept
 * for everything else that holds a file: the store and its pool, DNS sockets and TCP clients,
 * stdio, the runtime's own.
 */
export function connectionCapFor(soft: number | undefined): number {
  if (soft === undefined || !Number.isFinite(soft)) return CAP_WITHOUT_LIMIT;
  return Math.max(16, soft - Math.max(128, Math.floor(soft / 10)));
}

/** A response is in progress on the connection: a request being read or handled, or a parked poll. */
const busy = (socket: Socket): boolean => (socket as { _httpMessage?: unknown })._httpMessage != null;

/** How often, at most, a full cap re-reads the open-files limit (it may be raised while running, with prlimit). */
const REREAD_MS = 5_000;

/**
 * One cap on the open connections of every listener it watches (one for the process: the listeners
 * share the open files). At the cap, a new connection closes the oldest idle one (an idle keep-alive
 * connection, or one that has not finished sending its headers); a connection with a response in
 * progress, a parked long-poll among them, is never closed to make room. Only when every connection
 * is busy is the new one refused.
 */
export class ConnectionCap {
  /** Open connections, oldest first; busy ones passed over at the cap move to the end. */
  private readonly open = new Set<Socket>();
  private readonly fixed: number | undefined;
  private cap: number;
  private limitReadAt = 0;
  /** Idle connections closed to make room. */
  evicted = 0;
  /** New connections refused because every open one was busy. */
  refused = 0;

  /** `max` fixes the cap; without it the cap follows the open-files limit (connectionCapFor). */
  constructor(max?: number) {
    this.fixed = max;
    this.cap = max ?? connectionCapFor(readOpenFilesLimit()?.soft);
  }

  get max(): number {
    return this.cap;
  }

  get size(): number {
    return this.open.size;
  }

  watch(server: Server): void {
    server.on('connection', this.admit);
  }

  private readonly forget = (socket: Socket): void => {
    this.open.delete(socket);
  };

  private readonly admit = (socket: Socket): void => {
    if (this.open.size >= this.cap && !this.makeRoom()) {
      this.refused++;
      socket.destroy();
      return;
    }
    this.open.add(socket);
    socket.once('close', () => this.forget(socket));
  };

  /** Closes the oldest idle connection; false when every one is busy. */
  private makeRoom(): boolean {
    if (this.fixed === undefined && Date.now() - this.limitReadAt >= REREAD_MS) {
      this.limitReadAt = Date.now();
      this.cap = connectionCapFor(readOpenFilesLimit()?.soft);
      if (this.open.size < this.cap) return true;
    }
    // Each connection is looked at once at most: the busy ones go to the end, so a cap full of
    // parked polls is not walked from its start again at the next connection.
    let left = this.open.size;
    for (const socket of this.open) {
      if (left-- === 0) break;
      this.open.delete(socket);
      if (!busy(socket)) {
        this.evicted++;
        socket.destroy();
        return true;
      }
      this.open.add(socket);
    }
    return false;
  }
}

/** How long a connection whose answer left its request body unread goes on being read after the answer. */
const LINGER_MS = 2_000;

/**
 * Node's destroySoon, for a connection whose client may still be sending the body it was refused:
 * closed at once, the client's next bytes would draw a reset that can make it lose the answer
 * before it reads it. So the connection is half-closed, what still comes is read and dropped (node
 * drains the refused request), and it is destroyed once the client closes or after LINGER_MS.
 */
function lingeringClose(this: Socket): void {
  this.end();
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once('close', () => clearTimeout(timer));
}

/**
 * Marks an answer that refuses a request body it has not read (too large, or not yet authenticated):
 * the connection closes after it, lingering so that the client gets the answer.
 */
export function closeAfterRefusal(res: http.ServerResponse): void {
  res.shouldKeepAlive = false;
  // Node ends a connection with socket.destroySoon() once its last answer is written.
  if (res.socket) (res.socket as Socket & { destroySoon(): void }).destroySoon = lingeringClose;
}

/**
 * Marks an answer to a request whose body a reader started on but did not finish (a multipart
 * parser that stopped early on a malformed body, and the handler answered what it had). Node
 * leaves such a body alone, so its unread rest would fill the request's buffer, node would stop
 * reading the socket, and the next request on the connection (or the server's close) would wait
 * for ever. The rest is read and dropped, and the connection closes after the answer.
 */
export function closeAfterUnreadBody(req: http.IncomingMessage, res: http.ServerResponse): void {
  closeAfterRefusal(res);
  // What node does with a body its handler never touched: drop the readers, read to the end.
  (req as http.IncomingMessage & { _dump?(): void })._dump?.();
}

/**
 * The 'clientError' listener of a listener whose answers are all in one JSON envelope: node's HTTP
 * parser refuses malformed HTTP (a header section over its limit, a broken request line or header,
 * headers too slow) before any request exists, and would answer a bare status. The status node
 * means (431, 408, else 400) goes out with `body(status, reason)`, and the connection closes: what
 * follows on it can no longer be parsed.
 */
export function answerMalformedHttp(body: (status: number, reason: string) => string): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // Bad bytes after a request whose answer is still to come (a client that sent a DELETE's body
    // without announcing it, as node's own client does): that request was whole and gets its
    // answer; the connection closes after it, since what follows can no longer be parsed.
    const inFlight = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
    if (inFlight) {
      inFlight.shouldKeepAlive = false;
      inFlight.once('finish', () => socket.destroy());
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = http.STATUS_CODES[status]!;
    const text = body(status, reason);
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`, () =>
      socket.destroy(),
    );
  };
}

/** A connection silent for the timeout: closed unless a response is in progress (a parked poll, a slow handler). */
function closeIfIdle(socket: Socket): void {
  if (!busy(socket)) socket.destroy();
}

export interface HttpServerOptions {
  cap: ConnectionCap;
  timeouts?: Partial<HttpTimeouts>;
  log: Logger;
  /** Names the listener in logs. */
  name: string;
}

/**
 * A node:http server with the cap and timeouts. Its 'timeout' listener takes over node's default
 * (destroy on any socket timeout): a connection is closed for silence only when it is idle.
 */
export function createHttpServer(options: HttpServerOptions, handler: http.RequestListener): http.Server {
  const t = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  // Node checks the header and request timeouts on this period (30 s by default, which would let a
  // 20 s header timeout run to 50 s).
  const checkEvery = Math.min(5_000, Math.max(100, Math.floor(t.headersMs / 4)));
  const server = http.createServer({ headersTimeout: t.headersMs, requestTimeout: t.requestMs, keepAliveTimeout: t.keepAliveMs, connectionsCheckingInterval: checkEvery }, handler);
  // Silence on a new connection (node replaces this by the keep-alive timeout after each answer):
  // a little longer than the header timeout, so that half-sent headers get node's 408 first. Set on
  // the new socket, not as the server's timeout, which node re-arms at every request of a kept-alive
  // connection (a new timer and bound function, refreshed at every read and write) for nothing:
  // between requests the keep-alive timeout watches the connection, and a request's headers and
  // body have their own timeouts. (Measured on bare node:http: under 1 us a request, in the noise.)
  const silence = t.headersMs + 2 * checkEvery;
  server.on('connection', (socket: Socket) => socket.setTimeout(silence));
  server.on('timeout', closeIfIdle);
  options.cap.watch(server);
  // Out of open files anyway (files held elsewhere): accept() fails and node reports it on the
  // server, which without a listener would end the process. Logged at most once a minute. (A failed
  // listen is reported by whoever called listen.)
  let loggedAt = -Infinity;
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.syscall === 'listen' || err.syscall === 'bind' || Date.now() - loggedAt < 60_000) return;
    loggedAt = Date.now();
    options.log.error(`${options.name} listener error`, { code: err.code, syscall: err.syscall, open: options.cap.size, cap: options.cap.max });
  });
  return server;
}

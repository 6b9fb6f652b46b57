// The one node:http listener both services run on: the connection cap and timeouts
// (connections.ts), malformed HTTP answered in the service's envelope, answers written once the
// store is flushed (durable.ts), client-gone detection for parked long-polls, a close() that asks
// the clients still connected to close, and inject() for tests. The service gives one handler for
// every request and keeps its own dialect (parameters, envelope, statuses).
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import { answerMalformedHttp, ConnectionCap, createHttpServer, type HttpTimeouts } from './connections.js';
import { endWhenDurable, type AnswerBody, type DurableFailure, type Flushes } from './durable.js';
import { inject, type InjectOptions, type InjectResponse } from './inject.js';

/** What each service's factory gives its caller (`keel serve`, the tests). */
export interface HttpService {
  /** The node:http server (its address once listening). */
  readonly server: http.Server;
  listen(at: { host: string; port: number; backlog?: number }): Promise<void>;
  /** Stops accepting, ends idle keep-alive connections, and resolves once every connection is gone. */
  close(): Promise<void>;
  /** Runs a request through the whole listener without a network socket (tests). */
  inject(options: InjectOptions | string): Promise<InjectResponse>;
}

export interface ListenerOptions {
  /** Names the listener in logs. */
  name: string;
  log: Logger;
  /** What answers wait for (durable.ts). */
  store: Flushes;
  /** Shared with the other listeners of the process; by default one of its own, from the open-files limit. */
  cap?: ConnectionCap;
  timeouts?: Partial<HttpTimeouts>;
  /** The body answering malformed HTTP that node's parser refuses, in the service's envelope. */
  malformed: (status: number, reason: string) => string;
  /** Runs when close() begins, before the server stops accepting (Chat answers its parked polls). */
  onClosing?: () => void;
  /** Runs once every connection is gone. */
  onClosed?: () => Promise<void>;
}

/**
 * Runs `gone` if the client goes away before the answer is written ('close' before the finish).
 * True, without running it, when the client is gone already.
 */
export function onClientGone(res: ServerResponse, gone: () => void): boolean {
  if (res.destroyed && !res.writableFinished) return true;
  res.once('close', () => {
    if (!res.writableFinished) gone();
  });
  return false;
}

/** Aborted when the client goes away before the answer is written. */
export function goneSignal(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  if (onClientGone(res, () => gone.abort())) gone.abort();
  return gone.signal;
}

export class Listener implements HttpService {
  readonly server: http.Server;
  /** Set when close() begins: answers from then on ask the client to close the connection. */
  closing = false;
  private readonly options: ListenerOptions;

  constructor(options: ListenerOptions, handler: (req: IncomingMessage, res: ServerResponse) => void) {
    this.options = options;
    this.server = createHttpServer({ cap: options.cap ?? new ConnectionCap(), timeouts: options.timeouts, log: options.log, name: options.name }, handler);
    this.server.on('clientError', answerMalformedHttp(options.malformed));
  }

  /**
   * Writes a whole answer in one `res.end` once the store is flushed (endWhenDurable): at once, and
   * undefined, when there is nothing to flush (most reads); `onFailure` gives what is sent instead when
   * the flush fails. Never rejects: a failed write is logged and ends the connection.
   */
  answer(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: AnswerBody, onFailure: (err: unknown) => DurableFailure): Promise<void> | undefined {
    // Connections still open when close() began end after their answer.
    if (this.closing) res.shouldKeepAlive = false;
    let written: Promise<void> | undefined;
    try {
      written = endWhenDurable(res, this.options.store, headers, body, onFailure, status);
    } catch (err) {
      this.failed(res, err);
      return undefined;
    }
    return written?.catch((err: unknown) => this.failed(res, err));
  }

  private failed(res: ServerResponse, err: unknown): void {
    this.options.log.error(`${this.options.name} answer failed`, { error: (err as Error).stack });
    res.destroy();
  }

  listen({ host, port, backlog }: { host: string; port: number; backlog?: number }): Promise<void> {
    const server = this.server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, backlog }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** Once: a second call waits for the first. */
  close(): Promise<void> {
    return (this.closed ??= this.closeOnce());
  }

  private closed: Promise<void> | undefined;

  private async closeOnce(): Promise<void> {
    this.closing = true;
    this.options.onClosing?.();
    if (this.server.listening) {
      await new Promise<void>((resolve) => {
        this.server.close(() => resolve());
        // Idle keep-alive connections end now; the others after their answer (closing).
        this.server.closeIdleConnections();
      });
    }
    await this.options.onClosed?.();
  }

  inject(options: InjectOptions | string): Promise<InjectResponse> {
    return inject(this.server, options);
  }
}

// Reading a request body under a limit: 64 KB (OPEN_BODY_LIMIT) until the request is authenticated
// from its headers, the service's larger limit after. Nothing over the limit is read.
import type { IncomingMessage } from 'node:http';
import { OPEN_BODY_LIMIT } from './connections.js';

/** A body over the limit: announced so (nothing of it read), or found so while reading (chunked). */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`Request body too large: the limit is ${limit} bytes`);
    this.limit = limit;
  }
}

/** The client went away before the body was whole: nobody to answer. */
export class ClientGone extends Error {}

/** Whether a request announces a body that is not empty (the Go client sends {} with GET). */
export const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** Whether a body is announced within OPEN_BODY_LIMIT: read without asking who sends it. */
export const smallBody = (req: IncomingMessage): boolean => {
  const length = req.headers['content-length'];
  return length !== undefined && req.headers['transfer-encoding'] === undefined && Number(length) <= OPEN_BODY_LIMIT;
};

/**
 * How much of a body may be read: `authenticatedLimit` when `authenticated()` finds valid credentials
 * in the headers, else OPEN_BODY_LIMIT (credentials sent in a body fit in that). Asked only for a body
 * announced over OPEN_BODY_LIMIT or of unknown length (chunked): nothing more is read before that.
 */
export function bodyLimit(req: IncomingMessage, authenticatedLimit: number, authenticated: () => boolean | Promise<boolean>): number | Promise<number> {
  if (smallBody(req)) return OPEN_BODY_LIMIT;
  const known = authenticated();
  if (known instanceof Promise) return known.then((k) => (k ? authenticatedLimit : OPEN_BODY_LIMIT));
  return known ? authenticatedLimit : OPEN_BODY_LIMIT;
}

function joined(chunks: Buffer[], size: number): Buffer {
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/**
 * The whole body, read on any method. Read in flowing mode: the parser hands each chunk straight to
 * the 'data' listener (no buffering, no 'readable' tick), and a body with a Content-Length is whole
 * as soon as that many bytes came, without waiting for 'end'; chunked bodies end at 'end'. Over
 * `limit`, refused (BodyTooLarge) without reading further, or at all when announced; the rest is read
 * and dropped by node, and the answer should close the connection (closeAfterRefusal).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const expected = chunked || length === undefined ? -1 : Number(length);
  if (expected > limit) return Promise.reject(new BodyTooLarge(limit));
  // No named closure here, from the days `keel` ran through tsx (esbuild's keepNames renamed each one
  // as it was made, ~2 us per request); the compiled program no longer pays that (docs/decisions/infra-http.md).
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    req.on('data', (c: Buffer) => {
      if (settled) return;
      size += c.length;
      if (size > limit) {
        settled = true;
        chunks = [];
        reject(new BodyTooLarge(limit));
        return;
      }
      chunks.push(c);
      if (size === expected) {
        settled = true;
        resolve(joined(chunks, size));
      }
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(joined(chunks, size));
    });
    // Gone before the body was whole. ('error' is emitted only to listeners.)
    req.on('close', () => {
      if (!settled) {
        settled = true;
        reject(new ClientGone());
      }
    });
  });
}

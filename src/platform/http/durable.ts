// No answer leaves before the writes it may acknowledge are on stable storage (see Database.synced):
// every answer of both listeners, late ones included, is written through endWhenDurable.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Database } from '../db/database.js';

/** What to send instead when the flush failed: a body (status 200, the Infra envelope) or a status and body. */
export type DurableFailure = string | { status: number; body: string };

/** What an answer waits for: the store's flushes (Database.synced and Database.durable). */
export type Flushes = Pick<Database<unknown>, 'synced' | 'durable'>;

/** An answer's body: text, bytes, or bytes in pieces (shared, cached ones among them) written in one go. */
export type AnswerBody = string | Buffer | readonly Buffer[];

/** The body's length in bytes, for Content-Length. */
export function bodyLength(body: AnswerBody): number {
  if (typeof body === 'string' || Buffer.isBuffer(body)) return Buffer.byteLength(body);
  let n = 0;
  for (const piece of body as readonly Buffer[]) n += piece.length;
  return n;
}

/** Ends the response with the whole body: pieces are written corked, so they leave in one writev, uncopied. */
function endWith(res: ServerResponse, body: AnswerBody): void {
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    res.end(body);
    return;
  }
  res.cork();
  for (const piece of body as readonly Buffer[]) res.write(piece);
  res.end();
  res.uncork();
}

/**
 * Writes a whole answer in one `res.end`, at once when the store has nothing to flush (most reads),
 * else once `synced()` resolves; undefined when it was written at once. If the flush fails nothing
 * that answer might acknowledge is promised: `onFailure` gives the answer sent instead.
 */
export function endWhenDurable(
  res: ServerResponse,
  store: Flushes,
  headers: OutgoingHttpHeaders,
  body: AnswerBody,
  onFailure: (err: unknown) => DurableFailure,
  status = 200,
): Promise<void> | undefined {
  if (store.durable()) {
    res.writeHead(status, headers);
    endWith(res, body);
    return undefined;
  }
  return store.synced().then(
    () => {
      res.writeHead(status, headers);
      endWith(res, body);
    },
    (err: unknown) => {
      const failed = onFailure(err);
      const [code, text] = typeof failed === 'string' ? [status, failed] : [failed.status, failed.body];
      // The failure's text goes as it is: a compressed answer's encoding is not its.
      const plain: OutgoingHttpHeaders = {};
      for (const name in headers) if (name !== 'content-encoding') plain[name] = headers[name];
      plain['content-length'] = Buffer.byteLength(text);
      res.writeHead(code, plain);
      res.end(text);
    },
  );
}

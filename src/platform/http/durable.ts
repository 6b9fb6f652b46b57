// No answer leaves before the writes it may acknowledge are on stable storage (see Database.synced):
// every answer of both listeners, late ones included, is written through endWhenDurable.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Database } from '../db/database.js';

/** What to send instead when the flush failed: a body (status 200, the Infra envelope) or a status and body. */
export type DurableFailure = string | { status: number; body: string };

/** What an answer waits for: the store's flushes (Database.synced and Database.durable). */
export type Flushes = Pick<Database<unknown>, 'synced' | 'durable'>;

/**
 * Writes a whole answer in one `res.end`, at once when the store has nothing to flush (most reads),
 * else once `synced()` resolves; undefined when it was written at once. If the flush fails nothing
 * that answer might acknowledge is promised: `onFailure` gives the answer sent instead.
 */
export function endWhenDurable(
  res: ServerResponse,
  store: Flushes,
  headers: OutgoingHttpHeaders,
  body: string | Buffer,
  onFailure: (err: unknown) => DurableFailure,
  status = 200,
): Promise<void> | undefined {
  if (store.durable()) {
    res.writeHead(status, headers);
    res.end(body);
    return undefined;
  }
  return store.synced().then(
    () => {
      res.writeHead(status, headers);
      res.end(body);
    },
    (err: unknown) => {
      const failed = onFailure(err);
      const [code, text] = typeof failed === 'string' ? [status, failed] : [failed.status, failed.body];
      res.writeHead(code, { ...headers, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    },
  );
}

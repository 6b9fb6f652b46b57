// No answer leaves before the writes it may acknowledge are on stable storage (see Database.synced).
// Chat answers through fastify (a hook); the Infra listener is plain node:http (endWhenDurable).
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

export function answerWhenDurable(app: FastifyInstance, synced: () => Promise<void>): void {
  app.addHook('onSend', async (_req, _reply, payload) => {
    await synced();
    return payload;
  });
}

/**
 * Writes a whole answer once `synced()` resolves, in one `res.end`. If the flush fails nothing that
 * answer might acknowledge is promised: `onFailure` gives the body sent instead.
 */
export async function endWhenDurable(
  res: ServerResponse,
  synced: () => Promise<void>,
  headers: OutgoingHttpHeaders,
  body: string,
  onFailure: (err: unknown) => string,
): Promise<void> {
  try {
    await synced();
  } catch (err) {
    body = onFailure(err);
    headers = { ...headers, 'content-length': Buffer.byteLength(body) };
  }
  res.writeHead(200, headers);
  res.end(body);
}

// No answer leaves before the writes it may acknowledge are on stable storage (see Database.synced).
// Chat's fastify answers wait in a hook; its other answers (bodiless GETs, late answers) and the
// Infra listener's, written on plain node:http, through endWhenDurable.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

export function answerWhenDurable(app: FastifyInstance, synced: () => Promise<void>): void {
  app.addHook('onSend', async (_req, _reply, payload) => {
    await synced();
    return payload;
  });
}

/** What to send instead when the flush failed: a body (status 200, the Infra envelope) or a status and body. */
export type DurableFailure = string | { status: number; body: string };

/**
 * Writes a whole answer once `synced()` resolves, in one `res.end`. If the flush fails nothing that
 * answer might acknowledge is promised: `onFailure` gives the answer sent instead.
 */
export async function endWhenDurable(
  res: ServerResponse,
  synced: () => Promise<void>,
  headers: OutgoingHttpHeaders,
  body: string | Buffer,
  onFailure: (err: unknown) => DurableFailure,
  status = 200,
): Promise<void> {
  try {
    await synced();
  } catch (err) {
    const failed = onFailure(err);
    if (typeof failed === 'string') body = failed;
    else ({ status, body } = failed);
    headers = { ...headers, 'content-length': Buffer.byteLength(body) };
  }
  res.writeHead(status, headers);
  res.end(body);
}

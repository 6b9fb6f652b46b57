// No answer leaves before the writes it may acknowledge are on stable storage (see Database.synced).
import type { FastifyInstance } from 'fastify';

export function answerWhenDurable(app: FastifyInstance, synced: () => Promise<void>): void {
  app.addHook('onSend', async (_req, _reply, payload) => {
    await synced();
    return payload;
  });
}

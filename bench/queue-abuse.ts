// One ordinary user abusing event queues against a real `keel serve` (SQLite): registers many queues
// (55,000 in the report that found it; KEEL_BENCH_ABUSE_QUEUES, 10,000 by default to keep the run
// short), never polls them, then 400 messages reach every one. Measures the server's RSS after the
// registrations and after the messages, what a graceful stop saves of the queues, and the RSS of
// the next start with them restored. The hub's bounds (src/chat/events/hub.ts HubLimits) should
// keep all of it small and flat however many queues are registered.
import { setTimeout as sleep } from 'node:timers/promises';
import { createStorage, startServer, type RunningServer } from '../test/helpers/server.js';
import { openDatabase } from '../src/platform/db/open.js';
import { MIGRATIONS } from '../src/app.js';
import type { ChatTables } from '../src/chat/tables.js';
import { basicAuth, chatCall, inParallel, note, rssMiB, type Benchmark, type Figure } from './lib.js';

const QUEUES = Number(process.env.KEEL_BENCH_ABUSE_QUEUES ?? 10_000);
const MESSAGES = 400;
const CHANNEL = 'bench-abuse';
/** Bounds the figures should stay under (the report's were 1.82 GB after the messages, 187 MB saved, 618 MB restarted). */
const RSS_TARGET_MIB = 400;
const SAVED_TARGET_MIB = 20;

/** RSS once the server has had a moment to settle (a GC after the burst). */
async function settledRss(server: RunningServer): Promise<number> {
  await sleep(1000);
  return rssMiB(server.process.pid!) ?? NaN;
}

export const benchmark: Benchmark = {
  name: 'queue-abuse',
  summary: `one user registers ${QUEUES} event queues and never polls them; ${MESSAGES} messages reach them; stop and start again`,
  async run(): Promise<Figure[]> {
    const storage = await createStorage('sqlite');
    let server: RunningServer | undefined;
    try {
      server = await startServer(storage);
      const chatUrl = server.chatUrl;
      const owner = basicAuth(server.chatSecrets!.email, server.chatSecrets!.apiKey);
      await chatCall(chatUrl, owner, '/users', { email: 'abuser@bench.test', password: 'bench-pass-1', full_name: 'Abuser' });
      const key = (await chatCall(chatUrl, undefined, '/fetch_api_key', { username: 'abuser@bench.test', password: 'bench-pass-1' })) as { email: string; api_key: string; user_id: number };
      const abuser = basicAuth(key.email, key.api_key);
      await chatCall(chatUrl, owner, '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: CHANNEL }]), principals: JSON.stringify([key.user_id]) });
      const idle = await settledRss(server);

      const started = Date.now();
      const registered = await inParallel(
        Array.from({ length: QUEUES }),
        8,
        async () => ((await chatCall(chatUrl, abuser, '/register', { event_types: '["message"]', fetch_event_types: '[]' })) as { queue_id: string }).queue_id,
      );
      note(`${QUEUES} registrations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const afterRegs = await settledRss(server);

      for (let i = 0; i < MESSAGES; i++) {
        await chatCall(chatUrl, owner, '/messages', { type: 'stream', to: CHANNEL, topic: 'abuse', content: `message ${i} ${'x'.repeat(200)}` });
      }
      const afterMessages = await settledRss(server);
      // Whether the first and the last queues registered are still live (a dont_block poll answers at once).
      const isLive = async (queueId: string) => {
        const res = await fetch(`${chatUrl}/api/v1/events?queue_id=${queueId}&last_event_id=-1&dont_block=true`, { headers: { authorization: abuser } });
        await res.arrayBuffer();
        return res.ok;
      };
      let firstLive = 0;
      let lastLive = 0;
      for (const queueId of registered.slice(0, 10)) if (await isLive(queueId)) firstLive++;
      for (const queueId of registered.slice(-10)) if (await isLive(queueId)) lastLive++;

      await server.stop();
      server = undefined;
      const db = await openDatabase<ChatTables>({ dataDir: storage.dataDir, migrations: MIGRATIONS });
      let saved: { rows: number; bytes: number };
      try {
        const rows = await db.kysely.selectFrom('chat_event_queues').select(['events', 'narrow', 'event_types', 'client_capabilities']).execute();
        saved = { rows: rows.length, bytes: rows.reduce((n, r) => n + r.events.length + r.narrow.length + (r.event_types?.length ?? 0) + r.client_capabilities.length, 0) };
      } finally {
        await db.close();
      }
      server = await startServer(storage);
      const restarted = await settledRss(server);
      note(`live after the messages: ${firstLive} of the first 10 queues registered, ${lastLive} of the last 10; saved at the stop: ${saved.rows} queues`);
      const savedMiB = Math.round((saved.bytes / 1024 / 1024) * 10) / 10;
      return [
        { name: 'idle', value: idle, unit: 'MiB RSS', detail: 'before the registrations' },
        { name: 'regs', value: afterRegs, unit: 'MiB RSS', atMost: RSS_TARGET_MIB, detail: `after ${QUEUES} registrations` },
        { name: 'msgs', value: afterMessages, unit: 'MiB RSS', atMost: RSS_TARGET_MIB, detail: `after ${MESSAGES} messages to every queue` },
        { name: 'saved', value: savedMiB, unit: 'MiB', atMost: SAVED_TARGET_MIB, detail: `${saved.rows} queues saved by the graceful stop` },
        { name: 'restart', value: restarted, unit: 'MiB RSS', atMost: RSS_TARGET_MIB, detail: 'the next start, queues restored' },
      ];
    } finally {
      await server?.stop();
      await storage.dispose();
    }
  },
};

// Scheduled messages on a real `keel serve`, on both engines, over raw HTTP as Zulip's Python client
// sends: the scheduler started by the server wakes for the next due message by itself; messages due
// while the server was down go out when it starts; and a server killed with SIGKILL in the middle
// of delivering sends, once restarted, every message exactly once (the delivered mark commits with
// the message).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { MIGRATIONS } from '../../../src/app.js';
import type { ChatTables } from '../../../src/chat/tables.js';

/** Polls until `done` holds (or fails after `ms`), returning its last value. */
async function until<T>(what: string, ms: number, probe: () => Promise<T>, done: (v: T) => boolean, everyMs = 25): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await sleep(everyMs);
  }
}

await forEachEngine('chat scheduled messages on a real server', (engine) => {
  let realm: ServedRealm;
  let server: RunningServer;
  let channel: number;
  const owner = () => new ChatClient(server.chatUrl, realm.server.chatSecrets!.email, realm.server.chatSecrets!.apiKey);
  const pending = async () => ((await owner().get('/scheduled_messages')).body.scheduled_messages as unknown[]).length;
  const topicContents = async (topic: string) =>
    (
      (
        await owner().get('/messages', {
          anchor: 'newest',
          num_before: 5000,
          num_after: 0,
          apply_markdown: false,
          narrow: [
            { operator: 'channel', operand: channel },
            { operator: 'topic', operand: topic },
          ],
        })
      ).body.messages as { content: string }[]
    ).map((m) => m.content);

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann'], channel: { name: 'town', subscribers: ['owner', 'ann'] } });
    server = realm.server;
    channel = realm.channelId;
  });
  after(async () => {
    await server?.stop();
    await realm?.storage.dispose();
  });

  it('wakes by itself when the next message comes due, and sends it', async () => {
    const at = Math.floor(Date.now() / 1000) + 2;
    const r = await owner().post('/scheduled_messages', { type: 'stream', to: channel, topic: 'soon', content: 'tick', scheduled_delivery_timestamp: at });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await until(
      'the delivery',
      20_000,
      () => topicContents('soon'),
      (c) => c.length === 1,
    );
    assert.equal(await pending(), 0);
    assert.ok(Date.now() >= at * 1000, 'not before its time');
  });

  it('after SIGKILL in the middle of delivering, sends every message exactly once; what came due while down goes out at start', async () => {
    const n = 400;
    const far = Math.floor(Date.now() / 1000) + 3600;
    for (let i = 0; i < n; i += 20) {
      const batch = Array.from({ length: Math.min(20, n - i) }, (_, j) =>
        owner().post('/scheduled_messages', { type: 'stream', to: channel, topic: 'crash', content: `c${i + j}`, scheduled_delivery_timestamp: far }),
      );
      for (const r of await Promise.all(batch)) assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    // Down, and meanwhile every one of them comes due.
    assert.equal(await server.stop(), 0);
    const db = await openDatabase<ChatTables>({ dataDir: realm.storage.dataDir, databaseUrl: realm.storage.databaseUrl, migrations: MIGRATIONS });
    try {
      await db.kysely
        .updateTable('scheduled_messages')
        .set({ scheduled_timestamp: Math.floor(Date.now() / 1000) - 1 })
        .where('delivered', '=', 0)
        .execute();
    } finally {
      await db.close();
    }
    // The start delivers them; kill it while it does.
    server = await startServer(realm.storage);
    const left = await until('deliveries to begin', 30_000, pending, (k) => k < n, 5);
    await server.kill9();
    assert.ok(left > 0, `the server was killed after all ${n} were sent: nothing was interrupted`);
    console.log(`# killed with ${n - left} of ${n} delivered`);
    server = await startServer(realm.storage);
    await until('the rest to be delivered', 60_000, pending, (k) => k === 0, 100);
    const contents = await topicContents('crash');
    assert.equal(contents.length, n, 'no message sent twice, none lost');
    assert.deepEqual([...contents].sort(), Array.from({ length: n }, (_, i) => `c${i}`).sort());
  });
});

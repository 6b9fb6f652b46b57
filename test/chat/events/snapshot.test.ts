// POST /register's snapshot cannot race a concurrent write: each message sent while queues are
// being registered is either in the registered state or delivered on the queue, never both and
// never neither. Plus the gate that guarantees it, on its own.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat } from '../../helpers/in-process-chat.js';
import { SnapshotGate } from '../../../src/chat/events/gate.js';
import { readFileSync } from 'node:fs';
import { referenceMissing, ZULIP_OPENAPI_PATH } from '../../helpers/zulip-openapi.js';
import { SUPPORTED_STATE } from '../../../src/chat/events/state.js';

/**
 * The register answer's keys the reference says are present when a fetch_event_types key is asked
 * for ("Present if `realm` is present in `fetch_event_types`"), by that key: read from the
 * register-queue operation of the Zulip OpenAPI document.
 */
function documentedStateKeys(): Map<string, string> {
  const lines = readFileSync(ZULIP_OPENAPI_PATH, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.includes('operationId: register-queue'));
  const end = lines.findIndex((l, i) => i > start && /^ {2}\//.test(l));
  const out = new Map<string, string>();
  for (let i = start; i < end; i++) {
    const key = /^ {22}([a-z_0-9]+):\s*$/.exec(lines[i]!)?.[1];
    if (!key) continue;
    const near = lines.slice(i + 1, i + 8).join(' ');
    const when = /Present if `([a-z_]+)` is present in `fetch_event_types`/.exec(near)?.[1];
    if (when && !out.has(key)) out.set(key, when);
  }
  return out;
}

/** Keys Keel leaves out, and why. */
const NOT_ANSWERED: Record<string, string> = {
  server_supported_permission_settings: 'the permission settings metadata is not built yet',
  jitsi_server_url: 'deprecated, and Keel has no video calls (realm_jitsi_server_url and server_jitsi_server_url are null)',
};

it('the gate never lets a write and a snapshot run at the same time, and starves neither', async () => {
  const gate = new SnapshotGate();
  const log: string[] = [];
  let writes = 0;
  let snapshots = 0;
  const pause = () => new Promise((r) => setTimeout(r, 1));
  const write = (n: number) =>
    gate.write(async () => {
      writes++;
      assert.equal(snapshots, 0, 'no snapshot while a write runs');
      await pause();
      log.push(`w${n}`);
      writes--;
    });
  const snap = (n: number) =>
    gate.snapshot(async () => {
      snapshots++;
      assert.equal(writes, 0, 'no write while a snapshot runs');
      await pause();
      log.push(`s${n}`);
      snapshots--;
    });
  await Promise.all([write(1), write(2), snap(1), write(3), snap(2), write(4)]);
  // Writes 1-2 were running; the snapshots waited for them, and write 3 and 4 waited behind the snapshots.
  assert.deepEqual(log.slice(0, 2).sort(), ['w1', 'w2']);
  assert.deepEqual(log.slice(2, 4).sort(), ['s1', 's2']);
  assert.deepEqual(log.slice(4).sort(), ['w3', 'w4']);
});

await forEachEngine('chat register snapshot', (engine) => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;
  before(async () => {
    ({ storage, chat } = await inProcessRealm(engine, { members: ['alice'], channel: { name: 'general', subscribers: ['alice'] } }));
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  it('a message sent while registering is either in the state or on the queue, exactly once', async () => {
    const alice = chat.client('alice@example.com', await keyOf('alice@example.com'));
    const placements = { state: 0, queue: 0 };
    for (let i = 0; i < 40; i++) {
      // Start the registration 0..19 event-loop turns after the send, so that the send's commit
      // lands before, during and after the state read across the iterations.
      const sending = chat.owner.call('POST', '/messages', { type: 'stream', to: 'general', topic: 'race', content: `m${i}` });
      const registering = (async () => {
        for (let t = 0; t < i % 20; t++) await new Promise((r) => setImmediate(r));
        return alice.call('POST', '/register', { fetch_event_types: ['message'], event_types: ['message'] });
      })();
      const [sent, reg] = await Promise.all([sending, registering]);
      const id = sent.body.id as number;
      const inState = reg.body.max_message_id >= id;
      const unread = reg.body.unread_msgs.streams.flatMap((s: { unread_message_ids: number[] }) => s.unread_message_ids).includes(id);
      assert.equal(unread, inState, 'unread_msgs and max_message_id agree');
      const events = (await alice.call('GET', '/events', { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true })).body.events;
      const onQueue = events.filter((e: { message?: { id: number } }) => e.message?.id === id).length;
      assert.equal(Number(inState) + onQueue, 1, `message ${id}: in state ${inState}, on queue ${onQueue} times`);
      placements[inState ? 'state' : 'queue']++;
      await alice.call('DELETE', '/events', { queue_id: reg.body.queue_id });
    }
    console.log(`# snapshot race: ${placements.state} messages landed in the state, ${placements.queue} on the queue`);
  });

  it('answers every key the reference documents for each fetch_event_types key it supports', { skip: referenceMissing() ?? false }, async () => {
    const state = (await chat.owner.call('POST', '/register', {})).body;
    const supported = new Set<string>(SUPPORTED_STATE);
    const missing = [...documentedStateKeys()].filter(([key, when]) => supported.has(when) && !(key in state) && !(key in NOT_ANSWERED));
    assert.deepEqual(missing, []);
    await chat.owner.call('DELETE', '/events', { queue_id: state.queue_id });
  });

  async function keyOf(email: string): Promise<string> {
    const r = await chat.app.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `username=${encodeURIComponent(email)}&password=pass-word-1`,
    });
    return (JSON.parse(r.body) as { api_key: string }).api_key;
  }
});

// Event queues across a restart (issue 5). Black-box: a real `keel serve` stopped with SIGTERM keeps
// a client's queue, so polling the old queue_id on the next start gives the pending message event
// and then `restart`; kill -9 keeps nothing (BAD_EVENT_QUEUE_ID, as Zulip). Unit: the save and load
// of every queue field, expiry by the clock, the rows taken once, and event_types honoured.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { buildConfig } from '../../../src/config/config.js';
import { readOptions } from '../../../src/config/env.js';
import { openCore, type Core } from '../../../src/app.js';
import { EventHub } from '../../../src/chat/events/hub.js';
import { restoreQueues, saveQueues } from '../../../src/chat/events/persist.js';
import type { QueueOptions } from '../../../src/chat/events/queue.js';
import { ManualClock } from '../../../src/platform/clock.js';
import { createLogger } from '../../../src/platform/log.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from '../../../src/chat/version.js';

type Ev = Record<string, any>;

await forEachEngine('chat event queues across a restart (keel serve)', (engine) => {
  let storage: Storage;
  let server: RunningServer | undefined;
  let owner: ChatClient;
  let ownerEmail: string, ownerKey: string;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    ownerEmail = server.chatSecrets!.email;
    ownerKey = server.chatSecrets!.apiKey;
    owner = new ChatClient(server.chatUrl, ownerEmail, ownerKey);
    const sub = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  /** Stops the running server the given way and starts it again on the same storage. */
  async function restart(how: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    if (how === 'SIGTERM') assert.equal(await server!.stop(), 0, 'a graceful stop exits 0');
    else await server!.kill9();
    server = undefined;
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, ownerEmail, ownerKey);
  }

  it('gives the pending events and then restart on the old queue after SIGTERM, even with a poll parked at the stop', async () => {
    const reg = await owner.post('/register', { event_types: ['message', 'restart'], fetch_event_types: ['zulip_version'] });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    const queueId = reg.body.queue_id as string;
    const sent = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'before the restart', content: 'not polled yet' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    // A second queue that has a poll parked when the stop comes: the stop answers it and keeps it.
    const other = (await owner.post('/register', { event_types: ['message', 'restart'], fetch_event_types: [] })).body.queue_id as string;
    const parked = owner.get('/events', { queue_id: other, last_event_id: -1 });
    // Nothing outside the server shows a poll is parked; on loopback 200 ms is ample for it to get there.
    await new Promise((r) => setTimeout(r, 200));
    const startedAt = Math.floor(Date.now() / 1000);

    await restart('SIGTERM');
    const answered = await parked;
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.deepEqual(answered.body.events, [], 'the stop ends the parked poll empty');
    // Else its idle keep-alive socket would hold the stop for the 65 s keep-alive timeout.
    assert.equal(answered.headers.get('connection'), 'close');

    const polled = await owner.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal(polled.status, 200, JSON.stringify(polled.body));
    const events = polled.body.events as Ev[];
    assert.deepEqual(
      events.map((e) => e.type),
      ['message', 'restart'],
    );
    assert.equal(events[0].id, 0);
    assert.equal(events[0].message.id, sent.body.id);
    assert.equal(events[0].message.content, 'not polled yet');
    const r = events[1];
    assert.equal(r.id, 1, 'ids go on from the old numbering');
    assert.equal(r.zulip_version, ZULIP_VERSION);
    assert.equal(r.zulip_feature_level, ZULIP_FEATURE_LEVEL);
    assert.equal(r.zulip_merge_base, '');
    assert.ok(r.server_generation >= startedAt && r.server_generation <= Math.floor(Date.now() / 1000) + 1, `server_generation ${r.server_generation}`);

    // The restored queue is live: acknowledged events go, new ones arrive with the next id.
    const next = owner.get('/events', { queue_id: queueId, last_event_id: 1 });
    const sent2 = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'after the restart', content: 'polled live' });
    const live = await next;
    assert.deepEqual(
      live.body.events.map((e: Ev) => [e.id, e.type, e.message?.id]),
      [[2, 'message', sent2.body.id]],
    );

    const second = await owner.get('/events', { queue_id: other, last_event_id: -1, dont_block: true });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    // Registered after the first message: it has restart, then the message sent since.
    assert.deepEqual(
      second.body.events.map((e: Ev) => [e.id, e.type, e.message?.id]),
      [
        [0, 'restart', undefined],
        [1, 'message', sent2.body.id],
      ],
      'the queue whose poll was parked was kept',
    );
  });

  it('loses the queues on kill -9: the old queue is BAD_EVENT_QUEUE_ID', async () => {
    const reg = await owner.post('/register', { event_types: ['message'], fetch_event_types: [] });
    const queueId = reg.body.queue_id as string;
    await restart('SIGKILL');
    const polled = await owner.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal(polled.status, 400);
    assert.equal(polled.body.code, 'BAD_EVENT_QUEUE_ID');
    assert.equal(polled.body.queue_id, queueId);
  });
});

await forEachEngine('saving and loading event queues', (engine) => {
  let storage: Storage;
  let ctx: Core;
  const clock = new ManualClock(Date.UTC(2025, 0, 1));
  const log = createLogger('error');
  let userId: number, realmId: number;

  before(async () => {
    storage = await createStorage(engine);
    ctx = await openCore(buildConfig(readOptions(storageArgs(storage), {}).options), { clock, log });
    const me = await ctx.chatDb.kysely.selectFrom('chat_users').select(['id', 'realm_id']).where('email', '=', ctx.chatCreated!.email).executeTakeFirstOrThrow();
    userId = me.id;
    realmId = me.realm_id;
  });
  after(async () => {
    await ctx?.close();
    await storage?.dispose();
  });

  const options = (o: Partial<QueueOptions> = {}): QueueOptions => ({
    userId,
    realmId,
    eventTypes: null,
    narrow: [],
    allPublicStreams: false,
    applyMarkdown: false,
    clientGravatar: true,
    capabilities: {},
    ...o,
  });
  const hub = () => new EventHub(clock, log, { sweepEveryMs: 0 });
  const countRows = async () => (await ctx.chatDb.kysely.selectFrom('chat_event_queues').select('queue_id').execute()).length;

  it('keeps every field of a queue, its unacknowledged events and its numbering; appends restart; takes the rows once', async () => {
    const before = hub();
    const q = before.create(
      options({
        eventTypes: new Set(['message', 'restart', 'typing']),
        narrow: [
          { operator: 'channel', operand: 'general', negated: false },
          { operator: 'is', operand: 'starred', negated: true },
        ],
        allPublicStreams: true,
        applyMarkdown: true,
        clientGravatar: false,
        capabilities: { empty_topic_name: true, notification_settings_null: false },
      }),
    );
    for (let i = 0; i < 4; i++) q.push({ type: 'typing', op: 'start', n: i, nested: { list: [i, 'x'] } });
    q.acknowledge(1);
    clock.advance(30_000);
    q.lastActivity = clock.now();
    const plain = before.create(options());
    assert.equal(await saveQueues(before, ctx.chatDb, clock.now()), 2);
    assert.equal(await countRows(), 2);

    clock.advance(60_000);
    const afterHub = hub();
    assert.deepEqual(await restoreQueues(afterHub, ctx.chatDb, clock.now(), log), { restored: 2, expired: 0 });
    assert.equal(await countRows(), 0, 'the start deleted what it took');
    const r = afterHub.queueOf(q.id, userId);
    assert.deepEqual(r.options, q.options);
    assert.equal(r.acknowledgedId, 1);
    assert.equal(r.lastActivity, q.lastActivity, 'idle time counts from the last poll, across the restart');
    assert.deepEqual(
      r.events.slice(0, 2).map((e) => e.wire()),
      q.events.map((e) => e.wire()),
    );
    assert.deepEqual(
      r.events.map((e) => e.id),
      [2, 3, 4],
    );
    assert.deepEqual(r.events[2].wire(), {
      type: 'restart',
      id: 4,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: '',
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      server_generation: Math.floor(clock.now() / 1000),
    });
    assert.deepEqual(
      afterHub.queueOf(plain.id, userId).events.map((e) => [e.id, e.type]),
      [[0, 'restart']],
    );
    // The restored queue is indexed like a new one: a notice to its user reaches it.
    afterHub.publish([{ type: 'typing', userIds: [userId], render: () => ({ type: 'typing', op: 'stop' }) }]);
    assert.deepEqual(
      r.events.map((e) => e.id),
      [2, 3, 4, 5],
    );
    assert.deepEqual(await restoreQueues(hub(), ctx.chatDb, clock.now(), log), { restored: 0, expired: 0 }, 'a second start finds nothing');
  });

  it('does not restore a queue that expired by the clock, and sends restart only to queues whose event_types take it', async () => {
    const h = hub();
    const stale = h.create(options());
    clock.advance(h.timings.idleMs - 1000);
    const fresh = h.create(options({ eventTypes: new Set(['message']) }));
    fresh.push({ type: 'message', message: { id: 1 }, flags: [] });
    await saveQueues(h, ctx.chatDb, clock.now());
    // The stale queue's 10 minutes end while the server is down; the fresh one still has time.
    clock.advance(1000);
    const next = hub();
    assert.deepEqual(await restoreQueues(next, ctx.chatDb, clock.now(), log), { restored: 1, expired: 1 });
    assert.throws(
      () => next.queueOf(stale.id, userId),
      (e: Error & { code?: string }) => e.code === 'BAD_EVENT_QUEUE_ID',
    );
    assert.deepEqual(
      next.queueOf(fresh.id, userId).events.map((e) => e.type),
      ['message'],
      'event_types without restart get none',
    );
    assert.equal(await countRows(), 0, 'the expired row is deleted too');
  });

  it('gives equal saved events back as one shared rendering, byte for byte, not one copy per queue', async () => {
    const h = hub();
    const queues = Array.from({ length: 5 }, () => h.create(options()));
    h.publish([{ type: 'custom', userIds: [userId], render: () => ({ type: 'custom', text: 'é"\\ \u2028', list: [1, { a: null }] }) }]);
    h.publish([{ type: 'custom', userIds: [userId], render: (q) => ({ type: 'custom', own: q.id }) }]);
    const before = queues.map((q) => q.events.map((e) => e.json()));
    await saveQueues(h, ctx.chatDb, clock.now());
    const next = hub();
    await restoreQueues(next, ctx.chatDb, clock.now(), log);
    const restored = queues.map((q) => next.queueOf(q.id, userId));
    assert.deepEqual(
      restored.map((q) => q.events.slice(0, 2).map((e) => e.json())),
      before,
    );
    const sharedOnes = new Set(restored.map((q) => q.events[0].shared));
    assert.equal(sharedOnes.size, 1, 'the message all five held is one object again');
    assert.equal(new Set(restored.map((q) => q.events[1].shared)).size, 5, 'events that differ stay apart');
  });

  it("restores within the bounds of the hub it restores into: a user's most recently used queues first", async () => {
    const h = hub();
    const made = [];
    for (let i = 0; i < 4; i++) {
      made.push(h.create(options()));
      clock.advance(1000);
    }
    await saveQueues(h, ctx.chatDb, clock.now());
    const small = new EventHub(clock, log, { sweepEveryMs: 0, maxQueuesPerUser: 2 });
    await restoreQueues(small, ctx.chatDb, clock.now(), log);
    assert.deepEqual(new Set(small.list().map((q) => q.id)), new Set([made[2].id, made[3].id]));
  });
});

// Event queues in process, on a manual clock: POST /register (state and the snapshot race), GET
// /events (dont_block, long-polling, heartbeat, a client that goes away), DELETE /events, expiry,
// and each event type this slice emits. Every 2xx answer is checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, type InProcessClient } from '../../helpers/in-process-chat.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;
type Ev = Record<string, any>;

await forEachEngine('chat events', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let owner: InProcessClient;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient, bobId: number;
  let carol: InProcessClient, carolId: number;
  let ownerId: number;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob', 'carol'], channel: { name: 'general', subscribers: ['owner', 'alice', 'bob'] } });
    ({ storage, chat, owner, ownerId } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
    ({ client: carol, id: carolId } = realm.members.carol);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  async function register(c: InProcessClient, params: Record<string, unknown> = {}): Promise<Ev> {
    const r = await c.call('POST', '/register', params);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  }

  /** Everything queued after lastEventId, without waiting. */
  async function drain(c: InProcessClient, queueId: string, lastEventId = -1): Promise<Ev[]> {
    const r = await c.call('GET', '/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.events;
  }

  const send = async (c: InProcessClient, params: Record<string, unknown>) => {
    const r = await c.call('POST', '/messages', params);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id as number;
  };

  it('registers with the always-present fields and the state asked for', async () => {
    const all = await register(alice);
    assert.equal(all.last_event_id, -1);
    assert.equal(typeof all.queue_id, 'string');
    assert.equal(all.zulip_feature_level, 372);
    for (const k of [
      'zulip_version',
      'zulip_merge_base',
      'realm_name',
      'realm_url',
      'realm_uri',
      'max_message_length',
      'max_topic_length',
      'realm_empty_topic_display_name',
      'server_presence_ping_interval_seconds',
      'server_presence_offline_threshold_seconds',
      'realm_message_retention_days',
      'realm_allow_message_editing',
      'realm_allow_edit_history',
      'realm_message_content_edit_limit_seconds',
      'server_typing_started_expiry_period_milliseconds',
      'realm_users',
      'realm_non_active_users',
      'cross_realm_bots',
      'subscriptions',
      'unsubscribed',
      'never_subscribed',
      'max_message_id',
      'unread_msgs',
      'streams',
      'realm_default_streams',
      'realm_user_groups',
      'presences',
      'recent_private_conversations',
    ]) {
      assert.ok(k in all, `register answers ${k}`);
    }
    assert.deepEqual(
      all.subscriptions.map((s: Ev) => s.name),
      ['general'],
    );
    assert.ok(all.realm_users.some((u: Ev) => u.user_id === carolId));
    assert.ok(all.realm_user_groups.some((g: Ev) => g.name === 'role:members' && g.members.includes(aliceId)));
    // What the Python client asks first, and what it asks after BAD_EVENT_QUEUE_ID (nothing).
    const few = await register(alice, { fetch_event_types: ['zulip_version', 'presence'] });
    assert.deepEqual(few.presences, {});
    assert.equal('realm_users' in few, false);
    assert.equal('subscriptions' in few, false);
    const none = await register(alice, { event_types: ['message'], fetch_event_types: [] });
    assert.equal('unread_msgs' in none, false);
    assert.equal(none.zulip_feature_level, 372);
  });

  it('unread_msgs counts channel, direct and mentioned messages', async () => {
    const before = (await register(carol, { fetch_event_types: ['message'] })).unread_msgs;
    const dm = await send(owner, { type: 'direct', to: [carolId], content: 'hello @**Carol**' });
    const after = await register(carol, { fetch_event_types: ['message', 'recent_private_conversations'] });
    assert.equal(after.unread_msgs.count, before.count + 1);
    assert.deepEqual(after.unread_msgs.pms.find((p: Ev) => p.other_user_id === ownerId).unread_message_ids.slice(-1), [dm]);
    assert.ok(after.unread_msgs.mentions.includes(dm));
    assert.equal(after.max_message_id, dm);
    assert.deepEqual(after.recent_private_conversations[0], { max_message_id: dm, user_ids: [ownerId] });
  });

  it('sends a message event to exactly the users who may see it, local_message_id to the sending queue only', async () => {
    // Only message events: the channel's first message also brings a stream update of first_message_id (events-more.test.ts).
    const m = { event_types: ['message'] };
    const [qo, qo2, qa, qb, qc] = await Promise.all([register(owner, m), register(owner, m), register(alice, m), register(bob, m), register(carol, m)]);
    const id = await send(owner, { type: 'stream', to: 'general', topic: 'events', content: 'hi **all**', queue_id: qo.queue_id, local_id: '17.01' });
    const [eo, eo2, ea, eb, ec] = await Promise.all([drain(owner, qo.queue_id), drain(owner, qo2.queue_id), drain(alice, qa.queue_id), drain(bob, qb.queue_id), drain(carol, qc.queue_id)]);
    assert.equal(eo.length, 1);
    assert.equal(eo[0].type, 'message');
    assert.equal(eo[0].message.id, id);
    assert.equal(eo[0].local_message_id, '17.01');
    assert.deepEqual(eo[0].flags, ['read'], "the sender's own message starts read");
    assert.equal(eo2[0].message.id, id);
    assert.equal('local_message_id' in eo2[0], false, "another of the sender's clients did not echo it");
    assert.deepEqual(
      ea.map((e) => [e.message.id, e.flags, 'local_message_id' in e]),
      [[id, [], false]],
    );
    assert.equal(eb[0].message.subject, 'events');
    // register's default apply_markdown is false: raw Markdown; with it, HTML.
    assert.equal(eb[0].message.content, 'hi **all**');
    assert.deepEqual(ec, [], 'carol is not subscribed to general');
    const html = await register(carol, { apply_markdown: true });
    const dm = await send(alice, { type: 'direct', to: [carolId], content: 'psst **carol**' });
    const [got] = await drain(carol, html.queue_id);
    assert.equal(got.message.id, dm);
    assert.equal(got.message.content, '<p>psst <strong>carol</strong></p>');
    assert.deepEqual(await drain(bob, qb.queue_id, eb.at(-1)!.id), [], 'bob is not in the direct conversation');
  });

  it('shares one message event among the queues that see it alike, and only among those', async () => {
    const [a1, b1, b2, bHtml, o1] = await Promise.all([
      register(alice, { event_types: ['message'] }),
      register(bob, { event_types: ['message'] }),
      register(bob, { event_types: ['message'] }),
      register(bob, { event_types: ['message'], apply_markdown: true }),
      register(owner, { event_types: ['message'] }),
    ]);
    const id = await send(owner, { type: 'stream', to: 'general', topic: 'shared', content: 'one **serialization**', queue_id: o1.queue_id, local_id: '3.5' });
    const held = (q: Ev, userId: number) => chat.events.queueOf(q.queue_id, userId).events.at(-1)!;
    assert.equal(held(a1, aliceId).shared, held(b1, bobId).shared, 'two users with the same flags and options');
    assert.equal(held(b1, bobId).shared, held(b2, bobId).shared);
    assert.notEqual(held(bHtml, bobId).shared, held(b1, bobId).shared, 'HTML content is another rendering');
    assert.notEqual(held(o1, ownerId).shared, held(b1, bobId).shared, "the sender's flags (read) and local echo");
    const [ea, eb, eHtml, eo] = await Promise.all([drain(alice, a1.queue_id), drain(bob, b1.queue_id), drain(bob, bHtml.queue_id), drain(owner, o1.queue_id)]);
    // Each queue numbers the shared event itself.
    assert.deepEqual(
      [ea, eb, eHtml, eo].map((l) => l.map((e) => [e.id, e.message.id])),
      [[[0, id]], [[0, id]], [[0, id]], [[0, id]]],
    );
    assert.equal(eb[0].message.content, 'one **serialization**');
    assert.equal(eHtml[0].message.content, '<p>one <strong>serialization</strong></p>');
    assert.equal(eo[0].local_message_id, '3.5');
    assert.equal('local_message_id' in eb[0], false);
  });

  it('filters by event_types, narrow and all_public_streams', async () => {
    const onlyFlags = await register(alice, { event_types: ['update_message_flags'] });
    const narrowed = await register(alice, {
      event_types: ['message'],
      narrow: [
        ['stream', 'General'],
        ['topic', 'wanted'],
      ],
    });
    const fromBob = await register(alice, { narrow: [{ operator: 'sender', operand: bobId }] });
    const dms = await register(alice, { narrow: [['is', 'dm']] });
    const everything = await register(carol, { all_public_streams: true, event_types: ['message'] });
    const a = await send(owner, { type: 'stream', to: 'general', topic: 'wanted', content: 'yes' });
    await send(owner, { type: 'stream', to: 'general', topic: 'other', content: 'no' });
    const b = await send(bob, { type: 'stream', to: 'general', topic: 'other', content: 'from bob' });
    const d = await send(bob, { type: 'direct', to: [aliceId], content: 'a dm' });
    assert.deepEqual(await drain(alice, onlyFlags.queue_id), []);
    assert.deepEqual(
      (await drain(alice, narrowed.queue_id)).map((e) => e.message.id),
      [a],
    );
    assert.deepEqual(
      (await drain(alice, fromBob.queue_id)).map((e) => e.message.id),
      [b, d],
    );
    assert.deepEqual(
      (await drain(alice, dms.queue_id)).map((e) => e.message.id),
      [d],
    );
    const pub = await drain(carol, everything.queue_id);
    assert.equal(pub.length, 3, 'all three channel messages, not the direct one');
    assert.deepEqual(pub[0].flags, []);
    const bad = await alice.call('POST', '/register', { narrow: [['search', 'x']] });
    assert.equal(bad.status, 400);
  });

  it('sends update_message_flags with op and operation to the user only', async () => {
    const id = await send(owner, { type: 'stream', to: 'general', topic: 'flags', content: 'star me' });
    const qa = await register(alice, { event_types: ['update_message_flags'] });
    const qb = await register(bob, { event_types: ['update_message_flags'] });
    assert.equal((await alice.call('POST', '/messages/flags', { messages: [id], op: 'add', flag: 'starred' })).status, 200);
    assert.equal((await alice.call('POST', '/messages/flags', { messages: [id], op: 'add', flag: 'read' })).status, 200);
    assert.equal((await alice.call('POST', '/messages/flags/narrow', { anchor: String(id), num_before: 0, num_after: 0, narrow: [], op: 'remove', flag: 'read' })).status, 200);
    const got = await drain(alice, qa.queue_id);
    assert.deepEqual(
      got.map((e) => [e.op, e.operation, e.flag, e.messages]),
      [
        ['add', 'add', 'starred', [id]],
        ['add', 'add', 'read', [id]],
        ['remove', 'remove', 'read', [id]],
      ],
    );
    assert.equal((await alice.call('POST', '/mark_topic_as_read', { stream_id: (await alice.call('GET', '/get_stream_id', { stream: 'general' })).body.stream_id, topic_name: 'flags' })).status, 200);
    const more = await drain(alice, qa.queue_id, got.at(-1)!.id);
    assert.deepEqual(
      more.map((e) => [e.op, e.flag, e.messages.includes(id)]),
      [['add', 'read', true]],
    );
    assert.deepEqual(await drain(bob, qb.queue_id), []);
  });

  it('sends stream create and subscription add/remove', async () => {
    const qa = await register(alice, { event_types: ['stream', 'subscription'] });
    const qc = await register(carol, { event_types: ['stream', 'subscription'] });
    const made = await alice.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'fresh' }] });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const ea = await drain(alice, qa.queue_id);
    assert.deepEqual(
      ea.map((e) => [e.type, e.op]),
      [
        ['stream', 'create'],
        ['subscription', 'add'],
      ],
    );
    assert.equal(ea[0].streams[0].name, 'fresh');
    assert.deepEqual(
      ea[1].subscriptions.map((s: Ev) => [s.name, s.subscribers]),
      [['fresh', [aliceId]]],
    );
    const ec = await drain(carol, qc.queue_id);
    assert.deepEqual(
      ec.map((e) => [e.type, e.op, e.streams?.[0]?.name ?? e.user_ids]),
      [
        ['stream', 'create', 'fresh'],
        ['subscription', 'peer_add', [aliceId]],
      ],
      'a public channel is announced to everyone, with its subscribers',
    );
    const secret = await alice.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
    assert.equal(secret.status, 200);
    assert.deepEqual(await drain(carol, qc.queue_id, ec.at(-1)!.id), [], 'a private channel is not announced to a member outside it');
    assert.equal((await alice.call('DELETE', '/users/me/subscriptions', { subscriptions: ['fresh'] })).status, 200);
    const left = (await drain(alice, qa.queue_id)).filter((e) => e.op === 'remove');
    assert.deepEqual(
      left.map((e) => e.subscriptions),
      [[{ stream_id: ea[0].streams[0].stream_id, name: 'fresh' }]],
    );
  });

  it('sends realm_user add and update', async () => {
    const q = await register(alice, { event_types: ['realm_user'] });
    const { id: daveId } = await chat.member('dave@example.com', 'Dave');
    assert.equal((await owner.call('PATCH', `/users/${daveId}`, { full_name: 'David' })).status, 200);
    assert.equal((await owner.call('PATCH', `/users/${daveId}`, { role: 300 })).status, 200);
    assert.equal((await owner.call('DELETE', `/users/${daveId}`)).status, 200);
    assert.equal((await owner.call('POST', `/users/${daveId}/reactivate`)).status, 200);
    const got = await drain(alice, q.queue_id);
    assert.deepEqual(
      got.map((e) => [e.op, e.person.user_id]),
      [
        ['add', daveId],
        ['update', daveId],
        ['update', daveId],
        ['update', daveId],
        ['update', daveId],
      ],
    );
    assert.equal(got[0].person.full_name, 'Dave');
    assert.deepEqual(
      got.slice(1).map((e) => e.person),
      [
        { user_id: daveId, full_name: 'David' },
        { user_id: daveId, role: 300 },
        { user_id: daveId, is_active: false },
        { user_id: daveId, is_active: true },
      ],
    );
  });

  it('answers dont_block at once and acknowledges by last_event_id', async () => {
    const q = await register(bob, { event_types: ['message'] });
    assert.deepEqual(await drain(bob, q.queue_id), []);
    const id = await send(owner, { type: 'stream', to: 'general', topic: 'ack', content: 'one' });
    const first = await drain(bob, q.queue_id);
    assert.deepEqual(
      first.map((e) => e.message.id),
      [id],
    );
    assert.deepEqual(
      (await drain(bob, q.queue_id, -1)).map((e) => e.id),
      [first[0].id],
      'not acknowledged yet: sent again',
    );
    assert.deepEqual(await drain(bob, q.queue_id, first[0].id), []);
  });

  /** Waits (in real time, briefly) for the request to reach the hub and park. */
  async function untilParked(queueId: string, userId: number): Promise<void> {
    const queue = chat.events.queueOf(queueId, userId);
    for (let i = 0; i < 400 && !queue.parked; i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(queue.parked, 'the poll is parked');
  }

  it('parks a poll until an event arrives, and sends a heartbeat after 50 s of the clock', async () => {
    const q = await register(bob, { event_types: ['message'] });
    const parked = bob.call('GET', '/events', { queue_id: q.queue_id, last_event_id: -1 });
    let done = false;
    void parked.then(() => (done = true));
    await untilParked(q.queue_id, bobId);
    assert.equal(done, false, 'the poll waits');
    const id = await send(alice, { type: 'stream', to: 'general', topic: 'wake', content: 'wake up' });
    const woke = await parked;
    assert.deepEqual(
      woke.body.events.map((e: Ev) => e.message.id),
      [id],
    );

    const quiet = bob.call('GET', '/events', { queue_id: q.queue_id, last_event_id: woke.body.events[0].id });
    let answered = false;
    void quiet.then(() => (answered = true));
    await untilParked(q.queue_id, bobId);
    chat.clock.advance(49_000);
    chat.events.sweep();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(answered, false, 'no heartbeat before 50 s');
    chat.clock.advance(1_000);
    chat.events.sweep();
    const beat = await quiet;
    assert.deepEqual(
      beat.body.events.map((e: Ev) => e.type),
      ['heartbeat'],
    );
    assert.equal(beat.body.events[0].id, woke.body.events[0].id + 1);
  });

  it('expires a queue after 10 minutes without a poll; unknown and deleted queues are BAD_EVENT_QUEUE_ID', async () => {
    const kept = await register(bob);
    const dropped = await register(bob);
    chat.clock.advance(9 * 60_000);
    await drain(bob, kept.queue_id);
    chat.clock.advance(60_000);
    chat.events.sweep();
    const gone = await bob.call('GET', '/events', { queue_id: dropped.queue_id, last_event_id: -1, dont_block: true });
    assert.equal(gone.status, 400);
    assert.deepEqual(gone.body, { result: 'error', code: 'BAD_EVENT_QUEUE_ID', msg: `Bad event queue ID: ${dropped.queue_id}`, queue_id: dropped.queue_id });
    assert.equal((await bob.call('GET', '/events', { queue_id: kept.queue_id, last_event_id: -1, dont_block: true })).status, 200, 'polled a minute ago: still there');
    const unknown = await bob.call('GET', '/events', { queue_id: 'no-such-queue', last_event_id: -1, dont_block: true });
    assert.equal(unknown.body.code, 'BAD_EVENT_QUEUE_ID');
    assert.equal((await alice.call('GET', '/events', { queue_id: kept.queue_id, last_event_id: -1, dont_block: true })).status, 400, "another user's queue");
    assert.equal((await bob.call('DELETE', '/events', { queue_id: kept.queue_id })).status, 200);
    assert.equal((await bob.call('GET', '/events', { queue_id: kept.queue_id, last_event_id: -1, dont_block: true })).body.code, 'BAD_EVENT_QUEUE_ID');
    assert.equal((await bob.call('DELETE', '/events', { queue_id: kept.queue_id })).body.code, 'BAD_EVENT_QUEUE_ID');
  });

  it('frees the poll of a client that went away and keeps its events for the next poll', async () => {
    const q = await register(bob, { event_types: ['message'] });
    const queue = chat.events.queueOf(q.queue_id, bobId);
    await chat.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = chat.app.server.address() as { port: number };
      const req = http.get({
        host: '127.0.0.1',
        port,
        path: `/api/v1/events?queue_id=${q.queue_id}&last_event_id=-1`,
        headers: { authorization: 'Basic ' + Buffer.from(`${bob.email}:${bob.apiKey}`).toString('base64') },
      });
      req.on('error', () => {});
      for (let i = 0; i < 200 && !queue.parked; i++) await new Promise((r) => setTimeout(r, 5));
      assert.ok(queue.parked, 'the poll is parked');
      req.destroy();
      for (let i = 0; i < 200 && queue.parked; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(queue.parked, null, 'the poll was freed when the client went away');
      const id = await send(alice, { type: 'stream', to: 'general', topic: 'gone', content: 'after' });
      assert.deepEqual(
        (await drain(bob, q.queue_id)).map((e) => e.message.id),
        [id],
      );
    } finally {
      await chat.app.close().catch(() => {});
    }
  });
});

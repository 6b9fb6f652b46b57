// Scheduled messages in process, on both engines, with a manual clock: GET/POST/PATCH/DELETE
// /scheduled_messages (Zulip's shapes and error texts), the scheduled_messages events and register
// state, and the scheduler (runDue by the clock): delivery through the send path (the message and
// its events, read_by_sender), exactly once (also with two schedulers on one store, as two nodes),
// and failures as Zulip records them (failed, the update event, the Notification Bot's message).
// Every 2xx answer and event is checked against Zulip's OpenAPI by the in-process client.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import type { InProcessChat } from '../../helpers/chat-realm.js';
import { ScheduledDelivery, failureNotification } from '../../../src/chat/domain/scheduled-delivery.js';
import { BOUNDS } from '../../../src/chat/domain/bounds.js';

it("words a failed delivery's notification as Zulip does", () => {
  assert.equal(
    failureNotification(1735689600, 'Not authorized'),
    'The message you scheduled for <time:2025-01-01 00:00:00+00:00>  was not sent because of the following error:\n\n> Not authorized\n\n[View scheduled messages](#scheduled)\n\n',
  );
});

await forEachEngine('chat scheduled messages', (engine) => {
  let storage: Storage;
  let chat: InProcessChat;
  let owner: InProcessClient;
  let alice: InProcessClient;
  let bob: InProcessClient;
  let aliceId: number;
  let bobId: number;
  let ownerId: number;
  let garden: number;
  const now = () => Math.floor(chat.clock.now() / 1000);
  const events = async (c: InProcessClient, queue: string) => (await ok(c, 'GET', '/events', { queue_id: queue, last_event_id: -1, dont_block: true })).events as Record<string, any>[];
  const queue = async (c: InProcessClient, types: string[]) => (await ok(c, 'POST', '/register', { event_types: types })).queue_id as string;
  const schedule = (c: InProcessClient, params: Record<string, unknown>) => c.call('POST', '/scheduled_messages', params);
  const lastMessage = async (c: InProcessClient, narrow: unknown[]) => (await ok(c, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow })).messages[0];

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob'], channel: { name: 'garden', by: 'alice', subscribers: ['alice', 'bob'] } });
    ({ storage, chat } = realm);
    owner = realm.owner;
    ownerId = realm.ownerId;
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
    garden = realm.channelId;
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  it('schedules channel and direct messages; lists them by delivery time; register and events say so', async () => {
    const q = await queue(alice, ['scheduled_messages']);
    const other = await queue(bob, ['scheduled_messages']);
    const at = now() + 3600;
    const channel = await ok(alice, 'POST', '/scheduled_messages', { type: 'channel', to: garden, topic: 'plans', content: '**later**', scheduled_delivery_timestamp: at });
    const direct = await ok(alice, 'POST', '/scheduled_messages', { type: 'direct', to: [bobId, bobId], content: 'hi', scheduled_delivery_timestamp: at - 60 });
    const list = (await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages;
    assert.deepEqual(list, [
      { scheduled_message_id: direct.scheduled_message_id, to: [bobId], type: 'private', content: 'hi', rendered_content: '<p>hi</p>', scheduled_delivery_timestamp: at - 60, failed: false },
      {
        scheduled_message_id: channel.scheduled_message_id,
        to: garden,
        type: 'stream',
        content: '**later**',
        rendered_content: '<p><strong>later</strong></p>',
        topic: 'plans',
        scheduled_delivery_timestamp: at,
        failed: false,
      },
    ]);
    const state = await ok(alice, 'POST', '/register', { fetch_event_types: ['scheduled_messages'] });
    assert.deepEqual(state.scheduled_messages, list);
    assert.deepEqual((await ok(bob, 'GET', '/scheduled_messages')).scheduled_messages, [], "only one's own");
    const seen = await events(alice, q);
    assert.deepEqual(
      seen.map((e) => [e.type, e.op, e.scheduled_messages[0].scheduled_message_id]),
      [
        ['scheduled_messages', 'add', channel.scheduled_message_id],
        ['scheduled_messages', 'add', direct.scheduled_message_id],
      ],
    );
    assert.deepEqual(await events(bob, other), []);
    // A direct message to oneself lists the sender.
    const self = await ok(alice, 'POST', '/scheduled_messages', { type: 'private', to: [aliceId], content: 'note', scheduled_delivery_timestamp: at });
    const mine = (await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages.find((m: any) => m.scheduled_message_id === self.scheduled_message_id);
    assert.deepEqual(mine.to, [aliceId]);
    for (const m of (await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages) await ok(alice, 'DELETE', `/scheduled_messages/${m.scheduled_message_id}`);
  });

  it('refuses what Zulip refuses, with its codes and texts, before anything is stored', async () => {
    const at = now() + 600;
    const cases: [Record<string, unknown>, number, string, string, Record<string, unknown>?][] = [
      [{ type: 'stream', to: garden, topic: 't', content: 'x', scheduled_delivery_timestamp: now() }, 400, 'BAD_REQUEST', 'Scheduled delivery time must be in the future.'],
      [{ type: 'stream', to: garden, topic: 't', content: 'x', scheduled_delivery_timestamp: now() - 5 }, 400, 'BAD_REQUEST', 'Scheduled delivery time must be in the future.'],
      [{ type: 'stream', to: 99999, topic: 't', content: 'x', scheduled_delivery_timestamp: at }, 400, 'STREAM_DOES_NOT_EXIST', "Channel with ID '99999' does not exist", { stream_id: 99999 }],
      [{ type: 'direct', to: [99999], content: 'x', scheduled_delivery_timestamp: at }, 400, 'BAD_REQUEST', 'Invalid user ID 99999'],
      [{ type: 'stream', to: [garden], topic: 't', content: 'x', scheduled_delivery_timestamp: at }, 400, 'BAD_REQUEST', 'Invalid data type for channel ID'],
      [{ type: 'direct', to: bobId, content: 'x', scheduled_delivery_timestamp: at }, 400, 'BAD_REQUEST', 'Invalid data type for recipients'],
      [{ type: 'direct', to: [], content: 'x', scheduled_delivery_timestamp: at }, 400, 'BAD_REQUEST', 'Message must have recipients'],
      [{ type: 'stream', to: garden, content: 'x', scheduled_delivery_timestamp: at }, 400, 'BAD_REQUEST', 'Missing topic'],
      [{ type: 'stream', to: garden, topic: 't', content: '  ', scheduled_delivery_timestamp: at }, 400, 'BAD_REQUEST', 'Message must not be empty'],
    ];
    for (const [params, status, code, msg, extra] of cases) {
      const r = await schedule(alice, params);
      assert.deepEqual([r.status, r.body.code, r.body.msg], [status, code, msg], JSON.stringify(params));
      for (const [k, v] of Object.entries(extra ?? {})) assert.equal(r.body[k], v);
    }
    assert.deepEqual((await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages, []);
  });

  it('edits a scheduled message as Zulip does, with its errors, and deletes it', async () => {
    const q = await queue(alice, ['scheduled_messages']);
    const at = now() + 3600;
    const { scheduled_message_id: id } = await ok(alice, 'POST', '/scheduled_messages', { type: 'stream', to: garden, topic: 'a', content: 'one', scheduled_delivery_timestamp: at });
    const patch = (params: Record<string, unknown>, who = alice) => who.call('PATCH', `/scheduled_messages/${id}`, params);
    const errors: [Record<string, unknown>, number, string][] = [
      [{}, 400, 'Nothing to change'],
      [{ type: 'direct' }, 400, 'Recipient required when updating type of scheduled message.'],
      [{ type: 'channel', to: garden }, 400, 'Topic required when updating scheduled message type to stream.'],
      [{ scheduled_delivery_timestamp: now() - 1 }, 400, 'Scheduled delivery time must be in the future.'],
      [{ to: 99999 }, 400, "Channel with ID '99999' does not exist"],
    ];
    for (const [params, status, msg] of errors) {
      const r = await patch(params);
      assert.deepEqual([r.status, r.body.msg], [status, msg], JSON.stringify(params));
    }
    const missing = await patch({ content: 'x' }, bob);
    assert.deepEqual([missing.status, missing.body.code, missing.body.msg], [404, 'BAD_REQUEST', 'Scheduled message does not exist']);
    await ok(alice, 'PATCH', `/scheduled_messages/${id}`, { content: '*two*', topic: 'b' });
    let [m] = (await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages;
    assert.deepEqual([m.content, m.rendered_content, m.topic, m.scheduled_delivery_timestamp], ['*two*', '<p><em>two</em></p>', 'b', at]);
    await ok(alice, 'PATCH', `/scheduled_messages/${id}`, { type: 'direct', to: [bobId], scheduled_delivery_timestamp: at + 5 });
    [m] = (await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages;
    assert.deepEqual([m.type, m.to, m.topic, m.content, m.scheduled_delivery_timestamp], ['private', [bobId], undefined, '*two*', at + 5]);
    // A topic sent for a direct message is ignored.
    await ok(alice, 'PATCH', `/scheduled_messages/${id}`, { topic: 'ignored' });
    assert.equal((await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages[0].topic, undefined);
    await ok(alice, 'DELETE', `/scheduled_messages/${id}`);
    const gone = await alice.call('DELETE', `/scheduled_messages/${id}`);
    assert.deepEqual([gone.status, gone.body.msg], [404, 'Scheduled message does not exist']);
    const seen = await events(alice, q);
    assert.deepEqual(
      seen.map((e) => e.op),
      ['add', 'update', 'update', 'update', 'remove'],
    );
    assert.equal(seen[1].scheduled_message.content, '*two*');
    assert.deepEqual(seen[4], { id: seen[4].id, type: 'scheduled_messages', op: 'remove', scheduled_message_id: id });
  });

  it('sends what is due through the send path, once, with its events; read_by_sender marks it read', async () => {
    const qa = await queue(alice, ['scheduled_messages', 'message']);
    const qb = await queue(bob, ['message']);
    const at = now() + 120;
    const a = await ok(alice, 'POST', '/scheduled_messages', { type: 'stream', to: garden, topic: 'due', content: 'on time', scheduled_delivery_timestamp: at, read_by_sender: true });
    const b = await ok(alice, 'POST', '/scheduled_messages', { type: 'direct', to: [bobId], content: 'psst', scheduled_delivery_timestamp: at + 1, read_by_sender: false });
    chat.clock.advance(60_000);
    assert.equal(await chat.ctx.scheduler.runDue(), 0, 'nothing is due yet');
    chat.clock.advance(60_500);
    assert.equal(await chat.ctx.scheduler.runDue(), 1, 'only the first is due');
    chat.clock.advance(1000);
    assert.equal(await chat.ctx.scheduler.runDue(), 1);
    assert.equal(await chat.ctx.scheduler.runDue(), 0, 'none is sent twice');
    const sentAlready = await alice.call('PATCH', `/scheduled_messages/${a.scheduled_message_id}`, { content: 'too late' });
    assert.deepEqual([sentAlready.status, sentAlready.body.msg], [400, 'Scheduled message was already sent']);
    assert.deepEqual((await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages, []);
    const sent = await lastMessage(alice, [
      { operator: 'channel', operand: garden },
      { operator: 'topic', operand: 'due' },
    ]);
    assert.deepEqual([sent.content, sent.sender_id, sent.timestamp, sent.flags.includes('read')], ['<p>on time</p>', aliceId, at, true]);
    const dm = await lastMessage(bob, [{ operator: 'dm', operand: [aliceId] }]);
    assert.deepEqual([dm.content, dm.sender_id, dm.flags.includes('read')], ['<p>psst</p>', aliceId, false]);
    const mine = await lastMessage(alice, [{ operator: 'dm', operand: [bobId] }]);
    assert.equal(mine.flags.includes('read'), false, 'read_by_sender false leaves it unread for the sender');
    const seenA = (await events(alice, qa)).map((e) => [e.type, e.op ?? null, e.scheduled_message_id ?? e.message?.id ?? null]);
    assert.deepEqual(
      seenA.filter((e) => e[0] === 'scheduled_messages' && e[1] === 'remove').map((e) => e[2]),
      [a.scheduled_message_id, b.scheduled_message_id],
    );
    assert.deepEqual(
      (await events(bob, qb)).filter((e) => e.type === 'message').map((e) => e.message.content),
      ['on time', 'psst'],
    );
  });

  it('records a failure as Zulip does: failed, an update event, the Notification Bot tells the sender; an edit with a new time retries', async () => {
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'doomed' }], principals: [aliceId] });
    const doomed = (await ok(owner, 'GET', '/get_stream_id', { stream: 'doomed' })).stream_id;
    const q = await queue(alice, ['scheduled_messages', 'message']);
    const at = now() + 60;
    const { scheduled_message_id: id } = await ok(alice, 'POST', '/scheduled_messages', { type: 'stream', to: doomed, topic: 't', content: 'never', scheduled_delivery_timestamp: at });
    await ok(owner, 'DELETE', `/streams/${doomed}`);
    chat.clock.advance(60_000);
    assert.equal(await chat.ctx.scheduler.runDue(), 1);
    const [m] = (await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages;
    assert.deepEqual([m.scheduled_message_id, m.failed], [id, true]);
    assert.equal(await chat.ctx.scheduler.runDue(), 0, 'a failed message is not retried by itself');
    const seen = await events(alice, q);
    const update = seen.find((e) => e.type === 'scheduled_messages' && e.op === 'update');
    assert.deepEqual([update?.scheduled_message.scheduled_message_id, update?.scheduled_message.failed], [id, true]);
    const note = seen.find((e) => e.type === 'message');
    assert.equal(note?.message.sender_full_name, 'Notification Bot');
    const raw = await ok(alice, 'GET', `/messages/${note!.message.id}`, { apply_markdown: false });
    assert.equal(raw.raw_content, failureNotification(at, "Not authorized to send to channel 'doomed'").trimEnd());
    const noTime = await alice.call('PATCH', `/scheduled_messages/${id}`, { content: 'again' });
    assert.deepEqual([noTime.status, noTime.body.msg], [400, 'Scheduled delivery time must be in the future.']);
    const retry = await alice.call('PATCH', `/scheduled_messages/${id}`, { type: 'direct', to: [bobId], scheduled_delivery_timestamp: now() + 60 });
    assert.equal(retry.status, 200, JSON.stringify(retry.body));
    assert.equal((await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages[0].failed, false);
    chat.clock.advance(60_000);
    assert.equal(await chat.ctx.scheduler.runDue(), 1);
    assert.deepEqual((await ok(alice, 'GET', '/scheduled_messages')).scheduled_messages, []);
    assert.equal((await lastMessage(bob, [{ operator: 'dm', operand: [aliceId] }])).content, '<p>never</p>');
  });

  it('fails a message that came due while the server ran but was found more than 10 minutes late, as Zulip does', async () => {
    const at = now() + 60;
    await ok(bob, 'POST', '/scheduled_messages', { type: 'stream', to: garden, topic: 'late', content: 'stale', scheduled_delivery_timestamp: at });
    chat.clock.advance(60_000 + 601_000);
    assert.equal(await chat.ctx.scheduler.runDue(), 1);
    const [m] = (await ok(bob, 'GET', '/scheduled_messages')).scheduled_messages;
    assert.equal(m.failed, true);
    const note = await lastMessage(bob, [{ operator: 'is', operand: 'dm' }]);
    assert.match(note.content, /Message could not be sent at the scheduled time\./);
    await ok(bob, 'DELETE', `/scheduled_messages/${m.scheduled_message_id}`);
  });

  it('sends a message that came due while the server was down at the next start, however late', async () => {
    const at = now() + 60;
    await ok(bob, 'POST', '/scheduled_messages', { type: 'stream', to: garden, topic: 'outage', content: 'after the outage', scheduled_delivery_timestamp: at });
    // The server is down for an hour past the due time; a new scheduler is the next start's.
    chat.clock.advance(60_000 + 3_600_000);
    const ctx = chat.ctx;
    const restarted = new ScheduledDelivery({ db: ctx.chatDb, clock: chat.clock, log: ctx.log, events: ctx.events, realmUrl: () => 'http://chat.keel.test', apiKeySeal: ctx.apiKeySeal });
    assert.equal(await restarted.runDue(), 1);
    assert.deepEqual((await ok(bob, 'GET', '/scheduled_messages')).scheduled_messages, []);
    assert.equal((await lastMessage(bob, [{ operator: 'topic', operand: 'outage' }])).content, '<p>after the outage</p>');
  });

  it('sends each message once when two schedulers (two nodes) share the store', async () => {
    const at = now() + 30;
    const n = 40;
    for (let i = 0; i < n; i++) await ok(bob, 'POST', '/scheduled_messages', { type: 'stream', to: garden, topic: 'race', content: `m${i}`, scheduled_delivery_timestamp: at });
    const ctx = chat.ctx;
    const twin = new ScheduledDelivery({ db: ctx.chatDb, clock: chat.clock, log: ctx.log, events: ctx.events, realmUrl: () => 'http://chat.keel.test', apiKeySeal: ctx.apiKeySeal }, { batch: 7 });
    chat.clock.advance(30_000);
    await Promise.all([ctx.scheduler.runDue(), twin.runDue()]);
    const got = (await ok(bob, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'topic', operand: 'race' }] })).messages;
    assert.deepEqual(got.map((m: any) => m.content).sort(), Array.from({ length: n }, (_, i) => `<p>m${i}</p>`).sort());
    assert.deepEqual((await ok(bob, 'GET', '/scheduled_messages')).scheduled_messages, []);
  });

  // Row locks are PostgreSQL's, so this case exists there only. SQLite runs one writing transaction
  // at a time: the two-scheduler test above is the whole of the property there.
  if (engine === 'postgres') {
    it('passes over a row another transaction holds (FOR UPDATE SKIP LOCKED), and sends it once released', async () => {
      const at = now() + 30;
      const { scheduled_message_id: id } = await ok(bob, 'POST', '/scheduled_messages', { type: 'stream', to: garden, topic: 'held', content: 'held', scheduled_delivery_timestamp: at });
      chat.clock.advance(30_000);
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = chat.ctx.chatDb.transaction(async (trx) => {
        await trx.selectFrom('scheduled_messages').select('id').where('id', '=', id).forUpdate().execute();
        locked();
        await released;
      });
      await isLocked;
      assert.equal(await chat.ctx.scheduler.runDue(), 1, 'attempted');
      const [m] = (await ok(bob, 'GET', '/scheduled_messages')).scheduled_messages;
      assert.deepEqual([m?.scheduled_message_id, m?.failed], [id, false], 'neither sent nor failed while held');
      release();
      await holder;
      assert.equal(await chat.ctx.scheduler.runDue(), 1);
      assert.deepEqual((await ok(bob, 'GET', '/scheduled_messages')).scheduled_messages, []);
      const got = (await ok(bob, 'GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'topic', operand: 'held' }] })).messages;
      assert.equal(got.length, 1);
    });
  }

  it('bounds the pending scheduled messages of a user; delivered ones do not count', async () => {
    const at = now() + 3600;
    const rows = Array.from({ length: BOUNDS.scheduledMessagesPerUser }, (_, i) => ({
      realm_id: 1,
      sender_id: ownerId,
      kind: 'stream',
      stream_id: garden,
      to_ids: '',
      topic: 'bulk',
      content: `b${i}`,
      rendered_content: `<p>b${i}</p>`,
      client: 'test',
      scheduled_timestamp: at,
      read_by_sender: 0,
    }));
    const realmId = (await chat.ctx.chatDb.kysely.selectFrom('chat_users').select('realm_id').where('id', '=', ownerId).executeTakeFirstOrThrow()).realm_id;
    for (const r of rows) r.realm_id = realmId;
    for (let i = 0; i < rows.length; i += 200)
      await chat.ctx.chatDb.kysely
        .insertInto('scheduled_messages')
        .values(rows.slice(i, i + 200))
        .execute();
    const refused = await schedule(owner, { type: 'stream', to: garden, topic: 'one more', content: 'x', scheduled_delivery_timestamp: at });
    assert.deepEqual([refused.status, refused.body.msg], [400, `Limit reached: a user can have at most ${BOUNDS.scheduledMessagesPerUser} scheduled messages.`]);
    await chat.ctx.chatDb.kysely.updateTable('scheduled_messages').set({ delivered: 1 }).where('sender_id', '=', ownerId).where('content', '=', 'b0').execute();
    assert.equal((await schedule(owner, { type: 'stream', to: garden, topic: 'one more', content: 'x', scheduled_delivery_timestamp: at })).status, 200);
    await chat.ctx.chatDb.kysely.deleteFrom('scheduled_messages').where('sender_id', '=', ownerId).execute();
  });
});

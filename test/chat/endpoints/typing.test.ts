// Typing notifications in process: POST /typing for direct conversations and channel topics (who
// receives them: recipients, subscribers, receives_typing_notifications, the stream_typing_notifications
// capability, the empty topic), POST /messages/{id}/typing for edits, and the refusals.
// Every 2xx answer (and every event) is checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../../helpers/in-process-chat.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;
type Ev = Record<string, any>;

await forEachEngine('chat typing', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient, bobId: number;
  let carol: InProcessClient, carolId: number;
  let streamId: number;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob', 'carol'], channel: { name: 'design', by: 'alice', subscribers: ['alice', 'bob'] } });
    ({ storage, chat, channelId: streamId } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
    ({ client: carol, id: carolId } = realm.members.carol);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const queue = async (c: InProcessClient, params: Record<string, unknown> = {}) =>
    (await ok(c, 'POST', '/register', { event_types: ['typing', 'typing_edit_message'], ...params })).queue_id as string;
  const drain = async (c: InProcessClient, q: string): Promise<Ev[]> => (await ok(c, 'GET', '/events', { queue_id: q, last_event_id: -1, dont_block: true })).events;
  const setSettings = (id: number, settings: Record<string, unknown>) =>
    chat.ctx.chatDb.kysely
      .updateTable('chat_users')
      .set({ settings: JSON.stringify(settings) })
      .where('id', '=', id)
      .execute();

  it('sends direct typing to every recipient, the sender included, start and stop', async () => {
    const [qa, qb, qc] = [await queue(alice), await queue(bob), await queue(carol)];
    await ok(alice, 'POST', '/typing', { op: 'start', to: [bobId] });
    await ok(alice, 'POST', '/typing', { type: 'direct', op: 'stop', to: [bobId] });
    const people = [
      { user_id: aliceId, email: 'alice@example.com' },
      { user_id: bobId, email: 'bob@example.com' },
    ];
    for (const [c, q] of [
      [alice, qa],
      [bob, qb],
    ] as const) {
      const evs = await drain(c, q);
      assert.deepEqual(
        evs.map(({ id: _id, ...e }) => e),
        [
          { type: 'typing', op: 'start', message_type: 'direct', sender: people[0], recipients: people },
          { type: 'typing', op: 'stop', message_type: 'direct', sender: people[0], recipients: people },
        ],
      );
    }
    assert.deepEqual(await drain(carol, qc), [], 'carol is not in the conversation');
  });

  it('leaves out users who turned receives_typing_notifications off', async () => {
    const qb = await queue(bob);
    await setSettings(bobId, { receives_typing_notifications: false });
    await ok(alice, 'POST', '/typing', { op: 'start', to: [bobId] });
    assert.deepEqual(await drain(bob, qb), []);
    await setSettings(bobId, {});
    await ok(alice, 'POST', '/typing', { op: 'start', to: [bobId] });
    assert.equal((await drain(bob, qb)).length, 1);
  });

  it('sends channel typing to subscribers whose client declared stream_typing_notifications', async () => {
    const capable = await queue(bob, { client_capabilities: { notification_settings_null: false, stream_typing_notifications: true } });
    const emptyTopic = await queue(bob, { client_capabilities: { notification_settings_null: false, stream_typing_notifications: true, empty_topic_name: true } });
    const old = await queue(bob);
    const outsider = await queue(carol, { client_capabilities: { notification_settings_null: false, stream_typing_notifications: true } });
    await ok(alice, 'POST', '/typing', { type: 'channel', op: 'start', stream_id: streamId, topic: 'logo' });
    await ok(alice, 'POST', '/typing', { type: 'stream', op: 'stop', stream_id: streamId, topic: '(no topic)' });
    const got = (await drain(bob, capable)).map(({ id: _id, ...e }) => e);
    const sender = { user_id: aliceId, email: 'alice@example.com' };
    assert.deepEqual(got, [
      { type: 'typing', op: 'start', message_type: 'stream', sender, stream_id: streamId, topic: 'logo' },
      { type: 'typing', op: 'stop', message_type: 'stream', sender, stream_id: streamId, topic: 'general chat' },
    ]);
    assert.equal((await drain(bob, emptyTopic))[1].topic, '', 'a client that handles the empty topic sees it');
    assert.deepEqual(await drain(bob, old), [], 'no capability, no channel typing');
    assert.deepEqual(await drain(carol, outsider), [], 'carol is not subscribed');
  });

  it('sends typing_edit_message to those who would see the edit', async () => {
    const qb = await queue(bob);
    const qc = await queue(carol);
    const inChannel = (await ok(alice, 'POST', '/messages', { type: 'stream', to: 'design', topic: 'logo', content: 'draft' })).id as number;
    const direct = (await ok(alice, 'POST', '/messages', { type: 'direct', to: [carolId], content: 'psst' })).id as number;
    await ok(alice, 'POST', `/messages/${inChannel}/typing`, { op: 'start' });
    await ok(alice, 'POST', `/messages/${direct}/typing`, { op: 'stop' });
    assert.deepEqual(
      (await drain(bob, qb)).map(({ id: _id, ...e }) => e),
      [{ type: 'typing_edit_message', op: 'start', sender_id: aliceId, message_id: inChannel, recipient: { type: 'channel', channel_id: streamId, topic: 'logo' } }],
    );
    assert.deepEqual(
      (await drain(carol, qc)).map(({ id: _id, ...e }) => e),
      [{ type: 'typing_edit_message', op: 'stop', sender_id: aliceId, message_id: direct, recipient: { type: 'direct', user_ids: [aliceId, carolId].sort((a, b) => a - b) } }],
    );
    const r = await bob.call('POST', `/messages/${direct}/typing`, { op: 'start' });
    assert.deepEqual([r.status, r.body.msg], [400, 'Invalid message(s)'], 'bob has no copy of the direct message');
  });

  it('refuses what Zulip refuses', async () => {
    const cases: [InProcessClient, Record<string, unknown>, string][] = [
      [alice, { type: 'channel', op: 'start', topic: 'x' }, 'Missing channel ID'],
      [alice, { type: 'channel', op: 'start', stream_id: streamId }, 'Missing topic'],
      [carol, { type: 'channel', op: 'start', stream_id: 999999, topic: 'x' }, "Channel with ID '999999' does not exist"],
      [alice, { op: 'start' }, "Missing 'to' argument"],
      [alice, { op: 'start', to: [] }, "Empty 'to' list"],
      [alice, { op: 'start', to: [999999] }, 'Invalid user ID 999999'],
      [alice, { op: 'begin', to: [bobId] }, 'Invalid op'],
    ];
    for (const [c, params, msg] of cases) {
      const r = await c.call('POST', '/typing', params);
      assert.deepEqual([r.status, r.body.msg], [400, msg], JSON.stringify(params));
    }
    await setSettings(aliceId, { send_private_typing_notifications: false });
    const r = await alice.call('POST', '/typing', { op: 'start', to: [bobId] });
    assert.deepEqual([r.status, r.body.msg], [400, 'User has disabled typing notifications for direct messages']);
    await setSettings(aliceId, {});
  });
});

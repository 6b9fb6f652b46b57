// POST /streams/{stream_id}/delete_topic, in process on both engines, with a batch of 2 messages and
// no time budget (so each request deletes one batch and answers complete: false until the topic is
// gone): administrators only, newest first, delete_message events in bulk or one per message by
// client capability, the stream update when the channel's oldest message goes, the users' topic
// policies reset at the end, and upload claims detached. Requests are sent as Zulip's Python client
// sends them; every 2xx answer and event is checked against Zulip's OpenAPI description.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { ok, type InProcessClient } from '../../helpers/in-process-chat.js';

type Ev = Record<string, any>;

await forEachEngine('chat delete_topic', (engine) => {
  let realm: InProcessRealm;
  let owner: InProcessClient;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient;
  let channelId: number;

  before(async () => {
    realm = await inProcessRealm(engine, {
      members: ['alice', 'bob'],
      channel: { name: 'garden', subscribers: ['owner', 'alice', 'bob'] },
      options: { app: { topicDeletion: { batchSize: 2, budgetMs: 0 } } },
    });
    ({ owner, channelId } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob } = realm.members.bob);
  });
  after(async () => {
    await realm?.close();
  });

  const send = async (c: InProcessClient, topic: string, content = 'hello') => (await ok(c, 'POST', '/messages', { type: 'stream', to: 'garden', topic, content })).id as number;
  const queue = async (c: InProcessClient, capabilities: Record<string, boolean>) =>
    (await ok(c, 'POST', '/register', { event_types: ['delete_message', 'stream', 'user_topic'], client_capabilities: { notification_settings_null: false, ...capabilities } })).queue_id as string;
  const drain = async (c: InProcessClient, q: string) => (await ok(c, 'GET', '/events', { queue_id: q, last_event_id: -1, dont_block: true })).events as Ev[];
  const topicIds = async (c: InProcessClient, topic: string) =>
    (
      await ok(c, 'GET', '/messages', {
        anchor: 'newest',
        num_before: 100,
        num_after: 0,
        narrow: [
          { operator: 'channel', operand: channelId },
          { operator: 'topic', operand: topic },
        ],
      })
    ).messages.map((m: Ev) => m.id) as number[];

  it('refuses anyone but an administrator, and an unknown channel', async () => {
    const r = await alice.call('POST', `/streams/${channelId}/delete_topic`, { topic_name: 'anything' });
    assert.equal(r.status, 400);
    assert.deepEqual([r.body.code, r.body.msg], ['UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator']);
    const missing = await owner.call('POST', '/streams/99999/delete_topic', { topic_name: 'anything' });
    assert.deepEqual([missing.status, missing.body.msg], [400, 'Invalid channel ID']);
    const noTopic = await owner.call('POST', `/streams/${channelId}/delete_topic`, {});
    assert.equal(noTopic.body.code, 'REQUEST_VARIABLE_MISSING');
  });

  it('deletes a topic newest first, a batch per request, and tells each client its way', async () => {
    // The channel's first message is in the topic, so its deletion moves first_message_id.
    const first = await send(alice, 'Lunch');
    const kept = await send(bob, 'other');
    const later = [await send(alice, 'lunch'), await send(bob, 'lunch'), await send(alice, 'LUNCH')];
    await ok(bob, 'POST', '/user_topics', { stream_id: channelId, topic: 'lunch', visibility_policy: 1 });
    const bulkQ = await queue(alice, { bulk_message_deletion: true });
    const oneQ = await queue(bob, { bulk_message_deletion: false });
    // An upload claimed by a message of the topic (rows as the uploads code writes them).
    const db = realm.chat.ctx.chatDb.kysely;
    const att = await db
      .insertInto('attachments')
      .values({ realm_id: 1, owner_id: aliceId, path_id: '1/ab/cd/x.txt', file_name: 'x.txt', content_type: 'text/plain', size: 3, create_time: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('attachment_messages').values({ attachment_id: att.id, message_id: first }).execute();

    const path = `/streams/${channelId}/delete_topic`;
    assert.deepEqual(await ok(owner, 'POST', path, { topic_name: 'lunch' }), { result: 'success', msg: '', complete: false });
    assert.deepEqual(await topicIds(alice, 'lunch'), [first, later[0]], 'the two newest went first');
    assert.deepEqual((await ok(owner, 'POST', path, { topic_name: 'lunch' })).complete, false);
    assert.deepEqual(await topicIds(alice, 'lunch'), []);
    // The last request finds nothing more (the last batch was full) and finishes.
    assert.deepEqual((await ok(owner, 'POST', path, { topic_name: 'lunch' })).complete, true);
    assert.deepEqual(await topicIds(alice, 'other'), [kept]);

    const bulk = (await drain(alice, bulkQ)).filter((e) => e.type === 'delete_message');
    assert.deepEqual(
      bulk.map((e) => e.message_ids),
      [
        [later[1], later[2]],
        [first, later[0]],
      ],
    );
    for (const e of bulk) assert.deepEqual([e.message_type, e.stream_id, e.message_id], ['stream', channelId, undefined]);
    const bobEvents = await drain(bob, oneQ);
    const single = bobEvents.filter((e) => e.type === 'delete_message');
    assert.deepEqual(single.map((e) => e.message_id).sort(), [first, ...later].sort());
    assert.ok(single.every((e) => e.message_ids === undefined));
    const streamUpdate = bobEvents.filter((e) => e.type === 'stream');
    assert.deepEqual(
      streamUpdate.map((e) => [e.op, e.property, e.value, e.stream_id]),
      [['update', 'first_message_id', kept, channelId]],
    );
    // Bob's policy for the topic is gone with it.
    const userTopic = bobEvents.filter((e) => e.type === 'user_topic');
    assert.deepEqual(
      userTopic.map((e) => [e.stream_id, e.topic_name, e.visibility_policy]),
      [[channelId, 'lunch', 0]],
    );
    const state = await ok(bob, 'POST', '/register', { fetch_event_types: ['user_topic'] });
    assert.deepEqual(state.user_topics, []);
    // The upload stays its owner's, claimed by nothing.
    assert.deepEqual(await db.selectFrom('attachment_messages').selectAll().where('attachment_id', '=', att.id).execute(), []);
    assert.ok(await db.selectFrom('attachments').select('id').where('id', '=', att.id).executeTakeFirst());
  });

  it('answers complete for a topic with no messages, and leaves other topics alone', async () => {
    const id = await send(alice, 'stays');
    assert.deepEqual((await ok(owner, 'POST', `/streams/${channelId}/delete_topic`, { topic_name: 'nothing here' })).complete, true);
    assert.deepEqual(await topicIds(alice, 'stays'), [id]);
  });

  it('deletes each message once when requests for the same topic run together', async () => {
    const sent: number[] = [];
    for (let i = 0; i < 7; i++) sent.push(await send(alice, 'race', `m${i}`));
    const q = await queue(alice, { bulk_message_deletion: true });
    const path = `/streams/${channelId}/delete_topic`;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all([ok(owner, 'POST', path, { topic_name: 'race' }), ok(owner, 'POST', path, { topic_name: 'race' })]);
      if (answers.every((a) => a.complete)) break;
    }
    assert.deepEqual(await topicIds(alice, 'race'), []);
    const announced = (await drain(alice, q)).filter((e) => e.type === 'delete_message').flatMap((e) => e.message_ids as number[]);
    assert.deepEqual(
      [...announced].sort((a, b) => a - b),
      sent,
      'every message announced, none twice',
    );
  });
});

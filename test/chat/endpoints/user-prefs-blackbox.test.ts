// Black-box, on both engines: a real `keel serve` (its migrations included) driven over HTTP, raw
// and through zulip-js (which has no dedicated methods for these endpoints, so its generic
// callEndpoint and its queue/event methods are used): settings, defaults, drafts, muted users and
// topic policies, each change seen as an event in a registered queue.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

type Ev = Record<string, any>;

await forEachEngine('chat user preferences, black-box', (engine) => {
  it('settings, defaults, drafts, muting and topic policies over HTTP and zulip-js', async () => {
    const storage = await createStorage(engine);
    const server = await startServer(storage).catch(async (err: unknown) => {
      await storage.dispose();
      throw err;
    });
    try {
      const owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
      const made = await owner.post('/users', { email: 'bob@example.com', password: 'pass-word-1', full_name: 'Bob' });
      assert.equal(made.body.result, 'success', JSON.stringify(made.body));
      const bobId = made.body.user_id as number;
      const key = await owner.call('POST', '/fetch_api_key', { username: 'bob@example.com', password: 'pass-word-1' }, null);
      const bob = new ChatClient(server.chatUrl, key.body.email, key.body.api_key);
      const bobJs = await zulip({ realm: server.chatUrl, username: key.body.email, apiKey: key.body.api_key });
      const ownerId = (await owner.get('/users/me')).body.user_id as number;

      // zulip-js: a queue declaring user_settings_object, a setting changed, the event retrieved.
      const q = await bobJs.queues.register({
        client_capabilities: JSON.stringify({ notification_settings_null: false, user_settings_object: true }),
        fetch_event_types: JSON.stringify(['user_settings', 'drafts', 'muted_users', 'user_topic']),
      });
      assert.equal(q.result, 'success', JSON.stringify(q));
      assert.equal(q.user_settings.twenty_four_hour_time, false);
      assert.deepEqual([q.drafts, q.muted_users, q.user_topics], [[], [], []]);
      assert.equal((await bobJs.callEndpoint('/settings', 'PATCH', { twenty_four_hour_time: 'true', color_scheme: '2' })).result, 'success');
      const bad = await bobJs.callEndpoint('/settings', 'PATCH', { color_scheme: '9' });
      assert.deepEqual([bad.result, bad.code, bad.msg], ['error', 'BAD_REQUEST', 'Invalid color_scheme: Value error, Not in the list of possible values']);

      // Raw HTTP: drafts, muting, a topic policy, and a default only administrators may set.
      const d = await bob.post('/drafts', { drafts: [{ type: 'private', to: [ownerId], topic: '', content: 'hello' }] });
      assert.equal(d.status, 200, JSON.stringify(d.body));
      assert.equal((await bob.call('DELETE', `/drafts/${d.body.ids[0]}`)).status, 200);
      assert.equal((await bob.call('DELETE', `/drafts/${d.body.ids[0]}`)).body.msg, 'Draft does not exist');
      assert.equal((await bob.post(`/users/me/muted_users/${ownerId}`)).status, 200);
      const sub = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [ownerId, bobId] });
      assert.equal(sub.status, 200, JSON.stringify(sub.body));
      const streamId = (await owner.get('/get_stream_id', { stream: 'general' })).body.stream_id as number;
      assert.equal((await bob.post('/user_topics', { stream_id: streamId, topic: 'lunch', visibility_policy: 3 })).status, 200);
      const sent = await owner.post('/messages', { type: 'stream', to: streamId, topic: 'lunch', content: 'pizza?' });
      assert.equal((await bob.get(`/messages/${sent.body.id}`)).body.message.flags.includes('read'), true, 'from a muted sender: arrives read');
      const followed = await bob.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'is', operand: 'followed' }] });
      assert.deepEqual(
        followed.body.messages.map((m: Ev) => m.id),
        [sent.body.id],
      );
      assert.equal((await bob.call('PATCH', '/realm/user_settings_defaults', { emojiset: 'text' })).body.code, 'UNAUTHORIZED_PRINCIPAL');
      assert.equal((await owner.call('PATCH', '/realm/user_settings_defaults', { emojiset: 'text' })).status, 200);

      const got = await bobJs.events.retrieve({ queue_id: q.queue_id, last_event_id: -1, dont_block: true });
      assert.equal(got.result, 'success', JSON.stringify(got));
      const types = got.events.map((e: Ev) => (e.type === 'user_settings' || e.type === 'drafts' ? `${e.type}:${e.property ?? e.op}` : e.type));
      assert.deepEqual(types, [
        'user_settings:twenty_four_hour_time',
        'user_settings:color_scheme',
        'drafts:add',
        'drafts:remove',
        'muted_users',
        // The channel's first message also moves its first_message_id: a stream update before it.
        'stream',
        'subscription',
        'muted_topics',
        'user_topic',
        'stream',
        'message',
        'realm_user_settings_defaults',
      ]);
      const msg = got.events.find((e: Ev) => e.type === 'message');
      assert.ok(msg.flags.includes('read'));
      assert.deepEqual(
        got.events.find((e: Ev) => e.type === 'muted_users').muted_users.map((m: Ev) => m.id),
        [ownerId],
      );

      // The state a new registration reads back.
      const state = await bob.post('/register', { fetch_event_types: ['user_settings', 'muted_users', 'user_topic', 'realm_user_settings_defaults'] });
      assert.equal(state.body.user_settings.color_scheme, 2);
      assert.equal(state.body.realm_user_settings_defaults.emojiset, 'text');
      assert.equal(state.body.user_settings.emojiset, 'google', 'defaults do not reach existing users');
      assert.deepEqual(
        state.body.user_topics.map((t: Ev) => [t.stream_id, t.topic_name, t.visibility_policy]),
        [[streamId, 'lunch', 3]],
      );
    } finally {
      await server.stop();
      await storage.dispose();
    }
  });
});

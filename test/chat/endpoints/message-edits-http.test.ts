// Black-box: editing, moving, reacting to and deleting messages against a real `keel serve`, through
// raw HTTP (form bodies, as the Python client sends PATCH and DELETE) and unmodified zulip-js
// (messages.update, getHistoryById, reactions.add/remove, deleteById: parameters in the query
// string), with the events each user's queue then holds.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

type Ev = Record<string, any>;

await forEachEngine('chat message edits over HTTP and zulip-js', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let alice: ChatClient, aliceId: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let aliceJs: any;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    const made = await owner.post('/users', { email: 'alice@example.com', password: 'pass-word-1', full_name: 'Alice' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    aliceId = made.body.user_id;
    const key = await owner.call('POST', '/fetch_api_key', { username: 'alice@example.com', password: 'pass-word-1' }, null);
    alice = new ChatClient(server.chatUrl, key.body.email, key.body.api_key);
    aliceJs = await zulip({ realm: server.chatUrl, username: key.body.email, apiKey: key.body.api_key });
    const sub = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [aliceId] });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] })).status, 200);
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  async function events(c: ChatClient, queueId: string): Promise<Ev[]> {
    const r = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.events;
  }

  it('edits and moves over raw HTTP; the other user queue gets update_message', async () => {
    const q = await owner.post('/register', { event_types: ['update_message', 'delete_message', 'reaction'], client_capabilities: { notification_settings_null: false, bulk_message_deletion: true } });
    const sent = await alice.post('/messages', { type: 'stream', to: 'general', subject: 'raw', content: 'first draft' });
    const id = sent.body.id as number;
    const edited = await alice.call('PATCH', `/messages/${id}`, { content: 'final **draft**', topic: 'raw moved' });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(edited.body.detached_uploads, []);
    const [e] = await events(owner, q.body.queue_id);
    assert.deepEqual(
      [e.type, e.message_id, e.orig_content, e.content, e.rendered_content, e.orig_subject, e.subject, e.propagate_mode],
      ['update_message', id, 'first draft', 'final **draft**', '<p>final <strong>draft</strong></p>', 'raw', 'raw moved', 'change_one'],
    );
    const bad = await owner.call('PATCH', `/messages/${id}`, { content: 'not mine' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
    const got = await owner.get(`/messages/${id}`);
    assert.equal(got.body.raw_content, 'final **draft**');
    assert.equal(got.body.message.subject, 'raw moved');
    const del = await alice.call('DELETE', `/messages/${id}`);
    assert.equal(del.status, 200, JSON.stringify(del.body));
    const after = await events(owner, q.body.queue_id);
    assert.deepEqual(
      after.slice(1).map((x) => [x.type, x.message_ids]),
      [['delete_message', [id]]],
    );
  });

  it('zulip-js: update, history, reactions add/remove, deleteById', async () => {
    const q = await owner.post('/register', { event_types: ['update_message', 'reaction', 'delete_message'] });
    const sent = await aliceJs.messages.send({ to: 'general', type: 'stream', topic: 'js', content: 'from js' });
    assert.equal(sent.result, 'success', JSON.stringify(sent));
    const updated = await aliceJs.messages.update({ message_id: sent.id, content: 'from js, edited' });
    assert.equal(updated.result, 'success', JSON.stringify(updated));
    const history = await aliceJs.messages.getHistoryById({ message_id: sent.id });
    assert.equal(history.result, 'success', JSON.stringify(history));
    assert.deepEqual(
      history.message_history.map((h: Ev) => h.content),
      ['from js', 'from js, edited'],
    );
    const added = await aliceJs.reactions.add({ message_id: sent.id, emoji_name: 'tada' });
    assert.equal(added.result, 'success', JSON.stringify(added));
    const again = await aliceJs.reactions.add({ message_id: sent.id, emoji_name: 'tada' });
    assert.equal(again.code, 'REACTION_ALREADY_EXISTS');
    const bogus = await aliceJs.reactions.add({ message_id: sent.id, emoji_name: 'tada', emoji_code: 'zzzz' });
    assert.equal(bogus.code, 'BAD_REQUEST');
    const listed = await aliceJs.messages.retrieve({ anchor: sent.id, num_before: 0, num_after: 0, narrow: [{ operator: 'has', operand: 'reaction' }] });
    assert.deepEqual(
      listed.messages.map((m: Ev) => [m.id, m.reactions]),
      [[sent.id, [{ emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: aliceId }]]],
    );
    const removed = await aliceJs.reactions.remove({ message_id: sent.id, emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji' });
    assert.equal(removed.result, 'success', JSON.stringify(removed));
    const deleted = await aliceJs.messages.deleteById({ message_id: sent.id });
    assert.equal(deleted.result, 'success', JSON.stringify(deleted));
    const gone = await aliceJs.messages.getById({ message_id: sent.id });
    assert.equal(gone.result, 'error');
    const seen = await events(owner, q.body.queue_id);
    assert.deepEqual(
      seen.map((e) => [e.type, e.op ?? null, e.message_id]),
      [
        ['update_message', null, sent.id],
        ['reaction', 'add', sent.id],
        ['reaction', 'remove', sent.id],
        ['delete_message', null, sent.id],
      ],
    );
  });
});

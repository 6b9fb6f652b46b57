// Code playgrounds, saved snippets and read receipts, black-box on both engines: a real `keel serve`
// over raw HTTP as the Python client sends it, and zulip-js's generic callEndpoint (it has no
// dedicated calls for these). Zulip's checks and texts, the register state and the events.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import type { ChatClient } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

await forEachEngine('chat playgrounds, saved snippets and read receipts, black-box', (engine) => {
  let realm: ServedRealm;
  let owner: ChatClient;
  let ann: ChatClient;
  let bob: ChatClient;
  let cy: ChatClient;
  let annId: number;
  let bobId: number;
  let cyId: number;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'bob', 'cy', 'dee'], channel: { name: 'garden', subscribers: ['owner', 'ann', 'bob', 'cy'] } });
    owner = realm.owner;
    ({ client: ann, id: annId } = realm.members.ann);
    ({ client: bob, id: bobId } = realm.members.bob);
    ({ client: cy, id: cyId } = realm.members.cy);
  });
  after(async () => {
    await realm?.stop();
  });

  it('adds and removes code playgrounds, with register state and realm_playgrounds events', async () => {
    const q = await register(ann, { fetch_event_types: ['realm_playgrounds'] });
    assert.deepEqual(q.realm_playgrounds, []);
    const made = await owner.post('/realm/playgrounds', { name: ' Python playground ', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const js = await zulip({ realm: realm.server.chatUrl, username: owner.email, apiKey: owner.apiKey });
    const second = await js.callEndpoint('/realm/playgrounds', 'POST', { name: 'Rust', pygments_language: 'Rust', url_template: 'https://play.example/{?code}' });
    assert.equal(second.result, 'success', JSON.stringify(second));
    const expected = [
      { id: made.body.id, name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com?code={code}' },
      { id: second.id, name: 'Rust', pygments_language: 'Rust', url_template: 'https://play.example/{?code}' },
    ];
    assert.deepEqual((await register(ann, { fetch_event_types: ['realm_playgrounds'] })).realm_playgrounds, expected);
    const events = await drain(ann, q.queue_id);
    assert.deepEqual(
      events.map((e) => e.realm_playgrounds.length),
      [1, 2],
    );
    assert.deepEqual(events[1], { type: 'realm_playgrounds', realm_playgrounds: expected, id: events[1].id });
    assert.equal((await owner.call('DELETE', `/realm/playgrounds/${second.id}`)).status, 200);
    refused(await owner.call('DELETE', `/realm/playgrounds/${second.id}`), 'BAD_REQUEST', 'Invalid playground');
    assert.deepEqual((await drain(ann, q.queue_id, events[1].id))[0].realm_playgrounds, expected.slice(0, 1));
  });

  it("refuses playgrounds as Zulip does, with the form's errors", async () => {
    const add = (p: Ev) => owner.post('/realm/playgrounds', { name: 'P', pygments_language: 'Python', url_template: 'https://p.example/{code}', ...p });
    refused(
      await ann.post('/realm/playgrounds', { name: 'P', pygments_language: 'Python', url_template: 'https://p.example/{code}' }),
      'UNAUTHORIZED_PRINCIPAL',
      'Must be an organization administrator',
    );
    refused(await add({ pygments_language: 'Py$thon' }), 'BAD_REQUEST', 'Invalid characters in pygments language');
    refused(await add({ pygments_language: 'x'.repeat(41) }), 'BAD_REQUEST', 'pygments_language is too long (limit: 40 characters)');
    const bad = await add({ url_template: 'https://p.example/{code' });
    refused(bad, 'BAD_REQUEST', 'Invalid URL template.');
    assert.deepEqual(bad.body.errors, { url_template: ['Invalid URL template.'] });
    refused(await add({ url_template: 'https://p.example/{lang}' }), 'BAD_REQUEST', 'Missing the required variable "code" in the URL template');
    refused(await add({ url_template: 'https://p.example/{lang}/{code}' }), 'BAD_REQUEST', '"code" should be the only variable present in the URL template');
    refused(await add({ name: '  ' }), 'BAD_REQUEST', 'This field cannot be blank.');
    const dup = await add({ name: 'Python playground' });
    refused(dup, 'BAD_REQUEST', 'Realm playground with this Realm, Pygments language and Name already exists.');
    assert.deepEqual(dup.body.errors, { __all__: ['Realm playground with this Realm, Pygments language and Name already exists.'] });
    refused(await owner.post('/realm/playgrounds', { name: 'P', pygments_language: 'Python' }), 'REQUEST_VARIABLE_MISSING', "Missing 'url_template' argument");
    assert.equal((await owner.get('/realm/profile_fields')).status, 200);
    assert.equal((await register(owner, { fetch_event_types: ['realm_playgrounds'] })).realm_playgrounds.length, 1);
  });

  it("keeps each user's saved snippets, with register state and saved_snippets events", async () => {
    const q = await register(ann, { fetch_event_types: ['saved_snippets'] });
    assert.deepEqual(q.saved_snippets, []);
    const made = await ann.post('/saved_snippets', { title: ' Welcome ', content: ' Welcome to the **garden**. ' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = made.body.saved_snippet_id as number;
    const [snippet] = (await ann.get('/saved_snippets')).body.saved_snippets;
    assert.deepEqual([snippet.id, snippet.title, snippet.content], [id, 'Welcome', 'Welcome to the **garden**.']);
    assert.ok(Number.isInteger(snippet.date_created) && snippet.date_created > 1_600_000_000);
    assert.deepEqual((await bob.get('/saved_snippets')).body.saved_snippets, [], 'per user');
    const notHis = await bob.call('PATCH', `/saved_snippets/${id}`, { title: 'Mine' });
    assert.deepEqual([notHis.status, notHis.body.code, notHis.body.msg], [404, 'BAD_REQUEST', 'Saved snippet does not exist.']);
    assert.equal((await bob.call('DELETE', `/saved_snippets/${id}`)).status, 404);
    assert.equal((await ann.call('PATCH', `/saved_snippets/${id}`, { content: 'Hello!' })).status, 200);
    assert.equal((await ann.call('PATCH', `/saved_snippets/${id}`, {})).status, 200, 'nothing asked: nothing done');
    refused(await ann.post('/saved_snippets', { title: '   ', content: 'x' }), 'BAD_REQUEST', 'Title cannot be empty.');
    refused(await ann.post('/saved_snippets', { title: 'x', content: '' }), 'BAD_REQUEST', 'Content cannot be empty.');
    const long = await ann.post('/saved_snippets', { title: 't'.repeat(61), content: 'x' });
    refused(long, 'BAD_REQUEST', 'title is too long (limit: 60 characters)');
    assert.deepEqual((await register(ann, { fetch_event_types: ['saved_snippets'] })).saved_snippets, [{ ...snippet, content: 'Hello!' }]);
    const missing = await ann.call('DELETE', '/saved_snippets/99999');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.msg, 'Saved snippet does not exist.');
    assert.equal((await ann.call('DELETE', `/saved_snippets/${id}`)).status, 200);
    const events = await drain(ann, q.queue_id);
    assert.deepEqual(
      events.map((e) => [e.type, e.op]),
      [
        ['saved_snippets', 'add'],
        ['saved_snippets', 'update'],
        ['saved_snippets', 'remove'],
      ],
    );
    assert.deepEqual(events[0].saved_snippet, snippet);
    assert.deepEqual(events[1].saved_snippet, { ...snippet, content: 'Hello!' });
    assert.equal(events[2].saved_snippet_id, id);
  });

  it('lists who read a message: not the sender, not muted or muting users, not those who keep it private', async () => {
    const sent = await owner.post('/messages', { type: 'stream', to: realm.channelId, topic: 'roses', content: 'They bloom!' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const msgId = sent.body.id as number;
    const receipts = async (c: ChatClient) => {
      const r = await c.get(`/messages/${msgId}/read_receipts`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.user_ids as number[];
    };
    assert.deepEqual(await receipts(owner), [], 'nobody read it yet; the sender never counts');
    for (const c of [ann, bob, cy]) assert.equal((await c.post('/messages/flags', { messages: [msgId], op: 'add', flag: 'read' })).status, 200);
    assert.deepEqual(await receipts(owner), [annId, bobId, cyId]);
    assert.deepEqual(await receipts(ann), [annId, bobId, cyId], 'the caller appears when they read it');
    // bob keeps his reading to himself.
    assert.equal((await bob.call('PATCH', '/settings', { send_read_receipts: false })).status, 200);
    assert.deepEqual(await receipts(owner), [annId, cyId]);
    // cy muted ann: ann does not see cy, and cy does not see ann.
    assert.equal((await cy.post(`/users/me/muted_users/${annId}`)).status, 200);
    assert.deepEqual(await receipts(ann), [annId]);
    assert.deepEqual(await receipts(cy), [cyId]);
    assert.deepEqual(await receipts(owner), [annId, cyId]);
    // A message the caller may not read: Zulip's error.
    const dm = await owner.post('/messages', { type: 'direct', to: [annId], content: 'psst' });
    refused(await bob.call('GET', `/messages/${dm.body.id}/read_receipts`), 'BAD_REQUEST', 'Invalid message(s)');
    refused(await bob.call('GET', '/messages/999999/read_receipts'), 'BAD_REQUEST', 'Invalid message(s)');
  });

  it("honours the organization's enable_read_receipts, changed by PATCH /realm and announced", async () => {
    const q = await register(ann, { fetch_event_types: ['realm'], event_types: ['realm'] });
    assert.equal(q.realm_enable_read_receipts, true);
    refused(await ann.call('PATCH', '/realm', { enable_read_receipts: false }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    assert.equal((await owner.call('PATCH', '/realm', { enable_read_receipts: false })).status, 200);
    const sent = await owner.post('/messages', { type: 'stream', to: realm.channelId, topic: 'roses', content: 'Again' });
    refused(await ann.call('GET', `/messages/${sent.body.id}/read_receipts`), 'BAD_REQUEST', 'Read receipts are disabled in this organization.');
    const [event] = await drain(ann, q.queue_id);
    assert.deepEqual([event.type, event.op, event.property, event.value], ['realm', 'update', 'enable_read_receipts', false]);
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_enable_read_receipts, false);
    assert.equal((await owner.call('PATCH', '/realm', { enable_read_receipts: true })).status, 200);
    assert.equal((await ann.get(`/messages/${sent.body.id}/read_receipts`)).status, 200);
  });
});

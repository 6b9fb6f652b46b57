// Black-box, as Zulip's Python client sends (form-encoded, JSON values, HTTP Basic): the realm
// settings that decide what members may do (mandatory_topics, name_changes_disabled,
// email_changes_disabled, default_language for new users) on a real `keel serve`, and the record of
// which register realm_* keys the server acts on against docs/chat.md's list of the others.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { drain, makeUser, refused, register } from '../../helpers/chat-users.js';
import type { ChatClient } from '../../helpers/chat-client.js';
import { ENFORCED_REALM_KEYS } from '../../../src/chat/domain/realm-rules.js';

type Ev = Record<string, any>;
const ADMINISTRATOR = 200;

/** register's realm_* keys that are data (lists, the realm's own address and age), not settings. */
const REALM_DATA_KEYS = new Set([
  'realm_users',
  'realm_non_active_users',
  'realm_bots',
  'realm_user_groups',
  'realm_default_streams',
  'realm_default_stream_groups',
  'realm_linkifiers',
  'realm_filters',
  'realm_emoji',
  'realm_domains',
  'realm_playgrounds',
  'realm_embedded_bots',
  'realm_incoming_webhook_bots',
  'realm_billing',
  'realm_user_settings_defaults',
  'realm_url',
  'realm_uri',
  'realm_date_created',
  // A personal setting (how the realm's name shows in one's email notifications), in register's legacy top-level form.
  'realm_name_in_email_notifications_policy',
]);

/** The keys docs/chat.md lists under "Realm settings reported but not enforced". */
function documentedUnenforced(): Set<string> {
  const doc = readFileSync(new URL('../../../docs/chat.md', import.meta.url), 'utf8');
  const start = doc.indexOf('### Realm settings reported but not enforced');
  assert.ok(start >= 0, 'docs/chat.md has no "Realm settings reported but not enforced" section');
  const rest = doc.slice(start + 4);
  const section = rest.slice(0, rest.search(/\n#{2,3} /));
  const keys = new Set<string>();
  // Only the list's items: each starts with the keys it explains.
  for (const item of section.split('\n- ').slice(1)) {
    const names = item.slice(0, item.indexOf(': ')).match(/`(realm_\w+)`/g) ?? [];
    for (const n of names) keys.add(n.slice(1, -1));
  }
  return keys;
}

await forEachEngine('chat realm rules', (engine) => {
  let realm: ServedRealm;
  let owner: ChatClient;
  let ann: ChatClient;
  let adam: ChatClient;
  let channelId: number;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', ['adam', ADMINISTRATOR]], channel: { name: 'general', subscribers: ['owner', 'ann', 'adam'] } });
    owner = realm.owner;
    ann = realm.members.ann.client;
    adam = realm.members.adam.client;
    channelId = realm.channelId;
  });
  after(async () => {
    await realm?.stop();
  });

  const patchRealm = (c: ChatClient, params: Record<string, unknown>) => c.call('PATCH', '/realm', params);
  const send = (c: ChatClient, topic: string, content = 'hello') => c.post('/messages', { type: 'stream', to: channelId, topic, content });
  const newestInChannel = async () => {
    const r = await owner.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'channel', operand: channelId }], allow_empty_topic_name: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.messages.at(-1) as Ev;
  };

  it('mandatory_topics: off in a new realm, so the empty topic is accepted', async () => {
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_mandatory_topics, false);
    const r = await send(ann, '');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await newestInChannel()).subject, '');
  });

  it('mandatory_topics: only administrators turn it on; a realm update event to everyone; register shows it', async () => {
    refused(await patchRealm(ann, { mandatory_topics: true }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    const queue = (await register(ann, { event_types: ['realm'] })).queue_id as string;
    const r = await patchRealm(adam, { mandatory_topics: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { result: 'success', msg: '', mandatory_topics: true });
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [{ type: 'realm', op: 'update', property: 'mandatory_topics', value: true }],
    );
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_mandatory_topics, true);
    // The same value again changes nothing and announces nothing.
    assert.deepEqual((await patchRealm(adam, { mandatory_topics: true })).body, { result: 'success', msg: '' });
  });

  it('mandatory_topics: sending without a topic is refused with Zulip error, and nothing is sent', async () => {
    const ok = await send(ann, 'plans', 'with a topic');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    for (const topic of ['', '   ', '(no topic)', 'general chat']) {
      refused(await send(ann, topic), 'BAD_REQUEST', 'Topics are required in this organization');
      // Administrators are not exempt (Zulip's rule has no exception).
      refused(await send(owner, topic), 'BAD_REQUEST', 'Topics are required in this organization');
    }
    assert.equal((await newestInChannel()).id, ok.body.id);
    // The legacy `subject` parameter is the same topic.
    refused(await ann.post('/messages', { type: 'stream', to: 'general', subject: '', content: 'x' }), 'BAD_REQUEST', 'Topics are required in this organization');
    // Direct messages have no topic.
    const dm = await ann.post('/messages', { type: 'direct', to: [realm.ownerId], content: 'psst' });
    assert.equal(dm.status, 200, JSON.stringify(dm.body));
  });

  it('mandatory_topics: moving a message to the empty topic is refused, and the message stays', async () => {
    const { id } = (await send(ann, 'to be moved')).body;
    for (const topic of ['', '(no topic)', 'general chat']) {
      refused(await ann.call('PATCH', `/messages/${id}`, { topic }), 'BAD_REQUEST', 'Topics are required in this organization.');
      refused(await owner.call('PATCH', `/messages/${id}`, { topic, propagate_mode: 'change_all' }), 'BAD_REQUEST', 'Topics are required in this organization.');
    }
    const got = await ann.get(`/messages/${id}`);
    assert.equal(got.body.message.subject, 'to be moved');
    // A topic is still a topic: the move goes through.
    assert.equal((await ann.call('PATCH', `/messages/${id}`, { topic: 'moved' })).status, 200);
    // Content edits that name no topic are not concerned, even of a message sent to the empty topic before.
    const early = (await owner.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 1, narrow: [{ operator: 'channel', operand: channelId }], allow_empty_topic_name: true })).body
      .messages[0];
    assert.equal(early.subject, '');
    const edited = await ann.call('PATCH', `/messages/${early.id}`, { content: 'edited' });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
  });

  it('mandatory_topics: turned off again, the empty topic is accepted at once', async () => {
    assert.equal((await patchRealm(owner, { mandatory_topics: false })).status, 200);
    const r = await send(ann, '(no topic)');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await newestInChannel()).subject, '');
    refused(await patchRealm(owner, { mandatory_topics: 'sometimes' }), 'BAD_REQUEST', 'mandatory_topics is not valid JSON');
  });

  it('name_changes_disabled: a member change of their own name is skipped without an error; administrators are exempt', async () => {
    const queue = (await register(ann, { event_types: ['realm'] })).queue_id as string;
    assert.deepEqual((await patchRealm(owner, { name_changes_disabled: true })).body, { result: 'success', msg: '', name_changes_disabled: true });
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [{ type: 'realm', op: 'update', property: 'name_changes_disabled', value: true }],
    );
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_name_changes_disabled, true);
    // Zulip skips the name, unchecked, and applies the rest.
    const r = await ann.call('PATCH', '/settings', { full_name: 'Ann Other', twenty_four_hour_time: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const me = (await ann.get('/users/me')).body;
    assert.equal(me.full_name, 'ann');
    assert.equal((await register(ann, { fetch_event_types: ['user_settings'] })).user_settings.twenty_four_hour_time, true);
    assert.equal((await ann.call('PATCH', '/settings', { full_name: 'bad*name' })).status, 200);
    assert.equal((await adam.call('PATCH', '/settings', { full_name: 'Adam Admin' })).status, 200);
    assert.equal((await adam.get('/users/me')).body.full_name, 'Adam Admin');
    assert.equal((await patchRealm(owner, { name_changes_disabled: false })).status, 200);
    assert.equal((await ann.call('PATCH', '/settings', { full_name: 'Ann Other' })).status, 200);
    assert.equal((await ann.get('/users/me')).body.full_name, 'Ann Other');
  });

  it('email_changes_disabled: a member change of their own address is refused; administrators are exempt', async () => {
    assert.deepEqual((await patchRealm(owner, { email_changes_disabled: true })).body, { result: 'success', msg: '', email_changes_disabled: true });
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_email_changes_disabled, true);
    refused(await ann.call('PATCH', '/settings', { email: 'ann.new@example.com' }), 'BAD_REQUEST', 'Email address changes are disabled in this organization.');
    // Naming the address one has already is no change.
    assert.equal((await ann.call('PATCH', '/settings', { email: 'ann@example.com' })).status, 200);
    assert.equal((await adam.call('PATCH', '/settings', { email: 'adam.new@example.com' })).status, 200);
    assert.equal((await patchRealm(owner, { email_changes_disabled: false })).status, 200);
    assert.equal((await ann.call('PATCH', '/settings', { email: 'ann.new@example.com' })).status, 200);
  });

  it('require_unique_names: names compared as Zulip does are refused when they clash, for users and bots', async () => {
    assert.deepEqual((await patchRealm(owner, { require_unique_names: true })).body, { result: 'success', msg: '', require_unique_names: true });
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_require_unique_names, true);
    const annId = realm.members.ann.id;
    const taken = (await ann.get('/users/me')).body.full_name as string;
    const clash = 'Unique names required in this organization.';
    refused(await owner.post('/users', { email: 'dup@example.com', password: 'pass-word-1', full_name: taken.toUpperCase() }), 'BAD_REQUEST', clash);
    refused(await adam.call('PATCH', '/settings', { full_name: ` ${taken} ` }), 'BAD_REQUEST', clash);
    refused(await owner.call('PATCH', `/users/${realm.members.adam.id}`, { full_name: taken.toUpperCase() }), 'BAD_REQUEST', clash);
    refused(await ann.post('/bots', { full_name: taken, short_name: 'dupbot' }), 'BAD_REQUEST', clash);
    const bot = await ann.post('/bots', { full_name: 'Helper', short_name: 'helper' });
    assert.equal(bot.status, 200, JSON.stringify(bot.body));
    refused(await ann.call('PATCH', `/bots/${bot.body.user_id}`, { full_name: taken }), 'BAD_REQUEST', clash);
    // Full-width letters are the same name (NFKC); the bot's own name is no clash with itself.
    refused(await owner.post('/users', { email: 'wide@example.com', password: 'pass-word-1', full_name: 'ＨＥＬＰＥＲ' }), 'BAD_REQUEST', clash);
    assert.equal((await ann.call('PATCH', `/bots/${bot.body.user_id}`, { full_name: 'HELPER' })).status, 200);
    // Keeping one's own name is no clash; a new name is fine.
    assert.equal((await ann.call('PATCH', '/settings', { full_name: taken })).status, 200);
    assert.equal((await owner.call('PATCH', `/users/${annId}`, { full_name: taken })).status, 200);
    assert.equal((await owner.post('/users', { email: 'dee@example.com', password: 'pass-word-1', full_name: 'Dee' })).status, 200);
    assert.equal((await patchRealm(owner, { require_unique_names: false })).status, 200);
    assert.equal((await owner.post('/users', { email: 'dup@example.com', password: 'pass-word-1', full_name: taken })).status, 200);
  });

  it('default_language: users created afterwards get the organization language; existing users keep theirs', async () => {
    assert.equal((await patchRealm(owner, { default_language: 'de' })).status, 200);
    const { client: bea } = await makeUser(owner, realm.server.chatUrl, 'bea');
    assert.equal((await register(bea, { fetch_event_types: ['user_settings'] })).user_settings.default_language, 'de');
    assert.equal((await register(ann, { fetch_event_types: ['user_settings'] })).user_settings.default_language, 'en');
    assert.equal((await patchRealm(owner, { default_language: 'en' })).status, 200);
  });

  it('direct_message_permission_group: a conversation needs someone in the group; role:nobody disables direct messages', async () => {
    const state = await register(ann, { fetch_event_types: ['realm', 'realm_user_groups'] });
    const groups = new Map<string, number>(state.realm_user_groups.map((g: Ev) => [g.name, g.id]));
    assert.equal(state.realm_direct_message_permission_group, groups.get('role:everyone'));
    const everyone = groups.get('role:everyone')!;
    const admins = groups.get('role:administrators')!;
    const nobody = groups.get('role:nobody')!;
    const queue = (await register(ann, { event_types: ['realm'] })).queue_id as string;
    assert.deepEqual((await patchRealm(owner, { direct_message_permission_group: { new: admins, old: everyone } })).body, {
      result: 'success',
      msg: '',
      direct_message_permission_group: admins,
    });
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [{ type: 'realm', op: 'update_dict', property: 'default', data: { direct_message_permission_group: admins } }],
    );
    const { client: bea, id: beaId } = await makeUser(owner, realm.server.chatUrl, 'bea2');
    const annId = realm.members.ann.id;
    const dm = (c: ChatClient, to: number[]) => c.post('/messages', { type: 'direct', to, content: 'hi' });
    refused(await dm(ann, [beaId]), 'BAD_REQUEST', 'This conversation does not include any users who can authorize it.');
    // An administrator in the conversation authorizes it, on either side.
    assert.equal((await dm(ann, [beaId, realm.members.adam.id])).status, 200);
    assert.equal((await dm(bea, [realm.ownerId])).status, 200);
    // To oneself is never restricted.
    assert.equal((await dm(ann, [annId])).status, 200);
    assert.equal((await patchRealm(owner, { direct_message_permission_group: { new: nobody, old: admins } })).status, 200);
    refused(await dm(owner, [annId]), 'BAD_REQUEST', 'Direct messages are disabled in this organization.');
    // Channel messages are not concerned.
    assert.equal((await send(ann, 'still here')).status, 200);
    assert.equal((await patchRealm(owner, { direct_message_permission_group: { new: everyone, old: nobody } })).status, 200);
    assert.equal((await dm(ann, [beaId])).status, 200);
  });

  it('direct_message_initiator_group: outside it, one may answer a conversation but not start one', async () => {
    const state = await register(ann, { fetch_event_types: ['realm_user_groups'] });
    const groups = new Map<string, number>(state.realm_user_groups.map((g: Ev) => [g.name, g.id]));
    const everyone = groups.get('role:everyone')!;
    const admins = groups.get('role:administrators')!;
    const { client: cal, id: calId } = await makeUser(owner, realm.server.chatUrl, 'cal');
    const annId = realm.members.ann.id;
    const dm = (c: ChatClient, to: number[]) => c.post('/messages', { type: 'direct', to, content: 'hi' });
    assert.equal((await patchRealm(owner, { direct_message_initiator_group: { new: admins, old: everyone } })).status, 200);
    refused(await dm(cal, [annId]), 'BAD_REQUEST', 'You do not have permission to initiate direct message conversations.');
    refused(await dm(cal, [annId, realm.members.adam.id]), 'BAD_REQUEST', 'You do not have permission to initiate direct message conversations.');
    // An administrator starts it; then the conversation is open to its members.
    assert.equal((await dm(owner, [calId])).status, 200);
    assert.equal((await dm(cal, [realm.ownerId])).status, 200);
    assert.equal((await dm(adam, [calId, annId])).status, 200);
    assert.equal((await dm(cal, [annId, realm.members.adam.id])).status, 200);
    assert.equal((await patchRealm(owner, { direct_message_initiator_group: { new: everyone, old: admins } })).status, 200);
    assert.equal((await dm(cal, [annId])).status, 200);
  });

  it("every realm_* setting register reports is enforced (realm-rules.ts) or listed in docs/chat.md's unenforced settings", async () => {
    const state = await register(ann);
    const reported = Object.keys(state).filter((k) => k.startsWith('realm_') && !REALM_DATA_KEYS.has(k));
    const documented = documentedUnenforced();
    const enforced = new Set(Object.keys(ENFORCED_REALM_KEYS));
    const missing = reported.filter((k) => !enforced.has(k) && !documented.has(k));
    assert.deepEqual(missing, [], 'reported by register but neither in ENFORCED_REALM_KEYS nor in docs/chat.md');
    const both = [...documented].filter((k) => enforced.has(k));
    assert.deepEqual(both, [], 'both enforced and listed as not enforced');
    const stale = [...documented, ...enforced].filter((k) => !(k in state));
    assert.deepEqual(stale, [], 'listed but not in a register answer');
  });
});

// Black-box: the organization's settings through PATCH /realm against a real `keel serve` — only
// administrators (owners for the group-management settings), every value checked before anything
// changes, one realm update / update_dict event per changed setting to every user, and the new
// values in register, server_settings and the rules that read them.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { drain, makeUser, refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

const ADMINISTRATOR = 200;
const MODERATOR = 300;
const GUEST = 600;

await forEachEngine('chat realm settings', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let admin: ChatClient;
  let mod: ChatClient;
  let ann: ChatClient, annId: number;
  let groups: Map<string, number>;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    ({ client: admin } = await makeUser(owner, server.chatUrl, 'adam', ADMINISTRATOR));
    ({ client: mod } = await makeUser(owner, server.chatUrl, 'mona', MODERATOR));
    ({ client: ann, id: annId } = await makeUser(owner, server.chatUrl, 'ann'));
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [annId] })).status, 200);
    const state = await register(ann, { fetch_event_types: ['realm_user_groups'] });
    groups = new Map(state.realm_user_groups.map((g: Ev) => [g.name, g.id]));
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  const patch = (c: ChatClient, params: Record<string, unknown>) => c.call('PATCH', '/realm', params);
  const realmState = async () => register(ann, { fetch_event_types: ['realm'] });
  const serverSettings = async () => (await ann.call('GET', '/server_settings', {}, null)).body;
  const realmQueue = async (c: ChatClient = ann) => (await register(c, { event_types: ['realm'] })).queue_id as string;

  it('renames the organization: realm update to everyone, register and server_settings show it', async () => {
    const annQueue = await realmQueue();
    const ownQueue = await realmQueue(owner);
    const r = await patch(owner, { name: '  Keel Labs ', description: 'We **build** things.' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // Zulip's update_realm answers string settings as "updated".
    assert.deepEqual(r.body, { result: 'success', msg: '', name: 'updated', description: 'updated' });
    const expected = [
      { type: 'realm', op: 'update', property: 'name', value: 'Keel Labs' },
      { type: 'realm', op: 'update', property: 'description', value: 'We **build** things.' },
    ];
    assert.deepEqual(
      (await drain(ann, annQueue)).map(({ id: _id, ...e }) => e),
      expected,
    );
    assert.deepEqual(
      (await drain(owner, ownQueue)).map(({ id: _id, ...e }) => e),
      expected,
      'the one who changed it too',
    );
    const state = await realmState();
    assert.deepEqual([state.realm_name, state.realm_description], ['Keel Labs', 'We **build** things.']);
    const settings = await serverSettings();
    assert.equal(settings.realm_name, 'Keel Labs');
    assert.equal(settings.realm_description, '<p>We <strong>build</strong> things.</p>', 'server_settings shows the description as HTML');
  });

  it('sends nothing for values that do not change', async () => {
    const queue = await realmQueue();
    const r = await patch(owner, { name: 'Keel Labs', allow_message_editing: true, can_delete_own_message_group: { new: groups.get('role:everyone') } });
    assert.deepEqual(r.body, { result: 'success', msg: '' });
    assert.deepEqual(await drain(ann, queue), []);
  });

  it('changes the message rules at once: update_dict for editing, update for the other limits', async () => {
    const sent = await ann.post('/messages', { type: 'stream', to: 'general', topic: 'rules', content: 'first' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const queue = await realmQueue();
    const r = await patch(admin, {
      allow_message_editing: false,
      message_content_edit_limit_seconds: 'unlimited',
      move_messages_within_stream_limit_seconds: 3600,
      message_edit_history_visibility_policy: 'moves',
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      result: 'success',
      msg: '',
      allow_message_editing: false,
      message_content_edit_limit_seconds: null,
      move_messages_within_stream_limit_seconds: 3600,
      message_edit_history_visibility_policy: 'updated',
    });
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [
        { type: 'realm', op: 'update_dict', property: 'default', data: { allow_message_editing: false } },
        { type: 'realm', op: 'update_dict', property: 'default', data: { message_content_edit_limit_seconds: null } },
        { type: 'realm', op: 'update', property: 'move_messages_within_stream_limit_seconds', value: 3600 },
        { type: 'realm', op: 'update', property: 'message_edit_history_visibility_policy', value: 'moves' },
      ],
    );
    const state = await realmState();
    assert.deepEqual(
      [
        state.realm_allow_message_editing,
        state.realm_message_content_edit_limit_seconds,
        state.realm_move_messages_within_stream_limit_seconds,
        state.realm_message_edit_history_visibility_policy,
        state.realm_allow_edit_history,
      ],
      [false, null, 3600, 'moves', true],
    );
    refused(await ann.call('PATCH', `/messages/${sent.body.id}`, { content: 'edited' }), 'BAD_REQUEST', 'Your organization has turned off message editing');
    assert.equal((await patch(admin, { allow_message_editing: true })).status, 200);
    assert.equal((await ann.call('PATCH', `/messages/${sent.body.id}`, { content: 'edited' })).status, 200, 'editing is back on');
  });

  it('changes group settings (update_dict) and the permissions they give', async () => {
    const sent = await ann.post('/messages', { type: 'stream', to: 'general', topic: 'rules', content: 'delete me' });
    refused(await mod.call('DELETE', `/messages/${sent.body.id}`), 'BAD_REQUEST', "You don't have permission to delete this message");
    const queue = await realmQueue();
    const moderators = groups.get('role:moderators')!;
    const r = await patch(admin, { can_delete_any_message_group: { new: moderators, old: groups.get('role:administrators') } });
    assert.deepEqual(r.body, { result: 'success', msg: '', can_delete_any_message_group: moderators });
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [{ type: 'realm', op: 'update_dict', property: 'default', data: { can_delete_any_message_group: moderators } }],
    );
    assert.equal((await realmState()).realm_can_delete_any_message_group, moderators);
    assert.equal((await mod.call('DELETE', `/messages/${sent.body.id}`)).status, 200, 'moderators may delete now');

    // Owners only decide who creates and manages user groups; an anonymous group is a value too.
    refused(await patch(admin, { can_create_groups: { new: groups.get('role:administrators') } }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    const anonymous = { direct_members: [annId], direct_subgroups: [groups.get('role:administrators')] };
    assert.equal((await patch(owner, { can_create_groups: { new: anonymous } })).status, 200);
    assert.deepEqual((await realmState()).realm_can_create_groups, anonymous);
    assert.equal((await ann.post('/user_groups/create', { name: 'ann team', description: '', members: [annId] })).status, 200, 'ann is in the setting');
    assert.equal((await patch(owner, { can_create_groups: { new: groups.get('role:administrators') } })).status, 200);
    refused(await ann.post('/user_groups/create', { name: 'ann team 2', description: '', members: [annId] }), 'BAD_REQUEST', 'Insufficient permission');
  });

  it('decides who creates public and private channels and who subscribes others, in register too', async () => {
    const admins = groups.get('role:administrators')!;
    const members = groups.get('role:members')!;
    const mayDo = async (c: ChatClient) => {
      const s = await register(c, { fetch_event_types: ['realm', 'realm_user'] });
      return [s.can_create_public_streams, s.can_create_private_streams, s.can_create_streams, s.can_subscribe_other_users];
    };
    const defaults = await realmState();
    assert.deepEqual([defaults.realm_can_create_public_channel_group, defaults.realm_can_create_private_channel_group, defaults.realm_can_add_subscribers_group], [members, members, members]);
    assert.deepEqual([defaults.realm_create_public_stream_policy, defaults.realm_create_private_stream_policy], [1, 1]);
    assert.deepEqual(await mayDo(ann), [true, true, true, true]);

    const queue = await realmQueue();
    assert.equal((await patch(admin, { can_create_public_channel_group: { new: admins }, can_add_subscribers_group: { new: admins } })).status, 200);
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [
        { type: 'realm', op: 'update_dict', property: 'default', data: { can_add_subscribers_group: admins } },
        { type: 'realm', op: 'update_dict', property: 'default', data: { can_create_public_channel_group: admins } },
      ],
    );
    const after = await realmState();
    assert.equal(after.realm_can_create_public_channel_group, admins);
    assert.equal(after.realm_create_public_stream_policy, 2, 'the deprecated policy number follows');
    assert.deepEqual(await mayDo(ann), [false, true, true, false]);
    assert.deepEqual(await mayDo(admin), [true, true, true, true]);

    // A member may no longer create a public channel nor subscribe someone else; nothing is made.
    refused(await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'ann public' }] }), 'BAD_REQUEST', 'Insufficient permission');
    refused(await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [annId, (await register(mod, {})).user_id] }), 'BAD_REQUEST', 'Insufficient permission');
    const names = async () => ((await owner.call('GET', '/streams', {})).body.streams as Ev[]).map((s) => s.name);
    assert.ok(!(await names()).includes('ann public'));
    // Private channels are still every member's to create, and an administrator does both.
    assert.equal((await ann.post('/users/me/subscriptions', { subscriptions: [{ name: 'ann private' }], invite_only: true })).status, 200);
    assert.equal((await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'adam public' }], principals: [annId] })).status, 200);
    assert.ok((await names()).includes('adam public'));

    assert.equal((await patch(admin, { can_create_public_channel_group: { new: members }, can_add_subscribers_group: { new: members } })).status, 200);
    assert.deepEqual(await mayDo(ann), [true, true, true, true]);

    // A guest holds none of these, even named in the setting itself (role:everyone is not allowed for them).
    const { client: gus, id: gusId } = await makeUser(owner, server.chatUrl, 'gus', GUEST);
    assert.equal((await patch(admin, { can_create_private_channel_group: { new: { direct_members: [gusId], direct_subgroups: [members] } } })).status, 200);
    assert.deepEqual(await mayDo(gus), [false, false, false, false]);
    // Zulip refuses a guest's own subscription request before any setting is consulted.
    refused(await gus.post('/users/me/subscriptions', { subscriptions: [{ name: 'gus private' }], invite_only: true }), 'BAD_REQUEST', 'Not allowed for guest users');
    refused(
      await patch(admin, { can_create_public_channel_group: { new: groups.get('role:everyone') } }),
      'BAD_REQUEST',
      "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group.",
    );
    assert.equal((await patch(admin, { can_create_private_channel_group: { new: members } })).status, 200);
  });

  it('refuses a group in use by a realm setting to be deactivated', async () => {
    const made = await owner.post('/user_groups/create', { name: 'deleters', description: '', members: [annId] });
    const id = made.body.group_id;
    assert.equal((await patch(owner, { can_delete_own_message_group: { new: { direct_members: [], direct_subgroups: [id, groups.get('role:moderators')] } } })).status, 200);
    const r = await owner.post(`/user_groups/${id}/deactivate`);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual([r.body.code, r.body.objections], ['CANNOT_DEACTIVATE_GROUP_IN_USE', [{ type: 'realm', settings: ['can_delete_own_message_group'] }]]);
    assert.equal((await patch(owner, { can_delete_own_message_group: { new: groups.get('role:everyone') } })).status, 200);
    assert.equal((await owner.post(`/user_groups/${id}/deactivate`)).status, 200);
  });

  it('refuses non-administrators, and changes nothing', async () => {
    const queue = await realmQueue();
    const settings = async () => Object.fromEntries(Object.entries(await realmState()).filter(([k]) => k.startsWith('realm_')));
    const before = await settings();
    refused(await patch(ann, { name: 'Mine now' }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    refused(await patch(mod, { allow_message_editing: false }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    assert.deepEqual(await settings(), before);
    assert.equal((await serverSettings()).realm_name, 'Keel Labs');
    assert.deepEqual(await drain(ann, queue), []);
  });

  it('refuses a bad value naming it, and changes nothing else in the request', async () => {
    const queue = await realmQueue();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ message_content_edit_limit_seconds: 0 }, 'BAD_REQUEST', "Bad value for 'message_content_edit_limit_seconds': 0"],
      [{ message_content_delete_limit_seconds: 'forever' }, 'BAD_REQUEST', "Bad value for 'message_content_delete_limit_seconds': forever"],
      [{ message_edit_history_visibility_policy: 'some' }, 'BAD_REQUEST', 'Invalid message_edit_history_visibility_policy'],
      [{ allow_message_editing: 'sometimes' }, 'BAD_REQUEST', 'allow_message_editing is not valid JSON'],
      [{ allow_message_editing: 1 }, 'BAD_REQUEST', 'allow_message_editing is not a boolean'],
      [{ default_language: 'xx' }, 'BAD_REQUEST', "Invalid language 'xx'"],
      [{ description: 'd'.repeat(1001) }, 'BAD_REQUEST', 'description is too long (limit: 1000 characters)'],
      [{ can_delete_any_message_group: { new: groups.get('role:everyone') } }, 'BAD_REQUEST', "'can_delete_any_message_group' setting cannot be set to 'role:everyone' group."],
      [{ can_delete_any_message_group: { new: groups.get('role:nobody') } }, 'BAD_REQUEST', "'can_delete_any_message_group' setting cannot be set to 'role:nobody' group."],
      [{ can_resolve_topics_group: { new: 99999 } }, 'BAD_REQUEST', 'Invalid user group ID: 99999'],
      [{ can_resolve_topics_group: { new: groups.get('role:members'), old: groups.get('role:owners') } }, 'BAD_REQUEST', "'old' value does not match the expected value."],
    ];
    for (const [bad, code, msg] of cases) refused(await patch(owner, { name: 'Should not stick', allow_message_editing: false, ...bad }), code, msg);
    refused(await patch(owner, { name: 'x'.repeat(41) }), 'BAD_REQUEST', 'name is too long (limit: 40 characters)');
    refused(await patch(owner, { name: '   ' }), 'BAD_REQUEST', 'Organization name is required.');
    const named = await patch(owner, { name: 'Fine', move_messages_between_streams_limit_seconds: -5 });
    assert.equal(named.body.var_name, 'move_messages_between_streams_limit_seconds');
    const state = await realmState();
    assert.deepEqual([state.realm_name, state.realm_allow_message_editing, state.realm_can_resolve_topics_group], ['Keel Labs', true, groups.get('role:everyone')]);
    assert.deepEqual(await drain(ann, queue), [], 'refusals send nothing');
  });

  it('sets the organization language', async () => {
    const queue = await realmQueue();
    assert.equal((await realmState()).realm_default_language, 'en');
    assert.deepEqual((await patch(owner, { default_language: 'de' })).body, { result: 'success', msg: '', default_language: 'updated' });
    assert.equal((await realmState()).realm_default_language, 'de');
    assert.deepEqual(
      (await drain(ann, queue)).map(({ id: _id, ...e }) => e),
      [{ type: 'realm', op: 'update', property: 'default_language', value: 'de' }],
    );
  });
});

// Black-box: user groups against a real `keel serve` — creating, listing, updating settings, members
// and subgroups, deactivating — with Zulip's errors for bad input and for callers without the
// permission, and each user_group event as a registered queue receives it.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm } from '../../helpers/chat-realm.js';
import type { RunningServer, Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { drain, makeUser, refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

await forEachEngine('chat user groups', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient, ownerId: number;
  let ann: ChatClient, annId: number;
  let ben: ChatClient, benId: number;
  let cat: ChatClient, catId: number;
  let guest: ChatClient;
  let system: Map<string, number>;

  before(async () => {
    const realm = await servedRealm(engine, { members: ['ann', 'ben', 'cat', ['gus', 600]] });
    ({ storage, server, owner, ownerId } = realm);
    ({ client: ann, id: annId } = realm.members.ann);
    ({ client: ben, id: benId } = realm.members.ben);
    ({ client: cat, id: catId } = realm.members.cat);
    ({ client: guest } = realm.members.gus);
    const groups = (await owner.get('/user_groups')).body.user_groups as Ev[];
    system = new Map(groups.map((g) => [g.name, g.id]));
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  const groupNamed = async (name: string, c: ChatClient = owner): Promise<Ev> =>
    ((await c.get('/user_groups', { include_deactivated_groups: true })).body.user_groups as Ev[]).find((g) => g.name === name)!;

  it('lists the system groups, which nobody may change', async () => {
    const r = await ann.get('/user_groups');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const owners = r.body.user_groups.find((g: Ev) => g.name === 'role:owners');
    assert.deepEqual([owners.is_system_group, owners.members, owners.date_created, owners.creator_id, owners.deactivated], [true, [ownerId], null, null, false]);
    assert.equal(owners.can_manage_group, system.get('role:nobody'));
    refused(await owner.call('PATCH', `/user_groups/${system.get('role:members')}`, { description: 'x' }), 'BAD_REQUEST', 'Insufficient permission');
    refused(await owner.post(`/user_groups/${system.get('role:members')}/members`, { add: [annId] }), 'BAD_REQUEST', 'Insufficient permission');
    refused(await guest.get('/user_groups'), 'BAD_REQUEST', 'Not allowed for guest users');
    const realm = await register(ann, { fetch_event_types: ['realm'] });
    assert.deepEqual([realm.realm_can_create_groups, realm.realm_can_manage_all_groups], [system.get('role:members'), system.get('role:owners')]);
  });

  it("creates a group with Zulip's default permissions and tells everyone (user_group add)", async () => {
    const watcher = await register(ben, { event_types: ['user_group'] });
    const r = await ann.post('/user_groups/create', { name: 'backend', description: 'Backend team', members: [annId, benId] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = r.body.group_id;
    const g = await groupNamed('backend');
    assert.equal(g.id, id);
    assert.deepEqual([g.description, g.members, g.direct_subgroup_ids, g.creator_id, g.is_system_group, g.deactivated], ['Backend team', [annId, benId], [], annId, false, false]);
    assert.equal(typeof g.date_created, 'number');
    assert.deepEqual(g.can_manage_group, { direct_members: [annId], direct_subgroups: [] });
    assert.deepEqual(g.can_add_members_group, { direct_members: [annId], direct_subgroups: [] });
    assert.deepEqual(
      [g.can_join_group, g.can_leave_group, g.can_mention_group, g.can_remove_members_group],
      [system.get('role:nobody'), system.get('role:everyone'), system.get('role:everyone'), system.get('role:nobody')],
    );
    const events = await drain(ben, watcher.queue_id);
    assert.deepEqual(
      events.map((e) => [e.type, e.op]),
      [['user_group', 'add']],
    );
    assert.deepEqual(events[0].group, g);
    // The register state shows it too.
    const state = await register(cat, { fetch_event_types: ['realm_user_groups'] });
    assert.deepEqual(
      state.realm_user_groups.find((x: Ev) => x.id === id),
      g,
    );
  });

  it('refuses bad groups at creation and creates nothing', async () => {
    const before = (await owner.get('/user_groups')).body.user_groups.length;
    const base = { description: '', members: [annId] };
    refused(await ann.post('/user_groups/create', { ...base, name: 'backend' }), 'BAD_REQUEST', "User group 'backend' already exists.");
    refused(await ann.post('/user_groups/create', { ...base, name: 'role:mine' }), 'BAD_REQUEST', "User group name cannot start with 'role:'.");
    refused(await ann.post('/user_groups/create', { ...base, name: '  ' }), 'BAD_REQUEST', 'User group name cannot be empty.');
    refused(await ann.post('/user_groups/create', { ...base, name: 'x'.repeat(101) }), 'BAD_REQUEST', 'User group name cannot exceed 100 characters.');
    refused(await ann.post('/user_groups/create', { ...base, name: 'ok', members: [annId, 9999] }), 'BAD_REQUEST', 'Invalid user ID: 9999');
    refused(await ann.post('/user_groups/create', { ...base, name: 'ok', subgroups: [9999] }), 'BAD_REQUEST', 'Invalid user group ID: 9999');
    refused(
      await ann.post('/user_groups/create', { ...base, name: 'ok', can_manage_group: system.get('role:everyone') }),
      'BAD_REQUEST',
      "'can_manage_group' setting cannot be set to 'role:everyone' group.",
    );
    refused(
      await ann.post('/user_groups/create', { ...base, name: 'ok', can_mention_group: system.get('role:internet') }),
      'BAD_REQUEST',
      "'can_mention_group' setting cannot be set to 'role:internet' group.",
    );
    refused(await ann.post('/user_groups/create', { ...base, name: 'ok', can_join_group: { direct_members: [9999], direct_subgroups: [] } }), 'BAD_REQUEST', 'Invalid user ID: 9999');
    refused(await ann.post('/user_groups/create', { name: 'ok', description: '' }), 'REQUEST_VARIABLE_MISSING', "Missing 'members' argument");
    refused(await guest.post('/user_groups/create', { ...base, name: 'ok' }), 'BAD_REQUEST', 'Not allowed for guest users');
    assert.equal((await owner.get('/user_groups')).body.user_groups.length, before);
  });

  it('updates name, description and permissions for those who manage the group (user_group update)', async () => {
    const g = await groupNamed('backend');
    const watcher = await register(cat, { event_types: ['user_group'] });
    refused(await ben.call('PATCH', `/user_groups/${g.id}`, { description: 'mine now' }), 'BAD_REQUEST', 'Insufficient permission');
    refused(await ann.call('PATCH', '/user_groups/9999', { description: 'x' }), 'BAD_REQUEST', 'Invalid user group');
    refused(await ann.call('PATCH', `/user_groups/${g.id}`, {}), 'BAD_REQUEST', 'No new data supplied');
    refused(
      await ann.call('PATCH', `/user_groups/${g.id}`, { can_mention_group: { new: system.get('role:owners') } }),
      'BAD_REQUEST',
      "'can_mention_group' setting cannot be set to 'role:owners' group.",
    );
    refused(
      await ann.call('PATCH', `/user_groups/${g.id}`, { can_join_group: { new: system.get('role:members'), old: system.get('role:everyone') } }),
      'BAD_REQUEST',
      "'old' value does not match the expected value.",
    );
    assert.deepEqual(await drain(cat, watcher.queue_id), [], 'a refused change sends nothing');

    const ok = await ann.call('PATCH', `/user_groups/${g.id}`, { name: 'server team', description: 'Servers', can_join_group: { new: system.get('role:members'), old: system.get('role:nobody') } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const events = await drain(cat, watcher.queue_id);
    assert.deepEqual(
      events.map((e) => [e.op, e.group_id, e.data]),
      [['update', g.id, { name: 'server team', description: 'Servers', can_join_group: system.get('role:members') }]],
    );
    const now = await groupNamed('server team');
    assert.deepEqual([now.description, now.can_join_group], ['Servers', system.get('role:members')]);
    // Handing management to ben lets him change it; the owner manages every group (can_manage_all_groups).
    assert.equal((await ann.call('PATCH', `/user_groups/${g.id}`, { can_manage_group: { new: { direct_members: [benId], direct_subgroups: [] } } })).status, 200);
    assert.equal((await ben.call('PATCH', `/user_groups/${g.id}`, { description: 'Ben was here' })).status, 200);
    refused(await ann.call('PATCH', `/user_groups/${g.id}`, { description: 'no longer' }), 'BAD_REQUEST', 'Insufficient permission');
    assert.equal((await owner.call('PATCH', `/user_groups/${g.id}`, { can_manage_group: { new: { direct_members: [annId, benId], direct_subgroups: [] } } })).status, 200);
  });

  it('changes members by the join, leave, add and remove permissions (add_members, remove_members)', async () => {
    const g = await groupNamed('server team');
    const watcher = await register(owner, { event_types: ['user_group'] });
    // can_join_group is role:members now: cat joins herself; she may not add others.
    assert.equal((await cat.post(`/user_groups/${g.id}/members`, { add: [catId] })).status, 200);
    refused(await cat.post(`/user_groups/${g.id}/members`, { delete: [annId] }), 'BAD_REQUEST', 'Insufficient permission');
    // can_leave_group is role:everyone: ben leaves.
    assert.equal((await ben.post(`/user_groups/${g.id}/members`, { delete: [benId] })).status, 200);
    refused(await ann.post(`/user_groups/${g.id}/members`, { add: [catId] }), 'BAD_REQUEST', `User ${catId} is already a member of this group`);
    refused(await ann.post(`/user_groups/${g.id}/members`, { delete: [benId] }), 'BAD_REQUEST', `There is no member '${benId}' in this user group`);
    refused(await ann.post(`/user_groups/${g.id}/members`, { add: [9999] }), 'BAD_REQUEST', 'Invalid user ID: 9999');
    refused(await ann.post(`/user_groups/${g.id}/members`, {}), 'BAD_REQUEST', "Nothing to do. Specify at least one of 'add', 'delete', 'add_subgroups' or 'delete_subgroups'.");
    refused(await ann.post('/user_groups/9999/members', { add: [annId] }), 'BAD_REQUEST', 'Invalid user group');
    const events = await drain(owner, watcher.queue_id);
    assert.deepEqual(
      events.map((e) => [e.op, e.group_id, e.user_ids]),
      [
        ['add_members', g.id, [catId]],
        ['remove_members', g.id, [benId]],
      ],
    );
    assert.deepEqual((await ann.get(`/user_groups/${g.id}/members`)).body.members, [annId, catId]);
    assert.equal((await ann.get(`/user_groups/${g.id}/members/${catId}`)).body.is_user_group_member, true);
    assert.equal((await ann.get(`/user_groups/${g.id}/members/${benId}`)).body.is_user_group_member, false);
  });

  it('nests groups without cycles (add_subgroups, remove_subgroups) and counts subgroup members', async () => {
    const outer = await groupNamed('server team');
    const made = await ann.post('/user_groups/create', { name: 'db', description: 'Databases', members: [benId] });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const inner = made.body.group_id;
    const watcher = await register(ben, { event_types: ['user_group'] });
    assert.equal((await ann.post(`/user_groups/${outer.id}/members`, { add_subgroups: [inner] })).status, 200);
    refused(await ann.post(`/user_groups/${inner}/subgroups`, { add: [outer.id] }), 'BAD_REQUEST', `User group ${outer.id} is already a supergroup of this group.`);
    refused(await ann.post(`/user_groups/${outer.id}/subgroups`, { add: [inner] }), 'BAD_REQUEST', `User group ${inner} is already a subgroup of this group.`);
    refused(await cat.post(`/user_groups/${outer.id}/subgroups`, { delete: [inner] }), 'BAD_REQUEST', 'Insufficient permission');
    assert.deepEqual((await ann.get(`/user_groups/${outer.id}/members`)).body.members, [annId, benId, catId]);
    assert.deepEqual((await ann.get(`/user_groups/${outer.id}/members`, { direct_member_only: true })).body.members, [annId, catId]);
    assert.equal((await ann.get(`/user_groups/${outer.id}/members/${benId}`, { direct_member_only: true })).body.is_user_group_member, false);
    assert.deepEqual((await ann.get(`/user_groups/${outer.id}/subgroups`)).body.subgroups, [inner]);
    assert.equal((await ann.post(`/user_groups/${outer.id}/subgroups`, { delete: [inner] })).status, 200);
    refused(await ann.post(`/user_groups/${outer.id}/subgroups`, { delete: [inner] }), 'BAD_REQUEST', `User group ${inner} is not a subgroup of this group.`);
    const events = await drain(ben, watcher.queue_id);
    assert.deepEqual(
      events.map((e) => [e.op, e.group_id, e.direct_subgroup_ids]),
      [
        ['add_subgroups', outer.id, [inner]],
        ['remove_subgroups', outer.id, [inner]],
      ],
    );
  });

  it('deactivates a group not in use: update or remove by capability; register leaves it out unless asked', async () => {
    const outer = await groupNamed('server team');
    const inner = await groupNamed('db');
    // In use as a subgroup and as a channel setting: refused with the objections.
    assert.equal((await ann.post(`/user_groups/${outer.id}/members`, { add_subgroups: [inner.id] })).status, 200);
    const inUse = await ann.post(`/user_groups/${inner.id}/deactivate`);
    assert.equal(inUse.status, 400);
    assert.deepEqual(
      [inUse.body.code, inUse.body.msg, inUse.body.objections],
      ['CANNOT_DEACTIVATE_GROUP_IN_USE', 'Cannot deactivate user group in use.', [{ type: 'subgroup', supergroup_ids: [outer.id] }]],
    );
    assert.equal((await ann.post(`/user_groups/${outer.id}/subgroups`, { delete: [inner.id] })).status, 200);
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'dbs' }], can_send_message_group: inner.id })).status, 200);
    const channel = (await owner.get('/get_stream_id', { stream: 'dbs' })).body.stream_id;
    const byChannel = await ann.post(`/user_groups/${inner.id}/deactivate`);
    assert.deepEqual(byChannel.body.objections, [{ type: 'channel', channel_id: channel, settings: ['can_send_message_group'] }]);
    assert.equal((await owner.call('PATCH', `/streams/${channel}`, { can_send_message_group: { new: system.get('role:everyone') } })).status, 200);
    refused(await cat.post(`/user_groups/${inner.id}/deactivate`), 'BAD_REQUEST', 'Insufficient permission');

    const modern = await register(ben, { event_types: ['user_group'], client_capabilities: { notification_settings_null: false, include_deactivated_groups: true } });
    const legacy = await register(cat, { event_types: ['user_group'] });
    assert.equal((await ann.post(`/user_groups/${inner.id}/deactivate`)).status, 200);
    refused(await ann.post(`/user_groups/${inner.id}/deactivate`), 'BAD_REQUEST', 'User group is already deactivated.');
    assert.deepEqual(
      (await drain(ben, modern.queue_id)).map((e) => [e.op, e.group_id, e.data]),
      [['update', inner.id, { deactivated: true }]],
    );
    assert.deepEqual(
      (await drain(cat, legacy.queue_id)).map((e) => [e.op, e.group_id]),
      [['remove', inner.id]],
    );
    // Renaming a deactivated group reaches only clients that keep deactivated groups.
    assert.equal((await ann.call('PATCH', `/user_groups/${inner.id}`, { name: 'old db' })).status, 200);
    assert.deepEqual(
      (await drain(ben, modern.queue_id, 0)).map((e) => [e.op, e.data]),
      [['update', { name: 'old db' }]],
    );
    assert.deepEqual(await drain(cat, legacy.queue_id, 0), []);
    // A deactivated group has fixed members and cannot be used as a value.
    refused(await ann.post(`/user_groups/${inner.id}/members`, { add: [annId] }), 'BAD_REQUEST', 'User group is deactivated.');
    refused(await ann.call('PATCH', `/user_groups/${outer.id}`, { can_mention_group: { new: inner.id } }), 'BAD_REQUEST', `Invalid user group ID: ${inner.id}`);

    const withOld = await register(ben, { fetch_event_types: ['realm_user_groups'], client_capabilities: { notification_settings_null: false, include_deactivated_groups: true } });
    assert.equal(withOld.realm_user_groups.find((g: Ev) => g.id === inner.id)?.deactivated, true);
    const without = await register(ben, { fetch_event_types: ['realm_user_groups'] });
    assert.equal(
      without.realm_user_groups.some((g: Ev) => g.id === inner.id),
      false,
    );
    assert.equal(
      (await ann.get('/user_groups')).body.user_groups.some((g: Ev) => g.id === inner.id),
      false,
    );
    assert.equal(
      (await ann.get('/user_groups', { include_deactivated_groups: true })).body.user_groups.some((g: Ev) => g.id === inner.id),
      true,
    );
  });

  it('lets only can_mention_group mention a group; silent mentions are free', async () => {
    const made = await ann.post('/user_groups/create', { name: 'oncall', description: '', members: [benId], can_mention_group: { direct_members: [annId], direct_subgroups: [] } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'ops' }], principals: [annId, benId, catId] })).status, 200);
    const send = (c: ChatClient, content: string) => c.post('/messages', { type: 'stream', to: 'ops', topic: 'pager', content });
    refused(await send(cat, 'help @*oncall*'), 'BAD_REQUEST', "You are not allowed to mention user group 'oncall'.");
    assert.equal((await send(cat, 'fyi @_*oncall*')).status, 200);
    const ok = await send(ann, 'help @*oncall*');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const seen = (await ben.get(`/messages/${ok.body.id}`)).body.message;
    assert.match(seen.content, new RegExp(`data-user-group-id="${made.body.group_id}"`));
    assert.ok(seen.flags.includes('mentioned'));
  });

  it("follows a user's life in group events: joining, role changes, deactivation, reactivation", async () => {
    const team = await groupNamed('server team');
    const watcher = await register(ann, { event_types: ['user_group'] });
    const ops = async () => (await drain(ann, watcher.queue_id)).map((e) => [e.op, e.group_id, e.user_ids]);
    const { id: dan } = await makeUser(owner, server.chatUrl, 'dan');
    assert.deepEqual(await ops(), [
      ['add_members', system.get('role:fullmembers'), [dan]],
      ['add_members', system.get('role:members'), [dan]],
    ]);
    assert.equal((await owner.call('PATCH', `/users/${catId}`, { role: 200 })).status, 200);
    assert.deepEqual(
      (await drain(ann, watcher.queue_id, 1)).map((e) => [e.op, e.group_id, e.user_ids]),
      [
        ['add_members', system.get('role:administrators'), [catId]],
        ['remove_members', system.get('role:fullmembers'), [catId]],
        ['remove_members', system.get('role:members'), [catId]],
      ],
    );
    assert.equal((await owner.call('DELETE', `/users/${catId}`)).status, 200);
    const gone = (await drain(ann, watcher.queue_id, 4)).map((e) => [e.op, e.group_id, e.user_ids]);
    assert.deepEqual(gone, [
      ['remove_members', system.get('role:administrators'), [catId]],
      ['remove_members', team.id, [catId]],
    ]);
    // A deactivated user is in no group's member list, though the membership is kept.
    assert.deepEqual((await ann.get(`/user_groups/${team.id}/members`)).body.members, [annId]);
    assert.equal((await ann.get(`/user_groups/${team.id}/members/${catId}`)).body.is_user_group_member, false);
    assert.equal((await owner.post(`/users/${catId}/reactivate`)).status, 200);
    assert.deepEqual(
      (await drain(ann, watcher.queue_id, 6)).map((e) => [e.op, e.group_id, e.user_ids]),
      [
        ['add_members', system.get('role:administrators'), [catId]],
        ['add_members', team.id, [catId]],
      ],
    );
    assert.deepEqual((await ann.get(`/user_groups/${team.id}/members`)).body.members, [annId, catId]);
  });

  it("refuses guests every read of a group's members and subgroups (issue 14 item 5), before looking at the group", async () => {
    const members = system.get('role:members')!;
    for (const path of [`/user_groups/${members}/members`, `/user_groups/${members}/subgroups`, `/user_groups/${members}/members/${annId}`, '/user_groups/999999/members']) {
      refused(await guest.get(path), 'BAD_REQUEST', 'Not allowed for guest users');
      refused(await guest.get(path, { direct_member_only: true }), 'BAD_REQUEST', 'Not allowed for guest users');
    }
    // Members still read them.
    assert.equal((await ann.get(`/user_groups/${members}/members/${annId}`)).body.is_user_group_member, true);
    assert.ok((await ann.get(`/user_groups/${members}/members`)).body.members.includes(annId));
  });
});

// PATCH /streams/{stream_id}: unit tests of the privacy and retention rules, and black-box tests of
// names, descriptions, privacy, retention, group settings, default channels and who may change them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { channelPrivacy, parseRetentionDays } from '../../../src/chat/domain/channels.js';
import { normaliseGroupSetting } from '../../../src/chat/domain/groups.js';

describe('channel update rules', () => {
  const pub = { isPrivate: false, isWebPublic: false, historyPublic: true };
  it('resolves privacy with Zulip defaults and refuses contradictions', () => {
    assert.deepEqual(channelPrivacy(pub, { isPrivate: true }), { isPrivate: true, isWebPublic: false, historyPublic: false });
    assert.deepEqual(channelPrivacy(pub, { isPrivate: true, historyPublic: true }), { isPrivate: true, isWebPublic: false, historyPublic: true });
    assert.deepEqual(channelPrivacy({ isPrivate: true, isWebPublic: false, historyPublic: false }, { isPrivate: false }), pub);
    assert.deepEqual(channelPrivacy({ isPrivate: true, isWebPublic: false, historyPublic: true }, { isPrivate: true }).historyPublic, true);
    assert.throws(() => channelPrivacy(pub, { historyPublic: false }), /Invalid parameters/);
    assert.throws(() => channelPrivacy(pub, { isPrivate: true, isWebPublic: true }), /Invalid parameters/);
  });
  it('reads message_retention_days', () => {
    assert.equal(parseRetentionDays('realm_default'), null);
    assert.equal(parseRetentionDays('unlimited'), -1);
    assert.equal(parseRetentionDays(30), 30);
    for (const bad of [0, -3, 'forever']) assert.throws(() => parseRetentionDays(bad), /Bad value for 'message_retention_days'/);
  });
  it('stores a lone subgroup as the group id', () => {
    assert.equal(normaliseGroupSetting({ direct_members: [], direct_subgroups: [7] }), 7);
    assert.deepEqual(normaliseGroupSetting({ direct_members: [3, 1, 3], direct_subgroups: [] }), { direct_members: [1, 3], direct_subgroups: [] });
  });
});

await forEachEngine('chat channel update', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let admin: ChatClient;
  let ann: ChatClient;
  let annId: number;
  let ben: ChatClient;
  let benId: number;
  let town: number;
  let groups: Record<string, number>;

  async function user(email: string, role = 'member'): Promise<[ChatClient, number]> {
    const r = await runKeel(['admin', 'create-user', '--email', email, '--full-name', email.split('@')[0], '--role', role, '--json', ...storageArgs(storage)]);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    return [new ChatClient(server.chatUrl, made.email, made.apiKey), made.userId];
  }
  const patch = (c: ChatClient, id: number, params: Record<string, unknown>) => c.call('PATCH', `/streams/${id}`, params);
  const stream = async (id: number) => (await owner.get(`/streams/${id}`)).body.stream;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    [admin] = await user('admin@example.com', 'admin');
    [ann, annId] = await user('ann@example.com');
    [ben, benId] = await user('ben@example.com');
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'town' }, { name: 'taken' }], principals: [annId, benId] });
    town = (await owner.get('/get_stream_id', { stream: 'town' })).body.stream_id;
    // The system groups' ids, read from a fresh channel's defaults (can_send_message_group is role:everyone).
    const s = await stream(town);
    groups = { everyone: s.can_send_message_group, nobody: s.can_subscribe_group, administrators: s.can_remove_subscribers_group };
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('renames and describes a channel; names stay unique', async () => {
    const r = await patch(owner, town, { new_name: 'Town Square', description: 'All **about** town\nand more' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    let s = await stream(town);
    assert.deepEqual([s.name, s.description, s.rendered_description], ['Town Square', 'All **about** town and more', '<p>All <strong>about</strong> town and more</p>']);
    assert.equal((await owner.get('/get_stream_id', { stream: 'town square' })).body.stream_id, town);
    const clash = await patch(owner, town, { new_name: 'TAKEN' });
    assert.deepEqual([clash.status, clash.body.code, clash.body.msg], [400, 'BAD_REQUEST', "Channel name 'TAKEN' is already taken."]);
    assert.equal((await patch(owner, town, { new_name: 'Town Square' })).body.msg, 'Channel already has that name!');
    assert.equal((await patch(owner, town, { new_name: 'town square' })).status, 200, 'a change of case is allowed');
    assert.equal((await patch(owner, town, { new_name: ' ' })).body.msg, "Channel name can't be empty.");
    const long = await patch(owner, town, { description: 'x'.repeat(1025), new_name: 'renamed anyway?' });
    // Zulip 10 checks the length as a typed parameter (StringConstraints in zerver/views/streams.py).
    assert.deepEqual([long.status, long.body.code, long.body.msg], [400, 'BAD_REQUEST', 'description is too long (limit: 1024 characters)']);
    const longNew = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'fresh' }, { name: 'verbose', description: 'x'.repeat(1025) }] });
    assert.deepEqual([longNew.status, longNew.body.msg, longNew.body.var_name], [400, 'subscriptions[1]["description"] is too long (limit: 1024 characters)', 'subscriptions']);
    s = await stream(town);
    assert.equal(s.name, 'town square', 'a refused request changes nothing');
  });

  it('only administrators of the channel may change it', async () => {
    const byAnn = await patch(ann, town, { description: 'mine now' });
    assert.deepEqual([byAnn.status, byAnn.body.msg], [400, 'You do not have permission to administer this channel.']);
    assert.equal((await patch(ann, 99999, { description: 'x' })).body.msg, 'Invalid channel ID');
    // Ann joins can_administer_channel_group and then may.
    const grant = await patch(owner, town, { can_administer_channel_group: { new: { direct_members: [annId], direct_subgroups: [groups.administrators] } } });
    assert.equal(grant.status, 200, JSON.stringify(grant.body));
    assert.equal((await patch(ann, town, { description: 'mine now' })).status, 200);
    assert.equal((await stream(town)).description, 'mine now');
    // Only organization administrators change default channels; only owners change retention.
    assert.equal((await patch(ann, town, { is_default_stream: true })).body.code, 'UNAUTHORIZED_PRINCIPAL');
    const retention = await patch(admin, town, { message_retention_days: 30 });
    assert.deepEqual([retention.body.code, retention.body.msg], ['UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner']);
  });

  it('changes privacy and history within Zulip rules', async () => {
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [annId] });
    const club = (await owner.get('/get_stream_id', { stream: 'club' })).body.stream_id;
    assert.equal((await patch(owner, club, { history_public_to_subscribers: false })).body.msg, 'Invalid parameters');
    assert.equal((await patch(owner, club, { is_web_public: true })).body.msg, 'Web-public channels are not enabled.');
    const priv = await patch(owner, club, { is_private: true, history_public_to_subscribers: true });
    assert.equal(priv.status, 200, JSON.stringify(priv.body));
    let s = await stream(club);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers, s.is_web_public], [true, true, false]);
    // Ben is not subscribed: the private channel is now invisible to him.
    assert.equal((await ben.get(`/streams/${club}`)).body.msg, 'Invalid channel ID');
    // An administrator who is not subscribed sees the channel but may not change its privacy.
    const blind = await patch(admin, club, { is_private: false });
    assert.deepEqual([blind.status, blind.body.msg], [400, 'Channel content access is required.']);
    const described = await patch(admin, club, { description: 'renamed by admin' });
    assert.equal(described.status, 200, JSON.stringify(described.body));
    // The owner is no subscriber either (the channel was made for Ann): subscribing gives access.
    assert.equal((await patch(owner, club, { is_private: false })).body.msg, 'Channel content access is required.');
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }] });
    assert.equal((await patch(owner, club, { is_private: false })).status, 200);
    s = await stream(club);
    assert.deepEqual([s.invite_only, s.history_public_to_subscribers], [false, true]);
  });

  it('sets message retention (owners)', async () => {
    assert.equal((await patch(owner, town, { message_retention_days: 30 })).status, 200);
    assert.equal((await stream(town)).message_retention_days, 30);
    assert.equal((await patch(owner, town, { message_retention_days: 'unlimited' })).status, 200);
    assert.equal((await stream(town)).message_retention_days, -1);
    const bad = await patch(owner, town, { message_retention_days: 'soon' });
    assert.deepEqual([bad.body.msg, bad.body.var_name], ["Bad value for 'message_retention_days': soon", 'message_retention_days']);
    assert.equal((await patch(owner, town, { message_retention_days: 'realm_default' })).status, 200);
    assert.equal((await stream(town)).message_retention_days, null);
  });

  it('updates group settings with {new, old} and enforces them', async () => {
    // Nobody but Ben may post.
    const r = await patch(owner, town, { can_send_message_group: { new: { direct_members: [benId], direct_subgroups: [] }, old: groups.everyone } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual((await stream(town)).can_send_message_group, { direct_members: [benId], direct_subgroups: [] });
    assert.equal((await ann.post('/messages', { type: 'stream', to: town, topic: 't', content: 'hi' })).body.msg, 'You do not have permission to post in this channel.');
    assert.equal((await ben.post('/messages', { type: 'stream', to: town, topic: 't', content: 'hi' })).status, 200);
    const stale = await patch(owner, town, { can_send_message_group: { new: groups.everyone, old: groups.everyone } });
    assert.equal(stale.body.msg, "'old' value does not match the expected value.");
    assert.equal((await patch(owner, town, { can_send_message_group: { new: 999999 } })).body.msg, 'Invalid user group ID: 999999');
    assert.equal((await patch(owner, town, { can_send_message_group: { new: { direct_members: [999999], direct_subgroups: [] } } })).body.msg, 'Invalid user ID: 999999');
    assert.equal((await patch(owner, town, { can_administer_channel_group: { new: groups.everyone } })).body.msg, "'can_administer_channel_group' setting cannot be set to 'role:everyone' group.");
    const shape = await patch(owner, town, { can_send_message_group: { old: groups.everyone } });
    assert.equal(shape.body.code, 'BAD_REQUEST');
    // A lone subgroup is stored as the group itself.
    assert.equal((await patch(owner, town, { can_send_message_group: { new: { direct_members: [], direct_subgroups: [groups.everyone] } } })).status, 200);
    assert.equal((await stream(town)).can_send_message_group, groups.everyone);
  });

  it('adds and removes the channel from default channels; default channels stay public', async () => {
    assert.equal((await patch(owner, town, { is_default_stream: true })).status, 200);
    const listed = (await owner.get('/streams', { include_default: true })).body.streams.find((s: { stream_id: number }) => s.stream_id === town);
    assert.equal(listed.is_default, true);
    const priv = await patch(owner, town, { is_private: true });
    assert.equal(priv.body.msg, 'A default channel cannot be private.');
    assert.equal((await stream(town)).invite_only, false);
    assert.equal((await patch(owner, town, { is_default_stream: false })).status, 200);
    const after = (await owner.get('/streams', { include_default: true })).body.streams.find((s: { stream_id: number }) => s.stream_id === town);
    assert.equal(after.is_default, false);
  });
});

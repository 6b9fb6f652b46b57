// Black-box: channel management (by id, archive, members, topics, unsubscribe, subscription
// properties, default channels) with Zulip's shapes, errors and access rules.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

await forEachEngine('chat channel management', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let ann: ChatClient;
  let annId: number;
  let ben: ChatClient;
  let benId: number;
  let pub: number;
  let secret: number;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    const made = [];
    for (const who of ['ann', 'ben']) {
      const r = await runKeel(['admin', 'create-user', '--email', `${who}@example.com`, '--full-name', who, '--json', ...storageArgs(storage)]);
      assert.equal(r.code, 0, r.stderr);
      made.push(JSON.parse(r.stdout));
    }
    ann = new ChatClient(server.chatUrl, made[0].email, made[0].apiKey);
    annId = made[0].userId;
    ben = new ChatClient(server.chatUrl, made[1].email, made[1].apiKey);
    benId = made[1].userId;
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'town' }], principals: [annId] });
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], invite_only: true });
    pub = (await owner.get('/get_stream_id', { stream: 'town' })).body.stream_id;
    secret = (await owner.get('/get_stream_id', { stream: 'vault' })).body.stream_id;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('shows a channel by id only to those who may see it', async () => {
    const r = await ann.get(`/streams/${pub}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const f of [
      'stream_id',
      'name',
      'description',
      'rendered_description',
      'date_created',
      'creator_id',
      'invite_only',
      'is_web_public',
      'stream_post_policy',
      'message_retention_days',
      'history_public_to_subscribers',
      'first_message_id',
      'is_recently_active',
      'stream_weekly_traffic',
      'can_add_subscribers_group',
      'can_remove_subscribers_group',
      'can_administer_channel_group',
      'can_send_message_group',
      'can_subscribe_group',
      'is_archived',
    ]) {
      assert.ok(f in r.body.stream, f);
    }
    const hidden = await ann.get(`/streams/${secret}`);
    assert.deepEqual([hidden.status, hidden.body.code, hidden.body.msg], [400, 'BAD_REQUEST', 'Invalid channel ID']);
    assert.equal((await owner.get(`/streams/${secret}`)).body.stream.invite_only, true);
  });

  it('lists members and subscription status', async () => {
    // Principals name whom to subscribe: the owner put Ann in without joining.
    assert.deepEqual((await ann.get(`/streams/${pub}/members`)).body.subscribers, [annId]);
    assert.equal((await ann.get(`/streams/${secret}/members`)).body.msg, 'Invalid channel ID');
    assert.equal((await ann.get(`/users/${annId}/subscriptions/${pub}`)).body.is_subscribed, true);
    assert.equal((await ann.get(`/users/${benId}/subscriptions/${pub}`)).body.is_subscribed, false);
  });

  it('lists topics newest first, only what the user may see', async () => {
    for (const [topic, body] of [
      ['alpha', 'one'],
      ['beta', 'two'],
      ['Alpha', 'three'],
    ]) {
      assert.equal((await owner.post('/messages', { type: 'stream', to: 'town', topic, content: body })).status, 200);
    }
    await owner.post('/messages', { type: 'stream', to: 'vault', topic: 'hidden', content: 'x' });
    const r = await ben.get(`/users/me/${pub}/topics`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.topics.map((t: { name: string }) => t.name),
      ['Alpha', 'beta'],
    );
    assert.ok(r.body.topics[0].max_id > r.body.topics[1].max_id);
    assert.equal((await ben.get(`/users/me/${secret}/topics`)).body.msg, 'Invalid channel ID');
  });

  it('changes subscription properties, all or nothing', async () => {
    const ok = await ann.post('/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: pub, property: 'color', value: '#F00F00' },
        { stream_id: pub, property: 'pin_to_top', value: true },
        { stream_id: pub, property: 'in_home_view', value: false },
        { stream_id: pub, property: 'desktop_notifications', value: true },
      ],
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    // Since feature level 111 the answer no longer echoes subscription_data.
    assert.deepEqual(Object.keys(ok.body).sort(), ['msg', 'result']);
    let sub = (await ann.get('/users/me/subscriptions')).body.subscriptions.find((s: { stream_id: number }) => s.stream_id === pub);
    assert.deepEqual([sub.color, sub.pin_to_top, sub.is_muted, sub.in_home_view, sub.desktop_notifications, sub.email_notifications], ['#f00f00', true, true, false, true, null]);
    const bad = await ann.post('/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: pub, property: 'is_muted', value: false },
        { stream_id: pub, property: 'loudness', value: true },
      ],
    });
    assert.deepEqual([bad.status, bad.body.msg], [400, 'Unknown subscription property: loudness']);
    const notSub = await ben.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: pub, property: 'is_muted', value: true }] });
    assert.equal(notSub.body.msg, `Not subscribed to channel ID ${pub}`);
    const badColor = await ann.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: pub, property: 'color', value: 'red' }] });
    assert.equal(badColor.body.code, 'BAD_REQUEST');
    sub = (await ann.get('/users/me/subscriptions')).body.subscriptions.find((s: { stream_id: number }) => s.stream_id === pub);
    assert.equal(sub.is_muted, true, 'a refused batch changes nothing');
  });

  it('unsubscribes oneself, and others only with permission', async () => {
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'leaving' }], principals: [annId, benId] });
    const byBen = await ben.call('DELETE', '/users/me/subscriptions', { subscriptions: ['leaving'], principals: [annId] });
    assert.deepEqual([byBen.status, byBen.body.msg], [400, 'Insufficient permission']);
    const self = await ben.call('DELETE', '/users/me/subscriptions', { subscriptions: ['leaving'] });
    assert.deepEqual([self.body.removed, self.body.not_removed], [['leaving'], []]);
    const again = await ben.call('DELETE', '/users/me/subscriptions', { subscriptions: ['leaving'] });
    assert.deepEqual([again.body.removed, again.body.not_removed], [[], ['leaving']]);
    const byAdmin = await owner.call('DELETE', '/users/me/subscriptions', { subscriptions: ['leaving'], principals: [annId] });
    assert.deepEqual(byAdmin.body.removed, ['leaving']);
    // Zulip names every unknown channel at once, as BAD_REQUEST (zerver/lib/streams.py list_to_streams).
    const missing = await ben.call('DELETE', '/users/me/subscriptions', { subscriptions: ['vault'] });
    assert.deepEqual([missing.status, missing.body.code, missing.body.msg, missing.body.stream], [400, 'BAD_REQUEST', 'Channel(s) (vault) do not exist', undefined]);
    const several = await ben.call('DELETE', '/users/me/subscriptions', { subscriptions: ['vault', 'leaving', 'attic'] });
    assert.deepEqual([several.status, several.body.msg], [400, 'Channel(s) (vault, attic) do not exist']);
  });

  it('manages default channels (administrators; public only); new users join them', async () => {
    const byMember = await ann.post('/default_streams', { stream_id: pub });
    assert.equal(byMember.body.code, 'UNAUTHORIZED_PRINCIPAL');
    const priv = await owner.post('/default_streams', { stream_id: secret });
    assert.deepEqual([priv.body.code, priv.body.msg], ['BAD_REQUEST', 'Private channels cannot be made default.']);
    assert.equal((await owner.post('/default_streams', { stream_id: 99999 })).body.msg, 'Invalid channel ID');
    assert.equal((await owner.post('/default_streams', { stream_id: pub })).status, 200);
    const listed = (await owner.get('/streams', { include_default: true })).body.streams;
    assert.deepEqual(
      listed.filter((s: { is_default: boolean }) => s.is_default).map((s: { stream_id: number }) => s.stream_id),
      [pub],
    );
    const r = await runKeel(['admin', 'create-user', '--email', 'new@example.com', '--full-name', 'New', '--json', ...storageArgs(storage)]);
    const made = JSON.parse(r.stdout);
    const subs = (await new ChatClient(server.chatUrl, made.email, made.apiKey).get('/users/me/subscriptions')).body.subscriptions;
    assert.deepEqual(
      subs.map((s: { name: string }) => s.name),
      ['town'],
    );
    assert.equal((await owner.call('DELETE', '/default_streams', { stream_id: pub })).status, 200);
    const after = (await owner.get('/streams', { include_default: true })).body.streams;
    assert.ok(after.every((s: { is_default: boolean }) => !s.is_default));
  });

  it('archives channels for their administrators; no one posts there any more', async () => {
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'old' }], principals: [annId] });
    const oldId = (await owner.get('/get_stream_id', { stream: 'old' })).body.stream_id;
    const byAnn = await ann.call('DELETE', `/streams/${oldId}`);
    assert.deepEqual([byAnn.status, byAnn.body.code], [400, 'BAD_REQUEST']);
    assert.equal((await owner.call('DELETE', `/streams/${oldId}`)).status, 200);
    assert.equal((await owner.get(`/streams/${oldId}`)).body.stream.is_archived, true);
    const post = await ann.post('/messages', { type: 'stream', to: oldId, topic: 't', content: 'late' });
    assert.deepEqual([post.status, post.body.code, post.body.msg], [400, 'BAD_REQUEST', "Not authorized to send to channel 'old'"]);
    assert.equal((await owner.call('DELETE', `/streams/${oldId}`)).body.msg, 'Channel is already deactivated');
    const active = (await owner.get('/streams')).body.streams.map((s: { name: string }) => s.name);
    assert.ok(!active.includes('old'));
    const withArchived = (await owner.get('/streams', { exclude_archived: false })).body.streams.map((s: { name: string }) => s.name);
    assert.ok(withArchived.includes('old'));
  });
});

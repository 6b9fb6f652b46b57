// Black-box, on both engines: hidden email addresses stay hidden, on a real `keel serve` driven over
// raw HTTP as Zulip's Python client sends it (and zulip-js for the user directory). Ann hides her
// address from all but administrators; Bob (a member) then sees only user<id>@<realm host> wherever
// her address appears (messages, display recipients, users, register, events, reactions, typing),
// the owner sees the real one in delivery_email only, and she still logs in with her real address.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';
import { gravatarUrl } from '../../../src/chat/domain/users.js';

type Ev = Record<string, any>;

await forEachEngine('chat hidden email addresses, black-box', (engine) => {
  let realm: ServedRealm;
  let owner: ChatClient;
  let ann: ChatClient, annId: number;
  let bob: ChatClient, bobId: number;
  let host: string;
  let placeholder: string;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'bob'], channel: { name: 'design', subscribers: ['owner', 'ann', 'bob'] } });
    ({ owner } = realm);
    ({ client: ann, id: annId } = realm.members.ann);
    ({ client: bob, id: bobId } = realm.members.bob);
    host = owner.email.split('@')[1];
    placeholder = `user${annId}@${host}`;
  });
  after(async () => {
    await realm?.stop();
  });

  const userIn = (list: Ev[], id: number) => list.find((u) => u.user_id === id)!;

  it('hides the address from every API email once the user hides it, with Zulip’s events', async () => {
    const bobQueue = await register(bob, { event_types: ['realm_user', 'message', 'typing', 'reaction', 'presence'] });
    const ownerQueue = await register(owner, { event_types: ['realm_user'] });
    const changed = await ann.call('PATCH', '/settings', { email_address_visibility: 3 });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));

    const avatar = { user_id: annId, avatar_source: 'G', avatar_url: gravatarUrl('ann@example.com', 1), avatar_url_medium: gravatarUrl('ann@example.com', 1, true), avatar_version: 1 };
    const apiEmail = [
      { type: 'realm_user', op: 'update', person: { user_id: annId, new_email: placeholder } },
      { type: 'realm_user', op: 'update', person: avatar },
    ];
    const bare = (events: Ev[]) => events.map(({ id: _id, ...e }) => e);
    assert.deepEqual(bare(await drain(bob, bobQueue.queue_id)), [{ type: 'realm_user', op: 'update', person: { user_id: annId, delivery_email: null } }, ...apiEmail]);
    assert.deepEqual(bare(await drain(owner, ownerQueue.queue_id)), apiEmail, 'administrators keep sight of it: only the API email changes');
    let bobSeen = (await drain(bob, bobQueue.queue_id)).at(-1)!.id as number;

    // Messages: a channel message and a direct one, fetched and as events.
    const inChannel = await ann.post('/messages', { type: 'stream', to: realm.channelId, topic: 'plans', content: 'hello' });
    const direct = await ann.post('/messages', { type: 'direct', to: [bobId], content: 'psst' });
    assert.equal(direct.status, 200, JSON.stringify(direct.body));
    const page = await bob.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, client_gravatar: true });
    const fetched = new Map<number, Ev>(page.body.messages.map((m: Ev) => [m.id, m]));
    for (const id of [inChannel.body.id, direct.body.id]) {
      assert.equal(fetched.get(id)!.sender_email, placeholder);
      // A client cannot hash a hidden address itself: the URL comes even with client_gravatar.
      assert.equal(fetched.get(id)!.avatar_url, gravatarUrl('ann@example.com', 1));
    }
    assert.deepEqual(
      fetched
        .get(direct.body.id)!
        .display_recipient.map((r: Ev) => [r.id, r.email])
        .sort(),
      [
        [annId, placeholder],
        [bobId, 'bob@example.com'],
      ].sort(),
    );
    const one = await owner.get(`/messages/${inChannel.body.id}`);
    assert.equal(one.body.message.sender_email, placeholder, 'the same API email for administrators');

    // Typing, a reaction and presence, as events; presence's legacy answer is keyed by API email.
    assert.equal((await ann.post('/typing', { op: 'start', type: 'direct', to: [bobId] })).status, 200);
    assert.equal((await ann.post('/users/me/presence', { status: 'active', new_user_input: true })).status, 200);
    const presences = (await bob.post('/users/me/presence', { status: 'active' })).body.presences;
    assert.ok(presences[placeholder], JSON.stringify(presences));
    assert.equal(presences['ann@example.com'], undefined);
    assert.equal((await ann.post(`/messages/${direct.body.id}/reactions`, { emoji_name: 'octopus' })).status, 200);
    const events = await drain(bob, bobQueue.queue_id, bobSeen);
    bobSeen = events.at(-1)!.id;
    const messages = events.filter((e) => e.type === 'message');
    assert.deepEqual(
      messages.map((e) => e.message.sender_email),
      [placeholder, placeholder],
    );
    const typing = events.find((e) => e.type === 'typing')!;
    assert.deepEqual(typing.sender, { user_id: annId, email: placeholder });
    assert.ok(typing.recipients.some((r: Ev) => r.user_id === annId && r.email === placeholder));
    const presence = events.find((e) => e.type === 'presence' && e.user_id === annId)!;
    assert.equal(presence.email, placeholder);
    const reaction = events.find((e) => e.type === 'reaction')!;
    assert.deepEqual(reaction.user, { user_id: annId, email: placeholder, full_name: 'ann' });

    // The directory and register, for a member, the owner and Ann herself.
    const asBob = userIn((await bob.get('/users')).body.members, annId);
    assert.deepEqual([asBob.email, asBob.delivery_email], [placeholder, null]);
    assert.notEqual(asBob.avatar_url, null);
    const asOwner = userIn((await owner.get('/users')).body.members, annId);
    assert.deepEqual([asOwner.email, asOwner.delivery_email], [placeholder, 'ann@example.com']);
    const bobState = await register(bob, { fetch_event_types: ['realm_user'] });
    const inBobState = userIn(bobState.realm_users, annId);
    assert.deepEqual([inBobState.email, inBobState.delivery_email], [placeholder, null]);
    const annState = await register(ann, { fetch_event_types: ['realm_user'] });
    assert.deepEqual([annState.email, annState.delivery_email], [placeholder, 'ann@example.com']);
    const me = await ann.get('/users/me');
    assert.deepEqual([me.body.email, me.body.delivery_email], [placeholder, 'ann@example.com']);

    // zulip-js's directory, as a member sees it.
    const bobJs = await zulip({ realm: realm.server.chatUrl, username: bob.email, apiKey: bob.apiKey });
    const listed = await bobJs.users.retrieve({});
    assert.equal(listed.result, 'success', JSON.stringify(listed));
    assert.deepEqual([userIn(listed.members, annId).email, userIn(listed.members, annId).delivery_email], [placeholder, null]);
  });

  it('finds the user by placeholder, and by real address only for those who may see it', async () => {
    const byPlaceholder = await bob.get(`/users/${placeholder}`);
    assert.equal(byPlaceholder.status, 200, JSON.stringify(byPlaceholder.body));
    assert.deepEqual([byPlaceholder.body.user.user_id, byPlaceholder.body.user.email, byPlaceholder.body.user.delivery_email], [annId, placeholder, null]);
    refused(await bob.get('/users/ann@example.com'), 'BAD_REQUEST', 'No such user');
    const byReal = await owner.get('/users/ANN@example.com');
    assert.deepEqual([byReal.body.user.user_id, byReal.body.user.delivery_email], [annId, 'ann@example.com']);
    refused(await ann.get('/users/ann@example.com'), 'BAD_REQUEST', 'No such user');
    const renamed = await owner.call('PATCH', `/users/${placeholder}`, { full_name: 'Ann Hidden' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal((await bob.get(`/users/${annId}`)).body.user.full_name, 'Ann Hidden');
    refused(await bob.get(`/users/user${'9'.repeat(20)}@${host}`), 'BAD_REQUEST', 'No such user');
    // Direct messages may be addressed by the API email, as clients know it.
    const sent = await bob.post('/messages', { type: 'direct', to: [placeholder], content: 'hi' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
  });

  it('logs in with the real address only', async () => {
    const key = await owner.call('POST', '/fetch_api_key', { username: 'ann@example.com', password: 'pass-word-1' }, null);
    assert.equal(key.status, 200, JSON.stringify(key.body));
    assert.deepEqual([key.body.email, key.body.user_id], ['ann@example.com', annId]);
    const byPlaceholder = await owner.call('POST', '/fetch_api_key', { username: placeholder, password: 'pass-word-1' }, null);
    assert.equal(byPlaceholder.status, 401, JSON.stringify(byPlaceholder.body));
    assert.equal((await new ChatClient(realm.server.chatUrl, 'ann@example.com', key.body.api_key).get('/users/me')).status, 200);
    const withPlaceholder = await new ChatClient(realm.server.chatUrl, placeholder, key.body.api_key).get('/users/me');
    assert.deepEqual([withPlaceholder.status, withPlaceholder.body.code], [401, 'INVALID_API_KEY']);
  });

  it('gives new users the placeholder from the start when the realm’s default hides addresses', async () => {
    assert.equal((await owner.call('PATCH', '/realm/user_settings_defaults', { email_address_visibility: 4 })).status, 200);
    const made = await owner.post('/users', { email: 'cy@example.com', password: 'pass-word-1', full_name: 'Cy' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const cyId = made.body.user_id as number;
    const cy = (await owner.get(`/users/${cyId}`)).body.user;
    assert.deepEqual([cy.email, cy.delivery_email], [`user${cyId}@${host}`, null], 'nobody: not even the owner');
    refused(await owner.post('/users', { email: 'CY@example.com', password: 'pass-word-1', full_name: 'Cy Again' }), 'BAD_REQUEST', 'Email is already in use.');
    const squatter = await owner.post('/users', { email: `user${cyId + 50}@${host}`, password: 'pass-word-1', full_name: 'Squatter' });
    refused(squatter, 'BAD_REQUEST', `Invalid email 'user${cyId + 50}@${host}': addresses of the form user<id>@<realm host> stand for users whose address is hidden`);
    const key = await owner.call('POST', '/fetch_api_key', { username: 'cy@example.com', password: 'pass-word-1' }, null);
    assert.deepEqual([key.status, key.body.email], [200, 'cy@example.com']);
    assert.equal((await owner.call('PATCH', '/realm/user_settings_defaults', { email_address_visibility: 1 })).status, 200);
  });

  it('shows the real address again when the user makes it public', async () => {
    const q = await register(bob, { event_types: ['realm_user'] });
    assert.equal((await ann.call('PATCH', '/settings', { email_address_visibility: 1 })).status, 200);
    const first = await drain(bob, q.queue_id);
    const events = first.map((e) => e.person);
    assert.deepEqual(events.slice(0, 2), [
      { user_id: annId, delivery_email: 'ann@example.com' },
      { user_id: annId, new_email: 'ann@example.com' },
    ]);
    const asBob = (await bob.get(`/users/${annId}`)).body.user;
    assert.deepEqual([asBob.email, asBob.delivery_email], ['ann@example.com', 'ann@example.com']);
    const page = await bob.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, client_gravatar: true });
    const fromAnn = page.body.messages.filter((m: Ev) => m.sender_id === annId);
    assert.ok(fromAnn.length > 0);
    for (const m of fromAnn) assert.deepEqual([m.sender_email, m.avatar_url], ['ann@example.com', null]);
    // Moving between two hidden settings changes who sees it, not the API email: no new_email.
    assert.equal((await ann.call('PATCH', '/settings', { email_address_visibility: 2 })).status, 200);
    assert.equal((await ann.call('PATCH', '/settings', { email_address_visibility: 5 })).status, 200);
    const later = (await drain(bob, q.queue_id, first.at(-1)!.id)).map((e) => e.person);
    assert.deepEqual(
      later.filter((p) => 'new_email' in p),
      [{ user_id: annId, new_email: placeholder }],
    );
    assert.deepEqual(later.filter((p) => 'delivery_email' in p).at(-1), { user_id: annId, delivery_email: null }, 'moderators only: a member loses sight');
  });
});

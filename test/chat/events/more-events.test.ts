// The events of channel, subscription, user and bot operations (peer_add/peer_remove, subscription
// and stream updates, archiving, default channels, realm_bot, sight gained or lost with a role or
// privacy change) and the client capabilities that change the register state and the events. Every
// event a test reads went through GET /events, whose answers are checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../../helpers/in-process-chat.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;
type Ev = Record<string, any>;

await forEachEngine('chat events of channels, users and capabilities', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let owner: InProcessClient, ownerId: number;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient, bobId: number;
  let guest: InProcessClient, guestId: number;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob', ['guest', 600]] });
    ({ storage, chat, owner, ownerId } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
    ({ client: guest, id: guestId } = realm.members.guest);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const register = (c: InProcessClient, params: Record<string, unknown> = {}) => ok(c, 'POST', '/register', params);

  /** Everything queued, without waiting. */
  async function drain(c: InProcessClient, q: Ev): Promise<Ev[]> {
    return (await ok(c, 'GET', '/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true })).events;
  }

  const summary = (events: Ev[]) => events.map((e) => [e.type, e.op ?? null]);

  async function channel(name: string, params: Record<string, unknown> = {}): Promise<number> {
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name }], ...params });
    return (await ok(owner, 'GET', '/get_stream_id', { stream: name })).stream_id;
  }

  it('sends subscription update to the user only: both is_muted and the legacy in_home_view', async () => {
    const id = await channel('props', { principals: [ownerId, aliceId] });
    const qa = await register(alice, { event_types: ['subscription'] });
    const qo = await register(owner, { event_types: ['subscription'] });
    await ok(alice, 'POST', '/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: id, property: 'color', value: '#AABBCC' },
        { stream_id: id, property: 'in_home_view', value: false },
        { stream_id: id, property: 'pin_to_top', value: true },
      ],
    });
    assert.deepEqual(
      (await drain(alice, qa)).map((e) => [e.op, e.stream_id, e.property, e.value]),
      [
        ['update', id, 'color', '#aabbcc'],
        ['update', id, 'in_home_view', false],
        ['update', id, 'is_muted', true],
        ['update', id, 'pin_to_top', true],
      ],
    );
    assert.deepEqual(await drain(owner, qo), [], "another user's settings are theirs");
    const bad = await alice.call('POST', '/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: id, property: 'pin_to_top', value: false },
        { stream_id: id, property: 'nonsense', value: true },
      ],
    });
    assert.equal(bad.status, 400);
    assert.equal((await drain(alice, qa)).length, 4, 'a refused request changes nothing and tells nothing');
  });

  it('sends peer_add and peer_remove to those who may see the subscribers, not to the users concerned', async () => {
    const pub = await channel('peers', { principals: [ownerId, aliceId] });
    const [qo, qa, qb, qg] = await Promise.all([owner, alice, bob, guest].map((c) => register(c, { event_types: ['subscription', 'stream'] })));
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'peers' }], principals: [bobId] });
    const peerAdd = { type: 'subscription', op: 'peer_add', stream_ids: [pub], user_ids: [bobId] };
    for (const [c, q] of [
      [owner, qo],
      [alice, qa],
    ] as const)
      assert.deepEqual(
        (await drain(c, q)).map(({ id: _id, ...e }) => e),
        [peerAdd],
      );
    assert.deepEqual(summary(await drain(bob, qb)), [['subscription', 'add']]);
    assert.deepEqual(await drain(guest, qg), [], 'a guest outside a public channel does not see its subscribers');
    await ok(bob, 'DELETE', '/users/me/subscriptions', { subscriptions: ['peers'] });
    assert.deepEqual(
      (await drain(alice, qa)).slice(1).map((e) => [e.op, e.stream_ids, e.user_ids]),
      [['peer_remove', [pub], [bobId]]],
    );
    assert.deepEqual(summary(await drain(bob, qb)).slice(1), [['subscription', 'remove']], 'bob still sees the public channel: no stream delete');

    // A private channel: only those who may see it hear of its subscribers; leaving it hides it.
    const priv = await channel('hushed', { invite_only: true, principals: [ownerId, aliceId] });
    const [qa2, qb2] = await Promise.all([register(alice, { event_types: ['subscription', 'stream'] }), register(bob, { event_types: ['subscription', 'stream'] })]);
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'hushed' }], principals: [bobId] });
    assert.deepEqual(
      (await drain(alice, qa2)).map((e) => [e.op, e.stream_ids, e.user_ids]),
      [['peer_add', [priv], [bobId]]],
    );
    const gotB = await drain(bob, qb2);
    assert.deepEqual(
      summary(gotB),
      [
        ['stream', 'create'],
        ['subscription', 'add'],
      ],
      'the private channel appears to its new subscriber first',
    );
    assert.equal(gotB[0].streams[0].stream_id, priv);
    await ok(owner, 'DELETE', '/users/me/subscriptions', { subscriptions: ['hushed'], principals: [bobId] });
    const leftB = (await drain(bob, qb2)).slice(2);
    assert.deepEqual(
      leftB.map(({ id: _id, ...e }) => e),
      [
        { type: 'subscription', op: 'remove', subscriptions: [{ stream_id: priv, name: 'hushed' }] },
        { type: 'stream', op: 'delete', streams: [{ stream_id: priv }], stream_ids: [priv] },
      ],
    );
    assert.deepEqual(
      (await drain(alice, qa2)).slice(1).map((e) => [e.op, e.user_ids]),
      [['peer_remove', [bobId]]],
    );

    // A guest sees a public channel only while subscribed to it.
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'peers' }], principals: [guestId] });
    assert.deepEqual(summary(await drain(guest, qg)), [
      ['stream', 'create'],
      ['subscription', 'add'],
    ]);
    await ok(guest, 'DELETE', '/users/me/subscriptions', { subscriptions: ['peers'] });
    assert.deepEqual(summary(await drain(guest, qg)).slice(2), [
      ['subscription', 'remove'],
      ['stream', 'delete'],
    ]);
  });

  it('sends stream update per changed property to those who see the channel, create/delete to those who gain or lose it', async () => {
    const id = await channel('mutable', { principals: [ownerId, aliceId] });
    const types = { event_types: ['stream', 'subscription', 'default_streams'] };
    const [qa, qb, qg] = await Promise.all([register(alice, types), register(bob, types), register(guest, types)]);
    await ok(owner, 'PATCH', `/streams/${id}`, { new_name: 'renamed', description: 'Some **bold** words' });
    const renamed = (await drain(alice, qa)).map(({ id: _id, ...e }) => e);
    assert.deepEqual(renamed, [
      { type: 'stream', op: 'update', stream_id: id, name: 'mutable', property: 'name', value: 'renamed' },
      { type: 'stream', op: 'update', stream_id: id, name: 'renamed', property: 'description', value: 'Some **bold** words', rendered_description: '<p>Some <strong>bold</strong> words</p>' },
    ]);
    assert.equal((await drain(bob, qb)).length, 2, 'a public channel is seen by every member');
    assert.deepEqual(await drain(guest, qg), [], 'but not by a guest outside it');

    await ok(owner, 'PATCH', `/streams/${id}`, { is_private: true });
    const priv = (await drain(alice, qa)).slice(2);
    assert.deepEqual(
      priv.map((e) => [e.property, e.value, e.history_public_to_subscribers, e.is_web_public]),
      [['invite_only', true, false, false]],
    );
    assert.deepEqual(
      (await drain(bob, qb)).slice(2).map((e) => [e.op, e.stream_ids]),
      [['delete', [id]]],
      'bob lost sight of the channel',
    );

    await ok(owner, 'PATCH', `/streams/${id}`, { is_private: false });
    const back = (await drain(bob, qb)).slice(3);
    assert.deepEqual(summary(back), [
      ['stream', 'create'],
      ['subscription', 'peer_add'],
    ]);
    assert.equal(back[0].streams[0].invite_only, false);
    assert.deepEqual(
      back[1].user_ids,
      [ownerId, aliceId].sort((a, b) => a - b),
    );

    await ok(owner, 'PATCH', `/streams/${id}`, { message_retention_days: 30, can_remove_subscribers_group: { new: { direct_members: [aliceId], direct_subgroups: [] } }, is_default_stream: true });
    const more = (await drain(alice, qa)).slice(4);
    assert.deepEqual(
      more.map((e) => [e.type, e.property ?? null, e.value ?? e.default_streams]),
      [
        ['stream', 'message_retention_days', 30],
        ['stream', 'can_remove_subscribers_group', { direct_members: [aliceId], direct_subgroups: [] }],
        ['default_streams', null, [id]],
      ],
    );
    await ok(owner, 'PATCH', `/streams/${id}`, { is_default_stream: true });
    assert.equal((await drain(alice, qa)).length, 7, 'already a default channel: no default_streams event');
    await ok(owner, 'DELETE', '/default_streams', { stream_id: id });
  });

  it('sends stream update of first_message_id with the first message of a channel only', async () => {
    const id = await channel('quiet', { principals: [ownerId, aliceId] });
    const q = await register(bob, { event_types: ['stream'] });
    const sent = await ok(owner, 'POST', '/messages', { type: 'stream', to: id, topic: 't', content: 'first' });
    await ok(owner, 'POST', '/messages', { type: 'stream', to: id, topic: 't', content: 'second' });
    assert.deepEqual(
      (await drain(bob, q)).map(({ id: _id, ...e }) => e),
      [{ type: 'stream', op: 'update', stream_id: id, name: 'quiet', property: 'first_message_id', value: sent.id }],
    );
  });

  it('archives a channel: is_archived update with archived_channels, stream delete without; state follows the capability', async () => {
    const id = await channel('old-news', { principals: [ownerId, aliceId] });
    await ok(owner, 'POST', '/default_streams', { stream_id: id });
    const modern = await register(alice, { event_types: ['stream', 'default_streams'], client_capabilities: { notification_settings_null: false, archived_channels: true } });
    const legacy = await register(alice, { event_types: ['stream', 'default_streams'] });
    await ok(owner, 'DELETE', `/streams/${id}`);
    assert.deepEqual(
      (await drain(alice, modern)).map(({ id: _id, ...e }) => e),
      [
        { type: 'stream', op: 'update', stream_id: id, name: 'old-news', property: 'is_archived', value: true },
        { type: 'default_streams', default_streams: [] },
      ],
    );
    assert.deepEqual(
      (await drain(alice, legacy)).map(({ id: _id, ...e }) => e),
      [
        { type: 'stream', op: 'delete', streams: [{ stream_id: id }], stream_ids: [id] },
        { type: 'default_streams', default_streams: [] },
      ],
    );
    const has = (list: Ev[]) => list.some((s) => s.stream_id === id);
    const withCap = await register(alice, { fetch_event_types: ['subscription', 'stream'], client_capabilities: { notification_settings_null: false, archived_channels: true } });
    assert.equal(has(withCap.subscriptions), true);
    assert.equal(withCap.subscriptions.find((s: Ev) => s.stream_id === id).is_archived, true);
    assert.equal(has(withCap.streams), true);
    const without = await register(alice, { fetch_event_types: ['subscription', 'stream'] });
    assert.equal(has(without.subscriptions), false);
    assert.equal(has(without.streams), false);
    const bobsView = await register(bob, { fetch_event_types: ['subscription'], client_capabilities: { notification_settings_null: false, archived_channels: true } });
    assert.equal(has(bobsView.never_subscribed), true, 'archived channels are in never_subscribed for capable clients (feature level 362)');
  });

  it('sends default_streams when the list changes, to every active user', async () => {
    const id = await channel('welcome');
    const [qa, qg] = await Promise.all([register(alice, { event_types: ['default_streams'] }), register(guest, { event_types: ['default_streams'] })]);
    await ok(owner, 'POST', '/default_streams', { stream_id: id });
    await ok(owner, 'POST', '/default_streams', { stream_id: id });
    await ok(owner, 'DELETE', '/default_streams', { stream_id: id });
    await ok(owner, 'DELETE', '/default_streams', { stream_id: id });
    const lists = (await drain(alice, qa)).map((e) => e.default_streams);
    assert.deepEqual(lists, [[id], []], 'no event for a change that changed nothing');
    assert.equal((await drain(guest, qg)).length, 2);
    const refused = await alice.call('POST', '/default_streams', { stream_id: id });
    assert.equal(refused.status, 400);
    assert.equal((await drain(alice, qa)).length, 2);
  });

  it('announces a new user to the subscribers of the default channels they join (peer_add)', async () => {
    const id = await channel('lobby', { principals: [ownerId, aliceId] });
    await ok(owner, 'POST', '/default_streams', { stream_id: id });
    const q = await register(alice, { event_types: ['subscription', 'realm_user'] });
    const { id: newId } = await chat.member('newbie@example.com', 'Newbie');
    assert.deepEqual(
      (await drain(alice, q)).map((e) => [e.type, e.op, e.stream_ids ?? e.person.user_id, e.user_ids ?? null]),
      [
        ['realm_user', 'add', newId, null],
        ['subscription', 'peer_add', [id], [newId]],
      ],
    );
    await ok(owner, 'DELETE', '/default_streams', { stream_id: id });
  });

  it('changes sight with a role: a guest loses public channels, an administrator gains private ones', async () => {
    const { client: dave, id: daveId } = await chat.member('dave@example.com', 'Dave');
    const pub = await channel('open-plan', { principals: [ownerId, aliceId] });
    const priv = await channel('board-room', { invite_only: true });
    const q = await register(dave, { event_types: ['stream', 'subscription', 'realm_user'] });
    await ok(owner, 'PATCH', `/users/${daveId}`, { role: 600 });
    const asGuest = await drain(dave, q);
    assert.deepEqual(asGuest[0].person, { user_id: daveId, role: 600 });
    const deleted = asGuest.filter((e) => e.type === 'stream' && e.op === 'delete');
    assert.equal(deleted.length, 1);
    assert.ok(deleted[0].stream_ids.includes(pub));
    assert.ok(!deleted[0].stream_ids.includes(priv));
    await ok(owner, 'PATCH', `/users/${daveId}`, { role: 400 });
    const asMember = (await drain(dave, q)).slice(asGuest.length);
    const created = asMember.filter((e) => e.type === 'stream' && e.op === 'create').map((e) => e.streams[0].stream_id);
    assert.ok(created.includes(pub) && !created.includes(priv), 'the public channels are back');
    const peers = asMember.filter((e) => e.op === 'peer_add' && e.stream_ids[0] === pub);
    assert.deepEqual(
      peers.map((e) => e.user_ids),
      [[ownerId, aliceId].sort((a, b) => a - b)],
      'with the subscribers it may now see',
    );
    await ok(owner, 'PATCH', `/users/${daveId}`, { role: 200 });
    const asAdmin = (await drain(dave, q)).slice(asGuest.length + asMember.length);
    const shown = asAdmin.filter((e) => e.type === 'stream');
    assert.ok(
      shown.every((e) => e.op === 'create' && e.streams[0].invite_only === true),
      'an administrator gains the private channels only',
    );
    assert.ok(shown.some((e) => e.streams[0].stream_id === priv));
  });

  it('deactivates and reactivates with realm_user update is_active, realm_bot update for bots, peer_add on return', async () => {
    const { client: erin, id: erinId } = await chat.member('erin@example.com', 'Erin');
    const id = await channel('erins', { principals: [ownerId, aliceId, erinId] });
    const qo = await register(owner, { event_types: ['realm_bot', 'realm_user'] });
    const qa = await register(alice, { event_types: ['realm_bot', 'realm_user', 'subscription'] });
    const bot = await ok(erin, 'POST', '/bots', { full_name: 'Erin Bot', short_name: 'erin' });
    const qe = await register(erin, { event_types: ['realm_bot'], fetch_event_types: ['realm_bot'] });
    assert.deepEqual(
      qe.realm_bots.map((b: Ev) => [b.user_id, b.api_key, b.owner_id]),
      [[bot.user_id, bot.api_key, erinId]],
      'the owner sees its bot and key in the state',
    );
    assert.deepEqual((await register(alice, { fetch_event_types: ['realm_bot'] })).realm_bots, [], "a member does not administer another's bot");
    const ownerEvents = await drain(owner, qo);
    assert.deepEqual(summary(ownerEvents), [
      ['realm_user', 'add'],
      ['realm_bot', 'add'],
    ]);
    assert.equal(ownerEvents[1].bot.api_key, bot.api_key);
    assert.equal(ownerEvents[1].bot.owner_id, erinId);
    assert.deepEqual(summary(await drain(alice, qa)), [['realm_user', 'add']], 'realm_bot goes to administrators and the owner only');

    await ok(owner, 'DELETE', `/users/${erinId}`);
    assert.deepEqual(
      (await drain(owner, qo)).slice(2).map(({ id: _id, ...e }) => e),
      [
        { type: 'realm_user', op: 'update', person: { user_id: erinId, is_active: false } },
        { type: 'realm_user', op: 'update', person: { user_id: bot.user_id, is_active: false } },
        { type: 'realm_bot', op: 'update', bot: { user_id: bot.user_id, is_active: false } },
      ],
    );
    const afterDeactivation = await drain(alice, qa);
    assert.deepEqual(
      summary(afterDeactivation).slice(1),
      [
        ['realm_user', 'update'],
        ['realm_user', 'update'],
      ],
      'no subscription events: clients drop the user themselves',
    );
    await ok(owner, 'POST', `/users/${erinId}/reactivate`);
    assert.deepEqual(
      (await drain(alice, qa)).slice(3).map(({ id: _id, ...e }) => e),
      [
        { type: 'realm_user', op: 'update', person: { user_id: erinId, is_active: true } },
        { type: 'subscription', op: 'peer_add', stream_ids: [id], user_ids: [erinId] },
      ],
    );
  });

  it('honours notification_settings_null, user_avatar_url_field_optional, include_deactivated_groups, user_list_incomplete', async () => {
    await channel('notify', { principals: [ownerId, bobId] });
    const nulls = await register(bob, { fetch_event_types: ['subscription'], client_capabilities: { notification_settings_null: true } });
    const legacy = await register(bob, { fetch_event_types: ['subscription'] });
    const pick = (state: Ev) => state.subscriptions.find((s: Ev) => s.name === 'notify');
    assert.deepEqual([pick(nulls).desktop_notifications, pick(nulls).wildcard_mentions_notify], [null, null]);
    assert.deepEqual([pick(legacy).desktop_notifications, pick(legacy).wildcard_mentions_notify], [false, true], "the user's own settings stand in for null");
    const addNull = await register(bob, { event_types: ['subscription'], client_capabilities: { notification_settings_null: true } });
    const addLegacy = await register(bob, { event_types: ['subscription'] });
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'notify-2' }], principals: [bobId] });
    assert.equal((await drain(bob, addNull))[0].subscriptions[0].push_notifications, null);
    assert.equal((await drain(bob, addLegacy))[0].subscriptions[0].push_notifications, false);

    const optional = await register(alice, {
      fetch_event_types: ['realm_user'],
      event_types: ['realm_user'],
      client_gravatar: false,
      client_capabilities: { notification_settings_null: false, user_avatar_url_field_optional: true },
    });
    const full = await register(alice, { fetch_event_types: ['realm_user'], event_types: ['realm_user'], client_gravatar: false });
    // Leaving avatar_url out is the server's choice; Keel serves no /avatar/{user_id} to fall back on, so it never does.
    assert.equal(
      optional.realm_users.every((u: Ev) => typeof u.avatar_url === 'string'),
      true,
    );
    assert.equal(
      full.realm_users.every((u: Ev) => typeof u.avatar_url === 'string'),
      true,
    );
    const { id: fredId } = await chat.member('fred@example.com', 'Fred');
    const [addOptional] = await drain(alice, optional);
    const [addFull] = await drain(alice, full);
    assert.equal(addOptional.person.user_id, fredId);
    assert.equal(typeof addOptional.person.avatar_url, 'string');
    assert.equal(typeof addFull.person.avatar_url, 'string');

    // No API deactivates a group yet: the row is changed directly, and put back.
    const db = chat.ctx.chatDb.kysely;
    const group = await db.selectFrom('user_groups').select('id').where('name', '=', 'role:fullmembers').executeTakeFirstOrThrow();
    await db.updateTable('user_groups').set({ deactivated: 1 }).where('id', '=', group.id).execute();
    try {
      const withGroups = await register(alice, { fetch_event_types: ['user_groups'], client_capabilities: { notification_settings_null: false, include_deactivated_groups: true } });
      const withoutGroups = await register(alice, { fetch_event_types: ['user_groups'] });
      assert.equal(withGroups.realm_user_groups.find((g: Ev) => g.id === group.id)?.deactivated, true);
      assert.equal(
        withoutGroups.realm_user_groups.some((g: Ev) => g.id === group.id),
        false,
      );
    } finally {
      await db.updateTable('user_groups').set({ deactivated: 0 }).where('id', '=', group.id).execute();
    }

    // Every user is accessible to everyone in Keel (no can_access_all_users_group limit): the list is whole either way.
    const incomplete = await register(guest, {
      fetch_event_types: ['realm_user'],
      client_capabilities: { notification_settings_null: false, user_list_incomplete: true, bulk_message_deletion: true, user_settings_object: true },
    });
    const whole = await register(guest, { fetch_event_types: ['realm_user'] });
    assert.deepEqual(
      incomplete.realm_users.map((u: Ev) => u.user_id),
      whole.realm_users.map((u: Ev) => u.user_id),
    );
    const caps = chat.events.queueOf(incomplete.queue_id, guestId).options.capabilities;
    assert.deepEqual([caps.bulk_message_deletion, caps.user_settings_object, caps.user_list_incomplete], [true, true, true], 'stored on the queue for the producers that read them');
  });

  it('shows the empty topic as "" only to clients that declared empty_topic_name, in events and state', async () => {
    const id = await channel('topics', { principals: [ownerId, aliceId] });
    const aware = await register(alice, { event_types: ['message'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    const unaware = await register(alice, { event_types: ['message'] });
    await ok(owner, 'POST', '/messages', { type: 'stream', to: id, topic: '', content: 'no topic here' });
    const display = unaware.realm_empty_topic_display_name ?? (await register(alice, { fetch_event_types: ['realm'] })).realm_empty_topic_display_name;
    assert.equal((await drain(alice, aware))[0].message.subject, '');
    assert.equal((await drain(alice, unaware))[0].message.subject, display);
    const stateAware = await register(alice, { fetch_event_types: ['message'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    const stateUnaware = await register(alice, { fetch_event_types: ['message'] });
    const topicOf = (s: Ev) => s.unread_msgs.streams.find((x: Ev) => x.stream_id === id).topic;
    assert.equal(topicOf(stateAware), '');
    assert.equal(topicOf(stateUnaware), display);
  });

  it('filters message events by a narrow of channel id, is:mentioned, negation, and all_public_streams', async () => {
    const id = await channel('narrowed', { principals: [ownerId, aliceId] });
    const byId = await register(alice, { event_types: ['message'], narrow: [{ operator: 'channel', operand: id }] });
    const mentioned = await register(alice, { event_types: ['message'], narrow: [['is', 'mentioned']] });
    const notHere = await register(alice, { event_types: ['message'], narrow: [{ operator: 'channel', operand: 'narrowed', negated: true }] });
    const everyPublic = await register(bob, { event_types: ['message'], all_public_streams: true });
    const plain = await ok(owner, 'POST', '/messages', { type: 'stream', to: id, topic: 'a', content: 'hello' });
    const ping = await ok(owner, 'POST', '/messages', { type: 'direct', to: [aliceId], content: 'hey @**Alice**' });
    assert.deepEqual(
      (await drain(alice, byId)).map((e) => e.message.id),
      [plain.id],
    );
    assert.deepEqual(
      (await drain(alice, mentioned)).map((e) => e.message.id),
      [ping.id],
    );
    assert.deepEqual(
      (await drain(alice, notHere)).map((e) => e.message.id),
      [ping.id],
    );
    assert.deepEqual(
      (await drain(bob, everyPublic)).map((e) => [e.message.id, e.flags]),
      [[plain.id, []]],
      'the public channel message, not the direct one',
    );
    const refused = await guest.call('POST', '/register', { all_public_streams: true });
    assert.equal(refused.status, 400);
  });
});

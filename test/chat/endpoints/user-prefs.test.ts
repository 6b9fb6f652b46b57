// Per-user preferences in process, on both engines: PATCH /settings (every setting's checks, full
// name, password, time zone), the legacy and modern settings events by client capability, the realm's
// defaults for new users, drafts, muted users (messages read on mute and on arrival) and topic
// visibility policies with the is:muted / is:followed / in:home narrows. Every event is seen in a
// registered queue and every 2xx answer is checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { SETTINGS } from '../../../src/chat/domain/user-settings.js';
import { gravatarUrl } from '../../../src/chat/domain/users.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;
type Ev = Record<string, any>;

await forEachEngine('chat user preferences', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient, bobId: number;
  let streamId: number;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob'], channel: { name: 'design', by: 'alice', subscribers: ['alice', 'bob'] } });
    ({ storage, chat, channelId: streamId } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const fails = async (c: InProcessClient, method: string, path: string, params: Record<string, unknown>, msg: string | RegExp, code = 'BAD_REQUEST', status = 400) => {
    const r = await c.call(method, path, params);
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(r.body.code, code, JSON.stringify(r.body));
    if (typeof msg === 'string') assert.equal(r.body.msg, msg);
    else assert.match(r.body.msg, msg);
  };
  const register = (c: InProcessClient, params: Record<string, unknown> = {}) => ok(c, 'POST', '/register', params);
  /** The events since the last drain of the queue (each drain acknowledges what it saw). */
  const seen = new Map<string, number>();
  const drain = async (c: InProcessClient, q: string): Promise<Ev[]> => {
    const events: Ev[] = (await ok(c, 'GET', '/events', { queue_id: q, dont_block: true, last_event_id: seen.get(q) ?? -1 })).events;
    if (events.length) seen.set(q, events.at(-1)!.id);
    return events.map(({ id: _id, ...e }) => e);
  };
  const settings = async (c: InProcessClient) => (await register(c, { fetch_event_types: ['user_settings'], event_types: ['heartbeat'] })).user_settings;
  const send = async (c: InProcessClient, params: Record<string, unknown>) => (await ok(c, 'POST', '/messages', params)).id as number;
  const ids = async (c: InProcessClient, narrow: unknown[]) => (await ok(c, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow })).messages.map((m: Ev) => m.id as number);
  const flagsOf = async (c: InProcessClient, id: number) => (await ok(c, 'GET', `/messages/${id}`)).message.flags as string[];

  it('shows every setting with Zulip defaults in register, and the legacy fields only without user_settings_object', async () => {
    const s = await settings(bob);
    for (const [name, def] of Object.entries(SETTINGS)) assert.equal(s[name], name === 'timezone' ? '' : def.fallback, name);
    assert.ok(Array.isArray(s.available_notification_sounds) && Array.isArray(s.emojiset_choices));
    const legacy = await register(bob, { fetch_event_types: ['update_display_settings', 'update_global_notifications'] });
    assert.equal(legacy.emojiset, 'google');
    assert.equal(legacy.enable_sounds, true);
    assert.equal(legacy.user_settings, undefined);
    const modern = await register(bob, {
      fetch_event_types: ['update_display_settings', 'update_global_notifications', 'user_settings'],
      client_capabilities: { notification_settings_null: false, user_settings_object: true },
    });
    assert.equal(modern.emojiset, undefined);
    assert.equal(modern.user_settings.emojiset, 'google');
  });

  it('changes settings with user_settings events, and legacy ones only for queues without the capability', async () => {
    const modern = (await register(bob, { client_capabilities: { notification_settings_null: false, user_settings_object: true } })).queue_id;
    const legacy = (await register(bob)).queue_id;
    const other = (await register(alice, { client_capabilities: { notification_settings_null: false, user_settings_object: true } })).queue_id;
    await ok(bob, 'PATCH', '/settings', { emojiset: 'twitter', enable_sounds: false, web_font_size_px: 18, default_language: 'de', hide_ai_features: true });
    const s = await settings(bob);
    assert.deepEqual([s.emojiset, s.enable_sounds, s.web_font_size_px, s.default_language, s.hide_ai_features], ['twitter', false, 18, 'de', true]);
    const m = await drain(bob, modern);
    assert.deepEqual(
      m.filter((e) => e.type === 'user_settings'),
      [
        { type: 'user_settings', op: 'update', property: 'web_font_size_px', value: 18 },
        { type: 'user_settings', op: 'update', property: 'default_language', value: 'de', language_name: 'German' },
        { type: 'user_settings', op: 'update', property: 'emojiset', value: 'twitter' },
        { type: 'user_settings', op: 'update', property: 'hide_ai_features', value: true },
        { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
      ],
    );
    assert.ok(!m.some((e) => e.type.startsWith('update_')), 'no legacy events for a modern client');
    const l = await drain(bob, legacy);
    assert.deepEqual(
      l.filter((e) => e.type !== 'user_settings'),
      [
        { type: 'update_display_settings', user: 'bob@example.com', setting_name: 'default_language', setting: 'de', language_name: 'German' },
        { type: 'update_display_settings', user: 'bob@example.com', setting_name: 'emojiset', setting: 'twitter' },
        { type: 'update_global_notifications', user: 'bob@example.com', notification_name: 'enable_sounds', setting: false },
      ],
    );
    assert.equal(l.filter((e) => e.type === 'user_settings').length, 5, 'user_settings reaches every queue');
    assert.deepEqual(await drain(alice, other), [], 'nobody else hears of it');
    // The same values again change nothing and say nothing.
    await ok(bob, 'PATCH', '/settings', { emojiset: 'twitter', enable_sounds: false });
    assert.deepEqual(await drain(bob, modern), []);
  });

  it('refuses bad values with Zulip errors and changes nothing', async () => {
    const before = await settings(bob);
    const bad: [Record<string, unknown>, string][] = [
      [{ color_scheme: 4 }, 'Invalid color_scheme: Value error, Not in the list of possible values'],
      [{ emojiset: 'apple' }, 'Invalid emojiset: Value error, Not in the list of possible values'],
      [{ web_home_view: 'feed' }, 'Invalid web_home_view: Value error, Not in the list of possible values'],
      [{ default_language: 'xx' }, 'Invalid default_language'],
      [{ web_animate_image_previews: 'sometimes' }, 'Invalid web_animate_image_previews: Value error, Not in the list of possible values'],
      [{ timezone: 'Mars/Olympus' }, 'Invalid timezone: Value error, Not a recognized time zone'],
      [{ notification_sound: 'bang' }, "Invalid notification sound 'bang'"],
      [{ email_notifications_batching_period_seconds: 10 }, 'Invalid email batching period: 10 seconds'],
      [{ desktop_icon_count_display: 5 }, 'Invalid desktop_icon_count_display: Value error, Not in the list of possible values'],
      [{ enter_sends: 'maybe' }, 'enter_sends is not valid JSON'],
      [{ enter_sends: 2 }, 'enter_sends is not a boolean'],
      [{ web_font_size_px: 'big' }, 'web_font_size_px is not valid JSON'],
      [{ web_font_size_px: 12.5 }, 'web_font_size_px is not an integer'],
      // One bad value among good ones: none is applied.
      [{ twenty_four_hour_time: true, email_address_visibility: 9 }, 'Invalid email_address_visibility: Value error, Not in the list of possible values'],
      [{ full_name: '  ' }, 'Name too short!'],
      [{ new_password: 'another-pass-1', old_password: 'wrong' }, 'Wrong password!'],
      [{ new_password: 'another-pass-1' }, 'Wrong password!'],
      [{ new_password: 'aaaa', old_password: 'pass-word-1' }, 'New password is too weak!'],
      [{ email: 'not-an-address' }, 'Invalid address.'],
      [{ email: 'alice@example.com' }, 'Already has an account.'],
    ];
    for (const [params, msg] of bad) await fails(bob, 'PATCH', '/settings', params, msg);
    assert.deepEqual(await settings(bob), before);
  });

  it('changes full name, time zone and password, telling others through realm_user', async () => {
    const q = (await register(alice, { event_types: ['realm_user'] })).queue_id;
    await ok(bob, 'PATCH', '/settings', { full_name: 'Robert', timezone: 'Europe/Paris', old_password: 'pass-word-1', new_password: 'new-pass-word-2' });
    const me = await ok(bob, 'GET', `/users/${bobId}`);
    assert.equal(me.user.full_name, 'Robert');
    assert.equal(me.user.timezone, 'Europe/Paris');
    assert.equal((await settings(bob)).timezone, 'Europe/Paris');
    assert.deepEqual(await drain(alice, q), [
      { type: 'realm_user', op: 'update', person: { user_id: bobId, full_name: 'Robert' } },
      { type: 'realm_user', op: 'update', person: { user_id: bobId, timezone: 'Europe/Paris' } },
    ]);
    const login = await chat.app.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'username=bob%40example.com&password=new-pass-word-2',
    });
    assert.equal(login.statusCode, 200, login.body);
  });

  it('tells who gains or loses sight of the real address when email_address_visibility changes', async () => {
    const q = (await register(alice, { event_types: ['realm_user'] })).queue_id;
    const own = (await register(chat.owner, { event_types: ['realm_user'] })).queue_id;
    await ok(bob, 'PATCH', '/settings', { email_address_visibility: 3 });
    const placeholder = (await ok(alice, 'GET', `/users/${bobId}`)).user.email as string;
    assert.match(placeholder, new RegExp(`^user${bobId}@`));
    // Then the API email and the avatar, to everyone: the address is no longer public.
    const apiEmailChange = (avatarVersion: number, email: string) => [
      { type: 'realm_user', op: 'update', person: { user_id: bobId, new_email: email } },
      {
        type: 'realm_user',
        op: 'update',
        person: {
          user_id: bobId,
          avatar_source: 'G',
          avatar_url: gravatarUrl('bob@example.com', avatarVersion),
          avatar_url_medium: gravatarUrl('bob@example.com', avatarVersion, true),
          avatar_version: avatarVersion,
        },
      },
    ];
    assert.deepEqual(await drain(alice, q), [{ type: 'realm_user', op: 'update', person: { user_id: bobId, delivery_email: null } }, ...apiEmailChange(1, placeholder)]);
    assert.deepEqual(await drain(chat.owner, own), apiEmailChange(1, placeholder), 'an administrator still sees it');
    assert.equal((await ok(alice, 'GET', `/users/${bobId}`)).user.delivery_email, null);
    await ok(bob, 'PATCH', '/settings', { email_address_visibility: 1 });
    assert.deepEqual(await drain(alice, q), [{ type: 'realm_user', op: 'update', person: { user_id: bobId, delivery_email: 'bob@example.com' } }, ...apiEmailChange(1, 'bob@example.com')]);
    assert.deepEqual(await drain(chat.owner, own), apiEmailChange(1, 'bob@example.com'));
  });

  it('announces presence_enabled when the deprecated away of POST /users/me/status changes it', async () => {
    const q = (await register(alice, { event_types: ['user_settings', 'update_global_notifications'] })).queue_id;
    await ok(alice, 'POST', '/users/me/status', { away: true });
    assert.deepEqual(await drain(alice, q), [
      { type: 'user_settings', op: 'update', property: 'presence_enabled', value: false },
      { type: 'update_global_notifications', user: 'alice@example.com', notification_name: 'presence_enabled', setting: false },
    ]);
    assert.equal((await settings(alice)).presence_enabled, false);
    await ok(alice, 'PATCH', '/settings', { presence_enabled: true });
    assert.deepEqual(await drain(alice, q), [
      { type: 'user_settings', op: 'update', property: 'presence_enabled', value: true },
      { type: 'update_global_notifications', user: 'alice@example.com', notification_name: 'presence_enabled', setting: true },
    ]);
  });

  it('stops typing events to a user who turned receives_typing_notifications off', async () => {
    const q = (await register(bob, { event_types: ['typing'] })).queue_id;
    await ok(bob, 'PATCH', '/settings', { receives_typing_notifications: false });
    await ok(alice, 'POST', '/typing', { op: 'start', to: [bobId] });
    assert.deepEqual(await drain(bob, q), []);
    await ok(bob, 'PATCH', '/settings', { receives_typing_notifications: true });
    await ok(alice, 'POST', '/typing', { op: 'start', to: [bobId] });
    assert.equal((await drain(bob, q)).length, 1);
  });

  it('lets administrators set defaults for new users only, with an event to everyone', async () => {
    await fails(bob, 'PATCH', '/realm/user_settings_defaults', { emojiset: 'text' }, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
    await fails(chat.owner, 'PATCH', '/realm/user_settings_defaults', { color_scheme: 7 }, 'Invalid color_scheme: Value error, Not in the list of possible values');
    const unsupported = await chat.owner.call('PATCH', '/realm/user_settings_defaults', { timezone: 'Europe/Paris' });
    assert.deepEqual(unsupported.body.ignored_parameters_unsupported, ['timezone'], 'the time zone is personal');
    const q = (await register(bob, { event_types: ['realm_user_settings_defaults'] })).queue_id;
    const aliceBefore = await settings(alice);
    await ok(chat.owner, 'PATCH', '/realm/user_settings_defaults', { emojiset: 'text', enter_sends: true });
    assert.deepEqual(await drain(bob, q), [
      { type: 'realm_user_settings_defaults', op: 'update', property: 'emojiset', value: 'text' },
      { type: 'realm_user_settings_defaults', op: 'update', property: 'enter_sends', value: true },
    ]);
    const defaults = (await register(bob, { fetch_event_types: ['realm_user_settings_defaults'] })).realm_user_settings_defaults;
    assert.equal(defaults.emojiset, 'text');
    assert.equal(defaults.color_scheme, 1);
    assert.deepEqual(await settings(alice), aliceBefore, 'existing users keep their settings');
    const { client: dan } = await chat.member('dan@example.com', 'Dan');
    const s = await settings(dan);
    assert.equal(s.emojiset, 'text');
    assert.equal(s.enter_sends, true);
    // A default changed after Dan joined does not reach him either.
    await ok(chat.owner, 'PATCH', '/realm/user_settings_defaults', { emojiset: 'google' });
    assert.equal((await settings(dan)).emojiset, 'text');
  });

  it('keeps drafts with add, update and remove events, and refuses bad drafts', async () => {
    const q = (await register(alice, { event_types: ['drafts'] })).queue_id;
    const made = await ok(alice, 'POST', '/drafts', {
      drafts: [
        { type: 'stream', to: [streamId], topic: 'logo', content: 'a new logo?', timestamp: 1700000000 },
        { type: 'private', to: [bobId, aliceId], topic: '', content: 'hi bob' },
      ],
    });
    assert.equal(made.ids.length, 2);
    const [d1, d2] = made.ids;
    const now = Math.floor(chat.clock.now() / 1000);
    const added = await drain(alice, q);
    assert.deepEqual(added, [
      {
        type: 'drafts',
        op: 'add',
        drafts: [
          { id: d1, type: 'stream', to: [streamId], topic: 'logo', content: 'a new logo?', timestamp: 1700000000 },
          { id: d2, type: 'private', to: [bobId], topic: '', content: 'hi bob', timestamp: now },
        ],
      },
    ]);
    await ok(alice, 'PATCH', `/drafts/${d1}`, { draft: { type: 'stream', to: [streamId], topic: 'logo', content: 'a better logo?', timestamp: 1700000100 } });
    assert.deepEqual(await drain(alice, q), [{ type: 'drafts', op: 'update', draft: { id: d1, type: 'stream', to: [streamId], topic: 'logo', content: 'a better logo?', timestamp: 1700000100 } }]);
    const list = await ok(alice, 'GET', '/drafts');
    assert.equal(list.count, 2);
    assert.deepEqual(
      list.drafts.map((d: Ev) => d.id),
      [d2, d1],
      'most recently edited first',
    );
    assert.deepEqual(
      (await register(alice, { fetch_event_types: ['drafts'] })).drafts.map((d: Ev) => d.id),
      [d2, d1],
    );
    assert.equal((await ok(bob, 'GET', '/drafts')).count, 0, 'drafts are private');

    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'stream', to: [streamId, streamId + 1], topic: 't', content: 'x' }] }, 'Must specify exactly 1 channel ID for channel messages');
    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'stream', to: [999999], topic: 't', content: 'x' }] }, 'Invalid channel ID');
    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'private', to: [999999], topic: '', content: 'x' }] }, 'Invalid user ID 999999');
    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'private', to: [bobId], topic: '', content: '  ' }] }, 'Message must not be empty');
    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'private', to: [bobId], topic: '', content: 'x', timestamp: -5 }] }, 'Timestamp must not be negative.');
    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'letter', to: [], topic: '', content: 'x' }] }, /drafts/);
    await fails(alice, 'POST', '/drafts', { drafts: [{ type: 'private', to: [bobId], content: 'x' }] }, 'drafts[0]["topic"] field is missing');
    await fails(alice, 'PATCH', '/drafts/999999', { draft: { type: '', to: [], topic: '', content: 'x' } }, 'Draft does not exist', 'BAD_REQUEST', 404);
    await fails(bob, 'DELETE', `/drafts/${d1}`, {}, 'Draft does not exist', 'BAD_REQUEST', 404);
    assert.equal((await ok(alice, 'GET', '/drafts')).count, 2, 'nothing changed');
    assert.deepEqual(await drain(alice, q), []);

    await ok(alice, 'DELETE', `/drafts/${d1}`);
    assert.deepEqual(await drain(alice, q), [{ type: 'drafts', op: 'remove', draft_id: d1 }]);
    // Turning synchronisation off deletes the rest, and the draft endpoints refuse until it is back.
    await ok(alice, 'PATCH', '/settings', { enable_drafts_synchronization: false });
    await fails(alice, 'GET', '/drafts', {}, 'User has disabled synchronizing drafts.');
    await fails(alice, 'POST', '/drafts', { drafts: [] }, 'User has disabled synchronizing drafts.');
    await ok(alice, 'PATCH', '/settings', { enable_drafts_synchronization: true });
    assert.equal((await ok(alice, 'GET', '/drafts')).count, 0);
  });

  it('mutes users: their messages read now and on arrival, a muted_users event, and Zulip errors', async () => {
    const { client: carol, id: carolId } = await chat.member('carol@example.com', 'Carol');
    await ok(carol, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'design' }] });
    const dm = await send(carol, { type: 'direct', to: [aliceId], content: 'psst' });
    const inChannel = await send(carol, { type: 'stream', to: streamId, topic: 'noise', content: 'hello all' });
    assert.ok(!(await flagsOf(alice, dm)).includes('read'));
    const q = (await register(alice, { event_types: ['muted_users', 'update_message_flags', 'message'] })).queue_id;
    await ok(alice, 'POST', `/users/me/muted_users/${carolId}`);
    const now = Math.floor(chat.clock.now() / 1000);
    assert.deepEqual(await drain(alice, q), [
      { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [dm, inChannel], all: false },
      { type: 'muted_users', muted_users: [{ id: carolId, timestamp: now }] },
    ]);
    assert.ok((await flagsOf(alice, dm)).includes('read'));
    assert.ok((await flagsOf(alice, inChannel)).includes('read'));
    assert.deepEqual((await register(alice, { fetch_event_types: ['muted_users'] })).muted_users, [{ id: carolId, timestamp: now }]);

    // Later messages arrive read, for Alice only.
    const later = await send(carol, { type: 'stream', to: streamId, topic: 'noise', content: 'again' });
    const laterDm = await send(carol, { type: 'direct', to: [aliceId, bobId], content: 'group hi' });
    const evs = await drain(alice, q);
    assert.deepEqual(
      evs.map((e) => [e.message.id, e.flags.includes('read')]),
      [
        [later, true],
        [laterDm, true],
      ],
    );
    assert.ok(!(await flagsOf(bob, later)).includes('read'));
    const unread = (await register(alice, { fetch_event_types: ['message'] })).unread_msgs;
    assert.ok(!unread.streams.some((s: Ev) => s.unread_message_ids.includes(later)));

    await fails(alice, 'POST', `/users/me/muted_users/${carolId}`, {}, 'User already muted');
    await fails(alice, 'POST', `/users/me/muted_users/${aliceId}`, {}, 'Cannot mute self');
    await fails(alice, 'POST', '/users/me/muted_users/999999', {}, 'No such user');
    await fails(alice, 'DELETE', `/users/me/muted_users/${bobId}`, {}, 'User is not muted');
    await fails(alice, 'DELETE', '/users/me/muted_users/999999', {}, 'No such user');
    assert.deepEqual(await drain(alice, q), []);

    await ok(alice, 'DELETE', `/users/me/muted_users/${carolId}`);
    assert.deepEqual(await drain(alice, q), [{ type: 'muted_users', muted_users: [] }]);
    const after = await send(carol, { type: 'direct', to: [aliceId], content: 'back' });
    assert.ok(!(await flagsOf(alice, after)).includes('read'), 'unmuted: unread again');
  });

  it('sets topic visibility policies, with user_topic and muted_topics events and matching narrows', async () => {
    const logo = await send(alice, { type: 'stream', to: streamId, topic: 'Logo', content: 'one' });
    const colors = await send(alice, { type: 'stream', to: streamId, topic: 'colors', content: 'two' });
    const empty = await send(alice, { type: 'stream', to: streamId, topic: '', content: 'three' });
    const q = (await register(bob, { event_types: ['user_topic', 'muted_topics'] })).queue_id;
    const now = Math.floor(chat.clock.now() / 1000);

    await ok(bob, 'POST', '/user_topics', { stream_id: streamId, topic: 'logo', visibility_policy: 1 });
    assert.deepEqual(await drain(bob, q), [
      { type: 'muted_topics', muted_topics: [['design', 'logo', now]] },
      { type: 'user_topic', stream_id: streamId, topic_name: 'logo', last_updated: now, visibility_policy: 1 },
    ]);
    await ok(bob, 'POST', '/user_topics', { stream_id: streamId, topic: 'colors', visibility_policy: 3 });
    await ok(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { stream: 'design', topic: '(no topic)', op: 'add' });
    // Already muted is no error (since feature level 169).
    await ok(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { stream_id: streamId, topic: '(no topic)', op: 'add' });
    const state = await register(bob, { fetch_event_types: ['user_topic', 'muted_topics'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    assert.deepEqual(state.user_topics, [
      { stream_id: streamId, topic_name: '', last_updated: now, visibility_policy: 1 },
      { stream_id: streamId, topic_name: 'colors', last_updated: now, visibility_policy: 3 },
      { stream_id: streamId, topic_name: 'logo', last_updated: now, visibility_policy: 1 },
    ]);
    assert.deepEqual(state.muted_topics, [
      ['design', '', now],
      ['design', 'logo', now],
    ]);

    const channel = { operator: 'channel', operand: streamId };
    assert.deepEqual(await ids(bob, [channel, { operator: 'is', operand: 'muted' }]), [logo, empty]);
    assert.deepEqual(await ids(bob, [{ operator: 'is', operand: 'followed' }]), [colors]);
    assert.ok(!(await ids(bob, [{ operator: 'in', operand: 'home' }])).includes(logo));
    assert.ok((await ids(bob, [{ operator: 'in', operand: 'home' }])).includes(colors));
    assert.deepEqual(await ids(alice, [{ operator: 'is', operand: 'muted' }]), [], "alice's view is her own");

    // A muted channel: its topics are muted unless unmuted or followed.
    await ok(bob, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: streamId, property: 'is_muted', value: true }] });
    await ok(bob, 'POST', '/user_topics', { stream_id: streamId, topic: '', visibility_policy: 2 });
    const inMuted = await ids(bob, [channel, { operator: 'is', operand: 'muted' }]);
    assert.ok(inMuted.includes(logo) && !inMuted.includes(empty) && !inMuted.includes(colors), 'unmuted and followed topics stay out');
    assert.ok(inMuted.length > 1, "the channel's other topics are muted with it");
    assert.ok(!(await ids(bob, [{ operator: 'in', operand: 'home' }])).includes(logo));
    await ok(bob, 'POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: streamId, property: 'is_muted', value: false }] });

    await ok(bob, 'POST', '/user_topics', { stream_id: streamId, topic: 'logo', visibility_policy: 0 });
    await ok(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { stream_id: streamId, topic: 'never-muted', op: 'remove' });
    assert.deepEqual(
      (await register(bob, { fetch_event_types: ['user_topic'], client_capabilities: { notification_settings_null: false, empty_topic_name: true } })).user_topics.map((t: Ev) => [
        t.topic_name,
        t.visibility_policy,
      ]),
      [
        ['', 2],
        ['colors', 3],
      ],
    );
    assert.deepEqual(await ids(bob, [channel, { operator: 'is', operand: 'muted' }]), []);

    await fails(bob, 'POST', '/user_topics', { stream_id: streamId, topic: 'x', visibility_policy: 4 }, 'Invalid visibility_policy: Value error, Not in the list of possible values');
    await fails(bob, 'POST', '/user_topics', { stream_id: 999999, topic: 'x', visibility_policy: 1 }, 'Invalid channel ID');
    await fails(bob, 'POST', '/user_topics', { stream_id: streamId, visibility_policy: 1 }, "Missing 'topic' argument", 'REQUEST_VARIABLE_MISSING');
    await fails(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { stream: 'design', stream_id: streamId, topic: 'x', op: 'add' }, "Please choose one: 'stream' or 'stream_id'.");
    await fails(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { topic: 'x', op: 'add' }, "Please supply 'stream'.");
    await fails(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { stream: 'nowhere', topic: 'x', op: 'add' }, "Invalid channel name 'nowhere'");
    await fails(bob, 'PATCH', '/users/me/subscriptions/muted_topics', { stream_id: streamId, topic: 'x', op: 'toggle' }, 'Invalid op');
  });
});

// Black-box: spectator (logged-out) access to web-public channels against a real `keel serve` —
// the realm's enable_spectator_access (administrators, realm update event), who may make channels
// web-public, POST /register and GET /messages without credentials (only with spectator access on
// and a web-public channel; only web-public channels and their messages, all read), and
// server_settings' realm_web_public_access_enabled.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

const NOT_LOGGED_IN = 'Not logged in: API authentication or user session required';

await forEachEngine('chat spectators', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let admin: ChatClient;
  let mod: ChatClient;
  let ann: ChatClient, annId: number;
  let gus: ChatClient;
  let groups: Map<string, number>;
  let lobbyId: number;
  let lobbyMessage: number;

  async function user(email: string, role: string): Promise<[ChatClient, number]> {
    const r = await runKeel(['admin', 'create-user', '--email', email, '--full-name', email.split('@')[0], '--role', role, '--json', ...storageArgs(storage)]);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    return [new ChatClient(server.chatUrl, made.email, made.apiKey), made.userId];
  }
  /** A request with no credentials at all. */
  const anonymous = (method: string, path: string, params: Record<string, unknown> = {}) => owner.call(method, path, params, null);
  const webPublic = { operator: 'channels', operand: 'web-public' };
  const fetchAnonymously = (narrow: unknown[], extra: Record<string, unknown> = {}) => anonymous('GET', '/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow, ...extra });
  const send = async (c: ChatClient, to: string, content: string) => {
    const r = await c.post('/messages', { type: 'stream', to, topic: 'hello', content });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id as number;
  };
  const notLoggedIn = (r: { status: number; body: Ev; headers: Headers }) => {
    assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.deepEqual([r.body.result, r.body.code, r.body.msg], ['error', 'UNAUTHORIZED', NOT_LOGGED_IN]);
    assert.equal(r.headers.get('www-authenticate'), 'Basic realm="zulip"');
  };
  const webPublicAccessEnabled = async () => (await anonymous('GET', '/server_settings')).body.realm_web_public_access_enabled;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    [admin] = await user('adam@example.com', 'admin');
    [mod] = await user('mona@example.com', 'moderator');
    [ann, annId] = await user('ann@example.com', 'member');
    [gus] = await user('gus@example.com', 'guest');
    for (const [name, invite_only] of [
      ['general', false],
      ['secret', true],
    ] as const) {
      assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [annId], invite_only })).status, 200);
    }
    const state = await register(ann, { fetch_event_types: ['realm_user_groups'] });
    groups = new Map(state.realm_user_groups.map((g: Ev) => [g.name, g.id]));
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('is off for a new realm: no register, no messages, no web-public channels without credentials', async () => {
    const state = await register(owner, { fetch_event_types: ['realm'] });
    assert.equal(state.realm_enable_spectator_access, false);
    assert.equal(state.server_web_public_streams_enabled, true);
    assert.equal(state.realm_can_create_web_public_channel_group, groups.get('role:owners'));
    assert.equal(await webPublicAccessEnabled(), false);
    // What each may do, in register's realm_user state: nobody makes web-public channels yet (members may invite).
    const mayDo = async (c: ChatClient) => {
      const u = await register(c, { fetch_event_types: ['realm_user'] });
      return [u.can_create_streams, u.can_create_public_streams, u.can_create_private_streams, u.can_create_web_public_streams, u.can_subscribe_other_users, u.can_invite_others_to_realm];
    };
    assert.deepEqual(await mayDo(owner), [true, true, true, false, true, true]);
    assert.deepEqual(await mayDo(ann), [true, true, true, false, true, true]);
    assert.deepEqual(await mayDo(gus), [false, false, false, false, false, false]);
    notLoggedIn(await anonymous('POST', '/register'));
    notLoggedIn(await fetchAnonymously([webPublic]));
    refused(await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], is_web_public: true }), 'BAD_REQUEST', 'Web-public channels are not enabled.');
    const general = (await owner.get('/get_stream_id', { stream: 'general' })).body.stream_id;
    refused(await owner.call('PATCH', `/streams/${general}`, { is_web_public: true }), 'BAD_REQUEST', 'Web-public channels are not enabled.');
  });

  it('is turned on by administrators only, with a realm update event to every user', async () => {
    for (const c of [ann, mod]) refused(await c.call('PATCH', '/realm', { enable_spectator_access: true }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    assert.equal((await register(owner, { fetch_event_types: ['realm'] })).realm_enable_spectator_access, false, 'a refused change changes nothing');
    const annQueue = (await register(ann, { event_types: ['realm'] })).queue_id;
    const ownerQueue = (await register(owner, { event_types: ['realm'] })).queue_id;
    const r = await admin.call('PATCH', '/realm', { enable_spectator_access: true });
    assert.deepEqual(r.body, { result: 'success', msg: '', enable_spectator_access: true });
    const expected = [{ type: 'realm', op: 'update', property: 'enable_spectator_access', value: true }];
    assert.deepEqual(
      (await drain(ann, annQueue)).map(({ id: _id, ...e }) => e),
      expected,
    );
    assert.deepEqual(
      (await drain(owner, ownerQueue)).map(({ id: _id, ...e }) => e),
      expected,
    );
    assert.equal((await register(ann, { fetch_event_types: ['realm'] })).realm_enable_spectator_access, true);
    // Owners (can_create_web_public_channel_group's default) now may make channels web-public.
    assert.equal((await register(owner, { fetch_event_types: ['realm_user'] })).can_create_web_public_streams, true);
    assert.equal((await register(admin, { fetch_event_types: ['realm_user'] })).can_create_web_public_streams, false);
    // Still nothing to show: Zulip also needs a web-public channel.
    assert.equal(await webPublicAccessEnabled(), false);
    notLoggedIn(await anonymous('POST', '/register'));
  });

  it('lets only can_create_web_public_channel_group (owners by default, system groups only) make channels web-public', async () => {
    refused(await admin.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], is_web_public: true }), 'BAD_REQUEST', 'Insufficient permission');
    refused(await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], is_web_public: true, invite_only: true }), 'BAD_REQUEST', 'Invalid parameters');
    const made = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], is_web_public: true });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    lobbyId = (await owner.get('/get_stream_id', { stream: 'lobby' })).body.stream_id;
    const lobby = (await owner.get(`/streams/${lobbyId}`)).body.stream;
    assert.deepEqual([lobby.is_web_public, lobby.invite_only, lobby.history_public_to_subscribers], [true, false, true]);

    const setting = (value: unknown) => owner.call('PATCH', '/realm', { can_create_web_public_channel_group: { new: value } });
    refused(await setting(groups.get('role:members')), 'BAD_REQUEST', "'can_create_web_public_channel_group' setting cannot be set to 'role:members' group.");
    refused(await setting({ direct_members: [annId], direct_subgroups: [] }), 'BAD_REQUEST', "'can_create_web_public_channel_group' must be a system user group.");
    const r = await admin.call('PATCH', '/realm', { can_create_web_public_channel_group: { new: groups.get('role:administrators') } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const general = (await owner.get('/get_stream_id', { stream: 'general' })).body.stream_id;
    refused(await mod.call('PATCH', `/streams/${general}`, { is_web_public: true }), 'BAD_REQUEST', 'You do not have permission to administer this channel.');
    // An administrator now may; then general goes back to plain public.
    assert.equal((await admin.call('PATCH', `/streams/${general}`, { is_web_public: true })).status, 200);
    assert.equal((await owner.get(`/streams/${general}`)).body.stream.is_web_public, true);
    assert.equal((await admin.call('PATCH', `/streams/${general}`, { is_web_public: false })).status, 200);
    assert.equal((await owner.get(`/streams/${general}`)).body.stream.is_web_public, false);
  });

  it('registers a spectator: no queue, only the web-public channels, nothing of anyone own', async () => {
    lobbyMessage = await send(owner, 'lobby', 'welcome, world');
    await send(ann, 'general', 'members only');
    assert.equal(await webPublicAccessEnabled(), true);
    const r = await anonymous('POST', '/register');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const s = r.body;
    assert.deepEqual([s.queue_id, s.last_event_id], [null, -1]);
    assert.deepEqual(
      s.streams.map((c: Ev) => c.name),
      ['lobby'],
    );
    assert.deepEqual(
      s.subscriptions.map((c: Ev) => [c.name, c.is_web_public, c.is_muted]),
      [['lobby', true, false]],
    );
    assert.deepEqual([s.unsubscribed, s.never_subscribed], [[], []]);
    assert.deepEqual([s.user_id, s.full_name, s.is_guest, s.is_admin], [0, 'Anonymous User', true, false]);
    assert.equal(s.realm_enable_spectator_access, true);
    assert.deepEqual([s.presences, s.user_status, s.realm_bots, s.drafts, s.starred_messages, s.realm_default_streams], [{}, {}, [], [], [], []]);
    assert.deepEqual([s.max_message_id, s.unread_msgs.count], [-1, 0]);
    assert.equal(s.user_settings === undefined ? s.web_home_view : s.user_settings.web_home_view, 'recent_topics');
    assert.equal(
      s.realm_users.some((u: Ev) => u.user_id === annId),
      true,
      'people are shown, as Zulip shows them',
    );
    // Nothing was made to poll.
    const none = await owner.get('/events', { queue_id: 'null', last_event_id: -1, dont_block: true });
    assert.equal(none.body.code, 'BAD_EVENT_QUEUE_ID');

    refused(await anonymous('POST', '/register', { client_gravatar: true }), 'BAD_REQUEST', "Invalid 'client_gravatar' parameter for anonymous request");
    refused(await anonymous('POST', '/register', { include_subscribers: true }), 'BAD_REQUEST', "Invalid 'include_subscribers' parameter for anonymous request");
    assert.equal((await anonymous('POST', '/register', { client_gravatar: false, include_subscribers: false })).status, 200);
    // Credentials sent are checked as ever: a bad key is no spectator.
    const bad = await owner.call('POST', '/register', {}, [owner.email, 'A'.repeat(32)]);
    assert.deepEqual([bad.status, bad.body.code], [401, 'INVALID_API_KEY']);
  });

  it('lets a spectator read web-public channels only, every message read', async () => {
    const all = await fetchAnonymously([webPublic]);
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(
      all.body.messages.map((m: Ev) => [m.id, m.display_recipient, m.flags]),
      [[lobbyMessage, 'lobby', ['read']]],
    );
    assert.equal(all.body.found_newest, true);
    const one = await fetchAnonymously([webPublic, { operator: 'channel', operand: lobbyId }, { operator: 'topic', operand: 'hello' }]);
    assert.deepEqual(
      one.body.messages.map((m: Ev) => m.id),
      [lobbyMessage],
    );
    // first_unread: nothing is unread for a spectator, so the newest.
    const unread = await fetchAnonymously([webPublic], { anchor: 'first_unread' });
    assert.deepEqual(
      unread.body.messages.map((m: Ev) => m.id),
      [lobbyMessage],
    );
    const search = await fetchAnonymously([webPublic, { operator: 'search', operand: 'world' }]);
    assert.deepEqual(
      search.body.messages.map((m: Ev) => [m.id, m.flags]),
      [[lobbyMessage, ['read']]],
    );

    for (const name of ['general', 'secret']) {
      refused(await fetchAnonymously([webPublic, { operator: 'channel', operand: name }]), 'BAD_NARROW', `Invalid narrow operator: unknown web-public channel ${name}`);
    }
    // Not a web-public query, or an operator about one's own messages: the authentication error.
    notLoggedIn(await fetchAnonymously([{ operator: 'channel', operand: 'lobby' }]));
    notLoggedIn(await fetchAnonymously([]));
    notLoggedIn(await fetchAnonymously([{ ...webPublic, negated: true }]));
    notLoggedIn(await fetchAnonymously([webPublic, { operator: 'is', operand: 'starred' }]));
    notLoggedIn(await fetchAnonymously([webPublic, { operator: 'dm', operand: annId }]));
  });

  it('lets users read web-public history too, guests included', async () => {
    const member = await ann.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [webPublic] });
    assert.deepEqual(
      member.body.messages.map((m: Ev) => [m.id, m.flags]),
      [[lobbyMessage, ['read', 'historical']]],
    );
    const guest = await gus.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: 'lobby' }] });
    assert.deepEqual(
      guest.body.messages.map((m: Ev) => m.id),
      [lobbyMessage],
      'a guest reads a web-public channel it is not subscribed to',
    );
  });

  it('ends with the realm setting turned off again', async () => {
    assert.equal((await owner.call('PATCH', '/realm', { enable_spectator_access: false })).status, 200);
    assert.equal(await webPublicAccessEnabled(), false);
    notLoggedIn(await anonymous('POST', '/register'));
    notLoggedIn(await fetchAnonymously([webPublic]));
  });
});

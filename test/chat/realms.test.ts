// Black-box: several realms on one server. `keel admin create-realm` makes a second realm, addressed
// by its subdomain of the chat root domain in the Host header; the first realm answers on the root,
// an IP address or any other host. Nothing of one realm shows through the other: its user ids,
// emails, channel and message ids answer exactly as ids that do not exist, its API keys are refused,
// and its events never reach the other realm's queues.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../helpers/server.js';
import { ChatClient, type ChatReply } from '../helpers/chat-client.js';

const ROOT = 'keel.test';
/** Far above any id these tests make. */
const MISSING = 987654;

await forEachEngine('chat realms', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let port: number;
  let betaHost: string;
  /** The first realm's owner (addressed by IP, as every other test does) and a member. */
  let alpha: ChatClient;
  let alphaId: number;
  let alphaChannelId: number;
  /** The second realm's owner, member, channel, messages and a system group. */
  let beta: ChatClient;
  let betaOwnerId: number;
  let bea: ChatClient;
  let beaId: number;
  let betaChannelId: number;
  let betaMessageId: number;
  let betaDirectId: number;
  let betaGroupId: number;

  const admin = (args: string[]) => runKeel(['admin', ...args, '--chat-root-domain', ROOT, '--chat-listen', `127.0.0.1:${port}`, ...storageArgs(storage)]);
  const on = (host: string, email = '', key = '') => new ChatClient(server.chatUrl, email, key, host);

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage, ['--chat-root-domain', ROOT]);
    port = Number(new URL(server.chatUrl).port);
    betaHost = `beta.${ROOT}:${port}`;
    alpha = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    alphaId = (await alpha.get('/users/me')).body.user_id;
    const sub = await alpha.post('/users/me/subscriptions', { subscriptions: [{ name: 'alpha-chan' }] });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    alphaChannelId = (await alpha.get('/get_stream_id', { stream: 'alpha-chan' })).body.stream_id;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('creates a realm with its owner from the command line, once, with clear errors', async () => {
    const r = await admin(['create-realm', '--name', 'Beta', '--subdomain', 'beta', '--owner-email', 'boss@beta.example', '--owner-password', 'beta-pass-1', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(made).sort(), ['apiKey', 'email', 'realmId', 'realmUrl', 'subdomain', 'userId']);
    assert.deepEqual([made.subdomain, made.realmUrl, made.email], ['beta', `http://beta.${ROOT}:${port}`, 'boss@beta.example']);
    beta = on(betaHost, made.email, made.apiKey);
    betaOwnerId = made.userId;
    const me = await beta.get('/users/me');
    assert.deepEqual([me.status, me.body.user_id, me.body.role], [200, made.userId, 100]);

    // All at once, beside the running server: writers on one SQLite file wait for each other's
    // transactions (BEGIN IMMEDIATE, busy timeout) rather than being refused.
    const [taken, badEmail, text, u, nowhere] = await Promise.all([
      admin(['create-realm', '--name', 'Gamma', '--subdomain', 'beta', '--owner-email', 'g@gamma.example']),
      admin(['create-realm', '--name', 'Gamma', '--subdomain', 'gamma', '--owner-email', 'not-an-email']),
      admin(['create-realm', '--name', 'Delta', '--subdomain', 'delta', '--owner-email', 'd@delta.example']),
      admin(['create-user', '--realm', 'beta', '--email', 'bea@beta.example', '--full-name', 'Bea', '--json']),
      admin(['create-user', '--realm', 'nowhere', '--email', 'x@example.com', '--full-name', 'X']),
    ]);
    // Refused input: one line, exit 2, nothing made (test/chat/domain/subdomains.test.ts pins the subdomain rules).
    assert.deepEqual([taken.code, taken.stderr], [2, 'keel: Subdomain already in use. Please choose a different one.\n']);
    assert.deepEqual([badEmail.code, badEmail.stderr], [2, "keel: Invalid email 'not-an-email'\n"]);
    const gamma = await on(`gamma.${ROOT}:${port}`).call('GET', '/server_settings', {}, null);
    assert.deepEqual([gamma.status, gamma.body.code], [404, 'NONEXISTENT_SUBDOMAIN'], 'a refused realm leaves nothing behind');
    assert.deepEqual([nowhere.code, nowhere.stderr], [2, 'keel: no realm has the subdomain "nowhere"\n']);

    // The text form prints the owner's generated password once.
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^realm delta \\(http://delta\\.keel\\.test:${port}\\) created\\.$`, 'm'));
    assert.match(text.stdout, /^ {2}password: \S+$/m);

    // Users and bots go into the realm --realm names.
    assert.equal(u.code, 0, u.stderr);
    const bMade = JSON.parse(u.stdout);
    bea = on(betaHost, bMade.email, bMade.apiKey);
    beaId = bMade.userId;
    assert.equal((await bea.get('/users/me')).body.user_id, beaId);
    const bot = await admin(['create-bot', '--realm', 'beta', '--owner-email', 'bea@beta.example', '--full-name', 'Beta Bot', '--short-name', 'helper', '--json']);
    const stray = await admin(['create-bot', '--realm', 'beta', '--owner-email', server.chatSecrets!.email, '--full-name', 'Stray', '--short-name', 'stray']);
    assert.equal(bot.code, 0, bot.stderr);
    assert.equal(JSON.parse(bot.stdout).email, `helper-bot@beta.${ROOT}`, "a bot's address is under its realm's host");
    assert.deepEqual([stray.code, stray.stderr], [2, `keel: no active user has the email ${server.chatSecrets!.email}\n`], "the first realm's owner is nobody in beta");
  });

  it('picks the realm by Host header: server_settings, register and login vary by host', async () => {
    const settings = async (host: string) => (await on(host).call('GET', '/server_settings', {}, null)).body;
    const root = `http://${ROOT}:${port}`;
    for (const host of [`127.0.0.1:${port}`, `${ROOT}:${port}`, `www.${ROOT}:${port}`, `other.example:${port}`, 'localhost']) {
      const s = await settings(host);
      assert.deepEqual([s.realm_name, s.realm_url, s.realm_uri], ['Keel', root, root], host);
    }
    const b = await settings(betaHost);
    assert.deepEqual([b.realm_name, b.realm_url, b.realm_uri], ['Beta', `http://beta.${ROOT}:${port}`, `http://beta.${ROOT}:${port}`]);
    assert.equal((await settings(`BETA.${ROOT.toUpperCase()}.:${port}`)).realm_name, 'Beta', 'host names ignore case and a trailing dot');

    const reg = await beta.post('/register', { fetch_event_types: ['realm'] });
    assert.deepEqual([reg.status, reg.body.realm_name, reg.body.realm_url], [200, 'Beta', `http://beta.${ROOT}:${port}`]);
    await beta.call('DELETE', '/events', { queue_id: reg.body.queue_id });

    // Unknown subdomains are Zulip's 404 for every API path, with or without credentials.
    for (const [method, path, auth] of [
      ['GET', '/server_settings', null],
      ['GET', '/users/me', [beta.email, beta.apiKey]],
      ['POST', '/fetch_api_key', null],
    ] as const) {
      const r = await on(`nosuch.${ROOT}:${port}`).call(method, path, { username: 'boss@beta.example', password: 'beta-pass-1' }, auth as [string, string] | null);
      assert.deepEqual([r.status, r.body.result, r.body.code, r.body.msg], [404, 'error', 'NONEXISTENT_SUBDOMAIN', 'Invalid subdomain'], path);
    }
    const deeper = await on(`a.beta.${ROOT}:${port}`).call('GET', '/server_settings', {}, null);
    assert.equal(deeper.status, 404);

    // Passwords log in only on their own realm's host.
    const login = await on(betaHost).call('POST', '/fetch_api_key', { username: 'boss@beta.example', password: 'beta-pass-1' }, null);
    assert.deepEqual([login.status, login.body.api_key, login.body.user_id], [200, beta.apiKey, betaOwnerId]);
    const elsewhere = await alpha.call('POST', '/fetch_api_key', { username: 'boss@beta.example', password: 'beta-pass-1' }, null);
    assert.deepEqual([elsewhere.status, elsewhere.body.code], [401, 'AUTHENTICATION_FAILED']);
  });

  it("refuses a realm's API key on another realm's host and accepts it on its own", async () => {
    // Zulip's answer for a good key at the wrong address: 400, not the 401 of a bad key.
    const wrongRealm = [400, 'BAD_REQUEST', 'Account is not associated with this subdomain'];
    const onRoot = await alpha.call('GET', '/users/me', {}, [beta.email, beta.apiKey]);
    assert.deepEqual([onRoot.status, onRoot.body.code, onRoot.body.msg], wrongRealm);
    const alphaOnBeta = await on(betaHost).call('GET', '/users/me', {}, [alpha.email, alpha.apiKey]);
    assert.deepEqual([alphaOnBeta.status, alphaOnBeta.body.code, alphaOnBeta.body.msg], wrongRealm);
    // Another user's email with that key is a bad key, wherever it is sent.
    const mixed = await on(betaHost).call('GET', '/users/me', {}, [beta.email, alpha.apiKey]);
    assert.deepEqual([mixed.status, mixed.body.code], [401, 'INVALID_API_KEY']);
    assert.equal((await beta.get('/users/me')).status, 200);
    assert.equal((await alpha.get('/users/me')).status, 200);
  });

  it("makes a second realm's content, then every id and email of it looks nonexistent from the first", async () => {
    const sub = await beta.post('/users/me/subscriptions', { subscriptions: [{ name: 'beta-chan' }], principals: [betaOwnerId, beaId] });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    betaChannelId = (await beta.get('/get_stream_id', { stream: 'beta-chan' })).body.stream_id;
    const sent = await beta.post('/messages', { type: 'stream', to: betaChannelId, topic: 'plans', content: 'beta only' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    betaMessageId = sent.body.id;
    const dm = await beta.post('/messages', { type: 'direct', to: [beaId], content: 'psst' });
    assert.equal(dm.status, 200, JSON.stringify(dm.body));
    betaDirectId = dm.body.id;
    const groups = await beta.post('/register', { fetch_event_types: ['user_groups'] });
    betaGroupId = groups.body.realm_user_groups.find((g: { name: string }) => g.name === 'role:everyone').id;
    await beta.call('DELETE', '/events', { queue_id: groups.body.queue_id });

    /** The answer for the other realm's id is the answer for a missing id (the id itself aside). */
    async function looksMissing(what: string, ask: (id: number | string) => Promise<ChatReply>, real: number | string, missing: number | string = MISSING) {
      const [a, b] = [await ask(real), await ask(missing)];
      const strip = (r: ChatReply, id: number | string) => JSON.stringify(r.body).replace(new RegExp(`(?<![\\w.@-])${String(id).replace(/[.]/g, '\\.')}(?![\\w.@-])`, 'g'), '<id>');
      assert.equal(a.status, b.status, what);
      assert.equal(strip(a, real), strip(b, missing), what);
      assert.notEqual(a.body.result, 'success', `${what}: ${JSON.stringify(a.body)}`);
    }
    const betaEmail = 'bea@beta.example';
    const missingEmail = 'nobody@beta.example';
    const get = (path: string, params?: Record<string, unknown>) => alpha.get(path, params);
    const post = (path: string, params?: Record<string, unknown>) => alpha.post(path, params);

    await looksMissing('GET /users/{id}', (id) => get(`/users/${id}`), beaId);
    await looksMissing('GET /users/{email}', (e) => get(`/users/${e}`), betaEmail, missingEmail);
    await looksMissing('PATCH /users/{id}', (id) => alpha.call('PATCH', `/users/${id}`, { full_name: 'X' }), beaId);
    await looksMissing('DELETE /users/{id}', (id) => alpha.call('DELETE', `/users/${id}`), beaId);
    await looksMissing('reactivate', (id) => post(`/users/${id}/reactivate`), beaId);
    await looksMissing('presence by id', (id) => get(`/users/${id}/presence`), beaId);
    await looksMissing('presence by email', (e) => get(`/users/${e}/presence`), betaEmail, missingEmail);
    await looksMissing('status', (id) => get(`/users/${id}/status`), beaId);
    await looksMissing('subscription status (user)', (id) => get(`/users/${id}/subscriptions/${alphaChannelId}`), beaId);
    await looksMissing('subscription status (channel)', (id) => get(`/users/${alphaId}/subscriptions/${id}`), betaChannelId);
    await looksMissing('principals by id', (id) => post('/users/me/subscriptions', { subscriptions: [{ name: 'alpha-chan' }], principals: [id] }), beaId);
    await looksMissing('principals by email', (e) => post('/users/me/subscriptions', { subscriptions: [{ name: 'alpha-chan' }], principals: [e] }), betaEmail, missingEmail);
    await looksMissing('unsubscribe principals', (id) => alpha.call('DELETE', '/users/me/subscriptions', { subscriptions: ['alpha-chan'], principals: [id] }), beaId);
    await looksMissing(
      'group setting member',
      (id) => post('/users/me/subscriptions', { subscriptions: [{ name: 'new-one' }], can_send_message_group: { direct_members: [id], direct_subgroups: [] } }),
      beaId,
    );
    await looksMissing('group setting group', (id) => post('/users/me/subscriptions', { subscriptions: [{ name: 'new-one' }], can_send_message_group: id }), betaGroupId);
    await looksMissing('DM to a user id', (id) => post('/messages', { type: 'direct', to: [id], content: 'hi' }), beaId);
    await looksMissing('DM to an email', (e) => post('/messages', { type: 'direct', to: [e], content: 'hi' }), betaEmail, missingEmail);
    await looksMissing('send to a channel id', (id) => post('/messages', { type: 'stream', to: id, topic: 't', content: 'hi' }), betaChannelId);
    await looksMissing('send to a channel name', (n) => post('/messages', { type: 'stream', to: n, topic: 't', content: 'hi' }), 'beta-chan', 'no-such-chan');
    await looksMissing('typing to a user', (id) => post('/typing', { op: 'start', to: [id] }), beaId);
    await looksMissing('typing in a channel', (id) => post('/typing', { op: 'start', type: 'stream', stream_id: id, topic: 't' }), betaChannelId);
    await looksMissing('GET /streams/{id}', (id) => get(`/streams/${id}`), betaChannelId);
    await looksMissing('PATCH /streams/{id}', (id) => alpha.call('PATCH', `/streams/${id}`, { description: 'x' }), betaChannelId);
    await looksMissing('DELETE /streams/{id}', (id) => alpha.call('DELETE', `/streams/${id}`), betaChannelId);
    await looksMissing('members', (id) => get(`/streams/${id}/members`), betaChannelId);
    await looksMissing('topics', (id) => get(`/users/me/${id}/topics`), betaChannelId);
    await looksMissing('get_stream_id', (n) => get('/get_stream_id', { stream: n }), 'beta-chan', 'no-such-chan');
    await looksMissing('subscription properties', (id) => post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: id, property: 'pin_to_top', value: true }] }), betaChannelId);
    await looksMissing('default stream add', (id) => post('/default_streams', { stream_id: id }), betaChannelId);
    await looksMissing('default stream remove', (id) => alpha.call('DELETE', '/default_streams', { stream_id: id }), betaChannelId);
    await looksMissing('mark_stream_as_read', (id) => post('/mark_stream_as_read', { stream_id: id }), betaChannelId);
    await looksMissing('mark_topic_as_read', (id) => post('/mark_topic_as_read', { stream_id: id, topic_name: 'plans' }), betaChannelId);
    await looksMissing('GET /messages/{id}', (id) => get(`/messages/${id}`), betaMessageId);
    await looksMissing('GET /messages/{id} (direct)', (id) => get(`/messages/${id}`), betaDirectId);
    await looksMissing('flags by id', (id) => post('/messages/flags', { messages: [id], op: 'add', flag: 'starred' }), betaMessageId);
    await looksMissing('flags by id (direct)', (id) => post('/messages/flags', { messages: [id], op: 'add', flag: 'read' }), betaDirectId);
    await looksMissing('edit typing', (id) => post(`/messages/${id}/typing`, { op: 'start' }), betaMessageId);
    await looksMissing('narrow channel', (id) => get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: id }] }), betaChannelId);
    await looksMissing('narrow dm', (id) => get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'dm', operand: [id] }] }), beaId);
    await looksMissing('narrow sender', (e) => get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'sender', operand: e }] }), betaEmail, missingEmail);
    await looksMissing('narrow with', (id) => get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'with', operand: id }] }), betaMessageId);

    // Lists and id lookups that succeed simply leave the other realm out.
    const byIds = await get('/messages', { message_ids: [betaMessageId, betaDirectId] });
    assert.deepEqual([byIds.status, byIds.body.messages], [200, []]);
    const idNarrow = await get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'id', operand: betaMessageId }] });
    assert.deepEqual(idNarrow.body.messages, []);
    const everything = await get('/messages', { anchor: 'oldest', num_before: 0, num_after: 1000, narrow: [{ operator: 'channels', operand: 'public' }] });
    assert.ok(!everything.body.messages.some((m: { id: number }) => m.id === betaMessageId));
    const matches = await get('/messages/matches_narrow', { msg_ids: [betaMessageId, betaDirectId], narrow: [] });
    assert.deepEqual(matches.body.messages, {});
    const users = (await get('/users')).body.members.map((u: { user_id: number }) => u.user_id);
    assert.ok(!users.includes(beaId) && !users.includes(betaOwnerId), 'the directory holds only its own realm');
    const streams = (await get('/streams', { include_all: true })).body.streams.map((s: { stream_id: number }) => s.stream_id);
    assert.ok(streams.includes(alphaChannelId) && !streams.includes(betaChannelId));
    const state = (await post('/register', { fetch_event_types: ['realm_user', 'stream', 'subscription', 'user_groups', 'presence', 'user_status', 'recent_private_conversations', 'message'] })).body;
    const leaked = JSON.stringify(state);
    for (const needle of [betaEmail, 'boss@beta.example', 'beta-chan', 'psst']) assert.ok(!leaked.includes(needle), `register state shows ${needle}`);
    assert.ok(!state.realm_user_groups.some((g: { id: number }) => g.id === betaGroupId));
    await alpha.call('DELETE', '/events', { queue_id: state.queue_id });

    // And the other way round: the second realm sees nothing of the first.
    await looksMissing('beta: GET /users/{id}', (id) => beta.get(`/users/${id}`), alphaId);
    await looksMissing('beta: DM to the first realm', (id) => beta.post('/messages', { type: 'direct', to: [id], content: 'hi' }), alphaId);
    await looksMissing('beta: GET /streams/{id}', (id) => beta.get(`/streams/${id}`), alphaChannelId);
    const betaUsers = (await beta.get('/users')).body.members.map((u: { user_id: number }) => u.user_id);
    assert.ok(betaUsers.includes(beaId) && !betaUsers.includes(alphaId));
    // The first realm's messages are as absent for beta as beta's are for it.
    const alphaMsg = await alpha.post('/messages', { type: 'stream', to: alphaChannelId, topic: 'plans', content: 'alpha only' });
    await looksMissing('beta: GET /messages/{id}', (id) => beta.get(`/messages/${id}`), alphaMsg.body.id);
  });

  it("keeps each realm's events in its own queues; another realm's queue id is unknown", async () => {
    const register = async (c: ChatClient, params: Record<string, unknown>) => {
      const r = await c.post('/register', params);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.queue_id as string;
    };
    const events = async (c: ChatClient, queueId: string) => {
      const r = await c.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.events as Record<string, any>[];
    };
    // all_public_streams queues of both realms, and plain ones.
    const alphaAll = await register(alpha, { all_public_streams: true });
    const betaAll = await register(beta, { all_public_streams: true });
    const alphaPlain = await register(alpha, {});
    const beaPlain = await register(bea, {});

    assert.equal((await beta.post('/messages', { type: 'stream', to: betaChannelId, topic: 'events', content: 'beta event' })).status, 200);
    assert.equal((await alpha.post('/messages', { type: 'stream', to: alphaChannelId, topic: 'events', content: 'alpha event' })).status, 200);
    assert.equal((await beta.post('/users/me/presence', { status: 'active', new_user_input: true })).status, 200);
    assert.equal((await bea.post('/users/me/status', { status_text: 'in beta' })).status, 200);
    assert.equal((await beta.post('/typing', { op: 'start', to: [beaId] })).status, 200);
    assert.equal((await beta.post('/users/me/subscriptions', { subscriptions: [{ name: 'beta-two' }] })).status, 200);
    const made = await beta.post('/users', { email: 'ben@beta.example', password: 'ben-pass-12', full_name: 'Ben' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal((await beta.call('PATCH', `/users/${beaId}`, { full_name: 'Bea B' })).status, 200);

    const text = (evs: Record<string, any>[]) => JSON.stringify(evs);
    for (const [name, c, q] of [
      ['alpha all_public_streams', alpha, alphaAll],
      ['alpha', alpha, alphaPlain],
    ] as const) {
      const evs = await events(c, q);
      assert.ok(
        evs.some((e) => e.type === 'message' && e.message.content.includes('alpha event')),
        name,
      );
      assert.ok(!text(evs).includes('beta'), `${name} got: ${text(evs)}`);
      assert.ok(!evs.some((e) => e.type === 'realm_user' || e.type === 'presence' || e.type === 'user_status' || e.type === 'typing' || e.type === 'stream'), `${name} got: ${text(evs)}`);
    }
    const betaEvents = await events(beta, betaAll);
    assert.ok(betaEvents.some((e) => e.type === 'message' && e.message.content.includes('beta event')));
    assert.ok(!text(betaEvents).includes('alpha event'), 'the public channel of the first realm stays there');
    assert.ok(betaEvents.some((e) => e.type === 'realm_user' && e.op === 'add' && e.person.email === 'ben@beta.example'));
    const beaEvents = await events(bea, beaPlain);
    assert.ok(beaEvents.some((e) => e.type === 'typing') && beaEvents.some((e) => e.type === 'user_status'));

    // A queue of the other realm is unknown, exactly as a queue id that never existed.
    const unknown = async (c: ChatClient, method: 'GET' | 'DELETE', q: string) => {
      const r = await c.call(method, '/events', method === 'GET' ? { queue_id: q, last_event_id: -1, dont_block: true } : { queue_id: q });
      return [r.status, r.body.code, String(r.body.msg).replace(q, '<id>'), r.body.queue_id === q];
    };
    const never = '00000000-0000-4000-8000-000000000000';
    for (const method of ['GET', 'DELETE'] as const) {
      assert.deepEqual(await unknown(alpha, method, betaAll), await unknown(alpha, method, never));
      assert.deepEqual(await unknown(alpha, method, betaAll), [400, 'BAD_EVENT_QUEUE_ID', 'Bad event queue ID: <id>', true]);
      assert.deepEqual(await unknown(bea, method, alphaPlain), await unknown(bea, method, never));
    }
    // Still there for its owner.
    assert.equal((await beta.get('/events', { queue_id: betaAll, last_event_id: -1, dont_block: true })).status, 200);
    for (const [c, q] of [
      [alpha, alphaAll],
      [beta, betaAll],
      [alpha, alphaPlain],
      [bea, beaPlain],
    ] as const)
      await c.call('DELETE', '/events', { queue_id: q });
  });
});

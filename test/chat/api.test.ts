// Black-box: the Chat API's first slice over raw HTTP, the way Zulip's Python client sends requests.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { servedRealm } from '../helpers/chat-realm.js';
import type { RunningServer, Storage } from '../helpers/server.js';
import { ChatClient } from '../helpers/chat-client.js';

await forEachEngine('chat API', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let alice: ChatClient;
  let aliceId: number;
  let bob: ChatClient;
  let bobId: number;

  before(async () => {
    ({ storage, server, owner } = await servedRealm(engine));
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  async function login(email: string, password: string): Promise<ChatClient> {
    const r = await owner.call('POST', '/fetch_api_key', { username: email, password }, null);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return new ChatClient(server.chatUrl, r.body.email, r.body.api_key);
  }

  it('answers server_settings without credentials', async () => {
    const r = await owner.call('GET', '/server_settings', {}, null);
    assert.equal(r.status, 200);
    assert.equal(r.body.result, 'success');
    assert.equal(r.body.msg, '');
    assert.equal(r.body.zulip_version, 'keel-0.1');
    assert.equal(r.body.zulip_feature_level, 372);
    assert.equal(r.body.realm_url, server.chatUrl);
    assert.equal(r.body.realm_uri, server.chatUrl);
    assert.equal(r.body.realm_name, 'Keel');
    assert.equal(r.body.authentication_methods.password, true);
  });

  it('puts the fields the seed promises in every register answer, whatever was asked for', async () => {
    // As the Python client sends them: JSON-encoded lists in a form body.
    for (const asked of [{ event_types: '["message"]', fetch_event_types: '["message"]' }, { event_types: '["typing"]', fetch_event_types: '[]' }, {}]) {
      const r = await owner.call('POST', '/register', asked);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const b = r.body;
      assert.equal(typeof b.queue_id, 'string', JSON.stringify(asked));
      assert.equal(typeof b.last_event_id, 'number');
      assert.deepEqual([b.max_message_length, b.max_topic_length, b.max_file_upload_size_mib, b.realm_empty_topic_display_name], [10000, 60, 25, 'general chat'], JSON.stringify(asked));
      assert.equal(b.zulip_feature_level, 372);
      assert.equal(b.service_feature_level, 372, 'the seed names the feature level service_feature_level');
      await owner.call('DELETE', '/events', { queue_id: b.queue_id });
    }
  });

  it('refuses requests without valid credentials, as Zulip does', async () => {
    const none = await owner.call('GET', '/users/me', {}, null);
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'UNAUTHORIZED');
    assert.equal(none.body.msg, 'Not logged in: API authentication or user session required');
    assert.equal(none.headers.get('www-authenticate'), 'Basic realm="zulip"');
    const wrong = await owner.call('GET', '/users/me', {}, [owner.email, 'A'.repeat(32)]);
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'INVALID_API_KEY');
    const malformed = await owner.call('GET', '/users/me', {}, [owner.email, 'short']);
    assert.deepEqual([malformed.status, malformed.body.code, malformed.body.msg], [401, 'INVALID_API_KEY', 'Malformed API key']);
    const otherEmail = await owner.call('GET', '/users/me', {}, ['someone@else.org', owner.apiKey]);
    assert.equal(otherEmail.body.code, 'INVALID_API_KEY');
    const res = await fetch(`${server.chatUrl}/api/v1/users/me`, { headers: { authorization: 'Bearer x' } });
    assert.equal(res.status, 400);
    const unknown = await owner.get('/no_such_endpoint');
    assert.deepEqual([unknown.status, unknown.body.result], [404, 'error']);
  });

  // A GET with a body passes the body checks (admission, then left unread) before the dispatcher,
  // one without goes straight to it (chat/http.ts). Both must answer alike, successes and refusals.
  it('answers a GET alike with and without a body', async () => {
    const get = (path: string, auth: string | null, body?: string) =>
      new Promise<{ status: number; json: unknown; headers: Record<string, unknown> }>((resolve, reject) => {
        const headers: Record<string, string> = auth === null ? {} : { authorization: 'Basic ' + Buffer.from(auth).toString('base64') };
        if (body !== undefined) Object.assign(headers, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) });
        const req = request(`${server.chatUrl}/api/v1${path}`, { method: 'GET', headers, agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text), headers: res.headers }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const me = `${owner.email}:${owner.apiKey}`;
    for (const [path, auth] of [
      ['/users/me', me],
      ['/users/me?client=x&unknown_param=1', me],
      ['/users/me', null],
      ['/users/me', `${owner.email}:${'A'.repeat(32)}`],
      ['/no_such_endpoint', me],
      ['/register', me],
      ['/events?queue_id=nope', me],
      ['/events', me],
    ] as const) {
      const bare = await get(path, auth);
      const formed = await get(path, auth, '');
      assert.equal(bare.status, formed.status, path);
      assert.deepEqual(bare.json, formed.json, path);
      for (const h of ['content-type', 'content-length', 'allow', 'www-authenticate']) assert.equal(bare.headers[h], formed.headers[h], `${path}: ${h}`);
    }
    // A GET's parameters are read from its query only.
    const inBody = await get('/events', me, 'queue_id=nope');
    assert.deepEqual([inBody.status, (inBody.json as { code: string; msg: string }).code, (inBody.json as { msg: string }).msg], [400, 'BAD_REQUEST', "Missing 'queue_id' argument"]);
  });

  it('gives the owner the same API key by password, and limits guessing', async () => {
    const r = await owner.call('POST', '/fetch_api_key', { username: owner.email, password: server.chatSecrets!.password }, null);
    assert.equal(r.body.api_key, owner.apiKey);
    assert.equal(r.body.email, owner.email);
    assert.equal(typeof r.body.user_id, 'number');
    const bad = await owner.call('POST', '/fetch_api_key', { username: owner.email, password: 'nope' }, null);
    assert.deepEqual([bad.status, bad.body.code], [401, 'AUTHENTICATION_FAILED']);
    const missing = await owner.call('POST', '/fetch_api_key', { username: owner.email }, null);
    assert.deepEqual([missing.status, missing.body.code, missing.body.var_name, missing.body.msg], [400, 'REQUEST_VARIABLE_MISSING', 'password', "Missing 'password' argument"]);
  });

  it('lets an administrator create users, and no one else', async () => {
    const created = await owner.post('/users', { email: 'alice@example.com', password: 'alice-pass-1', full_name: 'Alice' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    aliceId = created.body.user_id;
    alice = await login('alice@example.com', 'alice-pass-1');
    const byAlice = await alice.post('/users', { email: 'x@example.com', password: 'p', full_name: 'X' });
    assert.deepEqual([byAlice.status, byAlice.body.code], [400, 'UNAUTHORIZED_PRINCIPAL']);
    const dup = await owner.post('/users', { email: 'ALICE@example.com', password: 'p', full_name: 'Dup' });
    assert.deepEqual([dup.body.code, dup.body.msg], ['BAD_REQUEST', 'Email is already in use.']);
    const b = await owner.post('/users', { email: 'bob@example.com', password: 'bob-pass-1', full_name: 'Bob' });
    bobId = b.body.user_id;
    bob = await login('bob@example.com', 'bob-pass-1');
    const list = await alice.get('/users', { client_gravatar: false });
    assert.equal(list.body.members.length, 3, 'the failed attempts created no one');
  });

  it('locks out a username after five wrong passwords, with retry-after', async () => {
    for (let i = 0; i < 5; i++) {
      const r = await owner.call('POST', '/fetch_api_key', { username: 'bob@example.com', password: `guess-${i}` }, null);
      assert.equal(r.status, 401);
    }
    const limited = await owner.call('POST', '/fetch_api_key', { username: 'bob@example.com', password: 'bob-pass-1' }, null);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMIT_HIT');
    assert.ok(limited.body['retry-after'] > 0 && limited.body['retry-after'] <= 1800);
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    // Another username is not affected; an existing key keeps working.
    await login('alice@example.com', 'alice-pass-1');
    assert.equal((await bob.get('/users/me')).status, 200);
  });

  it('describes users with every field of the user object', async () => {
    const me = await alice.get('/users/me', { frobnicate: 1 });
    assert.equal(me.body.user_id, aliceId);
    assert.equal(me.body.role, 400);
    assert.equal(me.body.is_admin, false);
    assert.match(me.body.date_joined, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    assert.deepEqual(me.body.ignored_parameters_unsupported, ['frobnicate']);
    const one = await alice.get(`/users/${aliceId}`, { include_custom_profile_fields: true });
    assert.deepEqual(Object.keys(one.body.user).sort(), [
      'avatar_url',
      'avatar_version',
      'bot_type',
      'date_joined',
      'delivery_email',
      'email',
      'full_name',
      'is_active',
      'is_admin',
      'is_bot',
      'is_guest',
      'is_owner',
      'profile_data',
      'role',
      'timezone',
      'user_id',
    ]);
    assert.equal(one.body.user.avatar_url, null, 'client_gravatar defaults to true');
    const ownerUser = (await alice.get('/users', { client_gravatar: false })).body.members.find((m: any) => m.email === owner.email);
    assert.deepEqual([ownerUser.role, ownerUser.is_owner, ownerUser.is_admin], [100, true, true]);
    assert.match(ownerUser.avatar_url, /^https:\/\//);
    const bad = await alice.get('/users/999999');
    assert.deepEqual([bad.status, bad.body.code], [400, 'BAD_REQUEST']);
    const badBool = await alice.get('/users', { client_gravatar: 'maybe' });
    // Zulip reads a Json[bool] parameter as JSON first: text that does not parse says so.
    assert.deepEqual([badBool.status, badBool.body.msg, badBool.body.var_name], [400, 'client_gravatar is not valid JSON', 'client_gravatar']);
    const notBool = await alice.get('/users', { client_gravatar: 3 });
    assert.deepEqual([notBool.status, notBool.body.msg, notBool.body.var_name], [400, 'client_gravatar is not a boolean', 'client_gravatar']);
  });

  it('subscribes, creating channels, and reports by user id', async () => {
    const r = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general', description: 'Everything **else**' }], principals: [aliceId] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.subscribed, { [aliceId]: ['general'] });
    const ownerId = (await owner.get('/users/me')).body.user_id;
    const self = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'General' }] });
    assert.deepEqual(self.body.subscribed, { [ownerId]: ['general'] }, 'names match without case; the channel keeps its name');
    const again = await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }] });
    assert.deepEqual([again.body.subscribed, again.body.already_subscribed], [{}, { [aliceId]: ['general'] }]);
    const mine = await alice.get('/users/me/subscriptions', { include_subscribers: true });
    const general = mine.body.subscriptions.find((s: any) => s.name === 'general');
    assert.equal(general.rendered_description, '<p>Everything <strong>else</strong></p>');
    assert.equal(general.subscribers.length, 2);
    assert.match(general.color, /^#[0-9a-f]{6}$/);
    assert.equal(general.invite_only, false);
    const id = await alice.get('/get_stream_id', { stream: 'general' });
    assert.equal(id.body.stream_id, general.stream_id);
    const none = await alice.get('/get_stream_id', { stream: 'nonexistent' });
    assert.deepEqual([none.body.code, none.body.msg], ['BAD_REQUEST', "Invalid channel name 'nonexistent'"]);
    const badJson = await alice.post('/users/me/subscriptions', { subscriptions: '[{"nam": "x"}]' });
    assert.equal(badJson.body.code, 'BAD_REQUEST');
    assert.equal((await alice.get('/streams')).body.streams.length, 1, 'bad input created nothing');
  });

  it('keeps private channels and their history from non-subscribers', async () => {
    const made = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
    assert.equal(made.status, 200);
    const early = await owner.post('/messages', { type: 'stream', to: 'secret', topic: 'plans', content: 'before bob' });
    assert.equal(early.status, 200);
    const streamsForAlice = (await alice.get('/streams')).body.streams.map((s: any) => s.name);
    assert.deepEqual(streamsForAlice, ['general']);
    const denied = await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }] });
    assert.deepEqual([denied.status, denied.body.msg], [400, 'Unable to access channel (secret).']);
    const soft = await alice.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], authorization_errors_fatal: false });
    assert.deepEqual(soft.body.unauthorized, ['secret']);
    const send = await alice.post('/messages', { type: 'stream', to: 'secret', topic: 'x', content: 'hi' });
    // Zulip names the private channel the sender may not post in (zerver/actions/message_send.py).
    assert.deepEqual([send.status, send.body.code, send.body.msg, send.body.stream], [400, 'BAD_REQUEST', "Not authorized to send to channel 'secret'", undefined]);
    const secretId = (await owner.get('/get_stream_id', { stream: 'secret' })).body.stream_id;
    const sendById = await alice.post('/messages', { type: 'stream', to: [secretId], topic: 'x', content: 'hi' });
    assert.deepEqual([sendById.status, sendById.body.code, sendById.body.msg], [400, 'BAD_REQUEST', "Not authorized to send to channel 'secret'"]);
    // Bob joins later: without shared history he sees only what arrives after.
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: ['bob@example.com'] });
    await owner.post('/messages', { type: 'stream', to: 'secret', topic: 'plans', content: 'after bob' });
    const seen = await bob.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [['stream', 'secret']] });
    assert.deepEqual(
      seen.body.messages.map((m: any) => m.content),
      ['<p>after bob</p>'],
    );
  });

  let firstId: number;
  it('sends channel and direct messages in every form clients use', async () => {
    const legacy = await alice.post('/messages', { type: 'stream', to: 'general', subject: 'greetings', content: 'hello _world_ **bold**', read_by_sender: true, local_id: '1.5', queue_id: 'q' });
    assert.equal(legacy.status, 200, JSON.stringify(legacy.body));
    firstId = legacy.body.id;
    const streamId = (await alice.get('/get_stream_id', { stream: 'general' })).body.stream_id;
    const byId = await owner.post('/messages', { type: 'channel', to: streamId, topic: 'greetings', content: 'second' });
    assert.ok(byId.body.id > firstId);
    const noTopic = await owner.post('/messages', { type: 'stream', to: 'general', topic: '(no topic)', content: 'empty topic' });
    assert.equal(noTopic.status, 200);
    const long = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'x'.repeat(80), content: 'long topic' });
    assert.equal(long.status, 200);
    const dm = await alice.post('/messages', { type: 'direct', to: [bobId], content: 'psst' });
    assert.equal(dm.status, 200);
    const dmByEmail = await bob.post('/messages', { type: 'private', to: 'alice@example.com', content: 'hi back' });
    assert.equal(dmByEmail.status, 200);
    const dmJsonEmails = await bob.post('/messages', { type: 'private', to: ['alice@example.com'], content: 'third' });
    assert.equal(dmJsonEmails.status, 200);
  });

  it('rejects bad messages with Zulip errors and stores nothing', async () => {
    const before = (await alice.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).body.messages.length;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ type: 'stream', to: 'nowhere', topic: 't', content: 'x' }, 'STREAM_DOES_NOT_EXIST', "Channel 'nowhere' does not exist"],
      [{ type: 'stream', to: 987654, topic: 't', content: 'x' }, 'STREAM_DOES_NOT_EXIST', "Channel with ID '987654' does not exist"],
      [{ type: 'stream', to: 'general', topic: 't', content: '   ' }, 'BAD_REQUEST', 'Message must not be empty'],
      [{ type: 'stream', to: 'general', content: 'x' }, 'BAD_REQUEST', 'Missing topic'],
      [{ type: 'stream', to: 'general', topic: 't' }, 'REQUEST_VARIABLE_MISSING', "Missing 'content' argument"],
      [{ type: 'direct', to: ['nobody@example.com'], content: 'x' }, 'BAD_REQUEST', "Invalid email 'nobody@example.com'"],
      [{ type: 'carrier-pigeon', to: 'general', content: 'x' }, 'BAD_REQUEST', 'Invalid type'],
    ];
    for (const [params, code, msg] of cases) {
      const r = await alice.post('/messages', params);
      assert.deepEqual([r.status, r.body.code, r.body.msg], [400, code, msg], JSON.stringify(params));
    }
    const nowhere = await alice.post('/messages', cases[0][0]);
    assert.equal(nowhere.body.stream, 'nowhere');
    const after = (await alice.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).body.messages.length;
    assert.equal(after, before);
  });

  it('fetches with narrows in both forms, anchors and the message object', async () => {
    const pair = await alice.get('/messages', {
      anchor: 10000000000000000,
      num_before: 10,
      num_after: 0,
      narrow: JSON.stringify([
        ['stream', 'general'],
        ['topic', 'greetings'],
      ]),
    });
    assert.equal(pair.status, 200, JSON.stringify(pair.body));
    assert.deepEqual(
      pair.body.messages.map((m: any) => m.content),
      ['<p>hello _world_ <strong>bold</strong></p>', '<p>second</p>'],
    );
    assert.deepEqual([pair.body.found_newest, pair.body.found_oldest, pair.body.found_anchor, pair.body.history_limited], [true, true, false, false]);
    assert.equal(pair.body.anchor, 10000000000000000);
    const m = pair.body.messages[0];
    assert.equal(m.subject, 'greetings');
    assert.equal(m.display_recipient, 'general');
    assert.equal(m.type, 'stream');
    assert.equal(m.client, 'ZulipPython');
    assert.equal(m.content_type, 'text/html');
    assert.deepEqual([m.topic_links, m.reactions, m.submessages], [[], [], []]);
    assert.deepEqual(m.flags, ['read']);
    assert.equal(m.sender_email, 'alice@example.com');
    assert.equal(m.avatar_url, null);
    const obj = await alice.get('/messages', { anchor: firstId, num_before: 0, num_after: 1, narrow: [{ operator: 'channel', operand: 'general' }], apply_markdown: false, client_gravatar: false });
    assert.deepEqual(
      obj.body.messages.map((x: any) => x.content),
      ['hello _world_ **bold**', 'second'],
    );
    assert.equal(obj.body.messages[0].content_type, 'text/x-markdown');
    assert.equal(obj.body.found_anchor, true);
    assert.match(obj.body.messages[0].avatar_url, /^https:/);
    const excl = await alice.get('/messages', { anchor: firstId, include_anchor: false, num_before: 0, num_after: 1, narrow: [{ operator: 'channel', operand: 'general' }] });
    assert.deepEqual([excl.body.found_anchor, excl.body.messages.length, excl.body.messages[0].content], [false, 1, '<p>second</p>']);
    const emptyTopic = await alice.get('/messages', {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [
        ['stream', 'general'],
        ['topic', ''],
      ],
    });
    assert.deepEqual(
      emptyTopic.body.messages.map((x: any) => x.subject),
      ['general chat'],
    );
    const allowEmpty = await alice.get('/messages', {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [
        ['stream', 'general'],
        ['topic', 'general chat'],
      ],
      allow_empty_topic_name: true,
    });
    assert.deepEqual(
      allowEmpty.body.messages.map((x: any) => x.subject),
      [''],
    );
    const long = await alice.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['stream', 'general']] });
    assert.equal(long.body.messages[0].subject, 'x'.repeat(57) + '...');
    const bySender = await alice.get('/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'sender', operand: bobId }] });
    assert.deepEqual(
      bySender.body.messages.map((x: any) => x.content),
      ['<p>hi back</p>', '<p>third</p>'],
    );
    assert.equal(bySender.body.found_oldest, true);
    const dms = await alice.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [['is', 'private']] });
    assert.equal(dms.body.messages.length, 3);
    const dm = dms.body.messages[0];
    assert.equal(dm.type, 'private');
    assert.equal(dm.subject, '');
    assert.deepEqual(
      dm.display_recipient.map((u: any) => u.id),
      [aliceId, bobId].sort((a, b) => a - b),
    );
    assert.deepEqual(Object.keys(dm.display_recipient[0]).sort(), ['email', 'full_name', 'id', 'is_mirror_dummy']);
    const pmWith = await alice.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [['pm-with', 'bob@example.com']] });
    assert.equal(pmWith.body.messages.length, 3);
    const dmIds = await alice.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'dm', operand: [bobId] }] });
    assert.equal(dmIds.body.messages.length, 3);
    const ownerDms = await owner.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] });
    assert.equal(ownerDms.body.messages.length, 0, 'others do not see a direct conversation');
  });

  it('finds the first unread message, as clients ask for it', async () => {
    // Bob never read alice's "psst"; his own messages started read.
    const r = await bob.get('/messages', { anchor: 0, use_first_unread_anchor: true, num_before: 0, num_after: 0, narrow: [['is', 'private']] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.messages.length, 1);
    assert.equal(r.body.messages[0].content, '<p>psst</p>');
    assert.equal(r.body.anchor, r.body.messages[0].id);
    const named = await bob.get('/messages', { anchor: 'first_unread', num_before: 0, num_after: 0, narrow: [['is', 'private']] });
    assert.equal(named.body.anchor, r.body.anchor);
    // Bob subscribed to general after its messages: the channel narrow shows them as history.
    const hist = await bob.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['stream', 'general']] });
    assert.deepEqual(hist.body.messages[0].flags.sort(), ['historical', 'read']);
    const home = await bob.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 });
    assert.ok(
      home.body.messages.every((x: any) => x.display_recipient !== 'general'),
      'not in his own history',
    );
  });

  it('rejects bad narrows and windows with Zulip errors', async () => {
    const unknownChannel = await alice.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['stream', 'secret']] });
    assert.deepEqual([unknownChannel.status, unknownChannel.body.code], [400, 'BAD_NARROW']);
    const badOp = await alice.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['frobnicate', 'x']] });
    assert.equal(badOp.body.code, 'BAD_NARROW');
    // A channel term with a dm term (Zulip's NarrowBuilder), and -is:dm counted as a channel term.
    const both = 'Invalid narrow operator: No message can be both a channel message and direct message';
    for (const narrow of [
      [
        ['stream', 'general'],
        ['dm', bob.email],
      ],
      [
        { operator: 'dm', operand: [bobId] },
        { operator: 'topic', operand: 'x' },
      ],
      [
        { operator: 'is', operand: 'dm', negated: true },
        { operator: 'dm', operand: [bobId] },
      ],
      [
        ['is', 'private'],
        ['streams', 'public'],
      ],
    ]) {
      const r = await alice.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow });
      assert.deepEqual([r.status, r.body.code, r.body.msg], [400, 'BAD_NARROW', both], JSON.stringify(narrow));
    }
    // A negated channel term confines nothing: with a dm term it is a fine narrow.
    const notThere = await alice.get('/messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      narrow: [
        { operator: 'stream', operand: 'general', negated: true },
        { operator: 'dm', operand: [bobId] },
      ],
    });
    assert.equal(notThere.status, 200, JSON.stringify(notThere.body));
    const notJson = await alice.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: 'stream:general' });
    assert.deepEqual([notJson.body.code, notJson.body.msg], ['BAD_REQUEST', 'narrow is not valid JSON']);
    const noAnchor = await alice.get('/messages', { num_before: 1, num_after: 0 });
    assert.deepEqual([noAnchor.status, noAnchor.body.code, noAnchor.body.msg, noAnchor.body.var_name], [400, 'BAD_REQUEST', "Missing 'anchor' argument.", undefined]);
    const tooMany = await alice.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 1 });
    assert.equal(tooMany.body.code, 'BAD_REQUEST');
    const clash = await alice.get('/messages', { message_ids: [firstId], anchor: 'newest' });
    assert.equal(clash.body.parameters, 'message_ids, anchor');
    const byIds = await alice.get('/messages', { message_ids: [firstId, 999999] });
    assert.deepEqual(
      byIds.body.messages.map((x: any) => x.id),
      [firstId],
    );
    assert.equal(byIds.body.anchor, undefined);
  });
});

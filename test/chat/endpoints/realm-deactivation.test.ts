// Black-box: a realm's deactivation (POST /realm/deactivate by an owner, `keel admin
// deactivate-realm` by an operator). Polls parked in the realm are answered BAD_EVENT_QUEUE_ID at
// once; every key of the realm then answers 401 REALM_DEACTIVATED (cached credentials included),
// fetch_api_key and register too, while server_settings keeps answering; a non-owner changes
// nothing; another realm on the same server goes on as before. Realms made by `keel admin
// create-realm`, addressed by subdomain, so the first realm stays to show it is unaffected.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient, type ChatReply } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';
import { READ_CACHE_TTL_MS } from '../../../src/platform/db/fast/read-cache.js';

const ROOT = 'keel.test';
const PASSWORD = 'realm-pass-1';

await forEachEngine('chat realm deactivation', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let port: number;
  /** The first realm's owner: the realm that is never deactivated here. */
  let alpha: ChatClient;

  const admin = (args: string[]) => runKeel(['admin', ...args, '--chat-root-domain', ROOT, '--chat-listen', `127.0.0.1:${port}`, ...storageArgs(storage)]);
  const hostOf = (subdomain: string) => `${subdomain}.${ROOT}:${port}`;

  /** A realm with its owner, an administrator, a member and a bot, each with its own key. */
  async function makeRealm(subdomain: string) {
    const r = await admin(['create-realm', '--name', subdomain, '--subdomain', subdomain, '--owner-email', `boss@${subdomain}.example`, '--owner-password', PASSWORD, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    const host = hostOf(subdomain);
    const account = async (args: string[]) => {
      const a = await admin([...args, '--realm', subdomain, '--json']);
      assert.equal(a.code, 0, a.stderr);
      const m = JSON.parse(a.stdout);
      return new ChatClient(server.chatUrl, m.email, m.apiKey, host);
    };
    return {
      host,
      owner: new ChatClient(server.chatUrl, made.email, made.apiKey, host),
      administrator: await account(['create-user', '--email', `adm@${subdomain}.example`, '--full-name', 'Adm', '--role', 'admin']),
      member: await account(['create-user', '--email', `mem@${subdomain}.example`, '--full-name', 'Mem', '--password', PASSWORD]),
      bot: await account(['create-bot', '--owner-email', `mem@${subdomain}.example`, '--full-name', 'Helper', '--short-name', 'helper']),
    };
  }

  /** A queue with nothing pending and a poll parked on it (given time to park). */
  async function parkedPoll(c: ChatClient, params: Record<string, unknown> = { fetch_event_types: [] }): Promise<{ queueId: string; reply: Promise<ChatReply> }> {
    const q = await register(c, params);
    assert.deepEqual(await drain(c, q.queue_id, q.last_event_id), []);
    const reply = c.get('/events', { queue_id: q.queue_id, last_event_id: q.last_event_id });
    await sleep(400);
    return { queueId: q.queue_id, reply };
  }

  function realmDeactivated(r: ChatReply, what: string): void {
    assert.equal(r.status, 401, `${what}: ${JSON.stringify(r.body)}`);
    assert.deepEqual([r.body.result, r.body.code, r.body.msg], ['error', 'REALM_DEACTIVATED', 'This organization has been deactivated'], what);
  }

  function endedQueue(r: ChatReply, queueId: string): void {
    refused(r, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`);
    assert.equal(r.body.queue_id, queueId);
  }

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage, ['--chat-root-domain', ROOT]);
    port = Number(new URL(server.chatUrl).port);
    alpha = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    assert.equal((await alpha.post('/users/me/subscriptions', { subscriptions: [{ name: 'alpha-chan' }] })).status, 200);
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('refuses a non-owner, administrators included, and changes nothing', async () => {
    const beta = await makeRealm('refusing');
    const poll = await parkedPoll(beta.member);
    for (const who of [beta.administrator, beta.member, beta.bot]) {
      refused(await who.post('/realm/deactivate'), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    }
    // Nothing changed: the keys work, and the parked poll is still there to be answered.
    for (const who of [beta.owner, beta.administrator, beta.member, beta.bot]) assert.equal((await who.get('/users/me')).status, 200);
    assert.equal((await beta.owner.post('/messages', { type: 'private', to: JSON.stringify([beta.member.email]), content: 'still here' })).status, 200);
    const r = await poll.reply;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.events.map((e: Record<string, unknown>) => e.type),
      ['message'],
    );
  });

  it('an owner deactivates the realm: its parked polls end at once, its keys get 401 REALM_DEACTIVATED, another realm goes on', async () => {
    const beta = await makeRealm('beta');
    // Accepted credentials are cached: the requests after the deactivation must not be served from that cache.
    for (let i = 0; i < 3; i++) for (const who of [beta.owner, beta.member, beta.bot]) assert.equal((await who.get('/users/me')).status, 200);
    const memberPoll = await parkedPoll(beta.member);
    const botPoll = await parkedPoll(beta.bot);
    const alphaPoll = await parkedPoll(alpha, { event_types: ['message'], fetch_event_types: [] });

    const started = Date.now();
    const done = await beta.owner.post('/realm/deactivate', { deletion_delay_days: 30 });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(done.body, { result: 'success', msg: '', ignored_parameters_unsupported: ['deletion_delay_days'] });
    endedQueue(await memberPoll.reply, memberPoll.queueId);
    endedQueue(await botPoll.reply, botPoll.queueId);
    // At once: a parked poll otherwise waits for its heartbeat (50 s).
    assert.ok(Date.now() - started < 5_000, `the polls ended ${Date.now() - started} ms after the request`);

    realmDeactivated(await beta.member.get('/users/me'), 'a member');
    realmDeactivated(await beta.bot.get('/users/me'), 'a bot');
    realmDeactivated(await beta.owner.post('/realm/deactivate'), 'the owner again');
    realmDeactivated(await beta.member.post('/register', {}), 'register');
    realmDeactivated(await beta.member.get('/events', { queue_id: memberPoll.queueId, last_event_id: -1 }), 'a poll of the ended queue');
    realmDeactivated(await beta.member.post('/messages', { type: 'private', to: JSON.stringify([beta.owner.email]), content: 'x' }), 'a message');
    // The key's realm decides, at any address (Zulip's validate_account_and_subdomain).
    realmDeactivated(await new ChatClient(server.chatUrl, beta.member.email, beta.member.apiKey).get('/users/me'), "a key at another realm's address");
    // Password login: the right password is told the realm is deactivated, a wrong one learns nothing.
    const login = (password: string) => beta.owner.call('POST', '/fetch_api_key', { username: beta.owner.email, password }, null);
    realmDeactivated(await login(PASSWORD), 'fetch_api_key');
    const wrong = await login('not-the-password');
    assert.deepEqual([wrong.status, wrong.body.code], [401, 'AUTHENTICATION_FAILED']);
    // Unauthenticated server_settings still answers (the login page shows the realm), with no spectator access.
    const settings = await beta.owner.call('GET', '/server_settings', {}, null);
    assert.deepEqual([settings.status, settings.body.realm_name, settings.body.realm_web_public_access_enabled], [200, 'beta', false]);

    // The first realm: its poll parked throughout receives what is sent after, its key works.
    assert.equal((await alpha.post('/messages', { type: 'stream', to: 'alpha-chan', topic: 't', content: 'after beta' })).status, 200);
    const got = await alphaPoll.reply;
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.deepEqual(
      got.body.events.map((e: Record<string, any>) => [e.type, e.message?.content]),
      [['message', 'after beta']],
    );
    assert.equal((await alpha.get('/users/me')).status, 200);
  });

  it('keel admin deactivate-realm from another process: seen within the cache TTL, queues ended then; reactivate-realm undoes it', async () => {
    const gamma = await makeRealm('gamma');
    const poll = await parkedPoll(gamma.member);

    const r = await admin(['deactivate-realm', '--realm', 'gamma', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { realmId: JSON.parse(r.stdout).realmId, changed: true, subdomain: 'gamma', deactivated: true });
    const again = await admin(['deactivate-realm', '--realm', 'gamma']);
    assert.deepEqual([again.code, again.stdout], [0, 'realm gamma is already deactivated.\n']);
    const nowhere = await admin(['deactivate-realm', '--realm', 'nowhere']);
    assert.deepEqual([nowhere.code, nowhere.stderr], [2, 'keel: no realm has the subdomain "nowhere"\n']);
    const none = await admin(['deactivate-realm']);
    assert.deepEqual([none.code, none.stderr], [2, 'keel: --realm is required\n']);

    // The server sees the other process's write once its cached realm row expires.
    const deadline = Date.now() + READ_CACHE_TTL_MS + 3_000;
    let seen: ChatReply;
    do {
      seen = await gamma.owner.get('/users/me');
      if (seen.status !== 200) break;
      await sleep(100);
    } while (Date.now() < deadline);
    realmDeactivated(seen, 'after the TTL');
    // The request that found the realm deactivated ended its queues: the parked poll is answered.
    endedQueue(await poll.reply, poll.queueId);
    realmDeactivated(await gamma.member.get('/users/me'), 'the member');

    const back = await admin(['reactivate-realm', '--realm', 'gamma']);
    assert.deepEqual([back.code, back.stdout], [0, 'realm gamma reactivated.\n']);
    const until = Date.now() + READ_CACHE_TTL_MS + 3_000;
    let after: ChatReply;
    do {
      after = await gamma.member.get('/users/me');
      if (after.status === 200) break;
      await sleep(100);
    } while (Date.now() < until);
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.equal((await gamma.member.post('/register', { fetch_event_types: [] })).status, 200, 'a reactivated realm registers queues again');
  });
});

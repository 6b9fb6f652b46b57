// Black-box: Chat's rate limits as Zulip has them. Password attempts at fetch_api_key per account and
// per client address (several loopback addresses play several clients), API budgets per user and
// per address with the X-RateLimit-* headers and Zulip's 429, and --rate-limits off.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../helpers/server.js';
import { ChatClient } from '../helpers/chat-client.js';
import { makeUser } from '../helpers/chat-users.js';
import { freshAddress, requestFrom, type AddressReply } from '../helpers/from-address.js';

const PASSWORD = 'pass-word-1';
/** A loopback address outside freshAddress's range, playing a reverse proxy. */
const PROXY = '127.200.0.1';

/** Zulip's 429 with every field and header: retry-after a float of seconds in the body, whole seconds in the header. */
function assertLimited(r: AddressReply | { status: number; body: Record<string, any>; headers: Headers }, limit: number, maxWait: number): void {
  const header = (name: string) => (r.headers instanceof Headers ? r.headers.get(name) : (r.headers[name] as string | undefined));
  assert.equal(r.status, 429, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['code', 'msg', 'result', 'retry-after']);
  assert.deepEqual([r.body.result, r.body.code, r.body.msg], ['error', 'RATE_LIMIT_HIT', 'API usage exceeded rate limit']);
  const wait = r.body['retry-after'];
  assert.ok(typeof wait === 'number' && wait > 0 && wait <= maxWait, `retry-after ${wait}`);
  assert.equal(header('retry-after'), String(Math.ceil(wait)));
  assert.equal(header('x-ratelimit-limit'), String(limit));
  assert.equal(header('x-ratelimit-remaining'), '0');
  const reset = Number(header('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  assert.ok(reset >= Math.floor(now + wait) - 2 && reset <= now + wait + 2, `reset ${reset}, now ${now}, wait ${wait}`);
}

function server(engine: 'sqlite' | 'postgres', args: string[]) {
  const s = { storage: undefined as Storage | undefined, server: undefined as RunningServer | undefined, owner: undefined as ChatClient | undefined };
  before(async () => {
    s.storage = await createStorage(engine);
    s.server = await startServer(s.storage, args);
    s.owner = new ChatClient(s.server.chatUrl, s.server.chatSecrets!.email, s.server.chatSecrets!.apiKey);
  });
  after(async () => {
    await s.server?.stop();
    await s.storage?.dispose();
  });
  return s;
}

await forEachEngine('chat rate limits', (engine) => {
  describe('with limits on', () => {
    // Small API budgets so the tests reach them, over an hour so that no unit comes back during a
    // test on a slow machine (the address budget above the 31 password attempts
    // one test makes, as fetch_api_key is charged to it too); the password budgets are the defaults
    // (5 and 30 in 30 minutes).
    const s = server(engine, ['--rate-limits', 'chat-user=20/3600,chat-ip=40/3600', '--trusted-proxies', PROXY]);
    const login = (from: string, username: string, password: string) => requestFrom(from, `${s.server!.chatUrl}/api/v1/fetch_api_key`, { form: { username, password } });

    it("locks an account after five wrong passwords from anyone, and no one else's", async () => {
      const a = await makeUser(s.owner!, s.server!.chatUrl, 'alpha');
      const b = await makeUser(s.owner!, s.server!.chatUrl, 'bravo');
      const guesser = freshAddress();
      for (let i = 0; i < 5; i++) {
        const r = await login(guesser, a.client.email, `guess-${i}`);
        assert.deepEqual([r.status, r.body.code], [401, 'AUTHENTICATION_FAILED']);
      }
      // A's own right password, from an address that never guessed: the account's budget is spent.
      assertLimited(await login(freshAddress(), a.client.email, PASSWORD), 5, 1800);
      // However the name is cased, it is the same account (surrounding spaces are no email address:
      // Zulip refuses those before any budget, test/chat/endpoints/legacy-routes.test.ts).
      assertLimited(await login(freshAddress(), a.client.email.toUpperCase(), PASSWORD), 5, 1800);
      // B logs in, from another address and from the guesser's own (5 of its 30 spent).
      for (const from of [freshAddress(), guesser]) {
        const r = await login(from, b.client.email, PASSWORD);
        assert.deepEqual([r.status, r.body.api_key], [200, b.client.apiKey]);
      }
      // A's key, fetched before, still works: only password login is locked.
      assert.equal((await a.client.get('/users/me')).status, 200);
    });

    it('counts concurrent guesses before checking any of them', async () => {
      const c = await makeUser(s.owner!, s.server!.chatUrl, 'charlie');
      const from = freshAddress();
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(from, c.client.email, `burst-${i}`)));
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(15).fill(429)]);
    });

    it("limits one address's guesses across accounts to 30, and not the other addresses", async () => {
      const d = await makeUser(s.owner!, s.server!.chatUrl, 'delta');
      const from = freshAddress();
      // One wrong guess each at 30 names (no account's own budget is reached).
      for (let i = 0; i < 30; i++) assert.equal((await login(from, `nobody-${i}@example.com`, 'guess')).status, 401);
      assertLimited(await login(from, d.client.email, PASSWORD), 30, 1800);
      assert.equal((await login(freshAddress(), d.client.email, PASSWORD)).status, 200);
    });

    it('gives every answer of a user X-RateLimit headers and answers 429 RATE_LIMIT_HIT over 20 an hour, event polls apart', async () => {
      const e = await makeUser(s.owner!, s.server!.chatUrl, 'echo');
      const f = await makeUser(s.owner!, s.server!.chatUrl, 'foxtrot');
      const queue = (await e.client.post('/register', { event_types: JSON.stringify(['alert_words']) })).body.queue_id;
      const poll = () => e.client.get('/events', { queue_id: queue, last_event_id: -1, dont_block: true });
      for (let i = 0; i < 19; i++) {
        // Successes and errors alike carry the headers.
        const r = i === 3 ? await e.client.get('/users/999999') : await e.client.get('/users/me');
        assert.equal(r.status, i === 3 ? 400 : 200, JSON.stringify(r.body));
        assert.equal(r.headers.get('x-ratelimit-limit'), '20');
        // The register above took one unit.
        assert.equal(r.headers.get('x-ratelimit-remaining'), String(18 - i));
        const reset = Number(r.headers.get('x-ratelimit-reset'));
        assert.ok(reset >= Math.floor(Date.now() / 1000) && reset <= Date.now() / 1000 + 3601, `reset ${reset}`);
      }
      // Whole budget spent (register + 19): refused, with Zulip's body and headers, until one unit is back (3600/20 = 180 s).
      assertLimited(await e.client.get('/users/me'), 20, 180);
      // Event polls (answered later, by the long-poll path) count in a budget of their own, as in
      // Zulip, whose event server keeps its own: a client out of budget still hears its events.
      for (let i = 0; i < 20; i++) {
        const r = await poll();
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.deepEqual([r.headers.get('x-ratelimit-limit'), r.headers.get('x-ratelimit-remaining')], ['20', String(19 - i)]);
      }
      assertLimited(await poll(), 20, 180);
      // Another user's budget is whole.
      const other = await f.client.get('/users/me');
      assert.deepEqual([other.status, other.headers.get('x-ratelimit-remaining')], [200, '19']);
    });

    it('limits unauthenticated requests per address (40 an hour here), and leaves authenticated ones from it alone', async () => {
      const g = await makeUser(s.owner!, s.server!.chatUrl, 'golf');
      const from = freshAddress();
      const settings = () => requestFrom(from, `${s.server!.chatUrl}/api/v1/server_settings`);
      for (let i = 0; i < 40; i++) {
        const r = await settings();
        assert.deepEqual([r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']], [200, '40', String(39 - i)]);
      }
      assertLimited(await settings(), 40, 90);
      assert.equal((await requestFrom(freshAddress(), `${s.server!.chatUrl}/api/v1/server_settings`)).status, 200);
      const auth = { authorization: 'Basic ' + Buffer.from(`${g.client.email}:${g.client.apiKey}`).toString('base64') };
      assert.equal((await requestFrom(from, `${s.server!.chatUrl}/api/v1/users/me`, { headers: auth })).status, 200);
    });

    it("charges each client behind a trusted proxy to its own address, and a forged header to the sender's", async () => {
      const settings = (from: string, forwardedFor: string) => requestFrom(from, `${s.server!.chatUrl}/api/v1/server_settings`, { headers: { 'x-forwarded-for': forwardedFor } });
      for (let i = 0; i < 3; i++) assert.equal((await settings(PROXY, '198.51.100.7')).headers['x-ratelimit-remaining'], String(39 - i));
      assert.equal((await settings(PROXY, '198.51.100.8')).headers['x-ratelimit-remaining'], '39');
      const liar = freshAddress();
      assert.equal((await settings(liar, '198.51.100.9')).headers['x-ratelimit-remaining'], '39');
      assert.equal((await settings(liar, '198.51.100.10')).headers['x-ratelimit-remaining'], '38');
    });
  });

  describe('with --rate-limits off', () => {
    const s = server(engine, ['--rate-limits', 'off']);

    it('answers without API budgets or their headers, and still locks password guessing', async () => {
      for (let i = 0; i < 250; i++) {
        const r = await s.owner!.get('/users/me');
        assert.equal(r.status, 200);
        if (i === 0) assert.equal(r.headers.get('x-ratelimit-limit'), null);
      }
      const h = await makeUser(s.owner!, s.server!.chatUrl, 'hotel');
      const from = freshAddress();
      for (let i = 0; i < 5; i++) assert.equal((await requestFrom(from, `${s.server!.chatUrl}/api/v1/fetch_api_key`, { form: { username: h.client.email, password: 'wrong' } })).status, 401);
      assertLimited(await requestFrom(from, `${s.server!.chatUrl}/api/v1/fetch_api_key`, { form: { username: h.client.email, password: PASSWORD } }), 5, 1800);
    });
  });
});

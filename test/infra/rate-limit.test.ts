// Black-box: Infra's rate limits. session.login's password attempts per login name and per client
// address (several loopback addresses play several clients), the API budget per key, all answered
// in the provider's envelope (HTTP 200, code RATE_LIMIT, retryAfter, and a Retry-After header);
// --rate-limits off leaves the password budgets on.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra } from '../helpers/server.js';
import { basicAuth, freshAddress, requestFrom, type AddressReply } from '../helpers/from-address.js';

type Infra = Awaited<ReturnType<typeof startInfra>>;

const PROXY = '127.200.0.1';

function assertLimited(r: AddressReply, maxWait: number): void {
  assert.equal(r.status, 200, 'the provider answers every error in its envelope with HTTP 200');
  assert.deepEqual(Object.keys(r.body), ['code', 'message', 'retryAfter']);
  assert.equal(r.body.code, 'RATE_LIMIT');
  const wait = r.body.retryAfter;
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= maxWait, `retryAfter ${wait}`);
  assert.equal(r.body.message, `Rate limit exceeded: try again in ${wait} second${wait === 1 ? '' : 's'}`);
  assert.equal(r.headers['retry-after'], String(wait));
}

function infra(engine: 'sqlite' | 'postgres', args: string[]) {
  const s = {} as { infra: Infra; cmd(from: string, cmd: string, params?: Record<string, unknown>, headers?: Record<string, string>): Promise<AddressReply> };
  before(async () => {
    s.infra = await startInfra(engine, args);
  });
  after(() => s.infra?.stop());
  s.cmd = (from, cmd, params = {}, headers = {}) => requestFrom(from, `${s.infra.server.infraUrl}/api/rest/v2.10/json.php`, { json: { cmd, ...params }, headers });
  return s;
}

await forEachEngine('infra rate limits', (engine) => {
  describe('with limits on', () => {
    // A small API key budget over an hour, so the test reaches it and no unit comes back meanwhile;
    // the address budget above the 31 logins one test makes (session.login is charged to it too).
    // One loopback address (outside freshAddress's range) plays a reverse proxy.
    const s = infra(engine, ['--rate-limits', 'infra-key=10/3600,infra-ip=40/3600', '--trusted-proxies', `${PROXY},192.0.2.0/24`]);
    const login = (from: string, username: string, password: string) => s.cmd(from, 'session.login', { username, password, jwt: 1 });
    const owner = () => s.infra.server.secrets!;

    it("locks a login name after five wrong passwords, and not another login's", async () => {
      const guesser = freshAddress();
      for (let i = 0; i < 5; i++) assert.deepEqual((await login(guesser, 'someone-else', `guess-${i}`)).body, { code: 'ACCESS_DENIED', message: 'Access Denied' });
      assertLimited(await login(freshAddress(), 'someone-else', 'guess-5'), 1800);
      // The owner's login works, from the guesser's address (5 of its 30 spent) and from another.
      for (const from of [guesser, freshAddress()]) assert.equal((await login(from, owner().username, owner().password)).body.code, 'OK');
    });

    it("limits one address's guesses across names to 30, and not the other addresses", async () => {
      const from = freshAddress();
      for (let i = 0; i < 30; i++) assert.equal((await login(from, `nobody-${i}`, 'guess')).body.code, 'ACCESS_DENIED');
      assertLimited(await login(from, owner().username, owner().password), 1800);
      assert.equal((await login(freshAddress(), owner().username, owner().password)).body.code, 'OK');
    });

    it('takes the client address from X-Forwarded-For through a trusted proxy only', async () => {
      const url = `${s.infra.server.infraUrl}/api/rest/v2.10/json.php`;
      const from = (address: string, forwardedFor: string, username: string, password: string) =>
        requestFrom(address, url, { json: { cmd: 'session.login', username, password }, headers: { 'x-forwarded-for': forwardedFor } });
      // 30 guesses by one client behind the proxy (a forged entry on the left changes nothing).
      for (let i = 0; i < 30; i++) assert.equal((await from(PROXY, `10.9.9.${i}, 198.51.100.7`, `proxied-${i}`, 'guess')).body.code, 'ACCESS_DENIED');
      assertLimited(await from(PROXY, '198.51.100.7', owner().username, owner().password), 1800);
      // Another client behind the same proxy, and behind a second trusted one, logs in.
      assert.equal((await from(PROXY, '198.51.100.8', owner().username, owner().password)).body.code, 'OK');
      assert.equal((await from(PROXY, '198.51.100.7, 192.0.2.5', owner().username, owner().password)).body.code, 'RATE_LIMIT');
      // A client that is no trusted proxy cannot choose its budget by writing the header: its own address pays.
      const liar = freshAddress();
      for (let i = 0; i < 30; i++) assert.equal((await from(liar, `198.51.100.${100 + i}`, `liar-${i}`, 'guess')).body.code, 'ACCESS_DENIED');
      assertLimited(await from(liar, '198.51.100.200', owner().username, owner().password), 1800);
    });

    it('counts concurrent guesses before checking any of them', async () => {
      const from = freshAddress();
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(from, 'burst-target', `burst-${i}`)));
      assert.deepEqual(answers.map((r) => r.body.code).sort(), [...Array(5).fill('ACCESS_DENIED'), ...Array(15).fill('RATE_LIMIT')]);
    });

    it("refuses the owner's own password once its name is locked", async () => {
      const from = freshAddress();
      for (let i = 0; i < 5; i++) assert.equal((await login(from, owner().username, `guess-${i}`)).body.code, 'ACCESS_DENIED');
      assertLimited(await login(freshAddress(), owner().username, owner().password), 1800);
    });

    it('limits each API key to its own budget', async () => {
      const first = basicAuth(...s.infra.basic);
      const from = freshAddress();
      const made = await s.cmd(from, 'apiuser.create', { name: 'second key' }, first);
      assert.equal(made.body.code, 'OK');
      const second = basicAuth(made.body.data.uuid, made.body.data.secret);
      // Spent by the first key: the create above and 9 more, from any address.
      for (let i = 0; i < 9; i++) assert.equal((await s.cmd(freshAddress(), 'apiuser.getall', {}, first)).body.code, 'OK');
      assertLimited(await s.cmd(from, 'apiuser.getall', {}, first), 360);
      // REST too.
      const rest = await requestFrom(from, `${s.infra.server.infraUrl}/api/rest/v2.10/apiusers`, { headers: first });
      assertLimited(rest, 360);
      // The new key holds no permissions; any valid key may exchange itself for a JWT.
      assert.equal((await s.cmd(from, 'customer.jsonwebtoken', {}, second)).body.code, 'OK');
    });
  });

  describe('with --rate-limits off', () => {
    const s = infra(engine, ['--rate-limits', 'off']);

    it('answers any number of API requests, and still locks password guessing', async () => {
      const key = basicAuth(...s.infra.basic);
      const from = freshAddress();
      for (let i = 0; i < 250; i++) {
        const r = await s.cmd(from, 'apiuser.getall', {}, key);
        assert.equal(r.body.code, 'OK');
        assert.equal(r.headers['retry-after'], undefined);
      }
      const { username, password } = s.infra.server.secrets!;
      for (let i = 0; i < 5; i++) assert.equal((await s.cmd(from, 'session.login', { username, password: 'wrong' })).body.code, 'ACCESS_DENIED');
      assertLimited(await s.cmd(from, 'session.login', { username, password }), 1800);
    });
  });
});

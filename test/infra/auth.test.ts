// Black-box: every credential form, JWT issue and revocation, and permission enforcement.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra, type RunningServer } from '../helpers/server.js';
import { send, type InfraClient } from '../helpers/infra-client.js';

const DENIED = { code: 'ACCESS_DENIED', message: 'Access Denied' };

await forEachEngine('infra credentials and permissions', (engine) => {
  let server: RunningServer;
  let api: InfraClient;
  let basic: [string, string];
  let stop: () => Promise<void>;

  before(async () => ({ server, api, basic, stop } = await startInfra(engine)));
  after(() => stop?.());

  it('accepts the API key by HTTP Basic and in the body (any case), and refuses bad ones', async () => {
    assert.equal((await api.cmd('apiuser.getall')).body.code, 'OK');
    assert.equal((await api.cmd('apiuser.getall', {}, { body: basic })).body.code, 'OK');
    assert.equal((await api.cmd('apiuser.getall', { apiuuid: basic[0], apisecret: basic[1] }, null)).body.code, 'OK');
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { basic: [basic[0], 'wrong'] })).body, DENIED);
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { basic: ['00000000-0000-0000-0000-000000000000', basic[1]] })).body, DENIED);
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { body: [basic[0], 'wrong'] })).body, DENIED);
    assert.deepEqual((await api.cmd('apiuser.getall', {}, null)).body, DENIED);
    assert.deepEqual((await api.rest('GET', '/apiusers', undefined, null)).body, DENIED);
    const garbled = await send(`${api.base}/apiusers`, {});
    assert.deepEqual(garbled.body, DENIED);
    const r = await fetch(`${api.base}/apiusers`, { headers: { authorization: 'Basic !!!' } });
    assert.deepEqual(await r.json(), DENIED);
  });

  it('answers malformed cookies and credentials that are no key with ACCESS_DENIED, not an internal error', async () => {
    for (const cookie of ['JWTSESSIONID=%E0%A4%A', 'JWTSESSIONID=%', 'JWTSESSIONID=%00', 'JWTSESSIONID=' + 'A'.repeat(6000)]) {
      const r = await fetch(`${api.base}/apiusers`, { headers: { cookie } });
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), DENIED, cookie.slice(0, 40));
    }
    for (const pair of ['\u0000:\u0000', `${basic[0]}\u0000:${basic[1]}`, `${basic[0]}:${basic[1]}\u0000`, `${'u'.repeat(3000)}:s`]) {
      const r = await fetch(`${api.base}/apiusers`, { headers: { authorization: 'Basic ' + Buffer.from(pair).toString('base64') } });
      assert.deepEqual(await r.json(), DENIED);
    }
    const raw = await fetch(`${api.base}/apiusers`, { headers: { authorization: 'Basic ' + Buffer.from([0xff, 0x00, 0x3a, 0xc3, 0x28]).toString('base64') } });
    assert.deepEqual(await raw.json(), DENIED);
    assert.deepEqual((await api.cmd('apiuser.getall', { APIUUID: `${basic[0]}\u0000`, APISECRET: basic[1] }, null)).body, DENIED);
    assert.deepEqual((await api.cmd('apiuser.getall', { APIUUID: { $ne: 1 }, APISECRET: basic[1] }, null)).body, DENIED);
  });

  it('never lets credentials reach the command as parameters or echoes the secret', async () => {
    const r = await api.cmd('apiuser.getall', {}, { body: basic });
    assert.ok(!r.text.includes(basic[1]));
  });

  it('logs in with session.login: token, sessionId and the JWTSESSIONID cookie all work', async () => {
    const bad = await api.cmd('session.login', { username: server.secrets!.username, password: 'nope', jwt: 1 }, null);
    assert.deepEqual(bad.body, DENIED);
    const r = await api.cmd('session.login', { username: server.secrets!.username, password: server.secrets!.password, jwt: 1 }, null);
    assert.equal(r.body.code, 'OK', r.text);
    assert.equal(typeof r.body.token, 'string');
    assert.equal(r.body.sessionId, r.body.token);
    assert.equal(r.body.data.token, r.body.token);
    const cookie = r.headers.get('set-cookie')!;
    assert.match(cookie, /^JWTSESSIONID=[^;]+;/);
    const fromCookie = cookie.split(';')[0].split('=')[1];
    assert.equal((await api.rest('GET', '/customers/1', undefined, { bearer: r.body.token })).body.code, 'OK');
    assert.equal((await api.cmd('customer.get', {}, { cookie: fromCookie })).body.code, 'OK');
    assert.deepEqual((await api.cmd('customer.get', {}, { bearer: r.body.token + 'x' })).body, DENIED);
    assert.deepEqual((await api.cmd('customer.get', {}, { cookie: 'not-a-jwt' })).body, DENIED);
    const missing = await api.cmd('session.login', { username: 'admin' }, null);
    assert.equal(missing.body.code, 'FAULT');
    assert.match(missing.body.message, /password/);
  });

  it('exchanges an API key for a JWT at POST /customer/jsonwebtoken', async () => {
    const r = await api.rest('POST', '/customer/jsonwebtoken', {});
    assert.equal(r.body.code, 'OK', r.text);
    const token = r.body.data.token;
    const me = await api.cmd('customer.get', {}, { bearer: token });
    assert.equal(me.body.code, 'OK');
    assert.equal(me.body.customer.id, server.secrets!.customerId);
    assert.deepEqual((await api.rest('POST', '/customer/jsonwebtoken', {}, null)).body, DENIED);
    const cmd = await api.cmd('customer.jsonwebtoken', {}, { body: basic });
    assert.equal(cmd.body.code, 'OK');
    assert.equal(cmd.body.token, cmd.body.data.token, 'command style carries the token at the top level too');
    assert.equal((await api.cmd('apiuser.getall', {}, { cookie: cmd.body.token })).body.code, 'OK');
  });

  it('logs in by REST at POST /session/login too', async () => {
    const r = await api.rest('POST', '/session/login', { username: server.secrets!.username, password: server.secrets!.password, jwt: 1 }, null);
    assert.equal(r.body.code, 'OK', r.text);
    assert.equal((await api.cmd('customer.get', {}, { bearer: r.body.data.token })).body.code, 'OK');
  });

  it('enforces permissions: a key calls only what it holds and grants only that', async () => {
    const created = await api.cmd('apiuser.create', { name: 'reader', permissions: ['apiuser.getall', 'apiuser.get'] });
    assert.equal(created.body.code, 'OK', created.text);
    const reader: [string, string] = [created.body.apiuser.uuid, created.body.apiuser.secret];
    assert.equal((await api.cmd('apiuser.getall', {}, { basic: reader })).body.code, 'OK');
    const denied = await api.cmd('apiuser.create', { name: 'x' }, { basic: reader });
    assert.equal(denied.body.code, 'ACCESS_DENIED');
    assert.deepEqual((await api.cmd('customer.get', {}, { basic: reader })).body.code, 'ACCESS_DENIED');

    const admin = await api.cmd('apiuser.create', { name: 'key admin', permissions: 'apiuser.*' });
    const keyAdmin: [string, string] = [admin.body.apiuser.uuid, admin.body.apiuser.secret];
    const sub = await api.cmd('apiuser.create', { name: 'sub', permissions: ['apiuser.get'] }, { basic: keyAdmin });
    assert.equal(sub.body.code, 'OK', sub.text);
    const escalate = await api.cmd('apiuser.create', { name: 'esc', permissions: ['*'] }, { basic: keyAdmin });
    assert.equal(escalate.body.code, 'ACCESS_DENIED');
    const self = await api.cmd('apiuser.update', { id: admin.body.apiuser.id, permissions: ['apiuser.*', 'customer.get'] }, { basic: keyAdmin });
    assert.equal(self.body.code, 'ACCESS_DENIED');

    const none = await api.cmd('apiuser.create', { name: 'nothing' });
    assert.deepEqual(none.body.apiuser.permissions, []);
    assert.equal((await api.cmd('apiuser.getall', {}, { basic: [none.body.apiuser.uuid, none.body.apiuser.secret] })).body.code, 'ACCESS_DENIED');
  });

  it('stops a disabled API user at once, by key and by its JWTs; a new secret ends the old one and every JWT it opened', async () => {
    const c = await api.cmd('apiuser.create', { name: 'temp', permissions: ['*'] });
    const key: [string, string] = [c.body.apiuser.uuid, c.body.apiuser.secret];
    const jwt = (await api.rest('POST', '/customer/jsonwebtoken', {}, { basic: key })).body.data.token;
    assert.equal((await api.cmd('apiuser.getall', {}, { bearer: jwt })).body.code, 'OK');
    const off = await api.rest('PUT', `/apiusers/${c.body.apiuser.id}`, { status: 'DISABLED' });
    assert.equal(off.body.code, 'OK', off.text);
    assert.equal(off.body.data.active, false);
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { basic: key })).body, DENIED);
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { bearer: jwt })).body, DENIED);
    const on = await api.cmd('apiuser.update', { id: c.body.apiuser.uuid, active: true });
    assert.equal(on.body.code, 'OK', on.text);
    assert.equal((await api.cmd('apiuser.getall', {}, { bearer: jwt })).body.code, 'OK', 'JWTs of a re-enabled user work again until they expire');
    const renewed = (await api.rest('POST', '/customer/jsonwebtoken', {}, { bearer: jwt })).body.data.token;
    const rotated = await api.cmd('apiuser.update', { id: c.body.apiuser.uuid, newSecret: true });
    assert.equal(typeof rotated.body.apiuser.secret, 'string');
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { basic: key })).body, DENIED, 'the old secret no longer works');
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { bearer: jwt })).body, DENIED, 'nor the JWTs it was exchanged for');
    assert.deepEqual((await api.cmd('apiuser.getall', {}, { bearer: renewed })).body, DENIED, 'nor their renewals');
    assert.equal((await api.cmd('apiuser.getall', {}, { basic: [key[0], rotated.body.apiuser.secret] })).body.code, 'OK');
    const fresh = (await api.rest('POST', '/customer/jsonwebtoken', {}, { basic: [key[0], rotated.body.apiuser.secret] })).body.data.token;
    assert.equal((await api.cmd('apiuser.getall', {}, { bearer: fresh })).body.code, 'OK');
  });
});

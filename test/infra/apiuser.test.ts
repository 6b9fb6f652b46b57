// Black-box: the apiuser.* commands through both styles, paging and the system permission list.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra, type RunningServer } from '../helpers/server.js';
import type { InfraClient } from '../helpers/infra-client.js';

await forEachEngine('apiuser commands', (engine) => {
  let server: RunningServer;
  let api: InfraClient;
  let stop: () => Promise<void>;

  before(async () => ({ server, api, stop } = await startInfra(engine)));
  after(() => stop?.());

  it('creates by REST and by command, returning the secret once', async () => {
    const rest = await api.rest('POST', '/apiusers', { name: 'rest key', permissions: ['apiuser.get'] });
    assert.equal(rest.body.code, 'OK', rest.text);
    assert.equal(rest.body.data.name, 'rest key');
    assert.match(rest.body.data.uuid, /^[0-9a-f-]{36}$/);
    assert.match(rest.body.data.secret, /^[0-9a-f]{64}$/);
    const got = await api.rest('GET', `/apiusers/${rest.body.data.id}`);
    assert.equal(got.body.data.uuid, rest.body.data.uuid);
    assert.equal(got.body.data.secret, undefined, 'the secret is never shown again');
    const cmd = await api.cmd('apiuser.create', { name: 'cmd key' });
    assert.equal(cmd.body.apiuser.name, 'cmd key');
    assert.deepEqual(cmd.body.data, cmd.body.apiuser);
  });

  it('pages with resStart/resWindow and reports the total in matches', async () => {
    for (let i = 0; i < 5; i++) await api.cmd('apiuser.create', { name: `page ${i}` });
    const all = await api.cmd('apiuser.getall', { resWindow: 1000 });
    const total = all.body.matches;
    assert.equal(all.body.apiusers.length, total);
    const page = await api.rest('GET', '/apiusers?resStart=2&resWindow=3');
    assert.equal(page.body.matches, total);
    assert.deepEqual(
      page.body.data.map((u: { id: number }) => u.id),
      all.body.apiusers.slice(2, 5).map((u: { id: number }) => u.id),
    );
    const one = await api.cmd('apiuser.getall', { resWindow: 1 });
    assert.equal(one.body.apiusers.length, 1);
    const beyond = await api.cmd('apiuser.getall', { resStart: 10_000 });
    assert.deepEqual(beyond.body.apiusers, []);
    assert.equal(beyond.body.matches, total);
    const named = await api.cmd('apiuser.getall', { name: 'PAGE', resWindow: 100 });
    assert.equal(named.body.matches, 5);
    const literal = await api.cmd('apiuser.getall', { name: '%' });
    assert.equal(literal.body.matches, 0, 'LIKE wildcards in the filter are taken literally');
    assert.equal((await api.cmd('apiuser.getall', { resStart: -1 })).body.code, 'FAULT');
  });

  it('gets by id or uuid, and answers an unknown one with an error', async () => {
    const list = await api.cmd('apiuser.getall');
    const first = list.body.apiusers[0];
    assert.equal((await api.cmd('apiuser.get', { id: first.id })).body.apiuser.uuid, first.uuid);
    assert.equal((await api.cmd('apiuser.get', { id: String(first.id) })).body.apiuser.uuid, first.uuid);
    assert.equal((await api.rest('GET', `/apiusers/${first.uuid}`)).body.data.id, first.id);
    assert.deepEqual((await api.cmd('apiuser.get', { id: 999999 })).body, { code: 'ERROR', message: 'Could not find API user' });
    assert.match((await api.cmd('apiuser.get', {})).body.message, /Missing parameter id/);
  });

  it('updates name, permissions and status, and refuses bad values without changing anything', async () => {
    const c = await api.cmd('apiuser.create', { name: 'before' });
    const id = c.body.apiuser.id;
    const u = await api.rest('PUT', `/apiusers/${id}`, { name: 'after', permissions: ['apiuser.get', 'customer.*'] });
    assert.equal(u.body.code, 'OK', u.text);
    assert.deepEqual(u.body.data.permissions, ['apiuser.get', 'customer.*']);
    const bad = await api.cmd('apiuser.update', { id, name: 'nope', status: 'SLEEPING' });
    assert.equal(bad.body.code, 'FAULT');
    assert.match(bad.body.message, /status/);
    const bad2 = await api.cmd('apiuser.update', { id, name: 'nope', permissions: ['*', 'bogus.thing'] });
    assert.equal(bad2.body.code, 'FAULT');
    const now = await api.cmd('apiuser.get', { id });
    assert.equal(now.body.apiuser.name, 'after');
    assert.deepEqual(now.body.apiuser.permissions, ['apiuser.get', 'customer.*']);
  });

  it('lets a key change, disable or rotate only keys whose permissions are all within its own', async () => {
    const owner = server.secrets!;
    const ownerKey = (await api.cmd('apiuser.getall', { resWindow: 1 })).body.apiusers[0];
    assert.equal(ownerKey.uuid, owner.apiUuid);
    const made = await api.cmd('apiuser.create', { name: 'updater', permissions: ['apiuser.update'] });
    const updater: [string, string] = [made.body.apiuser.uuid, made.body.apiuser.secret];
    const peer = (await api.cmd('apiuser.create', { name: 'peer', permissions: ['apiuser.update', 'apiuser.get'] })).body.apiuser;
    const weaker = (await api.cmd('apiuser.create', { name: 'weaker', permissions: ['apiuser.update'] })).body.apiuser;
    const before = (await api.cmd('apiuser.getall', { resWindow: 1000 })).body.apiusers;

    // The takeover: rotate the owner's key and read its new secret; and every other change of a stronger key.
    for (const [target, change] of [
      [ownerKey.id, { newSecret: true }],
      [ownerKey.uuid, { status: 'DISABLED' }],
      [ownerKey.id, { active: false }],
      [ownerKey.id, { name: 'mine now' }],
      [ownerKey.id, { permissions: ['apiuser.update'] }],
      [peer.id, { newSecret: true }],
      [peer.id, { permissions: ['apiuser.update'] }],
    ] as const) {
      const cmd = await api.cmd('apiuser.update', { id: target, ...change }, { basic: updater });
      assert.equal(cmd.body.code, 'ACCESS_DENIED', `${JSON.stringify(change)}: ${cmd.text}`);
      assert.equal(cmd.body.apiuser?.secret, undefined);
      const rest = await api.rest('PUT', `/apiusers/${target}`, change, { basic: updater });
      assert.equal(rest.body.code, 'ACCESS_DENIED', rest.text);
    }
    assert.deepEqual((await api.cmd('apiuser.getall', { resWindow: 1000 })).body.apiusers, before, 'nothing changed');
    assert.equal((await api.cmd('customer.get')).body.code, 'OK', "the owner's secret still works");

    // Within its own: a key with the same permissions, and itself.
    const rotated = await api.cmd('apiuser.update', { id: weaker.id, newSecret: true, name: 'renamed' }, { basic: updater });
    assert.equal(rotated.body.code, 'OK', rotated.text);
    assert.equal(typeof rotated.body.apiuser.secret, 'string');
    const self = await api.cmd('apiuser.update', { id: made.body.apiuser.id, newSecret: true }, { basic: updater });
    assert.equal(self.body.code, 'OK', self.text);
    // Nobody raises a key above what they hold, not even one it may manage.
    const raise = await api.cmd('apiuser.update', { id: weaker.id, permissions: ['apiuser.update', 'apiuser.get'] }, { basic: [made.body.apiuser.uuid, self.body.apiuser.secret] });
    assert.equal(raise.body.code, 'ACCESS_DENIED', raise.text);

    // The owner's login manages every key.
    const login = await api.cmd('session.login', { username: owner.username, password: owner.password, jwt: 1 }, null);
    const byLogin = await api.cmd('apiuser.update', { id: peer.id, name: 'by owner' }, { bearer: login.body.token });
    assert.equal(byLogin.body.code, 'OK', byLogin.text);
  });

  it('refuses a value of the wrong type, null included, instead of reading it as a default', async () => {
    const c = (await api.cmd('apiuser.create', { name: 'typed', permissions: ['apiuser.get'] })).body.apiuser;
    const cases: [string, unknown][] = [
      ['active', null],
      ['active', 'yes'],
      ['active', 0],
      ['active', ''],
      ['newSecret', null],
      ['newSecret', 1],
      ['newSecret', 'maybe'],
      ['status', null],
      ['status', 'active'],
      ['name', null],
      ['name', 42],
      ['name', ''],
      ['name', 'x'.repeat(100_000)],
      ['name', 'a\u0000b'],
      ['permissions', null],
      ['permissions', 7],
      ['permissions', [null]],
    ];
    for (const [field, value] of cases) {
      const r = await api.cmd('apiuser.update', { id: c.id, [field]: value });
      assert.equal(r.body.code, 'FAULT', `${field}=${JSON.stringify(value)}: ${r.text}`);
      assert.ok(r.body.error && field in r.body.error, r.text);
    }
    for (const id of [null, 1.5, '', '99999999999999999999999', 2 ** 64]) {
      const r = await api.cmd('apiuser.get', { id });
      assert.ok(r.body.code === 'FAULT' || r.body.message === 'Could not find API user', `id=${JSON.stringify(id)}: ${r.text}`);
    }
    const r = await api.cmd('apiuser.getall', { resWindow: 1e12 });
    assert.deepEqual(r.body, { code: 'FAULT', message: 'Invalid parameter resWindow: must be at most 50000', error: { resWindow: 'must be at most 50000' } });
    const now = (await api.cmd('apiuser.get', { id: c.id })).body.apiuser;
    assert.equal(now.status, 'ACTIVE', '"active": null did not disable the key');
    assert.equal(now.name, 'typed');
    assert.deepEqual(now.permissions, ['apiuser.get']);
    assert.equal(now.dateModified, c.dateModified);
    // What query strings carry is still understood.
    const byQuery = await api.rest('PUT', `/apiusers/${c.id}?active=false`);
    assert.equal(byQuery.body.data?.active, false, byQuery.text);
  });

  it('lists every permission that exists: "*", each family.* and each command', async () => {
    const r = await api.rest('GET', '/apiusers/permissions/system');
    assert.equal(r.body.code, 'OK');
    const perms: string[] = r.body.data;
    for (const p of ['*', 'apiuser.*', 'customer.*', 'apiuser.getall', 'apiuser.create', 'apiuser.get', 'apiuser.update', 'apiuser.permissions.system', 'customer.get']) {
      assert.ok(perms.includes(p), p);
    }
    assert.ok(!perms.includes('session.login'), 'public commands need no permission');
    // Sub-family wildcards exist too, and grant what they say.
    for (const p of ['dns.*', 'dns.record.*', 'dns.domain.*', 'apiuser.permissions.*']) assert.ok(perms.includes(p), p);
    const rec = await api.cmd('apiuser.create', { name: 'records only', permissions: ['dns.record.*'] });
    assert.equal(rec.body.code, 'OK', rec.text);
    const recKey: [string, string] = [rec.body.apiuser.uuid, rec.body.apiuser.secret];
    assert.equal((await api.cmd('dns.record.getall', {}, { basic: recKey })).body.code, 'OK');
    assert.equal((await api.cmd('dns.domain.getall', {}, { basic: recKey })).body.code, 'ACCESS_DENIED');
    const cmd = await api.cmd('apiuser.permissions.system');
    assert.deepEqual(cmd.body.permissions, perms);
  });

  it("returns the caller's customer from customer.get", async () => {
    const r = await api.cmd('customer.get');
    assert.equal(r.body.code, 'OK');
    const c = r.body.customer;
    assert.equal(c.id, server.secrets!.customerId);
    for (const f of ['companyName', 'stdName', 'firstName', 'lastName', 'status', 'parentID', 'dateCreated', 'dateModified', 'currency']) assert.ok(f in c, f);
    assert.equal((await api.rest('GET', `/customers/${c.id}`)).body.data.id, c.id);
    assert.equal((await api.cmd('customer.get', { id: c.id + 1 })).body.message, 'Could not find customer');
  });
});

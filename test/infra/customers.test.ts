// Black-box: customer.* through both styles. The operator's first customer is a reseller and makes
// sub-customers; a sub-customer made a reseller makes its own; each sees its tree and nothing above or
// beside it (answered exactly as a missing customer); only sub-customers can be suspended.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { runKeel, startInfra, storageArgs, type RunningServer, type Storage } from '../helpers/server.js';
import { InfraClient } from '../helpers/infra-client.js';
import { createCustomer, type TestCustomer } from '../helpers/infra-customers.js';

const NOT_FOUND = { code: 'ERROR', message: 'Could not find customer' };

/** Every field of DOCS' customer object with the type a strict decoder wants. */
function assertCustomerShape(c: Record<string, unknown>): void {
  const types: Record<string, string> = {
    id: 'number',
    companyName: 'string',
    stdName: 'string',
    firstName: 'string',
    lastName: 'string',
    email: 'string',
    companyABN: 'string',
    companyACN: 'string',
    customID: 'string',
    status: 'string',
    parentID: 'number',
    parentStdName: 'string',
    dateCreated: 'number',
    dateModified: 'number',
    currency: 'string',
    isreseller: 'boolean',
  };
  for (const [field, type] of Object.entries(types)) assert.equal(typeof c[field], type, `${field}: ${JSON.stringify(c[field])}`);
  assert.ok(Number.isInteger(c.id) && Number.isInteger(c.parentID) && Number.isInteger(c.dateCreated), 'integers');
  assert.deepEqual(c.locations, []);
}

await forEachEngine('customer commands', (engine) => {
  let server: RunningServer;
  let storage: Storage;
  let api: InfraClient;
  let stop: () => Promise<void>;
  let operatorId: number;
  /** A top-level customer that is not a reseller (keel admin create-customer). */
  let plain: TestCustomer;

  before(async () => {
    ({ server, storage, api, stop } = await startInfra(engine));
    operatorId = server.secrets!.customerId;
    plain = await createCustomer(storage, server.infraUrl, 'plain');
  });
  after(() => stop?.());

  it("shows the operator's customer as a reseller with no parent", async () => {
    const r = await api.cmd('customer.get');
    assert.equal(r.body.code, 'OK', r.text);
    assertCustomerShape(r.body.customer);
    assert.equal(r.body.customer.id, operatorId);
    assert.equal(r.body.customer.isreseller, true);
    assert.equal(r.body.customer.parentID, 0);
    assert.equal(r.body.customer.parentStdName, '');
    const mine = await plain.api.cmd('customer.get');
    assert.equal(mine.body.customer.isreseller, false, 'a customer made by keel admin is not a reseller unless asked');
  });

  it('makes sub-customers by REST and by command, under the caller', async () => {
    const rest = await api.rest('POST', '/customers', { companyName: 'Sub One', firstName: 'Ann', lastName: 'Lee', email: 'ann@sub.example', companyABN: '51 824 753 556', customID: 'S1' });
    assert.equal(rest.body.code, 'OK', rest.text);
    const one = rest.body.data;
    assertCustomerShape(one);
    assert.equal(one.companyName, 'Sub One');
    assert.equal(one.stdName, 'SUB ONE');
    assert.equal(one.parentID, operatorId);
    assert.equal(one.parentStdName, 'KEEL');
    assert.equal(one.status, 'ACTIVE');
    assert.equal(one.currency, 'AUD', "the parent's currency");
    assert.equal(one.isreseller, false);
    assert.equal(one.customID, 'S1');
    const cmd = await api.cmd('customer.create', { companyName: 'Sub Two', currency: 'USD', isreseller: true });
    assert.equal(cmd.body.code, 'OK', cmd.text);
    assert.deepEqual(cmd.body.data, cmd.body.customer);
    assert.equal(cmd.body.customer.currency, 'USD');
    assert.equal(cmd.body.customer.isreseller, true);
    // Both read back, by REST path and by command.
    assert.deepEqual((await api.rest('GET', `/customers/${one.id}`)).body.data, one);
    // As the Go and Python clients address REST (/api/<ver>/, no rest/), and with the family singular.
    const go = new InfraClient(server.infraUrl, api.auth, '/api/v2.9');
    assert.deepEqual((await go.rest('GET', `/customer/${one.id}`)).body.data, one);
    assert.equal((await api.cmd('customer.get', { id: String(cmd.body.customer.id) })).body.customer.companyName, 'Sub Two');
  });

  it('refuses bad input naming the field, and creates nothing', async () => {
    const before = (await api.cmd('customer.getall', { resWindow: 1 })).body.count;
    for (const [params, field] of [
      [{}, 'companyName'],
      [{ companyName: '' }, 'companyName'],
      [{ companyName: '   ' }, 'companyName'],
      [{ companyName: 'X', email: 'not-an-address' }, 'email'],
      [{ companyName: 'X', status: 'DELETED' }, 'status'],
      [{ companyName: 'X', currency: 'dollars' }, 'currency'],
      [{ companyName: 'X', isreseller: 'maybe' }, 'isreseller'],
      [{ companyName: 'X', parentId: 'one' }, 'parentId'],
      [{ companyName: 'x'.repeat(201) }, 'companyName'],
    ] as [Record<string, unknown>, string][]) {
      const r = await api.cmd('customer.create', params);
      assert.equal(r.body.code, 'FAULT', `${JSON.stringify(params)}: ${r.text}`);
      assert.ok(field in r.body.error, `${JSON.stringify(params)} names ${field}: ${r.text}`);
      assert.match(r.body.message, new RegExp(field));
    }
    assert.equal((await api.cmd('customer.getall', { resWindow: 1 })).body.count, before);
  });

  it('lets only a reseller or partner make sub-customers', async () => {
    const r = await plain.api.cmd('customer.create', { companyName: 'Nope' });
    assert.deepEqual(r.body, { code: 'ACCESS_DENIED', message: `Access Denied: customer ${plain.customerId} is not a reseller or partner, so it cannot have sub-customers` });
    const rest = await plain.api.rest('POST', '/customers', { companyName: 'Nope' });
    assert.equal(rest.body.code, 'ACCESS_DENIED');
    assert.equal((await plain.api.cmd('customer.getall')).body.count, 1, 'nothing was made');
    // Under a sub-customer that is no reseller: refused the same way; under one outside the tree: not found.
    const sub = (await api.cmd('customer.create', { companyName: 'Leaf' })).body.customer;
    const under = await api.cmd('customer.create', { companyName: 'Below leaf', parentId: sub.id });
    assert.equal(under.body.code, 'ACCESS_DENIED');
    assert.match(under.body.message, new RegExp(`customer ${sub.id} is not a reseller`));
    assert.deepEqual((await api.cmd('customer.create', { companyName: 'Beside', parentId: plain.customerId })).body, NOT_FOUND);
    assert.deepEqual((await api.cmd('customer.create', { companyName: 'Nowhere', parentId: 999_999 })).body, NOT_FOUND);
  });

  it('lists the caller and its tree with count, customers, data and matches; filters and pages', async () => {
    const all = await api.cmd('customer.getall', { resWindow: 1000 });
    assert.equal(all.body.code, 'OK', all.text);
    const list = all.body.customers;
    assert.equal(all.body.count, list.length);
    assert.equal(all.body.matches, list.length);
    assert.deepEqual(all.body.data, list);
    assert.equal(list[0].id, operatorId, 'the caller first (ids ascending)');
    for (const c of list) assertCustomerShape(c);
    assert.ok(!list.some((c: { id: number }) => c.id === plain.customerId), 'no customer beside the caller');
    const ids = list.map((c: { id: number }) => c.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a: number, b: number) => a - b),
    );

    const page = await api.rest('GET', '/customers?resStart=1&resWindow=2');
    assert.equal(page.body.matches, list.length);
    assert.equal(page.body.count, undefined, 'REST answers carry data and matches');
    assert.deepEqual(
      page.body.data.map((c: { id: number }) => c.id),
      ids.slice(1, 3),
    );
    const beyond = await api.cmd('customer.getall', { resStart: 10_000 });
    assert.deepEqual(beyond.body.customers, []);
    assert.equal(beyond.body.count, list.length);

    const children = await api.cmd('customer.getall', { parentId: operatorId, resWindow: 1000 });
    assert.equal(children.body.count, list.length - 1);
    assert.ok(children.body.customers.every((c: { parentID: number }) => c.parentID === operatorId));
    assert.equal((await api.cmd('customer.getall', { customerParentId: operatorId, resWindow: 1000 })).body.count, list.length - 1);
    const kw = await api.cmd('customer.getall', { keyword: 'ANN@SUB' });
    assert.deepEqual(
      kw.body.customers.map((c: { companyName: string }) => c.companyName),
      ['Sub One'],
    );
    assert.equal((await api.cmd('customer.getall', { stdName: 'sub t' })).body.customers[0].companyName, 'Sub Two');
    assert.equal((await api.cmd('customer.getall', { keyword: '%' })).body.count, 0, 'LIKE wildcards are literal');
    assert.equal((await api.cmd('customer.getall', { id: plain.customerId })).body.count, 0, 'a customer outside the tree is not listed');
    assert.equal((await api.cmd('customer.getall', { resWindow: 0 })).body.code, 'FAULT');
  });

  it("answers another customer's account and a missing one alike", async () => {
    assert.deepEqual((await api.cmd('customer.get', { id: plain.customerId })).body, NOT_FOUND);
    assert.deepEqual((await api.rest('GET', `/customers/${plain.customerId}`)).body, NOT_FOUND);
    assert.deepEqual((await api.cmd('customer.get', { id: 999_999 })).body, NOT_FOUND);
    // Nor can the plain customer see the operator's tree.
    const sub = (await api.cmd('customer.getall', { parentId: operatorId })).body.customers[0];
    assert.deepEqual((await plain.api.cmd('customer.get', { id: sub.id })).body, NOT_FOUND);
    assert.deepEqual((await plain.api.cmd('customer.get', { id: operatorId })).body, NOT_FOUND);
    assert.deepEqual((await plain.api.rest('PUT', `/customers/${sub.id}`, { companyName: 'Hijacked' })).body, NOT_FOUND);
    assert.equal((await api.cmd('customer.get', { id: sub.id })).body.customer.companyName, sub.companyName);
  });

  it('updates names and references; status and the reseller flag only on sub-customers; bad input changes nothing', async () => {
    const made = (await api.cmd('customer.create', { companyName: 'Before Ltd' })).body.customer;
    const u = await api.rest('PUT', `/customers/${made.id}`, { companyName: 'After Ltd', firstName: 'Bo', email: 'bo@after.example', customID: 'A-1', companyACN: '004 085 616' });
    assert.equal(u.body.code, 'OK', u.text);
    assert.equal(u.body.data.companyName, 'After Ltd');
    assert.equal(u.body.data.stdName, 'AFTER LTD');
    assert.equal(u.body.data.firstName, 'Bo');
    assert.equal(u.body.data.companyACN, '004 085 616');
    assert.equal(u.body.data.dateCreated, made.dateCreated);
    const now = (await api.cmd('customer.get', { id: made.id })).body.customer;
    for (const [params, field] of [
      [{ companyName: '' }, 'companyName'],
      [{ firstName: 'Cy', companyName: ' ' }, 'companyName'],
      [{ firstName: 'Cy', email: 'nope' }, 'email'],
      [{ lastName: 'Dee', status: 'GONE' }, 'status'],
      [{ lastName: 'Dee', isreseller: 3 }, 'isreseller'],
      [{ lastName: 'x'.repeat(101) }, 'lastName'],
    ] as [Record<string, unknown>, string][]) {
      const r = await api.cmd('customer.update', { id: made.id, ...params });
      assert.equal(r.body.code, 'FAULT', `${JSON.stringify(params)}: ${r.text}`);
      assert.ok(field in r.body.error, `${JSON.stringify(params)} names ${field}: ${r.text}`);
    }
    assert.deepEqual((await api.cmd('customer.get', { id: made.id })).body.customer, now, 'nothing changed');

    // The caller's own account: names yes, status and reseller flag no.
    const own = await api.cmd('customer.update', { firstName: 'Operator' });
    assert.equal(own.body.customer.firstName, 'Operator');
    for (const field of ['status', 'isreseller']) {
      const r = await api.cmd('customer.update', { id: operatorId, lastName: 'Changed', [field]: field === 'status' ? 'SUSPENDED' : false });
      assert.equal(r.body.code, 'FAULT', r.text);
      assert.deepEqual(r.body.error, { [field]: "cannot be changed on the caller's own customer, only on its sub-customers" });
    }
    const echoed = await api.cmd('customer.update', { id: operatorId, status: 'ACTIVE', isreseller: true, lastName: 'Echo' });
    assert.equal(echoed.body.code, 'OK', `its own values sent back unchanged are fine: ${echoed.text}`);
    await api.cmd('customer.update', { lastName: '' });
    const self = (await api.cmd('customer.get')).body.customer;
    assert.equal(self.status, 'ACTIVE');
    assert.equal(self.isreseller, true);
    assert.equal(self.lastName, '', 'a refused update wrote none of its fields');
  });

  it('gives a sub-customer an owner login when the caller holds every permission, and refuses anything less', async () => {
    const made = await api.rest('POST', '/customers', { companyName: 'With Login', username: 'withlogin', password: 'pass-word-7' });
    assert.equal(made.body.code, 'OK', made.text);
    assert.equal(made.body.data.password, undefined, 'no secret is echoed');
    const login = await api.cmd('session.login', { username: 'withlogin', password: 'pass-word-7', jwt: 1 }, null);
    assert.equal(login.body.code, 'OK', login.text);
    const own = await api.cmd('customer.get', {}, { bearer: login.body.token });
    assert.equal(own.body.customer.id, made.body.data.id, "the login is the sub-customer's");
    // Its owner may make its own API keys.
    assert.equal((await api.cmd('apiuser.create', { name: 'sub key', permissions: ['*'] }, { bearer: login.body.token })).body.code, 'OK');

    const count = async () => (await api.cmd('customer.getall', { resWindow: 1 })).body.count;
    const before = await count();
    for (const [params, field] of [
      [{ companyName: 'L1', username: 'withlogin', password: 'pass-word-8' }, 'username'],
      [{ companyName: 'L2', username: 'has space', password: 'pass-word-8' }, 'username'],
      [{ companyName: 'L3', username: 'nopass' }, 'password'],
      [{ companyName: 'L4', password: 'pass-word-8' }, 'username'],
      [{ companyName: 'L5', username: 'short', password: 'abc' }, 'password'],
    ] as [Record<string, unknown>, string][]) {
      const r = await api.cmd('customer.create', params);
      assert.equal(r.body.code, 'FAULT', `${JSON.stringify(params)}: ${r.text}`);
      assert.ok(field in r.body.error, `${JSON.stringify(params)} names ${field}: ${r.text}`);
    }
    assert.equal((await api.cmd('customer.create', { companyName: 'L3', username: 'nopass' })).body.error.password, 'is required with username: a login has both');
    // A key allowed customer.create but not everything makes customers, not logins.
    const key = (await api.cmd('apiuser.create', { name: 'creator', permissions: ['customer.*'] })).body.apiuser;
    const creator = new InfraClient(server.infraUrl, { basic: [key.uuid, key.secret] });
    const refused = await creator.cmd('customer.create', { companyName: 'Sneaky', username: 'sneaky', password: 'pass-word-9' });
    assert.deepEqual(refused.body, { code: 'ACCESS_DENIED', message: 'Access Denied: cannot grant "*", which this caller does not hold' });
    assert.equal(await count(), before, 'nothing was made');
    assert.equal((await api.cmd('session.login', { username: 'sneaky', password: 'pass-word-9' }, null)).body.code, 'ACCESS_DENIED');
    assert.equal((await creator.cmd('customer.create', { companyName: 'Plain sub' })).body.code, 'OK');
  });

  it('lets a sub-reseller make its own tree, see only that, and be suspended by its parent only', async () => {
    // An operator makes a sub-customer with credentials from the command line.
    const cli = await runKeel([
      'admin',
      'create-customer',
      '--company-name',
      'Partner Co',
      '--username',
      'partner',
      '--parent',
      String(operatorId),
      '--reseller',
      'yes',
      '--json',
      ...storageArgs(storage),
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const partnerMade = JSON.parse(cli.stdout);
    assert.equal(partnerMade.parentId, operatorId);
    const partner = new InfraClient(server.infraUrl, { basic: [partnerMade.apiUuid, partnerMade.apiSecret] });
    const me = (await partner.cmd('customer.get')).body.customer;
    assert.equal(me.parentID, operatorId);
    assert.equal(me.isreseller, true);

    const child = (await partner.cmd('customer.create', { companyName: 'Grandchild' })).body.customer;
    assert.equal(child.parentID, partnerMade.customerId);
    assert.equal(child.parentStdName, 'PARTNER CO');
    // The operator sees two levels down; the partner sees itself and its child only.
    assert.equal((await api.cmd('customer.get', { id: child.id })).body.customer.companyName, 'Grandchild');
    assert.equal((await api.cmd('customer.getall', { parentId: partnerMade.customerId })).body.count, 1);
    const theirs = await partner.cmd('customer.getall');
    assert.deepEqual(
      theirs.body.customers.map((c: { id: number }) => c.id),
      [partnerMade.customerId, child.id],
    );
    assert.deepEqual((await partner.cmd('customer.get', { id: operatorId })).body, NOT_FOUND, 'its parent is not visible');
    assert.deepEqual((await partner.cmd('customer.update', { id: operatorId, status: 'SUSPENDED' })).body, NOT_FOUND, 'nor can it suspend its parent');
    const selfSuspend = await partner.cmd('customer.update', { status: 'SUSPENDED' });
    assert.equal(selfSuspend.body.code, 'FAULT');
    assert.ok('status' in selfSuspend.body.error);

    // A parent suspends its sub-customer: its credentials stop working until it is ACTIVE again.
    assert.equal((await partner.cmd('customer.update', { id: child.id, status: 'SUSPENDED' })).body.customer.status, 'SUSPENDED');
    const s = await api.rest('PUT', `/customers/${partnerMade.customerId}`, { status: 'SUSPENDED' });
    assert.equal(s.body.data.status, 'SUSPENDED', s.text);
    assert.equal((await partner.cmd('customer.get')).body.code, 'ACCESS_DENIED');
    const login = await partner.cmd('session.login', { username: 'partner', password: partnerMade.password, jwt: 1 }, null);
    assert.equal(login.body.code, 'ACCESS_DENIED');
    assert.equal((await api.cmd('customer.update', { id: partnerMade.customerId, status: 'ACTIVE' })).body.code, 'OK');
    assert.equal((await partner.cmd('customer.get')).body.code, 'OK');
    // The parent takes the reseller flag back: no more sub-customers, those made stay.
    assert.equal((await api.cmd('customer.update', { id: partnerMade.customerId, isreseller: false })).body.customer.isreseller, false);
    assert.equal((await partner.cmd('customer.create', { companyName: 'Late' })).body.code, 'ACCESS_DENIED');
    assert.equal((await partner.cmd('customer.get', { id: child.id })).body.customer.status, 'SUSPENDED');
  });
});

// Black-box over HTTP (the Infra server built in-process, driven through its request pipeline):
// order.* and order.contract.* as the Go client and Terraform call them, with every answer checked
// against the Go types those clients decode into; every refusal of order.create names its field and
// leaves nothing behind; another customer's orders and contracts answer as missing ones; bounds.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessInfra } from '../helpers/in-process.js';
import { assertGoShape } from '../helpers/go-types.js';
import { CONFIRMED, CONTRACT, CREATED, ORDER } from '../helpers/go-shapes.js';
import { createCustomer } from '../../src/infra/accounts.js';
import { ManualClock } from '../../src/platform/clock.js';
import { sha512Crypt } from '../../src/platform/auth/sha512-crypt.js';
import { MAX_PENDING_ORDERS_PER_CUSTOMER, MAX_SERVERS_PER_CUSTOMER } from '../../src/infra/commands/order.js';

/** GO orderCreateResponse, orderConfirmResponse, Order (order.get's data) and OrderContract (+ the fixture's other fields). */
/** What Terraform's resourceRackcorpServerCreate sends (GO ProductDetails with its omitempty rules). */
function terraformDetails(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    credentials: [{ username: 'root', password: 'Secret-pass-1' }],
    install: { operatingSystem: 'UBUNTU22.04_64', postInstallScript: '#!/bin/sh\necho hi\n' },
    cpu: 2,
    memoryGB: 4,
    storage: [{ sizeGB: 40, type: 'SSD' }],
    firewallPolicies: [{ id: 0, direction: 'INBOUND', policy: 'ALLOW', order: 10, protocol: 'TCP', portTo: '22', deviceId: 0 }],
    location: 'GLOBALSWITCH-SYD1',
    hostname: 'web1.orders.example',
    ...over,
  };
}

await forEachEngine('order commands', (engine) => {
  let storage: Storage;
  let infra: Awaited<ReturnType<typeof inProcessInfra>>;
  let customerId: number;
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:00Z'));
  let other: { authorization: string; customerId: number };

  before(async () => {
    storage = await createStorage(engine);
    infra = await inProcessInfra(storage, { clock });
    customerId = infra.ctx.created!.customerId;
    const made = await createCustomer(infra.ctx.db.kysely, { companyName: 'Other', username: 'other', password: 'x', passwordHash: 'x' }, 1);
    other = { authorization: 'Basic ' + Buffer.from(`${made.apiUuid}:${made.apiSecret}`).toString('base64'), customerId: made.customerId };
  });
  after(async () => {
    await infra?.close();
    await storage?.dispose();
  });

  const cmd = (c: string, p: Record<string, unknown> = {}, headers?: Record<string, string>) => infra.cmd(c, p, headers);
  async function rest(method: string, path: string, body?: unknown, prefix = '/api/rest/v2.10') {
    const auth = 'Basic ' + Buffer.from(`${infra.ctx.created!.apiUuid}:${infra.ctx.created!.apiSecret}`).toString('base64');
    const res = await infra.app.inject({
      method,
      url: prefix + path,
      headers: { authorization: auth, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return JSON.parse(res.body) as Record<string, any>;
  }
  const counts = async () => {
    const db = infra.ctx.db.kysely;
    const o = await db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const c = await db
      .selectFrom('contracts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return [Number(o.n), Number(c.n)];
  };

  it("replays Terraform's create and read: order.create, order.confirm, order.contract.get PENDING, REST order.get", async () => {
    const created = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_PERFORMANCE_AU', customerId: String(customerId), productDetails: terraformDetails() });
    assert.equal(created.code, 'OK', JSON.stringify(created));
    assert.equal(created.message, 'Order created');
    assertGoShape(created, CREATED, 'order.create');
    assert.ok(created.orderId > 0);
    // PERFORMANCE: base 10, 7 per core, 5 per GB, 0.2 per SSD GB, 3 per IPv4; Ubuntu free.
    assert.equal(
      created.changeTxt,
      'Add NEW LOCATION: GLOBALSWITCH-SYD1 ($10.00)\nAdd NEW CPU: 2 ($14.00)\nAdd NEW MEMORYGB: 4 ($20.00)\nAdd NEW STORAGEGB: 40 ($8.00)\nAdd NEW TRAFFICGB: 2000 ($0.00)\nAdd NEW IPV4: 1 ($3.00)\nAdd NEW OPERATINGSYSTEM: UBUNTU22.04_64 ($0.00)\n',
    );

    const before = await rest('GET', `/order/${created.orderId}`, {}, '/api/v2.9');
    assert.equal(before.code, 'OK', JSON.stringify(before));
    assertGoShape(before.data, ORDER, 'order.get data');
    assert.deepEqual(
      { ...before.data, contractIds: undefined },
      { ...before.data, orderId: String(created.orderId), customerId: String(customerId), status: 'PENDING', contractId: '', contractIds: undefined },
    );

    // The Go client sends orderId as a string.
    const confirmed = await cmd('order.confirm', { orderId: String(created.orderId) });
    assert.equal(confirmed.code, 'OK', JSON.stringify(confirmed));
    assert.equal(confirmed.message, 'Order confirmed');
    assertGoShape(confirmed, CONFIRMED, 'order.confirm');
    assert.equal(confirmed.contractID.length, 1, 'Terraform requires exactly one contract');
    const contractId = confirmed.contractID[0];

    const contract = await cmd('order.contract.get', { contractId: String(contractId) });
    assert.equal(contract.code, 'OK', JSON.stringify(contract));
    assert.equal(contract.message, 'Contract lookup successful');
    assertGoShape(contract.contract, CONTRACT, 'order.contract.get');
    assert.equal(contract.contract.status, 'PENDING');
    assert.equal(contract.contract.deviceID, '', 'no device while pending');
    assert.equal(contract.contract.type, 'VIRTUALSERVER');
    assert.equal(contract.contract.contractId, String(contractId));

    const read = await rest('GET', `/order/${created.orderId}`, {}, '/api/v2.8');
    assert.equal(read.message, 'Order lookup successful');
    assertGoShape(read.data, ORDER, 'order.get data');
    assert.equal(read.data.status, 'ACCEPTED');
    assert.equal(read.data.contractId, String(contractId));
    const byCmd = await cmd('order.get', { orderId: String(created.orderId) });
    assertGoShape(byCmd.order, ORDER, 'order.get (cmd)');
    assert.deepEqual(byCmd.order, read.data);

    // The contract is due now, for the worker; the stored details hold no plaintext password.
    const row = await infra.ctx.db.kysely.selectFrom('contracts').selectAll().where('id', '=', contractId).executeTakeFirstOrThrow();
    assert.equal(row.status, 'PENDING');
    assert.equal(row.device_id, null);
    assert.equal(Number(row.due_at), clock.now(), 'due at once, on the injectable clock');
    const order = await infra.ctx.db.kysely.selectFrom('orders').selectAll().where('id', '=', created.orderId).executeTakeFirstOrThrow();
    assert.ok(!order.details.includes('Secret-pass-1'), 'no plaintext password is stored');
    const details = JSON.parse(order.details);
    assert.equal(details.credentials[0].username, 'root');
    assert.match(details.credentials[0].passwordHash, /^\$6\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
    assert.equal(sha512Crypt('Secret-pass-1', details.credentials[0].passwordHash), details.credentials[0].passwordHash);
    assert.equal(details.dcId, 19);
    assert.deepEqual(details.storage, [{ name: 'disk1', sizeGB: 40, type: 'SSD', order: 1 }]);
    assert.equal(details.install.operatingSystem, 'UBUNTU22.04_64');
    assert.equal(details.firewallPolicies[0].portTo, '22');
    assert.equal(order.cost_cents, 5500);
  });

  it('confirms again with the same contracts, makes one contract per server, and takes defaults', async () => {
    const created = await cmd('order.create', { productCode: 'server_virtual_budget_au', customerId, quantity: 3, productDetails: { credentials: null, cpu: 1, memoryGB: 1, dcId: '21' } });
    assert.equal(created.code, 'OK', JSON.stringify(created));
    const first = await cmd('order.confirm', { orderId: created.orderId });
    assert.equal(first.contractID.length, 3);
    const again = await cmd('order.confirm', { orderId: String(created.orderId) });
    assert.deepEqual(again.contractID, first.contractID);
    const got = await cmd('order.get', { orderId: created.orderId });
    assert.equal(got.order.contractId, String(first.contractID[0]), 'the first contract');
    const rest1 = await rest('POST', `/order/${created.orderId}/confirm`, {});
    assert.deepEqual(rest1.data.contractID, first.contractID);
    const details = JSON.parse((await infra.ctx.db.kysely.selectFrom('orders').select('details').where('id', '=', created.orderId).executeTakeFirstOrThrow()).details);
    assert.match(details.hostname, /^server-[0-9a-f]{8}$/);
    assert.equal(details.dcId, 21);
    assert.deepEqual(details.credentials, []);
    assert.equal(details.install.operatingSystem, '');
    assert.equal(details.nics[0].ipv4, 1);
  });

  it('refuses every impossible order with a FAULT naming the field, and creates nothing', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ productCode: 'SERVER_VIRTUAL_HUGE_AU' }, 'productCode', /unknown product code/],
      [{ productCode: '' }, 'productCode', /empty/],
      [{ customerId: 999_999 }, 'customerId', /caller's customer/],
      [{ customerId: 'abc' }, 'customerId', /integer/],
      [{ quantity: 0 }, 'quantity', /at least 1/],
      [{ quantity: 101 }, 'quantity', /at most 100/],
      [{ productDetails: terraformDetails({ location: 'NOWHERE-1' }) }, 'productDetails.location', /unknown data centre/],
      [{ productDetails: terraformDetails({ location: undefined, dcId: '999' }) }, 'productDetails.dcId', /unknown data centre/],
      [{ productDetails: terraformDetails({ location: 'EQUINIX-LA1' }) }, 'productDetails.location', /not sold in RC-US-EQUINIXLA/],
      [{ productDetails: terraformDetails({ dcId: 20 }) }, 'productDetails.location', /not the data centre given as dcId/],
      [{ productDetails: terraformDetails({ cpu: 33 }) }, 'productDetails.cpu', /at most 32/],
      [{ productDetails: terraformDetails({ cpu: -1 }) }, 'productDetails.cpu', /at least 1/],
      [{ productDetails: terraformDetails({ memoryGB: 257 }) }, 'productDetails.memoryGB', /at most 256/],
      [{ productDetails: terraformDetails({ memoryGB: 'lots' }) }, 'productDetails.memoryGB', /integer/],
      [{ productDetails: terraformDetails({ trafficGB: 20_001 }) }, 'productDetails.trafficGB', /at most 20000/],
      [{ productDetails: terraformDetails({ storage: [{ sizeGB: 5, type: 'SSD' }] }) }, 'productDetails.storage.0.sizeGB', /at least 10/],
      [{ productDetails: terraformDetails({ storage: [{ sizeGB: 20, type: 'TAPE' }] }) }, 'productDetails.storage.0.type', /MAGNETIC/],
      [{ productDetails: terraformDetails({ storage: Array.from({ length: 9 }, () => ({ sizeGB: 20, type: 'SSD' })) }) }, 'productDetails.storage', /at most 8/],
      [{ productDetails: terraformDetails({ install: { operatingSystem: 'BEOS5' } }) }, 'productDetails.install.operatingSystem', /unknown operating system/],
      [{ productDetails: terraformDetails({ install: { template: 'NOPE' } }) }, 'productDetails.install.template', /unknown template/],
      [{ productDetails: terraformDetails({ hostname: 'bad_name!' }) }, 'productDetails.hostname', /host name/],
      [{ productDetails: terraformDetails({ credentials: [{ username: 'Root Admin', password: 'x' }] }) }, 'productDetails.credentials.0.username', /user name/],
      [{ productDetails: terraformDetails({ credentials: [{ username: 'root', password: '' }] }) }, 'productDetails.credentials.0.password', /empty/],
      [{ productDetails: terraformDetails({ nics: [{ speed: 1000, ipv4: 17 }] }) }, 'productDetails.nics', /more than 16 IPv4/],
      [{ productDetails: terraformDetails({ firewallPolicies: [{ direction: 'SIDEWAYS', policy: 'ALLOW' }] }) }, 'productDetails.firewallPolicies.0.direction', /INBOUND/],
      [{ productDetails: terraformDetails({ firewallPolicies: [{ direction: 'INBOUND', policy: 'ALLOW', portTo: '70000' }] }) }, 'productDetails.firewallPolicies.0.portTo', /port from 1 to 65535/],
      [{ productDetails: terraformDetails({ firewallPolicies: [{ id: 3, direction: 'INBOUND', policy: 'DELETED' }] }) }, 'productDetails.firewallPolicies.0.policy', /DELETED/],
      [{ productDetails: terraformDetails({ timezone: 'Mars/Olympus Mons' }) }, 'productDetails.timezone', /time zone/],
      [{ productDetails: terraformDetails({ nics: Array.from({ length: 5 }, () => ({ speed: 1000, ipv4: 0 })) }) }, 'productDetails.nics', /at most 4/],
      [{ productDetails: terraformDetails({ hostGroupId: -1 }) }, 'productDetails.hostGroupId', /at least 0/],
      [
        { productDetails: terraformDetails({ firewallPolicies: [{ direction: 'INBOUND', policy: 'ALLOW', ipAddressFrom: '10.0.0.0/99' }] }) },
        'productDetails.firewallPolicies.0.ipAddressFrom',
        /IP address/,
      ],
      [{ productDetails: 'big' }, 'productDetails', /object/],
    ];
    const before = await counts();
    for (const [over, field, why] of cases) {
      const r = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_PERFORMANCE_AU', customerId: String(customerId), ...over });
      assert.equal(r.code, 'FAULT', `${field}: ${JSON.stringify(r)}`);
      assert.ok(r.error && field in r.error, `error names ${field}: ${JSON.stringify(r)}`);
      assert.match(r.error[field], why, JSON.stringify(r));
      assert.ok(r.message.includes(field), `the message names ${field}: ${r.message}`);
      assert.equal(r.debug, undefined);
    }
    assert.deepEqual(await counts(), before, 'nothing was created');
    const missing = await cmd('order.create', {});
    assert.equal(missing.code, 'FAULT');
    assert.ok('productCode' in missing.error);
    for (const [c, p, field] of [
      ['order.confirm', { orderId: 'x1' }, 'orderId'],
      ['order.get', {}, 'orderId'],
      ['order.contract.get', { contractId: '' }, 'contractId'],
    ] as const) {
      const r = await cmd(c, p);
      assert.equal(r.code, 'FAULT', JSON.stringify(r));
      assert.ok(field in r.error, JSON.stringify(r));
    }
  });

  it("answers another customer's orders and contracts as missing ones, and lists only the caller's", async () => {
    const created = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_NZ', customerId });
    const { contractID } = await cmd('order.confirm', { orderId: created.orderId });
    const h = { authorization: other.authorization };
    assert.deepEqual(await cmd('order.get', { orderId: created.orderId }, h), { code: 'ERROR', message: 'Could not find order' });
    assert.deepEqual(await cmd('order.get', { orderId: 99_999_999 }, h), { code: 'ERROR', message: 'Could not find order' });
    assert.deepEqual(await cmd('order.confirm', { orderId: created.orderId }, h), { code: 'ERROR', message: 'Could not find order' });
    assert.deepEqual(await cmd('order.contract.get', { contractId: contractID[0] }, h), { code: 'ERROR', message: 'Could not find contract' });
    assert.deepEqual(await cmd('order.contract.get', { contractId: 99_999_999 }), { code: 'ERROR', message: 'Could not find contract' });
    const ordersB = await cmd('order.getall', {}, h);
    assert.equal(ordersB.matches, 0);
    assert.deepEqual(ordersB.orders, []);
    // An order for a customer outside the caller's scope is refused, naming customerId.
    const foreign = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_NZ', customerId: String(customerId) }, h);
    assert.equal(foreign.code, 'FAULT');
    assert.ok('customerId' in foreign.error);
    // A parent sees and orders for its sub-customer.
    await infra.ctx.db.kysely.updateTable('customers').set({ parent_id: customerId }).where('id', '=', other.customerId).execute();
    try {
      const forChild = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_NZ', customerId: String(other.customerId) });
      assert.equal(forChild.code, 'OK', JSON.stringify(forChild));
      const seenByChild = await cmd('order.get', { orderId: forChild.orderId }, h);
      assert.equal(seenByChild.order.customerId, String(other.customerId));
      const onlyChild = await cmd('order.getall', { customerId: other.customerId });
      assert.deepEqual(
        onlyChild.orders.map((o: { orderId: string }) => o.orderId),
        [String(forChild.orderId)],
      );
      // The child does not see its parent's.
      assert.equal((await cmd('order.get', { orderId: created.orderId }, h)).message, 'Could not find order');
    } finally {
      await infra.ctx.db.kysely.updateTable('customers').set({ parent_id: null }).where('id', '=', other.customerId).execute();
    }
  });

  it('lists orders and contracts with totals independent of the window, by cmd and REST', async () => {
    const all = await cmd('order.getall', { resWindow: 1000 });
    assert.equal(all.code, 'OK');
    assert.equal(all.orders.length, all.matches);
    for (const o of all.orders) assertGoShape(o, ORDER, 'order.getall element');
    const page = await rest('GET', '/order?resStart=1&resWindow=1');
    assert.equal(page.matches, all.matches);
    assert.deepEqual(page.data, [all.orders[1]]);
    const accepted = await cmd('order.getall', { status: 'ACCEPTED' });
    assert.ok(accepted.orders.every((o: { status: string }) => o.status === 'ACCEPTED'));
    const contracts = await cmd('order.contract.getall', { resWindow: 2 });
    assert.equal(contracts.contracts.length, 2);
    assert.ok(contracts.matches >= 5);
    for (const c of contracts.contracts) assertGoShape(c, CONTRACT, 'order.contract.getall element');
    const one = await rest('GET', `/order/contracts/${contracts.contracts[0].contractId}`, {});
    assert.deepEqual(one.data, contracts.contracts[0]);
    const byOrder = await cmd('order.contract.getall', { orderId: all.orders[1].orderId });
    assert.deepEqual(
      byOrder.contracts.map((c: { contractId: string }) => c.contractId),
      all.orders[1].contractIds,
    );
    assert.equal((await cmd('order.getall', { resWindow: 0 })).code, 'FAULT');
  });

  it('cancels an unconfirmed order, which then cannot be confirmed; a confirmed one cannot be cancelled', async () => {
    const created = await rest('POST', '/order', { productCode: 'SERVER_VIRTUAL_STORAGE_SG', customerId: String(customerId) });
    assert.equal(created.code, 'OK', JSON.stringify(created));
    assert.ok(Number.isInteger(created.data.orderId));
    const cancelled = await cmd('order.cancel', { orderId: String(created.data.orderId) });
    assertGoShape(cancelled.order, ORDER, 'order.cancel');
    assert.equal(cancelled.order.status, 'CANCELLED');
    assert.equal((await cmd('order.cancel', { orderId: created.data.orderId })).code, 'OK', 'again: done already');
    const confirm = await cmd('order.confirm', { orderId: created.data.orderId });
    assert.deepEqual(confirm, { code: 'ERROR', message: `Order ${created.data.orderId} is CANCELLED: only a PENDING order can be confirmed or cancelled` });
    const accepted = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_STORAGE_SG' });
    await cmd('order.confirm', { orderId: accepted.orderId });
    assert.equal((await cmd('order.cancel', { orderId: accepted.orderId })).code, 'ERROR');
    assert.equal((await cmd('order.get', { orderId: accepted.orderId })).order.status, 'ACCEPTED');
    assert.deepEqual(await cmd('order.cancel', { orderId: accepted.orderId }, { authorization: other.authorization }), { code: 'ERROR', message: 'Could not find order' });
  });

  it('bounds unconfirmed orders and servers per customer', async () => {
    const db = infra.ctx.db.kysely;
    const made = await createCustomer(db, { companyName: 'Bounded', username: 'bounded', password: 'x', passwordHash: 'x' }, 1);
    const h = { authorization: 'Basic ' + Buffer.from(`${made.apiUuid}:${made.apiSecret}`).toString('base64') };
    const row = {
      customer_id: made.customerId,
      product_code: 'SERVER_VIRTUAL_BUDGET_AU',
      quantity: 1,
      details: '{}',
      change_txt: '',
      currency: 'AUD',
      cost_cents: 0,
      status: 'PENDING',
      date_created: 1,
      date_modified: 1,
    };
    // Unconfirmed orders: the bound, then one more is refused.
    const ids: number[] = [];
    for (let i = 0; i < MAX_PENDING_ORDERS_PER_CUSTOMER - 1; i += 500) {
      const n = Math.min(500, MAX_PENDING_ORDERS_PER_CUSTOMER - 1 - i);
      const rows = await db
        .insertInto('orders')
        .values(Array.from({ length: n }, () => ({ ...row, quantity: 0 })))
        .returning('id')
        .execute();
      ids.push(...rows.map((r) => r.id));
    }
    const last = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' }, h);
    assert.equal(last.code, 'OK', JSON.stringify(last));
    const refused = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' }, h);
    assert.equal(refused.code, 'ERROR');
    assert.match(refused.message, new RegExp(`at most ${MAX_PENDING_ORDERS_PER_CUSTOMER} unconfirmed orders`));
    await db.deleteFrom('orders').where('id', 'in', ids).execute();
    // Servers: the confirmed one plus orders up to the bound; one more server is refused.
    assert.equal((await cmd('order.confirm', { orderId: last.orderId }, h)).code, 'OK');
    const big = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_AU', quantity: 100 }, h);
    assert.equal(big.code, 'OK');
    await db
      .insertInto('orders')
      .values({ ...row, quantity: MAX_SERVERS_PER_CUSTOMER - 101 })
      .execute();
    const over = await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' }, h);
    assert.equal(over.code, 'ERROR');
    assert.match(over.message, new RegExp(`at most ${MAX_SERVERS_PER_CUSTOMER} servers`));
  });
});

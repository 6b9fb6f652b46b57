// rctransaction.* and the provisioning worker on the sim driver, with a manual clock: the Terraform
// providers' flow (infra-clients.md section 4) from a PENDING contract to a cancelled device, the
// wire types the Go client decodes strictly, step timing, order per device, failures and bounds.
// Orders and contracts are written to the store as order.confirm leaves them (tests/helpers/infra-contracts.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { inProcessInfra, type InProcessInfra } from '../helpers/in-process-infra.js';
import { contractRow, deviceIps, deviceRow, seedContracts, seedCustomer } from '../helpers/infra-contracts.js';
import { ManualClock } from '../../src/platform/clock.js';
import { MAX_FINISHED_PER_CUSTOMER, MAX_WAITING_PER_CUSTOMER, MAX_WAITING_PER_DEVICE } from '../../src/infra/commands/rctransaction.js';
import { ProvisioningWorker } from '../../src/infra/provisioning/worker.js';
import { SimDriver } from '../../src/infra/drivers/sim.js';
import { DriverError } from '../../src/infra/drivers/driver.js';
import { CatalogueIndex, DEFAULT_CATALOGUE } from '../../src/infra/catalogue.js';

const T0 = Date.UTC(2026, 10, 24, 12);

/** A device made from a fresh contract, ACTIVE and OFFLINE; its id. */
async function activeDevice(infra: InProcessInfra, customerId = infra.ctx.created!.customerId): Promise<number> {
  const [contractId] = await seedContracts(infra.ctx.db, customerId, infra.ctx.clock.now());
  await infra.worker.runDue();
  const c = await contractRow(infra.ctx.db, contractId);
  assert.equal(c.status, 'ACTIVE', c.status_info);
  return Number(c.device_id);
}

const STARTUP_DATA = JSON.stringify({ cloudInit: { userData: '#cloud-config\npackages: [nginx]\n', metaData: 'instance-id: web1\n' } });

await forEachEngine('rctransaction and the provisioning worker', (engine) => {
  describe('the Terraform flow, instant sim', () => {
    let infra: InProcessInfra;
    const clock = new ManualClock(T0);
    before(async () => {
      infra = await inProcessInfra(engine, { clock });
    });
    after(async () => {
      await infra?.close();
    });

    it('contract PENDING -> ACTIVE with a device, REFRESHCONFIG, wait, STARTUP with cloud-init, ONLINE, CANCEL -> Could not find device', async () => {
      const db = infra.ctx.db;
      const [contractId] = await seedContracts(db, infra.ctx.created!.customerId, clock.now());
      assert.equal((await contractRow(db, contractId)).status, 'PENDING');
      assert.equal(await infra.worker.runDue(), 2, 'two steps: the device placed, its machine built');
      const contract = await contractRow(db, contractId);
      assert.equal(contract.status, 'ACTIVE');
      const deviceId = Number(contract.device_id);
      assert.ok(deviceId > 0);
      const device = await deviceRow(db, deviceId);
      assert.deepEqual([device.status, device.power_switch, device.power_status, device.name, device.machine_name], ['ACTIVE', 'ONLINE', 'OFFLINE', 'web1.example.com', `keel-${deviceId}`]);
      const ips = await deviceIps(db, deviceId);
      assert.equal(ips.length, 1);
      assert.match(ips[0].address, /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.\d+$/);
      assert.equal(Number(ips[0].is_primary), 1);
      assert.deepEqual(await infra.driver.state(`keel-${deviceId}`), { power: 'OFFLINE', ipv4: [], ipv6: [] });
      // The order's firewall policies are the device's.
      const policies = await db.kysely
        .selectFrom('device_firewall_policies')
        .select(['direction', 'policy', 'sort_order', 'comment', 'protocol', 'port_from', 'port_to'])
        .where('device_id', '=', deviceId)
        .orderBy('sort_order')
        .execute();
      assert.deepEqual(
        policies.map((p) => ({ ...p, sort_order: Number(p.sort_order) })),
        [
          { direction: 'INBOUND', policy: 'ALLOW', sort_order: 1, comment: 'ssh', protocol: 'TCP', port_from: '22', port_to: null },
          { direction: 'INBOUND', policy: 'DENY', sort_order: 2, comment: '', protocol: 'ANY', port_from: null, port_to: null },
        ],
      );

      // Step 3: REFRESHCONFIG, as the Go client sends it (REST, objId a string, confirmation false, data "").
      const refresh = await infra.rest('POST', '/rctransaction', { objType: 'DEVICE', objId: String(deviceId), type: 'REFRESHCONFIG', confirmation: false, data: '' });
      assert.equal(refresh.code, 'OK', JSON.stringify(refresh));
      assert.equal(refresh.message, 'Transaction successfully created');
      assert.equal(typeof refresh.data.rcTransactionId, 'number');
      assert.deepEqual(
        { ...refresh.data, rcTransactionId: 0 },
        {
          rcTransactionId: 0,
          confirmationRequired: false,
          confirmationText: '',
          objType: 'DEVICE',
          objId: String(deviceId),
          type: 'REFRESHCONFIG',
          data: null,
        },
      );

      // Step 4: wait for pending transactions (Terraform: resWindow 1 until matches 0).
      const waiting = { objType: 'DEVICE', objId: [String(deviceId)], status: ['PENDING', 'COMMENCED'], resWindow: 1 };
      const before = await infra.call('rctransaction.getall', waiting);
      assert.equal(before.code, 'OK');
      assert.equal(before.matches, 1);
      assert.equal(before.rcTransactions.length, 1);
      assert.equal(before.rcTransactions[0].rcTransactionId, String(refresh.data.rcTransactionId));
      assert.equal(before.rcTransactions[0].method, 'REFRESHCONFIG');
      assert.equal(before.rcTransactions[0].status, 'PENDING');
      await infra.worker.runDue();
      const done = await infra.call('rctransaction.getall', waiting);
      assert.equal(done.matches, 0);
      assert.deepEqual(done.rcTransactions, []);

      // Step 5: STARTUP with cloud-init (cmd style: top rcTransaction).
      const start = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: STARTUP_DATA });
      assert.equal(start.code, 'OK', JSON.stringify(start));
      assert.equal(typeof start.rcTransaction.rcTransactionId, 'number');
      assert.equal(start.rcTransaction.data, STARTUP_DATA);
      assert.equal((await deviceRow(db, deviceId)).power_status, 'OFFLINE');
      await infra.worker.runDue();
      // Step 6: power OFFLINE -> ONLINE.
      assert.equal((await deviceRow(db, deviceId)).power_status, 'ONLINE');
      const machine = await db.kysely.selectFrom('sim_machines').selectAll().where('name', '=', `keel-${deviceId}`).executeTakeFirstOrThrow();
      assert.equal(machine.power, 'ONLINE');
      assert.deepEqual(JSON.parse(machine.cloud_init!), { userData: '#cloud-config\npackages: [nginx]\n', metaData: 'instance-id: web1\n' });
      const got = await infra.call('rctransaction.get', { rcTransactionId: String(start.rcTransaction.rcTransactionId) });
      assert.equal(got.code, 'OK');
      assert.deepEqual(
        {
          id: got.rcTransaction.rcTransactionId,
          objType: got.rcTransaction.objType,
          objId: got.rcTransaction.objId,
          method: got.rcTransaction.method,
          data: got.rcTransaction.data,
          status: got.rcTransaction.status,
        },
        { id: String(start.rcTransaction.rcTransactionId), objType: 'DEVICE', objId: String(deviceId), method: 'STARTUP', data: STARTUP_DATA, status: 'COMPLETED' },
      );
      assert.equal(typeof got.rcTransaction.statusInfo, 'string');
      // The SDK sends the id as a number; REST GET /rctransactions/{id} with the Go client's {} body.
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: start.rcTransaction.rcTransactionId })).rcTransaction.status, 'COMPLETED');
      assert.equal((await infra.rest('GET', `/rctransactions/${start.rcTransaction.rcTransactionId}`, {})).data.status, 'COMPLETED');

      // Step 9: CANCEL, confirmed; poll rctransaction.get until COMPLETED.
      const cancel = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'CANCEL', confirmation: true });
      assert.equal(cancel.code, 'OK', JSON.stringify(cancel));
      const id = String(cancel.rcTransaction.rcTransactionId);
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: id })).rcTransaction.status, 'PENDING');
      await infra.worker.runDue();
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: id })).rcTransaction.status, 'COMPLETED');
      assert.equal((await deviceRow(db, deviceId)).status, 'CANCELLED');
      assert.equal((await contractRow(db, contractId)).status, 'CANCELLED');
      assert.deepEqual(await deviceIps(db, deviceId), []);
      assert.equal(await infra.driver.state(`keel-${deviceId}`), null);
      const after = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: '' });
      assert.deepEqual([after.code, after.message], ['ERROR', 'Could not find device']);
      // History stays readable.
      assert.equal((await infra.call('rctransaction.getall', { objType: 'DEVICE', objId: [String(deviceId)] })).matches, 3);
    });

    it("takes the section-io SDK's STARTUP data (cloud-init fields at the top level) and a numeric transaction id", async () => {
      const deviceId = await activeDevice(infra);
      const data = JSON.stringify({ userData: '#cloud-config\nhostname: sdk\n', networkConfig: 'version: 2\n' });
      const made = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data });
      assert.equal(made.code, 'OK', JSON.stringify(made));
      await infra.worker.runDue();
      const got = await infra.call('rctransaction.get', { rcTransactionId: made.rcTransaction.rcTransactionId });
      assert.equal(got.rcTransaction.status, 'COMPLETED');
      const machine = await infra.ctx.db.kysely.selectFrom('sim_machines').select('cloud_init').where('name', '=', `keel-${deviceId}`).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(machine.cloud_init!), { userData: '#cloud-config\nhostname: sdk\n', networkConfig: 'version: 2\n' });
      const bad = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: JSON.stringify({ userData: ['x'] }) });
      assert.equal(bad.code, 'FAULT');
      assert.match(bad.error.data, /userData/);
    });

    it('builds many contracts at once, counting every step', async () => {
      const ids = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now(), 20);
      assert.equal(await infra.worker.runDue(), 40);
      const rows = await Promise.all(ids.map((id) => contractRow(infra.ctx.db, id)));
      assert.deepEqual(new Set(rows.map((r) => r.status)), new Set(['ACTIVE']));
      const addresses = new Set<string>();
      for (const r of rows) for (const ip of await deviceIps(infra.ctx.db, Number(r.device_id))) addresses.add(ip.address);
      assert.equal(addresses.size, 20, 'one address each, none shared');
      assert.equal(await infra.worker.runDue(), 0, 'nothing left to do');
    });

    it('asks for confirmation of CANCEL and the shutdowns, and queues nothing without it', async () => {
      const deviceId = await activeDevice(infra);
      for (const type of ['CANCEL', 'SHUTDOWN', 'SAFESHUTDOWN', 'FORCESHUTDOWN']) {
        const r = await infra.rest('POST', '/rctransaction', { objType: 'DEVICE', objId: String(deviceId), type, confirmation: false, data: '' });
        assert.equal(r.code, 'OK');
        assert.equal(r.data.confirmationRequired, true);
        assert.equal(r.data.rcTransactionId, 0);
        assert.match(r.data.confirmationText, /confirmation true/);
      }
      assert.equal((await infra.call('rctransaction.getall', { objType: 'DEVICE', objId: [deviceId] })).matches, 0);
      // STARTUP needs none (the Go client's fixture creates it with confirmation false).
      const s = await infra.rest('POST', '/rctransaction', { objType: 'DEVICE', objId: deviceId, type: 'STARTUP', confirmation: false, data: '' });
      assert.equal(s.data.confirmationRequired, false);
      assert.ok(s.data.rcTransactionId > 0);
    });

    it('refuses bad input with a FAULT naming the field, writing nothing', async () => {
      const deviceId = await activeDevice(infra);
      const count = async () =>
        Number(
          (
            await infra.ctx.db.kysely
              .selectFrom('transactions')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const n = await count();
      const base = { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true };
      for (const [params, field] of [
        [{ ...base, data: '{not json' }, 'data'],
        [{ ...base, data: '[1,2]' }, 'data'],
        [{ ...base, data: JSON.stringify({ cloudInit: { userData: 5 } }) }, 'data'],
        [{ ...base, data: JSON.stringify({ cloudInit: 'x' }) }, 'data'],
        [{ ...base, objId: 'abc' }, 'objId'],
        [{ ...base, type: 'REBOOT' }, 'type'],
        [{ ...base, objType: 'NETWORK' }, 'objType'],
        [{ ...base, confirmation: 'maybe' }, 'confirmation'],
      ] as const) {
        const r = await infra.call('rctransaction.create', params);
        assert.equal(r.code, 'FAULT', JSON.stringify(r));
        assert.ok(field in r.error, `${JSON.stringify(params)} -> ${JSON.stringify(r)}`);
      }
      const missing = await infra.call('rctransaction.getall', {});
      assert.equal(missing.code, 'FAULT');
      assert.ok('objType' in missing.error);
      assert.equal(await count(), n);
      const unknown = await infra.call('rctransaction.get', { rcTransactionId: '999999' });
      assert.deepEqual([unknown.code, unknown.message], ['ERROR', 'Could not find transaction']);
    });

    it("answers for another customer's device and transactions exactly as for missing ones", async () => {
      const other = await seedCustomer(infra.ctx.db, 'Elsewhere');
      const theirs = await activeDevice(infra, other);
      const r = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(theirs), type: 'STARTUP', confirmation: true, data: '' });
      assert.deepEqual([r.code, r.message], ['ERROR', 'Could not find device']);
      const none = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: '987654', type: 'STARTUP', confirmation: true, data: '' });
      assert.deepEqual([none.code, none.message, Object.keys(none).sort()], [r.code, r.message, Object.keys(r).sort()]);
      const [row] = await infra.ctx.db.kysely
        .insertInto('transactions')
        .values({
          customer_id: other,
          obj_type: 'DEVICE',
          obj_id: theirs,
          type: 'STARTUP',
          data: null,
          confirmation: 1,
          status: 'PENDING',
          status_info: '',
          due_at: clock.now(),
          date_created: 0,
          date_modified: 0,
        })
        .returning('id')
        .execute();
      const hidden = await infra.call('rctransaction.get', { rcTransactionId: String(row.id) });
      assert.deepEqual([hidden.code, hidden.message], ['ERROR', 'Could not find transaction']);
      const listed = await infra.call('rctransaction.getall', { objType: 'DEVICE', objId: [String(theirs)], customerId: [String(other)] });
      assert.equal(listed.matches, 0);
      assert.deepEqual(listed.rcTransactions, []);
      await infra.worker.runDue();
    });

    it('bounds the transactions waiting per device and per customer', async () => {
      const deviceId = await activeDevice(infra);
      const make = () => infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'REFRESHCONFIG', confirmation: false, data: '' });
      for (let i = 0; i < MAX_WAITING_PER_DEVICE; i++) assert.equal((await make()).code, 'OK');
      const over = await make();
      assert.deepEqual([over.code, over.message], ['ERROR', `Limit reached: a device has at most ${MAX_WAITING_PER_DEVICE} transactions waiting; wait for them to complete`]);
      await infra.worker.runDue();
      assert.equal((await make()).code, 'OK', 'room again once they ran');
      await infra.worker.runDue();

      // The customer bound: rows up to it straight into the store, on devices no longer there.
      const customerId = infra.ctx.created!.customerId;
      const rows = Array.from({ length: MAX_WAITING_PER_CUSTOMER }, (_, i) => ({
        customer_id: customerId,
        obj_type: 'DEVICE',
        obj_id: 1_000_000 + i,
        type: 'REFRESHCONFIG',
        data: null,
        confirmation: 0,
        status: 'PENDING',
        status_info: '',
        // Far in the future, so this suite's worker leaves them alone.
        due_at: clock.now() + 10 ** 12,
        date_created: 0,
        date_modified: 0,
      }));
      for (let i = 0; i < rows.length; i += 200)
        await infra.ctx.db.kysely
          .insertInto('transactions')
          .values(rows.slice(i, i + 200))
          .execute();
      const full = await make();
      assert.deepEqual([full.code, full.message], ['ERROR', `Limit reached: a customer has at most ${MAX_WAITING_PER_CUSTOMER} transactions waiting; wait for them to complete`]);
      await infra.ctx.db.kysely.deleteFrom('transactions').where('obj_id', '>=', 1_000_000).execute();
    });

    it('keeps at most MAX_FINISHED_PER_CUSTOMER finished transactions per customer, dropping the oldest', async () => {
      const deviceId = await activeDevice(infra);
      const customerId = infra.ctx.created!.customerId;
      const kysely = infra.ctx.db.kysely;
      const finished = async () =>
        Number(
          (
            await kysely
              .selectFrom('transactions')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .where('customer_id', '=', customerId)
              .where('status', 'in', ['COMPLETED', 'FAILED'])
              .executeTakeFirstOrThrow()
          ).n,
        );
      const have = await finished();
      const rows = Array.from({ length: MAX_FINISHED_PER_CUSTOMER - have + 5 }, () => ({
        customer_id: customerId,
        obj_type: 'DEVICE',
        obj_id: deviceId,
        type: 'REFRESHCONFIG',
        data: null,
        confirmation: 0,
        status: 'COMPLETED',
        status_info: '',
        due_at: null,
        date_created: 0,
        date_modified: 0,
      }));
      for (let i = 0; i < rows.length; i += 500)
        await kysely
          .insertInto('transactions')
          .values(rows.slice(i, i + 500))
          .execute();
      const oldest = await kysely.selectFrom('transactions').select('id').where('customer_id', '=', customerId).where('status', 'in', ['COMPLETED', 'FAILED']).orderBy('id').executeTakeFirstOrThrow();
      const made = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'REFRESHCONFIG', data: '' });
      assert.equal(made.code, 'OK');
      assert.equal(await finished(), MAX_FINISHED_PER_CUSTOMER);
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: oldest.id })).message, 'Could not find transaction');
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: made.rcTransaction.rcTransactionId })).rcTransaction.status, 'PENDING', 'the new one is kept');
      await infra.worker.runDue();
    });

    it('pages getall: matches is the total, resStart/resWindow cut the list', async () => {
      const deviceId = await activeDevice(infra);
      for (const type of ['REFRESHCONFIG', 'STARTUP', 'CLOSEVNC']) await infra.call('rctransaction.create', { objType: 'DEVICE', objId: deviceId, type, confirmation: true, data: '' });
      const page = await infra.call('rctransaction.getall', { objType: 'DEVICE', objId: [String(deviceId)], resStart: 1, resWindow: 1 });
      assert.equal(page.matches, 3);
      assert.deepEqual(
        page.rcTransactions.map((t: { method: string }) => t.method),
        ['STARTUP'],
      );
      const rest = await infra.rest('GET', `/rctransactions?objType=DEVICE&objId=${deviceId}&resWindow=2`);
      assert.equal(rest.code, 'OK', JSON.stringify(rest));
      assert.equal(rest.matches, 3);
      assert.deepEqual(
        rest.data.map((t: { method: string }) => t.method),
        ['REFRESHCONFIG', 'STARTUP'],
      );
      const byMethod = await infra.call('rctransaction.getall', { objType: 'DEVICE', objId: [String(deviceId)], method: ['CLOSEVNC'] });
      assert.equal(byMethod.matches, 1);
      await infra.worker.runDue();
      const vnc = await infra.call('rctransaction.getall', { objType: 'DEVICE', objId: [String(deviceId)], method: ['CLOSEVNC', 'OPENVNC'], status: ['COMPLETED'] });
      assert.equal(vnc.matches, 1);
      // OPENVNC: no console is offered; it fails with a statusInfo saying so (a poller stops).
      const open = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: deviceId, type: 'OPENVNC', data: '203.0.113.9' });
      await infra.worker.runDue();
      const o = await infra.call('rctransaction.get', { rcTransactionId: open.rcTransaction.rcTransactionId });
      assert.equal(o.rcTransaction.status, 'FAILED');
      assert.match(o.rcTransaction.statusInfo, /VNC/);
    });
  });

  describe('timing, order and failures (realistic sim)', () => {
    let infra: InProcessInfra;
    const clock = new ManualClock(T0);
    before(async () => {
      infra = await inProcessInfra(engine, { clock, sim: { speed: 'realistic' }, worker: { retryMs: 1000 } });
    });
    after(async () => {
      await infra?.close();
    });
    const status = async (id: number) => (await infra.call('rctransaction.get', { rcTransactionId: id })).rcTransaction;

    it('keeps a contract PENDING for the create step, then ACTIVE', async () => {
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      const placed = await contractRow(infra.ctx.db, contractId);
      assert.equal(placed.status, 'PENDING');
      assert.ok(placed.device_id, 'the device row exists while its machine is built');
      clock.advance(infra.driver.stepMs('create') - 1);
      await infra.worker.runDue();
      assert.equal((await contractRow(infra.ctx.db, contractId)).status, 'PENDING');
      clock.advance(1);
      await infra.worker.runDue();
      assert.equal((await contractRow(infra.ctx.db, contractId)).status, 'ACTIVE');
    });

    it('holds a transaction sent while the machine is still being built until the contract is ACTIVE', async () => {
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
      const id = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: '' })).rcTransaction.rcTransactionId;
      clock.advance(infra.driver.stepMs('create') - 1);
      await infra.worker.runDue();
      assert.equal((await status(id)).status, 'PENDING');
      clock.advance(1);
      await infra.worker.runDue();
      assert.equal((await contractRow(infra.ctx.db, contractId)).status, 'ACTIVE');
      assert.equal((await status(id)).status, 'COMMENCED');
      clock.advance(infra.driver.stepMs('start'));
      await infra.worker.runDue();
      assert.equal((await status(id)).status, 'COMPLETED');
    });

    it('runs two transactions of one device one at a time, in id order, each COMMENCED for its step', async () => {
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      clock.advance(infra.driver.stepMs('create'));
      await infra.worker.runDue();
      const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
      const a = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: '' })).rcTransaction.rcTransactionId;
      const b = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'FORCESHUTDOWN', confirmation: true, data: '' })).rcTransaction.rcTransactionId;
      await infra.worker.runDue();
      assert.deepEqual([(await status(a)).status, (await status(b)).status], ['COMMENCED', 'PENDING']);
      clock.advance(infra.driver.stepMs('start') - 1);
      await infra.worker.runDue();
      assert.deepEqual([(await status(a)).status, (await status(b)).status], ['COMMENCED', 'PENDING']);
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).power_status, 'OFFLINE');
      clock.advance(1);
      await infra.worker.runDue();
      assert.deepEqual([(await status(a)).status, (await status(b)).status], ['COMPLETED', 'COMMENCED']);
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).power_status, 'ONLINE');
      clock.advance(infra.driver.stepMs('stop'));
      await infra.worker.runDue();
      assert.equal((await status(b)).status, 'COMPLETED');
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).power_status, 'OFFLINE');
    });

    it('fails a step with a readable statusInfo, retries a retryable one, and the device stays usable', async () => {
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      clock.advance(infra.driver.stepMs('create'));
      await infra.worker.runDue();
      const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
      const startup = () => infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: '' });
      infra.driver.failNext('start', 'the boot disk is unreadable');
      const bad = (await startup()).rcTransaction.rcTransactionId;
      await infra.worker.runDue();
      clock.advance(infra.driver.stepMs('start'));
      await infra.worker.runDue();
      const failed = await status(bad);
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.statusInfo, 'STARTUP failed: the boot disk is unreadable');
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).power_status, 'OFFLINE');

      infra.driver.failNext('start', 'host busy', true);
      const retried = (await startup()).rcTransaction.rcTransactionId;
      await infra.worker.runDue();
      clock.advance(infra.driver.stepMs('start'));
      await infra.worker.runDue();
      const waiting = await status(retried);
      assert.equal(waiting.status, 'COMMENCED');
      assert.match(waiting.statusInfo, /host busy/);
      clock.advance(1000);
      await infra.worker.runDue();
      assert.equal((await status(retried)).status, 'COMPLETED');
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).power_status, 'ONLINE');
    });

    it('fails a contract whose machine cannot be built: FAILED with why, its device cancelled, its address free', async () => {
      infra.driver.failNext('create', 'no capacity in this data centre');
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
      clock.advance(infra.driver.stepMs('create'));
      await infra.worker.runDue();
      const c = await contractRow(infra.ctx.db, contractId);
      assert.equal(c.status, 'FAILED');
      assert.equal(c.status_info, 'The server could not be built: no capacity in this data centre');
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).status, 'CANCELLED');
      assert.deepEqual(await deviceIps(infra.ctx.db, deviceId), []);
      const r = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: '' });
      assert.equal(r.message, 'Could not find device');
    });

    it('fails the transactions queued behind a CANCEL, so their pollers stop', async () => {
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      clock.advance(infra.driver.stepMs('create'));
      await infra.worker.runDue();
      const deviceId = String((await contractRow(infra.ctx.db, contractId)).device_id);
      const cancel = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: deviceId, type: 'CANCEL', confirmation: true })).rcTransaction.rcTransactionId;
      const later = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: deviceId, type: 'STARTUP', confirmation: true, data: '' })).rcTransaction.rcTransactionId;
      await infra.worker.runDue();
      clock.advance(infra.driver.stepMs('destroy'));
      await infra.worker.runDue();
      assert.equal((await status(cancel)).status, 'COMPLETED');
      const l = await status(later);
      assert.deepEqual([l.status, l.statusInfo], ['FAILED', 'The device was cancelled before this transaction ran']);
    });
  });

  describe('hooks: DNS publication and SSH keys', () => {
    let infra: InProcessInfra;
    const clock = new ManualClock(T0);
    const calls: string[] = [];
    let keys = ['ssh-ed25519 AAAA first'];
    before(async () => {
      infra = await inProcessInfra(engine, {
        clock,
        hooks: {
          publish: async (id) => {
            const ips = await deviceIps(infra.ctx.db, id);
            calls.push(`publish ${id} ${ips.map((r) => r.address).join(',')}`);
          },
          unpublish: async (id) => {
            const ips = await deviceIps(infra.ctx.db, id);
            calls.push(`unpublish ${id} ${ips.map((r) => r.address).join(',')}`);
            throw new Error('a DNS failure is logged, not fatal');
          },
          sshKeys: async () => keys,
        },
      });
    });
    after(async () => {
      await infra?.close();
    });

    it('publishes a device once ACTIVE and withdraws it on CANCEL while it still has its address; REFRESHCONFIG installs the current keys', async () => {
      const deviceId = await activeDevice(infra);
      const address = (await deviceIps(infra.ctx.db, deviceId))[0].address;
      assert.deepEqual(calls, [`publish ${deviceId} ${address}`]);
      const machine = async () => JSON.parse((await infra.ctx.db.kysely.selectFrom('sim_machines').select('spec').where('name', '=', `keel-${deviceId}`).executeTakeFirstOrThrow()).spec);
      assert.deepEqual((await machine()).sshKeys, ['ssh-ed25519 AAAA first']);
      keys = ['ssh-ed25519 AAAA second'];
      await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'REFRESHCONFIG', data: '' });
      await infra.worker.runDue();
      assert.deepEqual((await machine()).sshKeys, ['ssh-ed25519 AAAA second']);
      const cancel = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'CANCEL', confirmation: true });
      await infra.worker.runDue();
      assert.deepEqual(calls, [`publish ${deviceId} ${address}`, `unpublish ${deviceId} ${address}`]);
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: cancel.rcTransaction.rcTransactionId })).rcTransaction.status, 'COMPLETED');
    });
  });

  describe('addresses and restarts', () => {
    let infra: InProcessInfra;
    const clock = new ManualClock(T0);
    before(async () => {
      // A pool of two addresses: the third server finds none until one is freed.
      infra = await inProcessInfra(engine, { clock, worker: { pool: '192.0.2.0/30' } });
    });
    after(async () => {
      await infra?.close();
    });

    it('gives each device its own address from the pool and frees it on CANCEL', async () => {
      const customerId = infra.ctx.created!.customerId;
      const contracts = await seedContracts(infra.ctx.db, customerId, clock.now(), 3);
      await infra.worker.runDue();
      // They are built concurrently: which one finds the pool empty is not fixed.
      const rows = await Promise.all(contracts.map((id) => contractRow(infra.ctx.db, id)));
      const active = rows.filter((r) => r.status === 'ACTIVE').map((r) => Number(r.device_id));
      const failed = rows.filter((r) => r.status === 'FAILED');
      assert.equal(active.length, 2);
      assert.deepEqual(
        failed.map((r) => r.status_info),
        ['The server could not be built: no free address in the pool 192.0.2.0/30'],
      );
      const [d1, d2] = active;
      const addresses = [...(await deviceIps(infra.ctx.db, d1)), ...(await deviceIps(infra.ctx.db, d2))].map((r) => r.address).sort();
      assert.deepEqual(addresses, ['192.0.2.1', '192.0.2.2']);
      const orphan = await infra.ctx.db.kysely.selectFrom('devices').select('status').where('contract_id', '=', failed[0].id).execute();
      assert.deepEqual(orphan, [{ status: 'CANCELLED' }]);

      const freed = (await deviceIps(infra.ctx.db, d1))[0].address;
      await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(d1), type: 'CANCEL', confirmation: true });
      await infra.worker.runDue();
      const [c4] = await seedContracts(infra.ctx.db, customerId, clock.now());
      await infra.worker.runDue();
      const d4 = Number((await contractRow(infra.ctx.db, c4)).device_id);
      assert.equal((await contractRow(infra.ctx.db, c4)).status, 'ACTIVE');
      assert.deepEqual(
        (await deviceIps(infra.ctx.db, d4)).map((r) => r.address),
        [freed],
      );
    });

    it('resumes a step that was COMMENCED when its worker went away, on the machine state in the store', async () => {
      // Free an address first: the pool is full from the test before.
      const busy = await infra.ctx.db.kysely.selectFrom('devices').select('id').where('status', '=', 'ACTIVE').orderBy('id').executeTakeFirstOrThrow();
      await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(busy.id), type: 'CANCEL', confirmation: true });
      await infra.worker.runDue();
      const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
      await infra.worker.runDue();
      const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
      assert.equal((await contractRow(infra.ctx.db, contractId)).status, 'ACTIVE');

      // A second worker over the same store, with a slow driver: it commences STARTUP and "dies".
      const slowDriver = new SimDriver(infra.ctx.db, clock, { speed: 'realistic' });
      const first = new ProvisioningWorker({ db: infra.ctx.db, clock, log: infra.ctx.log, driver: slowDriver, catalogue: new CatalogueIndex(DEFAULT_CATALOGUE) }, { tickMs: 0, pool: '192.0.2.0/30' });
      const id = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: STARTUP_DATA })).rcTransaction.rcTransactionId;
      await first.runDue();
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: id })).rcTransaction.status, 'COMMENCED');
      await first.stop();
      // The next worker (this suite's, as after a restart) finishes it once its time is over.
      clock.advance(slowDriver.stepMs('start'));
      await infra.worker.runDue();
      assert.equal((await infra.call('rctransaction.get', { rcTransactionId: id })).rcTransaction.status, 'COMPLETED');
      assert.equal((await deviceRow(infra.ctx.db, deviceId)).power_status, 'ONLINE');
      assert.equal((await infra.driver.state(`keel-${deviceId}`))?.power, 'ONLINE');
    });

    it('lets a failure rule make a step fail (the second way the sim driver injects failures)', async () => {
      const rule = (step: string) => (step === 'reconfigure' ? new DriverError('config store unreachable') : undefined);
      const driver = new SimDriver(infra.ctx.db, clock, { speed: 'instant', fail: rule });
      const w = new ProvisioningWorker({ db: infra.ctx.db, clock, log: infra.ctx.log, driver, catalogue: new CatalogueIndex(DEFAULT_CATALOGUE) }, { tickMs: 0, pool: '192.0.2.0/30' });
      const device = await infra.ctx.db.kysely.selectFrom('devices').select('id').where('status', '=', 'ACTIVE').orderBy('id').executeTakeFirstOrThrow();
      const id = (await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(device.id), type: 'REFRESHCONFIG', data: '' })).rcTransaction.rcTransactionId;
      await w.runDue();
      const t = (await infra.call('rctransaction.get', { rcTransactionId: id })).rcTransaction;
      assert.deepEqual([t.status, t.statusInfo], ['FAILED', 'REFRESHCONFIG failed: config store unreachable']);
      await w.stop();
    });
  });
});

// Issue 15 item 8 with a real `keel serve` killed by SIGKILL: orders, contracts, devices and
// transactions are rows and survive; a contract whose machine was being built and a transaction that
// was COMMENCED when the process died are taken up again on the next start and complete; two
// transactions of one device run one at a time, in order. The sim driver runs at `fast` speed (steps
// of seconds), so each kill lands inside a step. Contracts are written to the store as order.confirm
// leaves them (the order API is another part's).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage, type InitSecrets } from '../helpers/server.js';
import { InfraClient } from '../helpers/infra-client.js';
import { contractRow, deviceIps, deviceRow, seedContracts } from '../helpers/infra-contracts.js';
import { openStore } from '../../src/app.js';
import type { Database } from '../../src/platform/db/database.js';
import type { InfraTables } from '../../src/infra/tables.js';

const ARGS = ['--infra-sim-speed', 'fast'];

/** Polls until `check` returns a value (not undefined), at most `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

await forEachEngine('provisioning across kill -9', (engine) => {
  let storage: Storage;
  let server: RunningServer | undefined;
  let db: Database<InfraTables>;
  let secrets: InitSecrets;
  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage, ARGS);
    secrets = server.secrets!;
    db = await openStore({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl });
  });
  after(async () => {
    await server?.kill9();
    await db?.close();
    await storage?.dispose();
  });

  const txn = (id: number) => db.kysely.selectFrom('transactions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('resumes a machine build and a COMMENCED transaction after SIGKILL, and runs a device’s transactions in order', async () => {
    // 1. Killed while the machine is being built (the device row exists, the contract is PENDING).
    const [contractId] = await seedContracts(db, secrets.customerId, Date.now());
    const deviceId = await until('the device row', async () => {
      const c = await contractRow(db, contractId);
      return c.device_id === null ? undefined : Number(c.device_id);
    });
    await server!.kill9();
    server = undefined;
    const c = await contractRow(db, contractId);
    assert.equal(c.status, 'PENDING', 'killed inside the 5 s build step');
    assert.equal((await deviceRow(db, deviceId)).status, 'ACTIVE');
    assert.equal((await deviceIps(db, deviceId)).length, 1);

    server = await startServer(storage, ARGS);
    await until('the contract ACTIVE', async () => ((await contractRow(db, contractId)).status === 'ACTIVE' ? true : undefined));
    const address = (await deviceIps(db, deviceId))[0].address;

    // 2. Killed while STARTUP is COMMENCED, with FORCESHUTDOWN queued behind it.
    const api = new InfraClient(server.infraUrl, { basic: [secrets.apiUuid, secrets.apiSecret] }, '/api/v2.9');
    const start = await api.rest('POST', '/rctransaction', {
      objType: 'DEVICE',
      objId: String(deviceId),
      type: 'STARTUP',
      confirmation: true,
      data: JSON.stringify({ cloudInit: { userData: '#cloud-config\n' } }),
    });
    assert.equal(start.body.code, 'OK', start.text);
    const stop = await api.cmd('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'FORCESHUTDOWN', confirmation: true, data: '' });
    assert.equal(stop.body.code, 'OK', stop.text);
    const a = Number(start.body.data.rcTransactionId);
    const b = Number(stop.body.rcTransaction.rcTransactionId);
    await until('STARTUP COMMENCED', async () => ((await txn(a)).status === 'COMMENCED' ? true : undefined));
    await server.kill9();
    server = undefined;
    assert.deepEqual([(await txn(a)).status, (await txn(b)).status], ['COMMENCED', 'PENDING']);
    assert.equal((await contractRow(db, contractId)).status, 'ACTIVE');
    assert.equal((await db.kysely.selectFrom('orders').select('status').executeTakeFirstOrThrow()).status, 'ACCEPTED');

    server = await startServer(storage, ARGS);
    const again = new InfraClient(server.infraUrl, { basic: [secrets.apiUuid, secrets.apiSecret] });
    const done = await until('FORCESHUTDOWN COMPLETED', async () => {
      const r = await again.cmd('rctransaction.get', { rcTransactionId: String(b) });
      assert.equal(r.body.code, 'OK', r.text);
      assert.notEqual(r.body.rcTransaction.status, 'FAILED', r.body.rcTransaction.statusInfo);
      return r.body.rcTransaction.status === 'COMPLETED' ? r.body.rcTransaction : undefined;
    });
    assert.equal(done.objId, String(deviceId));
    const [ta, tb] = [await txn(a), await txn(b)];
    assert.equal(ta.status, 'COMPLETED', ta.status_info);
    // In order: STARTUP ended no later than FORCESHUTDOWN, and the device ends powered off.
    assert.ok(ta.date_modified <= tb.date_modified);
    assert.equal((await deviceRow(db, deviceId)).power_status, 'OFFLINE');
    const machine = await db.kysely.selectFrom('sim_machines').selectAll().where('name', '=', `keel-${deviceId}`).executeTakeFirstOrThrow();
    assert.equal(machine.power, 'OFFLINE');
    assert.equal(Number(machine.starts), 1, 'the resumed start ran once');
    assert.deepEqual(JSON.parse(machine.cloud_init!), { userData: '#cloud-config\n' });
    assert.deepEqual(
      (await deviceIps(db, deviceId)).map((r) => r.address),
      [address],
    );
  });
});

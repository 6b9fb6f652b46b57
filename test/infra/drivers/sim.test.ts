// The sim driver on its own: machines are rows (a second driver over the same store, as after a
// restart, sees them), steps are idempotent where the worker relies on it, a missing machine is a
// DriverError, and failures are injected in order (failNext) or by a rule.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openStore } from '../../../src/app.js';
import { ManualClock } from '../../../src/platform/clock.js';
import { SimDriver } from '../../../src/infra/drivers/sim.js';
import { DriverError, type MachineSpec } from '../../../src/infra/drivers/driver.js';
import { driverConformance } from './conformance.js';
import type { Database } from '../../../src/platform/db/database.js';
import type { InfraTables } from '../../../src/infra/tables.js';

const spec = (name: string): MachineSpec => ({
  name,
  hostname: `${name}.example.com`,
  cpu: 2,
  memoryGB: 4,
  disks: [{ sizeGB: 40, type: 'SSD' }],
  operatingSystem: 'UBUNTU22.04_64',
  image: 'ubuntu/22.04',
  sshKeys: ['ssh-ed25519 AAAA test'],
  credentials: [{ username: 'root', passwordHash: '$6$salt$hash' }],
});

await forEachEngine('sim driver', (engine) => {
  let storage: Storage;
  let db: Database<InfraTables>;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  before(async () => {
    storage = await createStorage(engine);
    db = await openStore({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl });
  });
  after(async () => {
    await db?.close();
    await storage?.dispose();
  });

  it('keeps machines in the store: a second driver (a restart) sees them as they were', async () => {
    const a = new SimDriver(db, clock, { speed: 'instant' });
    assert.equal(await a.state('m1'), null);
    await a.create(spec('m1'));
    await a.create(spec('m1'));
    assert.deepEqual(await a.state('m1'), { power: 'OFFLINE', ipv4: [], ipv6: [] });
    await a.start('m1', { userData: '#cloud-config\n' });
    const b = new SimDriver(db, clock, { speed: 'realistic' });
    assert.equal((await b.state('m1'))?.power, 'ONLINE');
    await b.stop('m1', 'force');
    assert.equal((await a.state('m1'))?.power, 'OFFLINE');
    const row = await db.kysely.selectFrom('sim_machines').selectAll().where('name', '=', 'm1').executeTakeFirstOrThrow();
    assert.equal(Number(row.starts), 1);
    assert.ok(!row.spec.includes('passwordHash'), 'no credentials in the stored spec');
    await b.reconfigure({ ...spec('m1'), cpu: 8 });
    assert.equal(JSON.parse((await db.kysely.selectFrom('sim_machines').select('spec').where('name', '=', 'm1').executeTakeFirstOrThrow()).spec).cpu, 8);
    await b.destroy('m1');
    await b.destroy('m1');
    assert.equal(await a.state('m1'), null);
  });

  it('refuses steps on a machine that does not exist, with a DriverError', async () => {
    const d = new SimDriver(db, clock);
    for (const step of [() => d.start('ghost'), () => d.stop('ghost', 'graceful'), () => d.reconfigure(spec('ghost'))]) {
      await assert.rejects(step, (e: Error) => e instanceof DriverError && e.message === 'The machine ghost does not exist');
    }
  });

  it('fails injected steps: failNext in order, then the rule', async () => {
    const d = new SimDriver(db, clock, { speed: 'fast', fail: (step, name) => (step === 'destroy' && name === 'keep' ? 'protected' : undefined) });
    d.failNext('create', 'first');
    d.failNext('create', 'second', true);
    await assert.rejects(d.create(spec('x')), (e: Error) => e instanceof DriverError && e.message === 'first' && !e.retryable);
    await assert.rejects(d.create(spec('x')), (e: Error) => e instanceof DriverError && e.message === 'second' && e.retryable);
    assert.equal(await d.state('x'), null, 'a failed create makes nothing');
    await d.create(spec('x'));
    await d.create(spec('keep'));
    await assert.rejects(d.destroy('keep'), /protected/);
    await d.destroy('x');
    assert.ok(await d.state('keep'));
    assert.ok(d.stepMs('create') > 0);
  });
});

// The conformance suite every driver passes (test/infra/drivers/conformance.ts), at two speeds: the
// sim keeps its machines in the store, so its sizes are read from there.
for (const speed of ['instant', 'realistic'] as const) {
  let confDb: Database<InfraTables> | undefined;
  driverConformance(
    `sim ${speed}`,
    async () => {
      const confStorage = await createStorage('sqlite');
      const opened = await openStore<InfraTables>({ dataDir: confStorage.dataDir, databaseUrl: confStorage.databaseUrl });
      confDb = opened;
      const driver = new SimDriver(opened, new ManualClock(Date.UTC(2026, 0, 1)), { speed });
      const close = driver.close.bind(driver);
      driver.close = async () => {
        await close();
        await opened.close();
        await confStorage.dispose();
      };
      return driver;
    },
    {
      readSizes: async (_driver, name) => {
        const row = await confDb!.kysely.selectFrom('sim_machines').select('spec').where('name', '=', name).executeTakeFirstOrThrow();
        const s = JSON.parse(row.spec) as { cpu: number; memoryGB: number };
        return { cpu: s.cpu, memoryGB: s.memoryGB };
      },
    },
  );
}

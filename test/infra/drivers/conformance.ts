// The machine driver conformance suite: what every MachineDriver (sim, incus) must do for the
// provisioning worker, as node:test cases. A driver's test file calls driverConformance with a factory;
// what only some drivers can show (a guest's files, addresses of their own) is behind an option, and a
// check without its option is left out, with a printed line saying so.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DriverError, type MachineDriver, type MachineSpec } from '../../../src/infra/drivers/driver.js';

export interface ConformanceOptions {
  /** Skips the whole suite, printing this reason (e.g. no daemon reachable). */
  skip?: string;
  /** The image alias and operating system code machines are made from. */
  image?: string;
  operatingSystem?: string;
  /** Machines get addresses of their own once started (incus): wait for an IPv4 after start. */
  expectAddresses?: boolean;
  /**
   * Reads a file inside a machine (null when absent): with it, the suite checks that the order's
   * post-install script and a STARTUP's cloud-init user data ran in the guest.
   */
  readGuestFile?: (driver: MachineDriver, name: string, path: string) => Promise<string | null>;
  /** Reads the sizes a machine has now: with it, the suite checks that reconfigure applied them. */
  readSizes?: (driver: MachineDriver, name: string) => Promise<{ cpu: number; memoryGB: number }>;
  /** How long guest-side effects (an address, cloud-init's files) may take to appear. */
  bootTimeoutMs?: number;
}

/** A spec with everything a worker fills in; `name` unique per run so suites can share a daemon. */
export function conformanceSpec(name: string, opts: ConformanceOptions, over: Partial<MachineSpec> = {}): MachineSpec {
  return {
    name,
    hostname: `${name}.example.test`,
    cpu: 1,
    memoryGB: 1,
    disks: [{ sizeGB: 10, type: 'SSD' }],
    operatingSystem: opts.operatingSystem ?? 'DEBIAN12_64',
    image: opts.image ?? 'debian/12',
    sshKeys: [],
    credentials: [],
    ...over,
  };
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function rejectsWithDriverError(p: Promise<unknown>, what: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof DriverError, `${what}: expected a DriverError, got ${String(err)}`);
    assert.ok(err.message.length > 0, `${what}: the error has a message`);
    return true;
  });
}

export function driverConformance(label: string, makeDriver: () => Promise<MachineDriver>, opts: ConformanceOptions = {}): void {
  if (opts.skip) {
    console.log(`# skipping the ${label} driver conformance suite: ${opts.skip}`);
    describe(`${label} driver conformance`, { skip: opts.skip }, () => {});
    return;
  }
  const bootMs = opts.bootTimeoutMs ?? 60_000;
  describe(`${label} driver conformance`, () => {
    let driver: MachineDriver;
    // Names unique to this run, so a rerun (or another suite on the same daemon) never meets them.
    const run = `kc${randomBytes(3).toString('hex')}`;
    const life = `${run}-life`;
    const guest = `${run}-guest`;
    const missing = `${run}-missing`;

    before(async () => {
      driver = await makeDriver();
    });
    after(async () => {
      if (!driver) return;
      // Whatever a failed case left behind.
      for (const n of [life, guest]) await driver.destroy(n).catch(() => {});
      await driver.close();
    });

    it('reports real time (incus) or its own timings (sim) as non-negative step lengths', () => {
      for (const step of ['create', 'start', 'stop', 'reconfigure', 'destroy'] as const) {
        const ms = driver.stepMs(step);
        assert.ok(Number.isFinite(ms) && ms >= 0, `${step}: ${ms}`);
      }
      if (driver.kind === 'incus') assert.equal(driver.stepMs('create'), 0);
    });

    it('has no state for a machine that was never made', async () => {
      assert.equal(await driver.state(missing), null);
    });

    it('create makes a stopped machine', async () => {
      await driver.create(conformanceSpec(life, opts));
      const st = await driver.state(life);
      assert.ok(st, 'the machine exists');
      assert.equal(st.power, 'OFFLINE');
      assert.ok(Array.isArray(st.ipv4) && Array.isArray(st.ipv6));
    });

    it('create is idempotent for a name that exists (a step resumed after a crash)', async () => {
      await driver.create(conformanceSpec(life, opts));
      assert.equal((await driver.state(life))?.power, 'OFFLINE');
    });

    it('start brings the machine ONLINE', async () => {
      await driver.start(life);
      assert.equal((await driver.state(life))?.power, 'ONLINE');
    });

    it('starting a running machine is not an error (a STARTUP resumed after a crash)', async () => {
      await driver.start(life);
      assert.equal((await driver.state(life))?.power, 'ONLINE');
    });

    // Checks a driver cannot take part in are left out, saying so (not registered as skipped tests).
    if (!opts.expectAddresses) console.log(`# ${label} driver conformance: no address check (the driver allocates no addresses; the store does)`);
    if (!opts.readGuestFile) console.log(`# ${label} driver conformance: no guest-file check (the driver has no guest to read files from)`);
    if (opts.expectAddresses)
      it('a started machine gets an IPv4 address of its own', async () => {
        const ip = await waitFor('an IPv4 address', bootMs, async () => (await driver.state(life))?.ipv4[0]);
        assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/);
      });

    it('a graceful stop takes it OFFLINE', async () => {
      await driver.stop(life, 'graceful');
      assert.equal((await driver.state(life))?.power, 'OFFLINE');
    });

    it('a forced stop takes a running machine OFFLINE', async () => {
      await driver.start(life);
      assert.equal((await driver.state(life))?.power, 'ONLINE');
      await driver.stop(life, 'force');
      assert.equal((await driver.state(life))?.power, 'OFFLINE');
    });

    it('stopping a stopped machine is not an error', async () => {
      await driver.stop(life, 'force');
      await driver.stop(life, 'graceful');
      assert.equal((await driver.state(life))?.power, 'OFFLINE');
    });

    it('reconfigure applies a new spec to the existing machine, running or not', async () => {
      await driver.reconfigure(conformanceSpec(life, opts, { cpu: 2, memoryGB: 2, sshKeys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKeelConformanceKeyOnlyForTests conformance'] }));
      assert.equal((await driver.state(life))?.power, 'OFFLINE');
      if (opts.readSizes) assert.deepEqual(await opts.readSizes(driver, life), { cpu: 2, memoryGB: 2 });
      await driver.start(life);
      await driver.reconfigure(conformanceSpec(life, opts, { cpu: 1, memoryGB: 0.5 }));
      assert.equal((await driver.state(life))?.power, 'ONLINE');
      if (opts.readSizes) assert.deepEqual(await opts.readSizes(driver, life), { cpu: 1, memoryGB: 0.5 });
      else console.log(`# ${label}: reconfigure's sizes not read back (no readSizes option)`);
    });

    it('destroy removes the machine, running or not; its state is then null', async () => {
      await driver.destroy(life);
      assert.equal(await driver.state(life), null);
    });

    it('destroy is idempotent (a name already gone is not an error)', async () => {
      await driver.destroy(life);
      await driver.destroy(missing);
      assert.equal(await driver.state(life), null);
    });

    it('steps on a machine that does not exist fail with a DriverError', async () => {
      await rejectsWithDriverError(driver.start(missing), 'start');
      await rejectsWithDriverError(driver.stop(missing, 'graceful'), 'graceful stop');
      await rejectsWithDriverError(driver.stop(missing, 'force'), 'forced stop');
      await rejectsWithDriverError(driver.reconfigure(conformanceSpec(missing, opts)), 'reconfigure');
    });

    if (opts.readGuestFile)
      it('the post-install script and a STARTUP’s cloud-init user data run in the guest', async () => {
        const read = opts.readGuestFile;
        assert.ok(read);
        const token = randomBytes(8).toString('hex');
        await driver.create(conformanceSpec(guest, opts, { postInstallScript: `#!/bin/sh\necho "post-install ${token}" > /var/tmp/keel-post-install\n` }));
        await driver.start(guest, {
          userData: `#cloud-config\nwrite_files:\n  - path: /var/tmp/keel-user-data\n    content: "user-data ${token}\\n"\n`,
        });
        const post = await waitFor('the post-install script’s file', bootMs, () => read(driver, guest, '/var/tmp/keel-post-install'));
        assert.equal(post.trim(), `post-install ${token}`);
        const user = await waitFor('the user data’s file', bootMs, () => read(driver, guest, '/var/tmp/keel-user-data'));
        assert.equal(user.trim(), `user-data ${token}`);
        await driver.destroy(guest);
        assert.equal(await driver.state(guest), null);
      });
  });
}

// The incus driver against a real Incus/LXD daemon (scripts/lxd-setup.sh prepares one and the
// debian/12 image; .ci/run calls it). Without a reachable daemon or the image, every case here skips
// with the printed reason. Besides the conformance suite: the real end of a device, a container made
// from a spec with an SSH key that answers `ssh -i key user@ip` with its hostname, and readable
// errors for what an operator gets wrong (a missing image, a dead socket).
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { DriverError, type MachineDriver } from '../../../src/infra/drivers/driver.js';
import { IncusDriver } from '../../../src/infra/drivers/incus.js';
import { INCUS_IMAGE, incusSocket, incusUnavailable } from '../../helpers/incus.js';
import { conformanceSpec, driverConformance } from './conformance.js';

const IMAGE = INCUS_IMAGE;
const socketPath = incusSocket;

const why = await incusUnavailable();
const make = async (): Promise<MachineDriver> => new IncusDriver({ socketPath });

driverConformance('incus', make, {
  skip: why ?? undefined,
  image: IMAGE,
  expectAddresses: true,
  bootTimeoutMs: 90_000,
  readGuestFile: (driver, name, file) => (driver as IncusDriver).readFile(name, file),
  readSizes: async (driver, name) => {
    const c = await (driver as IncusDriver).config(name);
    const mib = /^(\d+)MiB$/.exec(c['limits.memory'] ?? '');
    return { cpu: Number(c['limits.cpu']), memoryGB: mib ? Number(mib[1]) / 1024 : Number.NaN };
  },
});

if (why) console.log(`# skipping the incus driver's SSH and image checks: ${why}`);
describe('incus driver: a device for real', { skip: why ?? false }, () => {
  const driver = new IncusDriver({ socketPath });
  const name = `kssh${randomBytes(3).toString('hex')}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-incus-'));
  after(async () => {
    await driver.destroy(name).catch(() => {});
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sshMissing = spawnSync('ssh-keygen', ['-?'], { stdio: 'ignore' }).error ? 'no ssh-keygen/ssh client on this host' : false;

  it('a container made with an SSH key answers ssh on its own IPv4 with the hostname ordered', { skip: sshMissing }, async () => {
    const key = path.join(dir, 'id_ed25519');
    const gen = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'keel-test', '-f', key]);
    assert.equal(gen.status, 0, String(gen.stderr));
    const pub = readFileSync(`${key}.pub`, 'utf8').trim();
    const t0 = performance.now();
    await driver.create(
      conformanceSpec(
        name,
        { image: IMAGE },
        {
          hostname: 'web1.example.test',
          sshKeys: [pub],
          // A crypt(3) SHA-512 hash, as orders store credentials (the password is "keel-test-pw").
          credentials: [{ username: 'keel', password: '$6$keelsalt$XWcFLcyXqQgrqF12OUONn3DLnW583rSEbBWmmHONu2qW3lJ8JuhveV5YvGhskUEnYVZFLix5MqQYmjYP.5CtP/' }],
        },
      ),
    );
    const tCreate = performance.now();
    await driver.start(name);
    const tStart = performance.now();
    // start() returns once DHCP gave eth0 its address: the state read after a STARTUP holds it.
    const ip = (await driver.state(name))?.ipv4[0] ?? '';
    assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/, 'the container has an IPv4 address when start() returns');
    const run = promisify(execFile);
    const sshArgs = ['-i', key, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'ConnectTimeout=3', '-o', 'LogLevel=ERROR', `keel@${ip}`];
    let out = '';
    let last = '';
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      try {
        out = (await run('ssh', [...sshArgs, 'hostname; hostname -f; sudo -n id -u'], { timeout: 15_000 })).stdout;
        break;
      } catch (err) {
        // sshd starts, then cloud-init installs the user and the key: refused until both are done.
        last = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const tSsh = performance.now();
    assert.ok(out, `ssh keel@${ip} did not succeed: ${last}`);
    assert.deepEqual(out.trim().split('\n'), ['web1', 'web1.example.test', '0']);
    // The figures the docs quote: a real launch on this host.
    console.log(
      `# incus launch: create ${Math.round(tCreate - t0)} ms, start (until eth0 has ${ip}) ${Math.round(tStart - tCreate)} ms, ssh answered after ${Math.round(tSsh - t0)} ms from the create call`,
    );
    const t1 = performance.now();
    await driver.destroy(name);
    console.log(`# incus destroy of a running container: ${Math.round(performance.now() - t1)} ms`);
    assert.equal(await driver.state(name), null);
  });

  it('a guest that does not shut down in time fails the graceful stop readably, retryable, and stays ONLINE', async () => {
    // A unit whose stop takes 30 s holds the guest's shutdown past the driver's 2 s.
    const holdShutdown = [
      '#!/bin/sh',
      "cat > /etc/systemd/system/keel-slow-stop.service <<'UNIT'",
      '[Service]',
      'Type=oneshot',
      'RemainAfterExit=yes',
      'ExecStart=/bin/true',
      'ExecStop=/bin/sleep 30',
      'TimeoutStopSec=60',
      'UNIT',
      'systemctl daemon-reload',
      'systemctl start keel-slow-stop.service',
      'echo ready > /var/tmp/keel-slow-ready',
      '',
    ].join('\n');
    const impatient = new IncusDriver({ socketPath, gracefulStopS: 2 });
    const slow = `${name}-slow`;
    try {
      await impatient.create(conformanceSpec(slow, { image: IMAGE }, { postInstallScript: holdShutdown }));
      await impatient.start(slow);
      for (const deadline = Date.now() + 90_000; !(await impatient.readFile(slow, '/var/tmp/keel-slow-ready')); ) {
        assert.ok(Date.now() < deadline, 'the post-install script did not run');
        await new Promise((r) => setTimeout(r, 250));
      }
      await assert.rejects(impatient.stop(slow, 'graceful'), (err: unknown) => err instanceof DriverError && err.retryable && /did not shut down within 2 s/.test(err.message));
      assert.equal((await impatient.state(slow))?.power, 'ONLINE');
      await impatient.stop(slow, 'force');
      assert.equal((await impatient.state(slow))?.power, 'OFFLINE');
    } finally {
      await impatient.destroy(slow).catch(() => {});
      await impatient.close();
    }
  });

  it('a missing image is a DriverError naming it, and nothing is made', async () => {
    const spec = conformanceSpec(`${name}-noimg`, { image: 'keel/no-such-image' });
    await assert.rejects(driver.create(spec), (err: unknown) => err instanceof DriverError && /keel\/no-such-image/.test(err.message));
    assert.equal(await driver.state(spec.name), null);
  });

  it('an operating system without an image (Windows) is refused readably', async () => {
    const spec = conformanceSpec(`${name}-win`, { image: IMAGE }, { operatingSystem: 'WINDOWS2022STD', image: undefined });
    await assert.rejects(driver.create(spec), (err: unknown) => err instanceof DriverError && /WINDOWS2022STD/.test(err.message));
  });
});

describe('incus driver without a daemon', () => {
  it('says the socket is not reachable, as a retryable DriverError', async () => {
    const dead = new IncusDriver({ socketPath: path.join(os.tmpdir(), `keel-no-incus-${randomBytes(4).toString('hex')}.socket`) });
    try {
      await assert.rejects(dead.state('keel-1'), (err: unknown) => err instanceof DriverError && err.retryable && /not reachable/.test(err.message));
    } finally {
      await dead.close();
    }
  });

  it('refuses a name Incus would refuse, before asking it', async () => {
    const dead = new IncusDriver({ socketPath: '/nonexistent/unix.socket' });
    try {
      await assert.rejects(dead.state('bad_name!'), (err: unknown) => err instanceof DriverError && /not a valid instance name/.test(err.message));
    } finally {
      await dead.close();
    }
  });
});

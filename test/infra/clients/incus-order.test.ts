// An order through the API ends in a real container (keel serve --infra-driver incus, on the LXD
// daemon scripts/lxd-setup.sh prepares): the customer's SSH key (sshkey.create) and the order's
// user are installed by cloud-init, STARTUP's cloud-init user data runs, the device shows the
// container's own address, `ssh -i key user@ip` answers with the ordered hostname, and CANCEL
// removes the container. Without a reachable daemon, the image or an ssh client it skips, saying why.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startInfra } from '../../helpers/server.js';
import { IncusDriver } from '../../../src/infra/drivers/incus.js';
import { incusSocket, incusUnavailable } from '../../helpers/incus.js';

const socketPath = incusSocket;

const why = await incusUnavailable({ needSsh: true });
if (why) console.log(`# skipping the order-to-container test: ${why}`);

describe('an order through the API on the incus driver', { skip: why ?? false }, () => {
  let infra: Awaited<ReturnType<typeof startInfra>>;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-incus-order-'));
  let machine = '';

  before(async () => {
    infra = await startInfra('sqlite', ['--infra-driver', 'incus', '--incus-socket', socketPath]);
  });
  after(async () => {
    // A failed run leaves no container behind.
    if (machine) {
      const driver = new IncusDriver({ socketPath });
      await driver.destroy(machine).catch(() => {});
      await driver.close();
    }
    await infra?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const poll = async <T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, seconds = 120): Promise<T> => {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const v = await read();
      if (done(v)) return v;
      assert.ok(Date.now() < deadline, `${what}: not done after ${seconds} s (last ${JSON.stringify(v)})`);
      await sleep(250);
    }
  };

  it('orders, starts, answers ssh with the customer’s key on the container’s address, and cancels', async () => {
    const api = infra.api;
    const key = path.join(dir, 'id_ed25519');
    assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'keel-order', '-f', key]).status, 0);
    const made = await api.cmd('sshkey.create', { name: 'laptop', publicKey: readFileSync(`${key}.pub`, 'utf8').trim() });
    assert.equal(made.body.code, 'OK', made.text);
    const customerId = (await api.cmd('customer.get')).body.customer.id;
    const t0 = performance.now();
    const order = await api.cmd('order.create', {
      productCode: 'SERVER_VIRTUAL_BUDGET_AU',
      customerId: String(customerId),
      productDetails: {
        hostname: 'web1.example.test',
        credentials: [{ username: 'keel', password: 'Order-pass-1' }],
        install: { operatingSystem: 'DEBIAN12_64' },
        cpu: 1,
        memoryGB: 1,
        location: 'GLOBALSWITCH-SYD1',
      },
    });
    assert.equal(order.body.code, 'OK', order.text);
    const confirmed = await api.cmd('order.confirm', { orderId: String(order.body.orderId) });
    const contractId = String(confirmed.body.contractID[0]);
    const contract = await poll(
      'contract',
      async () => (await api.cmd('order.contract.get', { contractId })).body.contract,
      (c) => c.status !== 'PENDING',
    );
    assert.equal(contract.status, 'ACTIVE', JSON.stringify(contract));
    const deviceId = Number(contract.deviceID);
    machine = `keel-${deviceId}`;
    const tActive = performance.now();

    const startup = await api.cmd('rctransaction.create', {
      objType: 'DEVICE',
      objId: String(deviceId),
      type: 'STARTUP',
      confirmation: true,
      data: JSON.stringify({ cloudInit: { userData: '#cloud-config\nruncmd:\n  - [sh, -c, "echo started-by-keel > /var/tmp/keel-startup"]\n' } }),
    });
    assert.equal(startup.body.code, 'OK', startup.text);
    const txn = await poll(
      'STARTUP',
      async () => (await api.cmd('rctransaction.get', { rcTransactionId: String(startup.body.rcTransaction.rcTransactionId) })).body.rcTransaction,
      (t) => t.status === 'COMPLETED' || t.status === 'FAILED',
    );
    assert.equal(txn.status, 'COMPLETED', txn.statusInfo);
    const device = (await api.cmd('device.get', { deviceId })).body.device;
    assert.equal(device.extra.SYS_POWERSTATUS, 'ONLINE');
    // The container's own address, not the pool's.
    assert.doesNotMatch(device.primaryIP, /^100\./);
    const ip = device.primaryIP.replace(/\/\d+$/, '');
    const tOnline = performance.now();

    const run = promisify(execFile);
    const sshArgs = ['-i', key, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'ConnectTimeout=3', '-o', 'LogLevel=ERROR', `keel@${ip}`];
    let out = '';
    let last = '';
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      try {
        out = (await run('ssh', [...sshArgs, 'hostname -f; cat /var/tmp/keel-startup'], { timeout: 15_000 })).stdout;
        if (out.includes('started-by-keel')) break;
      } catch (err) {
        // sshd starts, then cloud-init installs the user, the key and runs the user data.
        last = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
      }
      await sleep(500);
    }
    const tSsh = performance.now();
    assert.deepEqual(out.trim().split('\n'), ['web1.example.test', 'started-by-keel'], `ssh keel@${ip}: ${last}`);
    console.log(
      `# order to container: ACTIVE after ${Math.round(tActive - t0)} ms, STARTUP completed (ONLINE, ${ip}) after ${Math.round(tOnline - t0)} ms, ssh with the customer's key and the STARTUP user data after ${Math.round(tSsh - t0)} ms`,
    );

    const cancel = await api.cmd('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'CANCEL', confirmation: true, data: '' });
    const cancelled = await poll(
      'CANCEL',
      async () => (await api.cmd('rctransaction.get', { rcTransactionId: String(cancel.body.rcTransaction.rcTransactionId) })).body.rcTransaction,
      (t) => t.status === 'COMPLETED' || t.status === 'FAILED',
    );
    assert.equal(cancelled.status, 'COMPLETED', cancelled.statusInfo);
    assert.deepEqual((await api.cmd('device.get', { deviceId })).body, { code: 'ERROR', message: 'Could not find device' });
    const driver = new IncusDriver({ socketPath });
    try {
      assert.equal(await driver.state(machine), null, 'the container is gone');
    } finally {
      await driver.close();
    }
    machine = '';
  });
});

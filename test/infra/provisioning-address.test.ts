// A driver whose machines have addresses of their own (incus: the instance's eth0): after STARTUP
// the device shows the machine's IPv4 as its primary address instead of the pool's, and is
// published again; a driver without any (the sim) leaves the pool's address.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { inProcessInfra, type InProcessInfra } from '../helpers/in-process-infra.js';
import { contractRow, deviceIps, SAMPLE_DETAILS, seedContracts } from '../helpers/infra-contracts.js';
import { ManualClock } from '../../src/platform/clock.js';

await forEachEngine('the machine’s own address', (engine) => {
  let infra: InProcessInfra;
  const published: number[] = [];
  const clock = new ManualClock(Date.UTC(2026, 0, 1));

  before(async () => {
    infra = await inProcessInfra(engine, { clock, hooks: { publish: async (id) => void published.push(id) } });
  });
  after(async () => {
    await infra?.close();
  });

  const startUp = async (deviceId: number) => {
    const r = await infra.call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: '' });
    assert.equal(r.code, 'OK', JSON.stringify(r));
    await infra.worker.runDue();
    return (await infra.call('device.get', { deviceId })).device;
  };

  it('takes the machine’s IPv4 after STARTUP when the driver reports one, and publishes the device again', async () => {
    const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now());
    await infra.worker.runDue();
    const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
    const lent = (await deviceIps(infra.ctx.db, deviceId))[0].address;
    assert.match(lent, /^100\./);
    // The sim reports no address of its own: the pool's stays.
    assert.equal((await startUp(deviceId)).primaryIP, lent);
    // As the incus driver does: the instance's address.
    const driver = infra.driver;
    const real = driver.state.bind(driver);
    driver.state = async (name) => {
      const s = await real(name);
      return s && { ...s, ipv4: ['10.87.0.154'] };
    };
    try {
      const before = published.length;
      const device = await startUp(deviceId);
      assert.equal(device.primaryIP, '10.87.0.154');
      assert.deepEqual(
        (await deviceIps(infra.ctx.db, deviceId)).map((r) => r.address),
        ['10.87.0.154'],
      );
      assert.deepEqual(published.slice(before), [deviceId]);
    } finally {
      driver.state = real;
    }
  });

  it('gives a device as many IPv4 addresses as its order’s NICs ask for, one of them primary', async () => {
    const details = {
      ...SAMPLE_DETAILS,
      nics: [
        { name: 'eth0', vlan: 0, speed: 1000, ipv4: 2, poolIPv4: 0, ipv6: 0, poolIPv6: 0 },
        { name: 'eth1', vlan: 0, speed: 1000, ipv4: 1, poolIPv4: 0, ipv6: 0, poolIPv6: 0 },
      ],
    };
    const [contractId] = await seedContracts(infra.ctx.db, infra.ctx.created!.customerId, clock.now(), 1, details);
    await infra.worker.runDue();
    const deviceId = Number((await contractRow(infra.ctx.db, contractId)).device_id);
    const rows = await deviceIps(infra.ctx.db, deviceId);
    assert.equal(rows.length, 3);
    assert.equal(rows.filter((r) => Number(r.is_primary) === 1).length, 1);
    const device = (await infra.call('device.get', { deviceId })).device;
    assert.equal(device.ips.length, 3);
    assert.equal(device.primaryIP.replace(/\/\d+$/, ''), rows.find((r) => Number(r.is_primary) === 1)!.address);
  });
});

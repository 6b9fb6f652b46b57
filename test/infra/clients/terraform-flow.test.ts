// Terraform's rackcorp_server resource against a real `keel serve`, replayed request by request as
// the provider (RackCorpCloud/terraform-provider-rackcorp, through rackcorp-api-go v1.0.0 at API
// v2.8, and v1.1.0 at v2.9) sends it, every answer decoded with the Go client's types: create
// (order.create, order.confirm, contract polling, waiting for transactions, STARTUP with cloud-init,
// power polling), read (order.get over REST with a {} body, the contract, the device), update (the
// firewall with old rules sent DELETED, REFRESHCONFIG) and delete (CANCEL polled to COMPLETED, then
// "Could not find device", which removes the resource from the state). Then the section-io SDK's
// command-style calls with credentials in the body (API v2.3).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachEngine } from '../../helpers/engines.js';
import { startInfra } from '../../helpers/server.js';
import { GoClient, type GoReply } from '../../helpers/go-client.js';
import { send } from '../../helpers/infra-client.js';
import { assertGoShape } from '../../helpers/go-types.js';
import { CONFIRMED, CONTRACT, CREATED, DEVICE, ORDER, TRANSACTION, TRANSACTION_CREATED, TRANSACTIONS } from '../../helpers/go-shapes.js';

/** Polls as the provider's retry.StateChangeConf does (here every 50 ms, at most 20 s): until `done`, failing on any state outside `pending`. */
async function waitFor(what: string, read: () => Promise<string>, target: string, pending: string[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const state = await read();
    if (state === target) return;
    // The provider aborts on any state that is neither pending nor the target, an empty one included.
    assert.ok(pending.includes(state), `${what}: unexpected state "${state}" (pending ${pending.join(', ')}, target ${target})`);
    assert.ok(Date.now() < deadline, `${what}: still "${state}" after 20 s`);
    await sleep(50);
  }
}

function ok(r: GoReply, what: string): Record<string, any> {
  assert.equal(r.body.code, 'OK', `${what}: ${r.text}`);
  return r.body;
}

await forEachEngine('Terraform and the Go and SDK clients against keel serve', (engine) => {
  let infra: Awaited<ReturnType<typeof startInfra>>;
  let customerId: number;

  before(async () => {
    infra = await startInfra(engine, ['--infra-sim-speed', 'instant']);
    customerId = (await infra.api.cmd('customer.get')).body.customer.id;
  });
  after(async () => {
    await infra?.stop();
  });

  for (const version of ['v2.8', 'v2.9'] as const) {
    it(`runs a server's whole life as Terraform does (Go client at ${version})`, async () => {
      const go = new GoClient(infra.server.infraUrl, infra.basic[0], infra.basic[1], version);

      // Create: order.create with the provider's ProductDetails (omitempty rules: no dcId, a location).
      const created = ok(
        await go.legacy('order.create', {
          productCode: 'SERVER_VIRTUAL_PERFORMANCE_AU',
          customerId: String(customerId),
          productDetails: {
            hostname: `tf-${version.replace('.', '')}`,
            credentials: [{ username: 'root', password: 'Tf-secret-1' }],
            install: { operatingSystem: 'UBUNTU22.04_64' },
            cpu: 2,
            memoryGB: 4,
            storage: [{ sizeGB: 40, type: 'SSD' }],
            firewallPolicies: [{ id: 0, direction: 'INBOUND', policy: 'ALLOW', order: 1, protocol: 'TCP', portFrom: '22', portTo: '22', deviceId: 0 }],
            location: 'GLOBALSWITCH-SYD1',
          },
        }),
        'order.create',
      );
      assertGoShape(created, CREATED, 'order.create');
      assert.ok(created.orderId > 0);
      const orderId = String(created.orderId);

      const confirmed = ok(await go.legacy('order.confirm', { orderId }), 'order.confirm');
      assertGoShape(confirmed, CONFIRMED, 'order.confirm');
      assert.equal(confirmed.contractID.length, 1, 'Terraform needs exactly one contract');
      const contractId = String(confirmed.contractID[0]);

      // Poll the contract PENDING -> ACTIVE; its deviceID becomes the resource's device_id.
      let deviceId = 0;
      await waitFor(
        'contract',
        async () => {
          const r = ok(await go.legacy('order.contract.get', { contractId }), 'order.contract.get');
          assertGoShape(r.contract, CONTRACT, 'order.contract.get');
          if (r.contract.deviceID !== '') deviceId = Number.parseInt(r.contract.deviceID, 10);
          return r.contract.status;
        },
        'ACTIVE',
        ['PENDING'],
      );
      assert.ok(Number.isSafeInteger(deviceId) && deviceId > 0, 'an ACTIVE contract names its device');
      const objId = String(deviceId);

      // Wait for pending device transactions (resWindow 1, until matches is 0).
      const waitIdle = () =>
        waitFor(
          'pending transactions',
          async () => {
            const r = ok(await go.legacy('rctransaction.getall', { objType: 'DEVICE', objId: [objId], status: ['PENDING', 'COMMENCED'], resWindow: 1 }), 'rctransaction.getall');
            assertGoShape(r, TRANSACTIONS, 'rctransaction.getall');
            assert.ok(r.rcTransactions.length <= 1, 'resWindow 1');
            return r.matches === 0 ? 'idle' : 'busy';
          },
          'idle',
          ['busy'],
        );
      await waitIdle();

      // STARTUP over REST, its data a JSON string with cloud-init user data.
      const startup = await go.rest('POST', 'rctransaction', {
        objType: 'DEVICE',
        objId,
        type: 'STARTUP',
        confirmation: true,
        data: JSON.stringify({ cloudInit: { userData: '#cloud-config\nruncmd: [echo hello]\n' } }),
      });
      ok(startup, 'rctransaction.create');
      assertGoShape(startup.body.data, TRANSACTION_CREATED, 'rctransaction.create (REST)');

      // Poll the device over REST (GET with a {} body) until its power goes OFFLINE -> ONLINE.
      const deviceStatus = async () => {
        const r = ok(await go.rest('GET', `devices/${deviceId}`), 'device.get');
        assertGoShape(r.data, DEVICE, 'device.get');
        const sw = r.data.extra.SYS_POWERSWITCH;
        return sw === 'ONLINE' ? r.data.extra.SYS_POWERSTATUS : sw;
      };
      await waitFor('device power', deviceStatus, 'ONLINE', ['OFFLINE']);

      // Read: order.get over REST, then the contract, then the device.
      const order = ok(await go.rest('GET', `order/${orderId}`), 'order.get');
      assertGoShape(order.data, ORDER, 'order.get');
      assert.equal(order.data.contractId, contractId);
      const device = ok(await go.rest('GET', `devices/${deviceId}`), 'device.get').data;
      assert.equal(device.name, `tf-${version.replace('.', '')}`);
      assert.match(device.primaryIP, /^\d+\.\d+\.\d+\.\d+/);
      assert.equal(device.dcid, 19, 'GLOBALSWITCH-SYD1 is data centre 19');
      assert.equal(device.firewallPolicies.length, 1);
      const old = device.firewallPolicies[0];

      // Update: the new rules, and the old ones sent back as DELETED; then REFRESHCONFIG and wait.
      const fw = await go.rest('PUT', `devices/${deviceId}/firewall`, {
        firewallPolicies: [
          { id: 0, direction: 'INBOUND', policy: 'ALLOW', order: 1, protocol: 'TCP', portFrom: '443', portTo: '443', deviceId },
          { ...old, policy: 'DELETED' },
        ],
      });
      ok(fw, 'device firewall update');
      const refreshed = ok(await go.rest('POST', 'rctransaction', { objType: 'DEVICE', objId, type: 'REFRESHCONFIG', confirmation: false, data: '' }), 'REFRESHCONFIG');
      assertGoShape(refreshed.data, TRANSACTION_CREATED, 'REFRESHCONFIG');
      await waitIdle();
      const after = ok(await go.rest('GET', `devices/${deviceId}`), 'device.get').data;
      assert.deepEqual(
        after.firewallPolicies.map((p: { portFrom: string }) => p.portFrom),
        ['443'],
      );

      // Delete: CANCEL, polled with rctransaction.get until COMPLETED; then the device is gone.
      const cancel = ok(await go.rest('POST', 'rctransaction', { objType: 'DEVICE', objId, type: 'CANCEL', confirmation: true, data: '' }), 'CANCEL');
      assertGoShape(cancel.data, TRANSACTION_CREATED, 'CANCEL');
      const rcTransactionId = String(cancel.data.rcTransactionId);
      await waitFor(
        'cancel transaction',
        async () => {
          const r = ok(await go.legacy('rctransaction.get', { rcTransactionId }), 'rctransaction.get');
          assertGoShape(r.rcTransaction, TRANSACTION, 'rctransaction.get');
          return r.rcTransaction.status;
        },
        'COMPLETED',
        ['PENDING', 'COMMENCED'],
      );
      const gone = await go.rest('GET', `devices/${deviceId}`);
      // Terraform compares the message, and only when there is no `debug`.
      assert.deepEqual(gone.body, { code: 'ERROR', message: 'Could not find device' });
    });
  }

  it('answers the section-io SDK (v2.3, command style, credentials in the body) through the same life', async () => {
    const call = async (cmd: string, params: Record<string, unknown>) => send(`${infra.server.infraUrl}/api/rest/v2.3/json.php`, { body: { cmd, ...params }, auth: { body: infra.basic } });
    const created = (
      await call('order.create', {
        productCode: 'SERVER_VIRTUAL_BUDGET_AU',
        customerId: String(customerId),
        productDetails: { credentials: null, install: { operatingSystem: 'DEBIAN12_64' }, cpu: 1, memoryGB: 1, dcId: '19' },
      })
    ).body;
    assert.equal(created.code, 'OK', JSON.stringify(created));
    const confirmed = (await call('order.confirm', { orderId: String(created.orderId) })).body;
    assert.equal(confirmed.code, 'OK');
    const contractId = String(confirmed.contractID[0]);
    let deviceId = 0;
    await waitFor(
      'contract (SDK)',
      async () => {
        const c = (await call('order.contract.get', { contractId })).body;
        if (c.contract.deviceID) deviceId = Number(c.contract.deviceID);
        return c.contract.status;
      },
      'ACTIVE',
      ['PENDING'],
    );
    // The SDK reads device.get by `deviceId` (an int) from the top-level `device`.
    const device = (await call('device.get', { deviceId })).body;
    assert.equal(device.code, 'OK');
    assertGoShape(device.device, DEVICE, 'device.get (SDK)');
    // SDK2's STARTUP puts the cloud-init fields at the top of its data string.
    const startup = (await call('rctransaction.create', { objType: 'DEVICE', objId: String(deviceId), type: 'STARTUP', confirmation: true, data: JSON.stringify({ userData: '#cloud-config\n' }) }))
      .body;
    assert.equal(startup.code, 'OK', JSON.stringify(startup));
    assertGoShape(startup.rcTransaction, TRANSACTION_CREATED, 'rctransaction.create (SDK)');
    const id = startup.rcTransaction.rcTransactionId;
    await waitFor('startup (SDK)', async () => (await call('rctransaction.get', { rcTransactionId: id })).body.rcTransaction.status, 'COMPLETED', ['PENDING', 'COMMENCED']);
    const fw = (await call('device.firewall.update', { deviceId, firewallPolicies: [{ direction: 'INBOUND', policy: 'DENY', order: 1, protocol: 'ANY' }] })).body;
    assert.equal(fw.code, 'OK', JSON.stringify(fw));
    const online = (await call('device.get', { deviceId })).body.device;
    assert.equal(online.extra.SYS_POWERSTATUS, 'ONLINE');
    assert.equal(online.firewallPolicies.length, 1);
  });
});

// Black-box over HTTP (the Infra server built in-process, driven through its request pipeline):
// device.* as the Go client, Terraform and the SDK call them, every answer checked against the Go
// types they decode into. Devices are made here as the provisioning worker makes them (an order
// through the API, then the device row, its address and the contract ACTIVE written to the store).
// Also: DNS publication of a device, asked over a real DNS socket.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessInfra } from '../helpers/in-process.js';
import { assertGoShape } from '../helpers/go-types.js';
import { DEVICE, LISTED, POLICY } from '../helpers/go-shapes.js';
import { rcodeOf, rdataOf, udpQuery } from '../helpers/dns-client.js';
import { createCustomer } from '../../src/infra/accounts.js';
import { startDnsServer, type DnsServer } from '../../src/dns/server.js';
import { publishDevice, reverseName, unpublishDevice } from '../../src/infra/devices/dns.js';
import { MAX_FIREWALL_POLICIES } from '../../src/infra/orders-details.js';
import { addOrderedPolicies } from '../../src/infra/devices/firewall.js';
import type { InfraServices } from '../../src/infra/command.js';

/** The keys of `extra` in the Go client's fixture (testdata/device.get.responseBody.json). */
const FIXTURE_EXTRA_KEYS = [
  'SUPPORT:PRICE',
  'IPV6:PRICE',
  'SUPPORT_PLAN',
  'SUPPORT',
  'IPV6',
  'IPV4:PRICE',
  'IPV4',
  'PORTSPEED:PRICE',
  'PORTSPEED',
  'OPERATINGSYSTEM:PRICE',
  'OPERATINGSYSTEM',
  'TRAFFICGB:PRICE',
  'TRAFFICGB',
  'STORAGEGB:PRICE',
  'VMHDD1',
  'STORAGEGB',
  'MEMORYGB:PRICE',
  'VMMEMORY',
  'MEMORYGB',
  'CPU:PRICE',
  'CLOUDSERVER',
  'VMCORES',
  'CPU',
  'LOCATION:PRICE',
  'LOCATION',
  'DDOS',
  'DDOS:PRICE',
  'HAENABLED',
  'HOSTDEVICEID',
  'HOSTDEVICENAME',
  'NET_DHCPENABLED',
  'NET_DNSSERVER1',
  'NET_DNSSERVER2',
  'NET_GATEWAY',
  'NET_NETMASK',
  'SYS_NETWORKSTATUS',
  'SYS_NETWORKSWITCH',
  'SYS_POWERSTATUS',
  'SYS_POWERSWITCH',
];

await forEachEngine('device commands', (engine) => {
  let storage: Storage;
  let infra: Awaited<ReturnType<typeof inProcessInfra>>;
  let customerId: number;
  let other: { authorization: string; customerId: number };
  let services: InfraServices;
  let dns: DnsServer;
  let nextAddress = 10;

  before(async () => {
    storage = await createStorage(engine);
    infra = await inProcessInfra(storage);
    customerId = infra.ctx.created!.customerId;
    const made = await createCustomer(infra.ctx.db.kysely, { companyName: 'Other', username: 'other', password: 'x', passwordHash: 'x' }, 1);
    other = { authorization: 'Basic ' + Buffer.from(`${made.apiUuid}:${made.apiSecret}`).toString('base64'), customerId: made.customerId };
    const ctx = infra.ctx;
    services = ctx.infraServices;
    dns = await startDnsServer({ catalog: ctx.zones, listen: { host: '127.0.0.1', port: 0 }, nameserverDomain: 'ns.keel.test', nameserverAddresses: ['192.0.2.53'], log: ctx.log });
  });
  after(async () => {
    await dns?.close();
    await infra?.close();
    await storage?.dispose();
  });

  const cmd = (c: string, p: Record<string, unknown> = {}, headers?: Record<string, string>) => infra.cmd(c, p, headers);
  async function rest(method: string, path: string, body?: unknown, prefix = '/api/v2.9', authorization?: string) {
    const auth = authorization ?? 'Basic ' + Buffer.from(`${infra.ctx.created!.apiUuid}:${infra.ctx.created!.apiSecret}`).toString('base64');
    const res = await infra.app.inject({
      method,
      url: prefix + path,
      headers: { authorization: auth, 'content-type': 'application/json' },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    return JSON.parse(res.body) as Record<string, any>;
  }

  /** What the worker does for a confirmed order: the device, its primary IPv4 (and IPv6), the contract ACTIVE. */
  async function makeDevice(o: { hostname?: string; customer?: number; headers?: Record<string, string>; ipv6?: string; firewallPolicies?: unknown[] } = {}): Promise<number> {
    const created = await cmd(
      'order.create',
      {
        productCode: 'SERVER_VIRTUAL_PERFORMANCE_AU',
        customerId: String(o.customer ?? customerId),
        productDetails: {
          hostname: o.hostname ?? `host${nextAddress}.devices.example`,
          cpu: 2,
          memoryGB: 4,
          location: 'GLOBALSWITCH-SYD1',
          install: { operatingSystem: 'DEBIAN12_64' },
          firewallPolicies: o.firewallPolicies,
        },
      },
      o.headers,
    );
    assert.equal(created.code, 'OK', JSON.stringify(created));
    const confirmed = await cmd('order.confirm', { orderId: created.orderId }, o.headers);
    const contractId = confirmed.contractID[0];
    const db = infra.ctx.db.kysely;
    const order = await db.selectFrom('orders').selectAll().where('id', '=', created.orderId).executeTakeFirstOrThrow();
    const details = JSON.parse(order.details);
    const now = Math.floor(Date.now() / 1000);
    const device = await db
      .insertInto('devices')
      .values({
        customer_id: order.customer_id,
        contract_id: contractId,
        name: details.hostname,
        std_name: 'KEEL',
        status: 'ACTIVE',
        dc_id: details.dcId,
        product_code: order.product_code,
        spec: '{}',
        machine_name: `keel-c${contractId}`,
        power_switch: 'ONLINE',
        power_status: 'OFFLINE',
        traffic_mb: 0,
        date_created: now,
        date_modified: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('device_ips')
      .values({ device_id: device.id, address: `192.0.2.${nextAddress++}`, family: 4, is_primary: 1, network_id: null, date_created: now })
      .execute();
    if (o.ipv6) await db.insertInto('device_ips').values({ device_id: device.id, address: o.ipv6, family: 6, is_primary: 0, network_id: null, date_created: now }).execute();
    await infra.ctx.db.transaction((trx) => addOrderedPolicies(trx, device.id, details, now));
    await db.updateTable('contracts').set({ status: 'ACTIVE', device_id: device.id, due_at: null }).where('id', '=', contractId).execute();
    return device.id;
  }

  it("replays Terraform's read: contract ACTIVE with deviceID, REST device.get with a {} body, power in extra", async () => {
    const deviceId = await makeDevice({ hostname: 'tf1.devices.example', firewallPolicies: [{ id: 0, direction: 'INBOUND', policy: 'ALLOW', order: 10, protocol: 'TCP', portTo: '22', deviceId: 0 }] });
    const contract = (await cmd('order.contract.getall', { deviceId })).contracts[0];
    assert.equal(contract.status, 'ACTIVE');
    assert.equal(contract.deviceID, String(deviceId));

    const got = await rest('GET', `/devices/${deviceId}`, {});
    assert.equal(got.code, 'OK', JSON.stringify(got));
    assert.equal(got.message, 'Device looked up successfully');
    assert.equal(got.device, undefined, 'REST answers in data');
    assertGoShape(got.data, DEVICE, 'device.get data');
    const d = got.data;
    assert.equal(d.deviceId, deviceId);
    assert.equal(d.name, 'tf1.devices.example');
    assert.equal(d.customerId, customerId);
    assert.equal(d.primaryIP, '192.0.2.10');
    assert.equal(d.dcid, 19);
    assert.equal(d.dcName, 'RC-AU-GLOBESW1');
    assert.equal(d.trafficCurrent, '0');
    assert.equal(d.extra.SYS_POWERSWITCH, 'ONLINE');
    assert.equal(d.extra.SYS_POWERSTATUS, 'OFFLINE');
    assert.equal(d.extra.CPU, '2');
    assert.equal(d.extra.MEMORYGB, '4');
    assert.equal(d.extra.VMMEMORY, 4096);
    assert.equal(d.extra.OPERATINGSYSTEM, 'DEBIAN12_64');
    assert.equal(d.extra.LOCATION, 'GLOBALSWITCH-SYD1');
    assert.deepEqual(Object.keys(d.extra).sort(), [...FIXTURE_EXTRA_KEYS].sort(), "extra has the fixture's keys");
    assert.equal(d.extra['CPU:PRICE'], '1:7', 'PERFORMANCE: 7 a core');
    assert.match(d.extra['LOCATION:PRICE'], /^GLOBALSWITCH-SYD1:10,EQUINIX-SYD1:10,/);
    assert.deepEqual(
      d.firewallPolicies.map((p: Record<string, unknown>) => [p.direction, p.policy, p.protocol, p.portFrom, p.portTo, p.order, p.deviceId, p.deviceID]),
      [['INBOUND', 'ALLOW', 'TCP', null, '22', 10, deviceId, String(deviceId)]],
    );

    // The power columns are what extra shows.
    await infra.ctx.db.kysely.updateTable('devices').set({ power_status: 'ONLINE' }).where('id', '=', deviceId).execute();
    const sdk = await cmd('device.get', { deviceId });
    assert.equal(sdk.device.extra.SYS_POWERSTATUS, 'ONLINE');
    assertGoShape(sdk.device, DEVICE, 'device.get (cmd)');
    assert.deepEqual(sdk.data, sdk.device);
    const docs = await cmd('device.get', { id: String(deviceId) });
    assert.equal(docs.device.deviceId, deviceId, 'the doc pages send id, as a string too');
    assert.equal((await rest('GET', `/devices/${deviceId}`, {}, '/api/rest/v2.10')).data.deviceId, deviceId);
  });

  it('answers a missing, cancelled or foreign device exactly "Could not find device", without debug', async () => {
    const mine = await makeDevice();
    const theirs = await makeDevice({ customer: other.customerId, headers: { authorization: other.authorization } });
    const notFound = { code: 'ERROR', message: 'Could not find device' };
    assert.deepEqual(await rest('GET', '/devices/99999999', {}), notFound);
    assert.deepEqual(await cmd('device.get', { deviceId: theirs }), notFound);
    assert.deepEqual(await rest('GET', `/devices/${mine}`, {}, '/api/v2.9', other.authorization), notFound);
    assert.deepEqual(await cmd('device.firewall.update', { deviceId: theirs, firewallPolicies: [{ direction: 'ANY', policy: 'DENY' }] }), notFound);
    assert.deepEqual(await cmd('device.update', { deviceId: theirs, name: 'stolen' }), notFound);
    await infra.ctx.db.kysely.updateTable('devices').set({ status: 'CANCELLED' }).where('id', '=', mine).execute();
    assert.deepEqual(await cmd('device.get', { deviceId: mine }), notFound);
    assert.equal((await cmd('device.getall', { id: mine })).matches, 0);
    const missing = await cmd('device.get', {});
    assert.equal(missing.code, 'FAULT');
    assert.ok('deviceId' in missing.error);
    const bad = await cmd('device.get', { deviceId: 'abc' });
    assert.equal(bad.code, 'FAULT');
    assert.ok('deviceId' in bad.error);
  });

  it('lists devices with the Go getall types and its filters; matches is the total', async () => {
    const a = await makeDevice({ hostname: 'alpha.list.example' });
    const b = await makeDevice({ hostname: 'beta.list.example' });
    const all = await cmd('device.getall', { resWindow: 1000 });
    assert.equal(all.code, 'OK');
    assert.equal(all.devices.length, all.matches);
    for (const d of all.devices) assertGoShape(d, LISTED, 'device.getall element');
    assert.ok(
      all.devices.every((d: { customerId: number }) => d.customerId === customerId),
      "only the caller's",
    );
    const byName = await cmd('device.getall', { name: 'LIST.example' });
    assert.deepEqual(
      byName.devices.map((d: { deviceId: number }) => d.deviceId),
      [a, b],
    );
    const page = await cmd('device.getall', { name: 'list.example', resStart: 1, resWindow: 1 });
    assert.equal(page.matches, 2);
    assert.deepEqual(
      page.devices.map((d: { deviceId: number }) => d.deviceId),
      [b],
    );
    assert.equal((await cmd('device.getall', { id: String(a) })).devices[0].deviceId, a);
    assert.equal((await cmd('device.getall', { customerID: other.customerId })).matches, 0, "another customer's id finds nothing");
    const ipOfB = (await cmd('device.get', { deviceId: b })).device.primaryIP;
    assert.deepEqual(
      (await cmd('device.getall', { ipAddress: `${ipOfB}/24` })).devices.map((d: { deviceId: number }) => d.deviceId),
      [b],
    );
    assert.equal((await cmd('device.getall', { dcName: 'rc-au-globesw1', name: 'list.example' })).matches, 2);
    assert.equal((await cmd('device.getall', { dcName: 'EQUINIX-SYD1', name: 'list.example' })).matches, 0);
    assert.equal((await cmd('device.getall', { dcName: 'NOWHERE' })).matches, 0);
    assert.equal((await cmd('device.getall', { stdName: 'keel', resWindow: 1 })).devices.length, 1);
    const restList = await rest('GET', '/devices?name=alpha', {});
    assert.deepEqual(
      restList.data.map((d: { deviceId: number }) => d.deviceId),
      [a],
    );
    assert.equal((await cmd('device.getall', { resWindow: 0 })).code, 'FAULT');
    assert.deepEqual((await cmd('device.getall', { name: 'no-such-device' })).devices, []);
  });

  it('updates firewall policies as Terraform and the SDK do: add, replace by id, remove with DELETED; bounded', async () => {
    const deviceId = await makeDevice({ firewallPolicies: [{ direction: 'INBOUND', policy: 'ALLOW', order: 10, protocol: 'TCP', portTo: '22' }] });
    const policies = async () => (await cmd('device.get', { deviceId })).device.firewallPolicies as Record<string, any>[];
    const [ssh] = await policies();
    // Go client: REST PUT with the new rule (id 0) and the old one DELETED.
    const put = await rest('PUT', `/devices/${deviceId}/firewall`, {
      firewallPolicies: [
        { id: 0, direction: 'INBOUND', policy: 'ALLOW', order: 20, protocol: 'TCP', portFrom: '80', portTo: '80', comment: 'HTTP', deviceId: 0 },
        { ...ssh, policy: 'DELETED' },
      ],
    });
    assert.deepEqual(put, { code: 'OK', message: 'Firewall Policies Updated Successfully' });
    const now = await policies();
    assert.deepEqual(
      now.map((p) => [p.comment, p.portFrom, p.portTo, p.order]),
      [['HTTP', '80', '80', 20]],
    );
    for (const p of now) assertGoShape(p, POLICY, 'firewall policy');
    // SDK: command style with deviceId; a policy with its id is replaced; a number port is taken.
    const sdk = await cmd('device.firewall.update', { deviceId, firewallPolicies: [{ ...now[0], portTo: 8080, portFrom: null, policy: 'DENY' }] });
    assert.equal(sdk.code, 'OK', JSON.stringify(sdk));
    assert.deepEqual(
      (await policies()).map((p) => [p.id, p.policy, p.portFrom, p.portTo]),
      [[now[0].id, 'DENY', null, '8080']],
    );
    // Deleting again is done already; an unknown id to change is refused, and so is a bad port, changing nothing.
    assert.equal((await cmd('device.firewall.update', { deviceId, firewallPolicies: [{ id: ssh.id, direction: 'INBOUND', policy: 'DELETED' }] })).code, 'OK');
    assert.deepEqual(await cmd('device.firewall.update', { deviceId, firewallPolicies: [{ id: 99999999, direction: 'ANY', policy: 'ALLOW' }] }), {
      code: 'ERROR',
      message: `Could not find firewall policy 99999999 on device ${deviceId}`,
    });
    const badPort = await cmd('device.firewall.update', {
      deviceId,
      firewallPolicies: [
        { direction: 'ANY', policy: 'ALLOW' },
        { direction: 'ANY', policy: 'ALLOW', portTo: '0' },
      ],
    });
    assert.equal(badPort.code, 'FAULT');
    assert.ok('firewallPolicies.1.portTo' in badPort.error, JSON.stringify(badPort));
    const badPolicy = await cmd('device.firewall.update', { deviceId, firewallPolicies: [{ direction: 'ANY', policy: 'MAYBE' }] });
    assert.ok('firewallPolicies.0.policy' in badPolicy.error, JSON.stringify(badPolicy));
    const noId = await cmd('device.firewall.update', { deviceId, firewallPolicies: [{ direction: 'ANY', policy: 'DELETED' }] });
    assert.ok('firewallPolicies.0.id' in noId.error, JSON.stringify(noId));
    assert.equal((await policies()).length, 1, 'refused updates changed nothing');
    // The bound: up to MAX_FIREWALL_POLICIES, then refused.
    const many = Array.from({ length: MAX_FIREWALL_POLICIES - 1 }, (_, i) => ({ direction: 'INBOUND', policy: 'ALLOW', order: i, protocol: 'TCP', portTo: String(1000 + i) }));
    assert.equal((await cmd('device.firewall.update', { deviceId, firewallPolicies: many })).code, 'OK');
    assert.equal((await policies()).length, MAX_FIREWALL_POLICIES);
    const over = await cmd('device.firewall.update', { deviceId, firewallPolicies: [{ direction: 'ANY', policy: 'ALLOW' }] });
    assert.equal(over.code, 'FAULT');
    assert.match(over.error.firewallPolicies, new RegExp(`more than ${MAX_FIREWALL_POLICIES}`));
    assert.equal((await policies()).length, MAX_FIREWALL_POLICIES);
  });

  it("publishes a device's name and addresses in the customer's zones, answered over DNS, and takes them back", async () => {
    const ok = async (c: string, p: Record<string, unknown>) => {
      const r = await cmd(c, p);
      assert.equal(r.code, 'OK', JSON.stringify(r));
      return r;
    };
    await ok('dns.domain.create', { name: 'pub.example' });
    await ok('dns.domain.create', { name: '2.0.192.in-addr.arpa' });
    const deviceId = await makeDevice({ hostname: 'www.pub.example', ipv6: '2001:db8::1:10' });
    const ipv4 = (await cmd('device.get', { deviceId })).device.primaryIP;
    const published = await publishDevice(services, undefined, deviceId);
    assert.deepEqual(published.zones.sort(), ['2.0.192.in-addr.arpa', 'pub.example']);

    const a = await udpQuery(dns.udpAddress, 'www.pub.example', 'A');
    assert.deepEqual(a.packet.answers!.map(rdataOf), [ipv4]);
    const aaaa = await udpQuery(dns.udpAddress, 'www.pub.example', 'AAAA');
    assert.deepEqual(aaaa.packet.answers!.map(rdataOf), ['2001:db8::1:10']);
    const ptr = await udpQuery(dns.udpAddress, reverseName(ipv4, 4), 'PTR');
    assert.deepEqual(ptr.packet.answers!.map(rdataOf), ['www.pub.example']);
    // Publishing twice adds nothing.
    assert.deepEqual((await publishDevice(services, undefined, deviceId)).zones, []);
    assert.equal((await udpQuery(dns.udpAddress, 'www.pub.example', 'A')).packet.answers!.length, 1);

    // A rename moves the records.
    const renamed = await cmd('device.update', { deviceId, name: 'app.pub.example' });
    assert.equal(renamed.device.name, 'app.pub.example');
    assert.equal(rcodeOf((await udpQuery(dns.udpAddress, 'www.pub.example', 'A')).packet), 3, 'the old name is gone (NXDOMAIN)');
    assert.deepEqual((await udpQuery(dns.udpAddress, 'app.pub.example', 'A')).packet.answers!.map(rdataOf), [ipv4]);
    assert.deepEqual((await udpQuery(dns.udpAddress, reverseName(ipv4, 4), 'PTR')).packet.answers!.map(rdataOf), ['app.pub.example']);

    // Within the caller's transaction: served only after its commit and refresh.
    const trxResult = await infra.ctx.db.transaction((trx) => unpublishDevice(services, trx, deviceId));
    await trxResult.refresh();
    assert.equal(rcodeOf((await udpQuery(dns.udpAddress, 'app.pub.example', 'A')).packet), 3);
    assert.equal(rcodeOf((await udpQuery(dns.udpAddress, reverseName(ipv4, 4), 'PTR')).packet), 3);

    // A name outside the customer's zones publishes nothing; nor does another customer's zone.
    const elsewhere = await makeDevice({ hostname: 'db.not-hosted.example' });
    assert.deepEqual((await publishDevice(services, undefined, elsewhere)).zones, ['2.0.192.in-addr.arpa'], 'only the PTR');
    const foreign = await makeDevice({ hostname: 'x.pub.example', customer: other.customerId, headers: { authorization: other.authorization } });
    assert.deepEqual((await publishDevice(services, undefined, foreign)).zones, []);
  });

  it('renames a device, refusing a bad name', async () => {
    const deviceId = await makeDevice();
    const r = await rest('PUT', `/devices/${deviceId}`, { name: 'Renamed.Example' });
    assert.equal(r.code, 'OK', JSON.stringify(r));
    assert.equal(r.data.name, 'renamed.example');
    assertGoShape(r.data, DEVICE, 'device.update');
    const bad = await cmd('device.update', { deviceId, name: 'no spaces' });
    assert.equal(bad.code, 'FAULT');
    assert.ok('name' in bad.error);
    const nothing = await cmd('device.update', { deviceId });
    assert.equal(nothing.code, 'FAULT');
    assert.equal((await cmd('device.get', { deviceId })).device.name, 'renamed.example');
  });

  it("needs the command in the key's permissions; a parent sees its sub-customer's devices", async () => {
    const deviceId = await makeDevice();
    const key = await cmd('apiuser.create', { name: 'devices only', permissions: ['device.get', 'device.getall'] });
    assert.equal(key.code, 'OK', JSON.stringify(key));
    const h = { authorization: 'Basic ' + Buffer.from(`${key.apiuser.uuid}:${key.apiuser.secret}`).toString('base64') };
    assert.equal((await cmd('device.get', { deviceId }, h)).device.deviceId, deviceId);
    const denied = await cmd('device.firewall.update', { deviceId, firewallPolicies: [] }, h);
    assert.equal(denied.code, 'ACCESS_DENIED');
    assert.equal((await cmd('order.create', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' }, h)).code, 'ACCESS_DENIED');
    const system = await cmd('apiuser.permissions.system');
    for (const p of ['order.*', 'order.contract.*', 'device.*', 'device.firewall.update', 'order.contract.get']) assert.ok(system.permissions.includes(p), p);

    const child = await makeDevice({ customer: other.customerId, headers: { authorization: other.authorization } });
    assert.equal((await cmd('device.get', { deviceId: child })).message, 'Could not find device');
    await infra.ctx.db.kysely.updateTable('customers').set({ parent_id: customerId }).where('id', '=', other.customerId).execute();
    try {
      const seen = await cmd('device.get', { deviceId: child });
      assert.equal(seen.device.customerId, other.customerId, "a parent sees its sub-customer's device");
      const listed = await cmd('device.getall', { customerID: other.customerId });
      assert.ok(listed.devices.some((d: { deviceId: number }) => d.deviceId === child));
      assert.equal((await cmd('device.get', { deviceId }, { authorization: other.authorization })).message, 'Could not find device', "not the parent's");
    } finally {
      await infra.ctx.db.kysely.updateTable('customers').set({ parent_id: null }).where('id', '=', other.customerId).execute();
    }
  });

  it('computes reverse names for IPv4 and IPv6', () => {
    assert.equal(reverseName('192.0.2.10', 4), '10.2.0.192.in-addr.arpa');
    assert.equal(reverseName('2001:db8::1', 6), '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
  });
});

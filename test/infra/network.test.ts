// Black-box: network.* — VLANs and IP networks per customer and data centre (the network family's
// dialect: `count` + `vlanlist`/`iplist`, PascalCase keys, "YYYY-MM-DD hh:mm:ss" times), CIDR checks
// on IPv4 and IPv6, no overlap within a customer, allocation of addresses to devices (device_ips
// rows with network_id, which the device view lists), scoping, validation with nothing written, bounds.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { goProblems, networkWorld, type GoType, type NetworkWorld } from '../helpers/network-world.js';
import { MAX_ALLOCATIONS_PER_NETWORK, MAX_NETWORKS_PER_CUSTOMER, MAX_VLANS_PER_CUSTOMER } from '../../src/infra/commands/network.js';
import { formatAddress, overlaps, parseAddress, parseCidr, type Cidr } from '../../src/infra/network/ip.js';

const VLAN: GoType = { VLANDatabaseID: 'int', VLANID: 'int', VLANNAME: 'string', CUSTOMERID: 'int', DCID: 'int', DCNAME: 'string', DATECREATED: 'string', DATEMODIFIED: 'string' };
const ALLOCATION: GoType = { IPADDRESS: 'string', NETWORKID: 'int', DEVICEID: 'int', DATECREATED: 'string' };
const NETWORK: GoType = {
  NETWORKID: 'int',
  NETWORKNAME: 'string',
  NETWORK: 'string',
  CIDR: 'int',
  NETWORKCIDR: 'string',
  NETMASK: 'string',
  GATEWAY: 'string',
  IPVERSION: 'int',
  VLANDatabaseID: 'int',
  CUSTOMERID: 'int',
  DCID: 'int',
  DCNAME: 'string',
  FIRSTHOST: 'string',
  LASTHOST: 'string',
  ALLOCATEDCOUNT: 'int',
  ALLOCATIONS: [ALLOCATION],
  DATECREATED: 'string',
  DATEMODIFIED: 'string',
};
const SQL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

it('parses, formats and compares IPv4 and IPv6 networks', () => {
  const canon = (t: string) => {
    const a = parseAddress(t)!;
    return formatAddress(a.family, a.value);
  };
  assert.equal(canon('192.0.2.1'), '192.0.2.1');
  assert.equal(canon('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
  assert.equal(canon('2001:db8:0:1:0:0:0:0'), '2001:db8:0:1::');
  assert.equal(canon('2001:db8::1:0:0:1'), '2001:db8::1:0:0:1', 'RFC 5952: the first of two equal zero runs');
  assert.equal(canon('2001:db8:0:1:1:1:1:1'), '2001:db8:0:1:1:1:1:1', 'a single zero group is not compressed');
  assert.equal(canon('::ffff:192.0.2.1'), '::ffff:c000:201');
  assert.equal(canon('::'), '::');
  for (const bad of ['192.0.2', '192.0.2.256', '01.2.3.4', '2001:db8::1::2', 'fe80::1%eth0', 'x']) assert.equal(parseAddress(bad), undefined, bad);
  assert.deepEqual(parseCidr('192.0.2.0/24'), { family: 4, base: 0xc0000200n, prefix: 24 });
  assert.equal(parseCidr('192.0.2.1/24'), 'hostBits');
  assert.equal(parseCidr('192.0.2.0/33'), 'prefix');
  assert.equal(parseCidr('192.0.2.0'), 'shape');
  assert.equal(parseCidr('2001:db8::/129'), 'prefix');
  const c = (t: string) => parseCidr(t) as Cidr;
  assert.ok(overlaps(c('10.0.0.0/8'), c('10.1.0.0/16')));
  assert.ok(!overlaps(c('10.0.0.0/24'), c('10.0.1.0/24')));
  assert.ok(overlaps(c('2001:db8::/32'), c('2001:db8:1::/48')));
  assert.ok(!overlaps(c('2001:db8::/48'), c('2001:db8:1::/48')));
  assert.ok(!overlaps(c('0.0.0.0/8'), c('::/8')), 'families never overlap');
});

await forEachEngine('network commands', (engine) => {
  let w: NetworkWorld;
  before(async () => {
    w = await networkWorld(engine);
  });
  after(() => w?.close());

  it('creates, lists, gets and deletes VLANs per data centre', async () => {
    const made = await w.owner.cmd('network.vlan.create', { dcId: 19, VLANID: 100, name: 'backend' });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    assert.deepEqual(goProblems(VLAN, made.vlan), []);
    assert.deepEqual([made.vlan.VLANID, made.vlan.DCID, made.vlan.DCNAME, made.vlan.VLANNAME], [100, 19, 'RC-AU-GLOBESW1', 'backend']);
    assert.match(made.vlan.DATECREATED, SQL_TIME);
    const byName = await w.owner.rest('POST', '/network/vlan', { dcId: 'GLOBALSWITCH-SYD1', vlanid: 101 });
    assert.equal(byName.code, 'OK', JSON.stringify(byName));
    assert.equal(byName.data.DCID, 19);
    const elsewhere = await w.owner.cmd('network.vlan.create', { dcId: 'RC-AU-EQUINIX1', VLANID: 100 });
    assert.equal(elsewhere.code, 'OK', 'the same tag in another data centre is another VLAN');
    const clash = await w.owner.cmd('network.vlan.create', { dcId: 19, VLANID: 100 });
    assert.equal(clash.code, 'FAULT');
    assert.match(clash.error.VLANID, /VLAN 100 already exists in data centre RC-AU-GLOBESW1/);
    const all = await w.owner.cmd('network.vlan.getall', {});
    assert.deepEqual(goProblems({ count: 'int', vlanlist: [VLAN] }, all), []);
    assert.equal(all.count, 3);
    const inDc = await w.owner.cmd('network.vlan.getall', { dcId: 19, resWindow: 1 });
    assert.deepEqual([inDc.count, inDc.vlanlist.length], [2, 1]);
    assert.equal((await w.owner.rest('GET', `/networks/vlan/${made.vlan.VLANDatabaseID}`)).data.VLANID, 100);
    for (const v of [made.vlan, byName.data, elsewhere.vlan])
      assert.deepEqual(await w.owner.cmd('network.vlan.delete', { id: v.VLANDatabaseID }), { code: 'OK', message: 'VLAN Deleted Successfully' });
    assert.deepEqual(await w.owner.cmd('network.vlan.get', { id: made.vlan.VLANDatabaseID }), { code: 'ERROR', message: 'Could not find VLAN' });
    const none = await w.owner.cmd('network.vlan.getall', {});
    assert.deepEqual([none.count, none.vlanlist], [0, []]);
  });

  it('creates IPv4 and IPv6 networks, canonical, on a VLAN of the same data centre, and refuses overlaps within a customer', async () => {
    const vlan = (await w.owner.cmd('network.vlan.create', { dcId: 19, VLANID: 200 })).vlan;
    const v4 = await w.owner.cmd('network.ip.create', { network: '10.20.0.0/24', dcId: 19, gateway: '10.20.0.1', vlanId: vlan.VLANDatabaseID, name: 'lan' });
    assert.equal(v4.code, 'OK', JSON.stringify(v4));
    assert.deepEqual(goProblems(NETWORK, v4.network), []);
    const n = v4.network;
    assert.deepEqual(
      [n.NETWORK, n.CIDR, n.NETWORKCIDR, n.NETMASK, n.GATEWAY, n.IPVERSION, n.VLANDatabaseID, n.FIRSTHOST, n.LASTHOST, n.ALLOCATEDCOUNT],
      ['10.20.0.0', 24, '10.20.0.0/24', '255.255.255.0', '10.20.0.1', 4, vlan.VLANDatabaseID, '10.20.0.1', '10.20.0.254', 0],
    );
    const v6 = await w.owner.rest('POST', '/network/ip', { network: '2001:DB8:0:0::/64', dcId: 19 });
    assert.equal(v6.code, 'OK', JSON.stringify(v6));
    assert.deepEqual([v6.data.NETWORKCIDR, v6.data.NETMASK, v6.data.LASTHOST, v6.data.VLANDatabaseID], ['2001:db8::/64', '', '2001:db8::ffff:ffff:ffff:ffff', 0]);
    for (const [network, clashId] of [
      ['10.20.0.128/25', n.NETWORKID],
      ['10.0.0.0/8', n.NETWORKID],
      ['2001:db8::/48', v6.data.NETWORKID],
    ]) {
      const r = await w.owner.cmd('network.ip.create', { network, dcId: 19 });
      assert.equal(r.code, 'FAULT', network);
      assert.match(r.error.network, new RegExp(`overlaps network ${clashId} `));
    }
    // Another customer may use the same private range.
    const theirs = await w.other.cmd('network.ip.create', { network: '10.20.0.0/24', dcId: 19 });
    assert.equal(theirs.code, 'OK');
    const list = await w.owner.cmd('network.ip.getall', {});
    assert.deepEqual(goProblems({ count: 'int', iplist: [NETWORK] }, list), []);
    assert.deepEqual(
      list.iplist.map((x: any) => x.NETWORKCIDR),
      ['10.20.0.0/24', '2001:db8::/64'],
    );
    assert.equal((await w.owner.cmd('network.ip.getall', { vlanId: vlan.VLANDatabaseID })).count, 1);
    assert.deepEqual(await w.owner.cmd('network.vlan.delete', { id: vlan.VLANDatabaseID }), { code: 'ERROR', message: `VLAN ${vlan.VLANDatabaseID} still carries networks; delete them first` });
    // Cleaned up at the end of the allocation test, which uses these.
  });

  it('refuses bad networks with a FAULT naming the field, writing nothing', async () => {
    const equinixVlan = (await w.owner.cmd('network.vlan.create', { dcId: 20, VLANID: 300 })).vlan;
    const before = await w.count('ip_networks');
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ network: '10.9.0.0' }, 'network', /CIDR form/],
      [{ network: '10.9.0.1/24' }, 'network', /host bits set: the network is 10\.9\.0\.0\/24/],
      [{ network: '10.9.0.0/31' }, 'network', /from \/8 to \/30 for IPv4/],
      [{ network: '10.0.0.0/7' }, 'network', /from \/8 to \/30 for IPv4/],
      [{ network: '2001::/16' }, 'network', /from \/32 to \/126 for IPv6/],
      [{ network: '2001:db8::1/64' }, 'network', /host bits set: the network is 2001:db8::\/64/],
      [{ network: '999.0.0.0/8' }, 'network', /CIDR form/],
      [{ network: '10.9.0.0/24', gateway: '10.9.1.1' }, 'gateway', /not a host address of 10\.9\.0\.0\/24/],
      [{ network: '10.9.0.0/24', gateway: '10.9.0.255' }, 'gateway', /not a host address/],
      [{ network: '10.9.0.0/24', gateway: 'router' }, 'gateway', /IPv4 or IPv6 address/],
      [{ network: '10.9.0.0/24', dcId: 9999 }, 'dcId', /data centre/],
      [{ network: '10.9.0.0/24', dcId: 'NOWHERE' }, 'dcId', /data centre/],
      [{ network: '10.9.0.0/24', vlanId: equinixVlan.VLANDatabaseID }, 'vlanId', /is in data centre RC-AU-EQUINIX1, not RC-AU-GLOBESW1/],
      [{ network: 42 }, 'network', /string/],
    ];
    for (const [params, field, why] of cases) {
      const r = await w.owner.cmd('network.ip.create', { dcId: 19, ...params });
      assert.equal(r.code, 'FAULT', `${JSON.stringify(params)}: ${JSON.stringify(r)}`);
      assert.match(r.error?.[field] ?? '', why, JSON.stringify(r));
    }
    assert.deepEqual(await w.owner.cmd('network.ip.create', { network: '10.9.0.0/24', dcId: 19, vlanId: 999999 }), { code: 'ERROR', message: 'Could not find VLAN' });
    assert.equal(await w.count('ip_networks'), before);
    for (const [params, field] of [
      [{ dcId: 19, VLANID: 0 }, 'VLANID'],
      [{ dcId: 19, VLANID: 4095 }, 'VLANID'],
      [{ dcId: 'x', VLANID: 5 }, 'dcId'],
      [{ VLANID: 5 }, 'dcId'],
    ] as const) {
      const r = await w.owner.cmd('network.vlan.create', params);
      assert.equal(r.code, 'FAULT');
      assert.ok(field in r.error, JSON.stringify(r));
    }
    await w.owner.cmd('network.vlan.delete', { id: equinixVlan.VLANDatabaseID });
  });

  it('allocates addresses to devices in scope, lowest free first, as device_ips rows, and releases them', async () => {
    const net = (await w.owner.cmd('network.ip.getall', {})).iplist.find((x: any) => x.NETWORKCIDR === '10.20.0.0/24');
    const v6 = (await w.owner.cmd('network.ip.getall', {})).iplist.find((x: any) => x.IPVERSION === 6);
    const dev = await w.device(w.owner.customerId);
    const dev2 = await w.device(w.owner.customerId);
    // The gateway (10.20.0.1) is skipped; so is an address another device holds already anywhere.
    await w.infra.ctx.db.kysely.insertInto('device_ips').values({ device_id: dev2, address: '10.20.0.2', family: 4, is_primary: 1, network_id: null, date_created: 0 }).execute();
    const a = await w.owner.cmd('network.ip.allocate', { networkId: net.NETWORKID, deviceId: dev });
    assert.equal(a.code, 'OK', JSON.stringify(a));
    assert.deepEqual(goProblems(ALLOCATION, a.allocation), []);
    assert.deepEqual([a.allocation.IPADDRESS, a.allocation.DEVICEID, a.allocation.NETWORKID], ['10.20.0.3', dev, net.NETWORKID]);
    const b = await w.owner.rest('POST', `/network/ip/${net.NETWORKID}/allocate`, { deviceId: dev2 });
    assert.equal(b.data.IPADDRESS, '10.20.0.4');
    const chosen = await w.owner.cmd('network.ip.allocate', { networkId: net.NETWORKID, deviceId: dev, address: '10.20.0.200' });
    assert.equal(chosen.allocation.IPADDRESS, '10.20.0.200');
    const six = await w.owner.cmd('network.ip.allocate', { networkId: v6.NETWORKID, deviceId: dev, address: '2001:DB8::A' });
    assert.equal(six.allocation.IPADDRESS, '2001:db8::a', 'stored canonical');
    // The rows the device view lists.
    const rows = await w.infra.ctx.db.kysely.selectFrom('device_ips').select(['device_id', 'address', 'family', 'network_id']).where('device_id', '=', dev).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.address, Number(r.family), Number(r.network_id)]),
      [
        ['10.20.0.3', 4, net.NETWORKID],
        ['10.20.0.200', 4, net.NETWORKID],
        ['2001:db8::a', 6, v6.NETWORKID],
      ],
    );
    const got = await w.owner.cmd('network.ip.get', { id: net.NETWORKID });
    assert.deepEqual(goProblems(NETWORK, got.network), []);
    assert.deepEqual(
      got.network.ALLOCATIONS.map((x: any) => x.IPADDRESS),
      ['10.20.0.3', '10.20.0.4', '10.20.0.200'],
    );
    for (const [params, field, why] of [
      [{ address: '10.20.0.200' }, 'address', /10\.20\.0\.200 is already in use/],
      [{ address: '10.20.0.2' }, 'address', /already in use/],
      [{ address: '10.20.0.1' }, 'address', /already in use/],
      [{ address: '10.20.0.0' }, 'address', /not a host address/],
      [{ address: '10.20.0.255' }, 'address', /not a host address/],
      [{ address: '10.21.0.5' }, 'address', /not a host address/],
      [{ address: 'nope' }, 'address', /IPv4 or IPv6/],
    ] as const) {
      const r = await w.owner.cmd('network.ip.allocate', { networkId: net.NETWORKID, deviceId: dev, ...params });
      assert.equal(r.code, 'FAULT', JSON.stringify(r));
      assert.match(r.error[field], why);
    }
    // A device of another customer, a cancelled device, a missing one: "Could not find device".
    const foreign = await w.device(w.other.customerId);
    const childDevice = await w.device(w.child.customerId);
    const cancelled = await w.device(w.owner.customerId);
    await w.infra.ctx.db.kysely.updateTable('devices').set({ status: 'CANCELLED' }).where('id', '=', cancelled).execute();
    for (const deviceId of [foreign, childDevice, cancelled, 999999]) {
      assert.deepEqual(await w.owner.cmd('network.ip.allocate', { networkId: net.NETWORKID, deviceId }), { code: 'ERROR', message: 'Could not find device' }, `device ${deviceId}`);
    }
    assert.equal(await w.count('device_ips'), 5);
    assert.deepEqual(await w.owner.cmd('network.ip.delete', { id: net.NETWORKID }), { code: 'ERROR', message: 'Network 10.20.0.0/24 still has addresses allocated to devices; release them first' });
    assert.deepEqual(await w.owner.cmd('network.ip.release', { networkId: net.NETWORKID, address: '10.20.0.3' }), { code: 'OK', message: 'Address Released Successfully' });
    assert.deepEqual(await w.owner.cmd('network.ip.release', { networkId: net.NETWORKID, address: '10.20.0.3' }), {
      code: 'ERROR',
      message: `Could not find address 10.20.0.3 in network ${net.NETWORKID}`,
    });
    assert.deepEqual(
      await w.owner.cmd('network.ip.release', { networkId: net.NETWORKID, address: '10.20.0.2' }),
      { code: 'ERROR', message: `Could not find address 10.20.0.2 in network ${net.NETWORKID}` },
      'an address of no network is not released through one',
    );
    assert.equal((await w.owner.cmd('network.ip.allocate', { networkId: net.NETWORKID, deviceId: dev })).allocation.IPADDRESS, '10.20.0.3', 'a released address is free again');
    for (const address of ['10.20.0.3', '10.20.0.4', '10.20.0.200']) assert.equal((await w.owner.rest('POST', `/network/ip/${net.NETWORKID}/release`, { address })).code, 'OK');
    assert.equal((await w.owner.cmd('network.ip.release', { networkId: v6.NETWORKID, address: '2001:db8:0::a' })).code, 'OK');
    for (const id of [net.NETWORKID, v6.NETWORKID]) assert.deepEqual(await w.owner.cmd('network.ip.delete', { id }), { code: 'OK', message: 'Network Deleted Successfully' });
    assert.equal(await w.count('device_ips'), 1);
  });

  it("scopes by customer: another customer's VLANs and networks answer like missing ones; a parent acts for its sub-customer", async () => {
    const theirs = (await w.other.cmd('network.ip.getall', {})).iplist[0];
    const theirVlan = (await w.other.cmd('network.vlan.create', { dcId: 19, VLANID: 7 })).vlan;
    const dev = await w.device(w.owner.customerId);
    for (const t of [w.owner, w.child]) {
      assert.deepEqual(await t.cmd('network.ip.get', { id: theirs.NETWORKID }), { code: 'ERROR', message: 'Could not find network' });
      assert.deepEqual(await t.cmd('network.ip.delete', { id: theirs.NETWORKID }), { code: 'ERROR', message: 'Could not find network' });
      assert.deepEqual(await t.cmd('network.ip.allocate', { networkId: theirs.NETWORKID, deviceId: dev }), { code: 'ERROR', message: 'Could not find network' });
      assert.deepEqual(await t.cmd('network.ip.release', { networkId: theirs.NETWORKID, address: '10.20.0.1' }), { code: 'ERROR', message: 'Could not find network' });
      assert.deepEqual(await t.cmd('network.vlan.get', { id: theirVlan.VLANDatabaseID }), { code: 'ERROR', message: 'Could not find VLAN' });
      assert.deepEqual(await t.cmd('network.vlan.delete', { id: theirVlan.VLANDatabaseID }), { code: 'ERROR', message: 'Could not find VLAN' });
      assert.deepEqual(await t.cmd('network.ip.create', { network: '10.77.0.0/24', dcId: 19, vlanId: theirVlan.VLANDatabaseID }), { code: 'ERROR', message: 'Could not find VLAN' });
      assert.equal((await t.cmd('network.ip.getall', { customerid: w.other.customerId })).count, 0);
    }
    // The owner makes a network for its sub-customer and gives an address to the sub-customer's device.
    const forChild = await w.owner.cmd('network.ip.create', { network: '10.30.0.0/29', dcId: 19, customerId: w.child.customerId });
    assert.equal(forChild.network.CUSTOMERID, w.child.customerId);
    const childDevice = await w.device(w.child.customerId);
    const a = await w.owner.cmd('network.ip.allocate', { networkId: forChild.network.NETWORKID, deviceId: childDevice });
    assert.equal(a.allocation.IPADDRESS, '10.30.0.1');
    assert.deepEqual(
      await w.owner.cmd('network.ip.allocate', { networkId: forChild.network.NETWORKID, deviceId: dev }),
      { code: 'ERROR', message: 'Could not find device' },
      "only the network's own customer's devices",
    );
    assert.equal((await w.child.cmd('network.ip.get', { id: forChild.network.NETWORKID })).network.ALLOCATEDCOUNT, 1);
    assert.deepEqual(await w.child.cmd('network.ip.create', { network: '10.31.0.0/24', dcId: 19, customerid: w.owner.customerId }), { code: 'ERROR', message: 'Could not find customer' });
    // A /29 has six hosts: five more, then it is full.
    for (let i = 0; i < 5; i++) assert.equal((await w.child.cmd('network.ip.allocate', { networkId: forChild.network.NETWORKID, deviceId: childDevice })).code, 'OK');
    assert.deepEqual(await w.child.cmd('network.ip.allocate', { networkId: forChild.network.NETWORKID, deviceId: childDevice }), {
      code: 'ERROR',
      message: 'Network 10.30.0.0/29 has no free address left',
    });
    await w.other.cmd('network.vlan.delete', { id: theirVlan.VLANDatabaseID });
  });

  it('hands out distinct addresses to allocations made at once, and refuses overlapping networks created at once', async () => {
    const net = (await w.owner.cmd('network.ip.create', { network: '10.40.0.0/28', dcId: 19 })).network;
    const dev = await w.device(w.owner.customerId);
    const answers = await Promise.all(Array.from({ length: 10 }, () => w.owner.cmd('network.ip.allocate', { networkId: net.NETWORKID, deviceId: dev })));
    assert.deepEqual(
      answers.map((a) => a.code),
      Array(10).fill('OK'),
      JSON.stringify(answers),
    );
    const addresses = answers.map((a) => a.allocation.IPADDRESS).sort((x, y) => Number(x.split('.')[3]) - Number(y.split('.')[3]));
    assert.deepEqual(
      addresses,
      Array.from({ length: 10 }, (_, i) => `10.40.0.${i + 1}`),
    );
    const made = await Promise.all(['10.50.0.0/24', '10.50.0.0/25', '10.50.0.128/25', '10.50.0.0/16'].map((network) => w.owner.cmd('network.ip.create', { network, dcId: 19 })));
    const ok = made.filter((m) => m.code === 'OK');
    assert.ok(ok.length >= 1 && ok.length <= 2, JSON.stringify(made));
    for (const m of made) if (m.code !== 'OK') assert.match(m.error.network, /overlaps network/);
    for (const a of addresses) await w.owner.cmd('network.ip.release', { networkId: net.NETWORKID, address: a });
    for (const m of [net, ...ok.map((o) => o.network)]) assert.equal((await w.owner.cmd('network.ip.delete', { id: m.NETWORKID })).code, 'OK');
  });

  it(`holds at most ${MAX_VLANS_PER_CUSTOMER} VLANs and ${MAX_NETWORKS_PER_CUSTOMER} networks a customer, and ${MAX_ALLOCATIONS_PER_NETWORK} addresses a network`, async () => {
    const db = w.infra.ctx.db.kysely;
    const c = w.other.customerId;
    const held = (await db.selectFrom('vlans').select('id').where('customer_id', '=', c).execute()).length;
    await db
      .insertInto('vlans')
      .values(Array.from({ length: MAX_VLANS_PER_CUSTOMER - 1 - held }, (_, i) => ({ customer_id: c, dc_id: 20, tag: i + 1, name: `v${i}`, date_created: 0, date_modified: 0 })))
      .execute();
    assert.equal((await w.other.cmd('network.vlan.create', { dcId: 21, VLANID: 1 })).code, 'OK');
    assert.deepEqual(await w.other.cmd('network.vlan.create', { dcId: 21, VLANID: 2 }), {
      code: 'ERROR',
      message: `Limit reached: a customer has at most ${MAX_VLANS_PER_CUSTOMER} VLANs; delete one first`,
    });

    const nets = (await db.selectFrom('ip_networks').select('id').where('customer_id', '=', c).execute()).length;
    await db
      .insertInto('ip_networks')
      .values(
        Array.from({ length: MAX_NETWORKS_PER_CUSTOMER - 1 - nets }, (_, i) => ({
          customer_id: c,
          dc_id: 19,
          vlan_id: null,
          family: 4,
          address: `172.16.${i}.0`,
          prefix_length: 24,
          gateway: '',
          name: `n${i}`,
          date_created: 0,
          date_modified: 0,
        })),
      )
      .execute();
    const last = await w.other.cmd('network.ip.create', { network: '10.128.0.0/16', dcId: 19 });
    assert.equal(last.code, 'OK', JSON.stringify(last));
    assert.deepEqual(await w.other.cmd('network.ip.create', { network: '10.129.0.0/16', dcId: 19 }), {
      code: 'ERROR',
      message: `Limit reached: a customer has at most ${MAX_NETWORKS_PER_CUSTOMER} IP networks; delete one first`,
    });

    const dev = await w.device(c);
    const big = last.network.NETWORKID;
    await db
      .insertInto('device_ips')
      .values(
        Array.from({ length: MAX_ALLOCATIONS_PER_NETWORK - 1 }, (_, i) => ({
          device_id: dev,
          address: `10.128.${10 + (i >> 8)}.${i & 255}`,
          family: 4,
          is_primary: 0,
          network_id: big,
          date_created: 0,
        })),
      )
      .execute();
    assert.equal((await w.other.cmd('network.ip.allocate', { networkId: big, deviceId: dev })).allocation.IPADDRESS, '10.128.0.1');
    assert.deepEqual(await w.other.cmd('network.ip.allocate', { networkId: big, deviceId: dev }), {
      code: 'ERROR',
      message: `Limit reached: a network hands out at most ${MAX_ALLOCATIONS_PER_NETWORK} addresses; release one first`,
    });
    assert.equal((await w.other.cmd('network.ip.get', { id: big })).network.ALLOCATEDCOUNT, MAX_ALLOCATIONS_PER_NETWORK);
  });
});

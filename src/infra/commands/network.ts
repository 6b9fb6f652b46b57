// network.*: a customer's VLANs and IP networks per data centre, and addresses of those networks
// allocated to its devices. The provider documents only `network.vlan.getall` (top `count` and
// `vlanlist`, single objects under `vlan`, PascalCase/SQL-style keys such as VLANDatabaseID and
// DCNAME, datetimes as "2024-01-15 10:30:00"); IP networks follow the same dialect under
// `network.ip.*` (`iplist`, `network`). An allocation is a device_ips row with network_id set, so
// the device view lists it with the device's other addresses.
import Type from 'typebox';
import type { Selectable } from 'kysely';
import { defineCommand, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { pagingParams } from '../params.js';
import { unixSeconds } from '../../platform/clock.js';
import type { Queryable } from '../../platform/db/database.js';
import type { DataCentre } from '../catalogue.js';
import type { InfraTables, IpNetworkRow, VlanRow } from '../tables.js';
import { actingCustomer, seenCustomers } from '../network/scope.js';
import { addressBits, contains, formatAddress, formatCidr, hostRange, overlaps, parseAddress, parseCidr, type Cidr, type Family } from '../network/ip.js';

export const MAX_VLANS_PER_CUSTOMER = 256;
export const MAX_NETWORKS_PER_CUSTOMER = 256;
/** Addresses one network hands out (a /22's worth): each is a device_ips row the device view reads. */
export const MAX_ALLOCATIONS_PER_NETWORK = 1024;
/** Networks a customer may add: no wider than a /8 (IPv4) or /32 (IPv6), no narrower than a /30 or /126 (two hosts). */
export const PREFIX_BOUNDS: Record<Family, { min: number; max: number }> = { 4: { min: 8, max: 30 }, 6: { min: 32, max: 126 } };
/**
 * Creates, deletes and allocations of the family, one at a time across the store: bounds, overlaps and
 * free addresses are judged and written in one step. Load balancers take it too where they name a
 * network (scope_networkid), so a network is not deleted between their check and their write.
 */
export const NETWORK_LOCK = 7251;
const LOCK = NETWORK_LOCK;

const Id = (what: string) => Type.Integer({ minimum: 1, description: what });
const CustomerId = Type.Integer({ minimum: 1, description: "customer id (customerid or customerId); defaults to the caller's" });
const Dc = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 100 })], { description: 'data centre id, name (RC-AU-GLOBESW1) or location (GLOBALSWITCH-SYD1)' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Paging = pagingParams(20);

/** "2024-01-15 10:30:00" (UTC), as the provider's network pages write times. */
export function sqlDateTime(unixSecondsValue: number): string {
  return new Date(unixSecondsValue * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

function dataCentre(call: Call, ref: number | string, field: string): DataCentre {
  const dc = call.services.catalogue.dataCentre(ref);
  if (!dc) throw infraErrors.invalidParameter({ name: field, problem: P.dataCentre() });
  return dc;
}

function dcName(call: Call, id: number): string {
  return call.services.catalogue.dataCentre(id)?.name ?? '';
}

function presentVlan(call: Call, row: Selectable<VlanRow>) {
  return {
    VLANDatabaseID: row.id,
    VLANID: row.tag,
    VLANNAME: row.name,
    CUSTOMERID: row.customer_id,
    DCID: row.dc_id,
    DCNAME: dcName(call, row.dc_id),
    DATECREATED: sqlDateTime(row.date_created),
    DATEMODIFIED: sqlDateTime(row.date_modified),
  };
}

function cidrOf(row: Selectable<IpNetworkRow>): Cidr {
  return { family: row.family as Family, base: parseAddress(row.address)!.value, prefix: row.prefix_length };
}

function netmask(c: Cidr): string {
  if (c.family === 6) return '';
  return formatAddress(4, ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - c.prefix)) - 1n));
}

function presentNetwork(call: Call, row: Selectable<IpNetworkRow>, allocations: { address: string; device_id: number; date_created: number }[]) {
  const c = cidrOf(row);
  const range = hostRange(c);
  return {
    NETWORKID: row.id,
    NETWORKNAME: row.name,
    NETWORK: row.address,
    CIDR: row.prefix_length,
    NETWORKCIDR: formatCidr(c),
    NETMASK: netmask(c),
    GATEWAY: row.gateway,
    IPVERSION: row.family,
    VLANDatabaseID: row.vlan_id ?? 0,
    CUSTOMERID: row.customer_id,
    DCID: row.dc_id,
    DCNAME: dcName(call, row.dc_id),
    FIRSTHOST: formatAddress(c.family, range.first),
    LASTHOST: formatAddress(c.family, range.last),
    ALLOCATEDCOUNT: allocations.length,
    ALLOCATIONS: allocations.map((a) => presentAllocation(row.id, a)),
    DATECREATED: sqlDateTime(row.date_created),
    DATEMODIFIED: sqlDateTime(row.date_modified),
  };
}

function presentAllocation(networkId: number, a: { address: string; device_id: number; date_created: number }) {
  return { IPADDRESS: a.address, NETWORKID: networkId, DEVICEID: a.device_id, DATECREATED: sqlDateTime(a.date_created) };
}

async function findVlan(call: Call, id: number): Promise<Selectable<VlanRow>> {
  const customers = await seenCustomers(call);
  const row = await call.services.db.kysely.selectFrom('vlans').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.vlanNotFound();
  return row;
}

async function findNetwork(db: Queryable<InfraTables>, customers: number[], id: number): Promise<Selectable<IpNetworkRow>> {
  const row = await db.selectFrom('ip_networks').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.ipNetworkNotFound();
  return row;
}

function allocationsOf(db: Queryable<InfraTables>, networkIds: number[]) {
  if (networkIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('device_ips').select(['network_id', 'address', 'device_id', 'date_created']).where('network_id', 'in', networkIds).orderBy('id').execute();
}

async function count(db: Queryable<InfraTables>, table: 'vlans' | 'ip_networks', customerId: number): Promise<number> {
  const r = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('customer_id', '=', customerId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The checked network of a create: CIDR form, host bits clear, a prefix within PREFIX_BOUNDS. */
function checkedCidr(text: string): Cidr {
  const c = parseCidr(text);
  if (c === 'hostBits') {
    const loose = /^([^/]+)\/(\d+)$/.exec(text.trim())!;
    const a = parseAddress(loose[1])!;
    const prefix = Number(loose[2]);
    const hostMask = (1n << BigInt(addressBits(a.family) - prefix)) - 1n;
    throw infraErrors.invalidParameter({ name: 'network', problem: P.cidrHostBits({ network: formatCidr({ family: a.family, base: a.value & ~hostMask, prefix }) }) });
  }
  if (typeof c === 'string') throw infraErrors.invalidParameter({ name: 'network', problem: P.cidr() });
  const bounds = PREFIX_BOUNDS[c.family];
  if (c.prefix < bounds.min || c.prefix > bounds.max) throw infraErrors.invalidParameter({ name: 'network', problem: P.prefixRange({ min: bounds.min, max: bounds.max, family: c.family }) });
  return c;
}

/** A host address of the network (not its network or IPv4 broadcast address), canonical. */
function hostIn(c: Cidr, text: string, field: string): { value: bigint; text: string } {
  const a = parseAddress(text.trim());
  if (!a) throw infraErrors.invalidParameter({ name: field, problem: P.ipAddress() });
  const range = hostRange(c);
  if (!contains(c, a.family, a.value) || a.value < range.first || a.value > range.last) {
    throw infraErrors.invalidParameter({ name: field, problem: P.outsideNetwork({ address: text.trim(), network: formatCidr(c) }) });
  }
  return { value: a.value, text: formatAddress(c.family, a.value) };
}

export const networkCommands: Command[] = [
  // ---- VLANs ------------------------------------------------------------------------------------
  defineCommand({
    cmd: 'network.vlan.getall',
    summary: "List the customer's VLANs (and its sub-customers')",
    rest: { method: 'GET', path: '/network/vlan' },
    params: Type.Object({ ...Paging, customerid: Type.Optional(CustomerId), dcId: Type.Optional(Dc), VLANID: Type.Optional(Type.Integer({ minimum: 1, maximum: 4094 })) }),
    async handler(call, p) {
      const customers = await seenCustomers(call, p.customerid);
      const dc = p.dcId === undefined ? undefined : dataCentre(call, p.dcId, 'dcId');
      let rows: Selectable<VlanRow>[] = [];
      if (customers.length) {
        let q = call.services.db.kysely.selectFrom('vlans').selectAll().where('customer_id', 'in', customers);
        if (dc) q = q.where('dc_id', '=', dc.id);
        if (p.VLANID !== undefined) q = q.where('tag', '=', p.VLANID);
        rows = await q.orderBy('id').execute();
      }
      const start = p.resStart ?? 0;
      const list = rows.slice(start, start + (p.resWindow ?? 20)).map((r) => presentVlan(call, r));
      return { message: 'VLANs Retrieved Successfully', data: list, top: { count: rows.length, vlanlist: list } };
    },
  }),
  defineCommand({
    cmd: 'network.vlan.get',
    summary: 'One VLAN',
    rest: { method: 'GET', path: '/network/vlan/{id}' },
    params: Type.Object({ id: Id('VLAN id (VLANDatabaseID)') }),
    async handler(call, p) {
      const vlan = presentVlan(call, await findVlan(call, p.id));
      return { message: 'VLAN Retrieved Successfully', data: vlan, top: { vlan } };
    },
  }),
  defineCommand({
    cmd: 'network.vlan.create',
    summary: 'Add a VLAN in a data centre',
    rest: { method: 'POST', path: '/network/vlan' },
    params: Type.Object({
      dcId: Dc,
      VLANID: Type.Integer({ minimum: 1, maximum: 4094, description: '802.1Q tag, 1 to 4094; unique per customer and data centre' }),
      name: Type.Optional(Name),
      customerid: Type.Optional(CustomerId),
    }),
    async handler(call, p) {
      const dc = dataCentre(call, p.dcId, 'dcId');
      const customerId = await actingCustomer(call, p.customerid);
      const now = unixSeconds(call.services.clock);
      const row = await call.services.db.exclusive(LOCK, async (trx) => {
        if ((await count(trx, 'vlans', customerId)) >= MAX_VLANS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_VLANS_PER_CUSTOMER, things: 'VLANs' });
        const clash = await trx.selectFrom('vlans').select('id').where('customer_id', '=', customerId).where('dc_id', '=', dc.id).where('tag', '=', p.VLANID).executeTakeFirst();
        if (clash) throw infraErrors.invalidParameter({ name: 'VLANID', problem: P.vlanTaken({ tag: p.VLANID, dc: dc.name }) });
        return trx
          .insertInto('vlans')
          .values({ customer_id: customerId, dc_id: dc.id, tag: p.VLANID, name: p.name ?? `VLAN ${p.VLANID}`, date_created: now, date_modified: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      const vlan = presentVlan(call, row);
      return { message: 'VLAN Created Successfully', data: vlan, top: { vlan } };
    },
  }),
  defineCommand({
    cmd: 'network.vlan.delete',
    summary: 'Delete a VLAN that carries no network',
    rest: { method: 'DELETE', path: '/network/vlan/{id}' },
    params: Type.Object({ id: Id('VLAN id (VLANDatabaseID)') }),
    async handler(call, p) {
      const row = await findVlan(call, p.id);
      await call.services.db.exclusive(LOCK, async (trx) => {
        const used = await trx.selectFrom('ip_networks').select('id').where('vlan_id', '=', row.id).limit(1).executeTakeFirst();
        if (used) throw infraErrors.vlanInUse({ id: row.id });
        await trx.deleteFrom('vlans').where('id', '=', row.id).execute();
      });
      return { message: 'VLAN Deleted Successfully' };
    },
  }),

  // ---- IP networks ------------------------------------------------------------------------------
  defineCommand({
    cmd: 'network.ip.getall',
    summary: "List the customer's IP networks (and its sub-customers')",
    rest: { method: 'GET', path: '/network/ip' },
    params: Type.Object({ ...Paging, customerid: Type.Optional(CustomerId), dcId: Type.Optional(Dc), vlanId: Type.Optional(Id('VLAN id (VLANDatabaseID)')) }),
    async handler(call, p) {
      const customers = await seenCustomers(call, p.customerid);
      const dc = p.dcId === undefined ? undefined : dataCentre(call, p.dcId, 'dcId');
      const db = call.services.db.kysely;
      let rows: Selectable<IpNetworkRow>[] = [];
      if (customers.length) {
        let q = db.selectFrom('ip_networks').selectAll().where('customer_id', 'in', customers);
        if (dc) q = q.where('dc_id', '=', dc.id);
        if (p.vlanId !== undefined) q = q.where('vlan_id', '=', p.vlanId);
        rows = await q.orderBy('id').execute();
      }
      const start = p.resStart ?? 0;
      const page = rows.slice(start, start + (p.resWindow ?? 20));
      const allocations = await allocationsOf(
        db,
        page.map((r) => r.id),
      );
      const list = page.map((r) =>
        presentNetwork(
          call,
          r,
          allocations.filter((a) => a.network_id === r.id),
        ),
      );
      return { message: 'Networks Retrieved Successfully', data: list, top: { count: rows.length, iplist: list } };
    },
  }),
  defineCommand({
    cmd: 'network.ip.get',
    summary: 'One IP network, with the addresses it has allocated to devices',
    rest: { method: 'GET', path: '/network/ip/{id}' },
    params: Type.Object({ id: Id('network id (NETWORKID)') }),
    async handler(call, p) {
      const db = call.services.db.kysely;
      const row = await findNetwork(db, await seenCustomers(call), p.id);
      const network = presentNetwork(call, row, await allocationsOf(db, [row.id]));
      return { message: 'Network Retrieved Successfully', data: network, top: { network } };
    },
  }),
  defineCommand({
    cmd: 'network.ip.create',
    summary: 'Add an IP network (IPv4 or IPv6, CIDR) in a data centre, optionally on one of its VLANs',
    rest: { method: 'POST', path: '/network/ip' },
    params: Type.Object({
      network: Type.String({ minLength: 1, maxLength: 100, description: 'CIDR: 192.0.2.0/24 (/8 to /30) or 2001:db8::/64 (/32 to /126); host bits clear' }),
      dcId: Dc,
      gateway: Type.Optional(Type.String({ maxLength: 100, description: 'a host address of the network; default none ("")' })),
      vlanId: Type.Optional(Id('VLAN id (VLANDatabaseID) in the same data centre')),
      name: Type.Optional(Name),
      customerid: Type.Optional(CustomerId),
    }),
    async handler(call, p) {
      const c = checkedCidr(p.network);
      const gateway = p.gateway === undefined || p.gateway === '' ? '' : hostIn(c, p.gateway, 'gateway').text;
      const dc = dataCentre(call, p.dcId, 'dcId');
      const customerId = await actingCustomer(call, p.customerid);
      const now = unixSeconds(call.services.clock);
      const row = await call.services.db.exclusive(LOCK, async (trx) => {
        // Inside the lock: network.vlan.delete cannot remove it between this check and the insert.
        if (p.vlanId !== undefined) {
          // The VLAN must be the acting customer's own (not merely visible) and in the same data centre.
          const vlan = await trx.selectFrom('vlans').selectAll().where('id', '=', p.vlanId).where('customer_id', '=', customerId).executeTakeFirst();
          if (!vlan) throw infraErrors.vlanNotFound();
          if (vlan.dc_id !== dc.id) throw infraErrors.invalidParameter({ name: 'vlanId', problem: P.vlanElsewhere({ id: vlan.id, dc: dcName(call, vlan.dc_id), wanted: dc.name }) });
        }
        const own = await trx.selectFrom('ip_networks').selectAll().where('customer_id', '=', customerId).orderBy('id').execute();
        if (own.length >= MAX_NETWORKS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_NETWORKS_PER_CUSTOMER, things: 'IP networks' });
        const clash = own.find((o) => overlaps(cidrOf(o), c));
        if (clash) throw infraErrors.invalidParameter({ name: 'network', problem: P.networkOverlap({ id: clash.id, network: formatCidr(cidrOf(clash)) }) });
        return trx
          .insertInto('ip_networks')
          .values({
            customer_id: customerId,
            dc_id: dc.id,
            vlan_id: p.vlanId ?? null,
            family: c.family,
            address: formatAddress(c.family, c.base),
            prefix_length: c.prefix,
            gateway,
            name: p.name ?? formatCidr(c),
            date_created: now,
            date_modified: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      const network = presentNetwork(call, row, []);
      return { message: 'Network Created Successfully', data: network, top: { network } };
    },
  }),
  defineCommand({
    cmd: 'network.ip.delete',
    summary: 'Delete an IP network that has no address allocated',
    rest: { method: 'DELETE', path: '/network/ip/{id}' },
    params: Type.Object({ id: Id('network id (NETWORKID)') }),
    async handler(call, p) {
      const customers = await seenCustomers(call);
      await call.services.db.exclusive(LOCK, async (trx) => {
        const row = await findNetwork(trx, customers, p.id);
        const used = await trx.selectFrom('device_ips').select('id').where('network_id', '=', row.id).limit(1).executeTakeFirst();
        if (used) throw infraErrors.networkInUse({ network: formatCidr(cidrOf(row)) });
        // A load balancer scoped to it (loadbalancer.ts scope_networkid, kept in its JSON) would point nowhere.
        const balancers = await trx.selectFrom('load_balancers').select(['id', 'config']).where('customer_id', '=', row.customer_id).execute();
        const scoped = balancers.find((b) => (JSON.parse(b.config) as { scope_networkid?: number }).scope_networkid === row.id);
        if (scoped) throw infraErrors.networkScopesLoadBalancer({ network: formatCidr(cidrOf(row)), id: scoped.id });
        await trx.deleteFrom('ip_networks').where('id', '=', row.id).execute();
      });
      return { message: 'Network Deleted Successfully' };
    },
  }),
  defineCommand({
    cmd: 'network.ip.allocate',
    summary: "Give a device an address of one of the customer's networks: the one asked for, or the lowest free one",
    rest: { method: 'POST', path: '/network/ip/{networkId}/allocate' },
    params: Type.Object({
      networkId: Id('network id (NETWORKID)'),
      deviceId: Id("device id: a device of the network's customer"),
      address: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a free host address of the network; default the lowest free one' })),
    }),
    async handler(call, p) {
      const customers = await seenCustomers(call);
      const now = unixSeconds(call.services.clock);
      const made = await call.services.db.exclusive(LOCK, async (trx) => {
        const net = await findNetwork(trx, customers, p.networkId);
        // The device must be in the caller's scope and belong to the network's customer.
        const device = await trx
          .selectFrom('devices')
          .select(['id', 'customer_id'])
          .where('id', '=', p.deviceId)
          .where('customer_id', 'in', customers)
          .where('status', '!=', 'CANCELLED')
          .executeTakeFirst();
        if (!device || device.customer_id !== net.customer_id) throw infraErrors.deviceNotFound();
        const c = cidrOf(net);
        const taken = await allocationsOf(trx, [net.id]);
        if (taken.length >= MAX_ALLOCATIONS_PER_NETWORK) throw infraErrors.allocationLimit({ limit: MAX_ALLOCATIONS_PER_NETWORK });
        let address: string;
        if (p.address !== undefined) {
          const want = hostIn(c, p.address, 'address');
          const used = want.text === net.gateway || (await trx.selectFrom('device_ips').select('id').where('address', '=', want.text).executeTakeFirst());
          if (used) throw infraErrors.invalidParameter({ name: 'address', problem: P.addressTaken({ address: want.text }) });
          address = want.text;
        } else {
          address = await lowestFree(trx, c, new Set([...taken.map((t) => t.address), net.gateway]));
        }
        return trx
          .insertInto('device_ips')
          .values({ device_id: device.id, address, family: c.family, is_primary: 0, network_id: net.id, date_created: now })
          .returning(['address', 'device_id', 'date_created', 'network_id'])
          .executeTakeFirstOrThrow();
      });
      const allocation = presentAllocation(made.network_id!, made);
      return { message: 'Address Allocated Successfully', data: allocation, top: { allocation } };
    },
  }),
  defineCommand({
    cmd: 'network.ip.release',
    summary: 'Take an allocated address back from its device',
    rest: { method: 'POST', path: '/network/ip/{networkId}/release' },
    params: Type.Object({ networkId: Id('network id (NETWORKID)'), address: Type.String({ minLength: 1, maxLength: 100 }) }),
    async handler(call, p) {
      const customers = await seenCustomers(call);
      await call.services.db.exclusive(LOCK, async (trx) => {
        const net = await findNetwork(trx, customers, p.networkId);
        const a = parseAddress(p.address.trim());
        if (!a) throw infraErrors.invalidParameter({ name: 'address', problem: P.ipAddress() });
        const text = formatAddress(a.family, a.value);
        const gone = await trx.deleteFrom('device_ips').where('network_id', '=', net.id).where('address', '=', text).executeTakeFirst();
        if (Number(gone.numDeletedRows) === 0) throw infraErrors.allocationNotFound({ address: text, id: net.id });
      });
      return { message: 'Address Released Successfully' };
    },
  }),
];

/**
 * The lowest host address of the network used by no device anywhere (device_ips.address is unique
 * across the store: a sim pool address or another customer's network may hold one already).
 * `skip` holds the network's own allocations and its gateway; at most MAX_ALLOCATIONS_PER_NETWORK
 * of those exist, so the walk ends quickly unless other networks crowd the range too.
 */
async function lowestFree(db: Queryable<InfraTables>, c: Cidr, skip: Set<string>): Promise<string> {
  const { first, last } = hostRange(c);
  const BATCH = 256n;
  for (let from = first; from <= last; from += BATCH) {
    const to = from + BATCH - 1n < last ? from + BATCH - 1n : last;
    const candidates: string[] = [];
    for (let v = from; v <= to; v++) {
      const t = formatAddress(c.family, v);
      if (!skip.has(t)) candidates.push(t);
    }
    if (candidates.length === 0) continue;
    const used = new Set((await db.selectFrom('device_ips').select('address').where('address', 'in', candidates).execute()).map((r) => r.address));
    const free = candidates.find((t) => !used.has(t));
    if (free) return free;
    // Past the bound of this network's own allocations plus a few batches of others', give up.
    if (from - first > BigInt(MAX_ALLOCATIONS_PER_NETWORK) * 4n) break;
  }
  throw infraErrors.networkFull({ network: formatCidr(c) });
}

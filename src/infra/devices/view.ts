// How a device looks on the wire (device.get, device.getall): the store's devices row with its
// addresses, firewall policies and power columns, and the order it was made from, in the shapes the
// Go client, Terraform and the provider's doc pages decode (infra-clients.md 2.2). Both the fixture's
// field set and the doc pages' are emitted; where they clash in type, the Go client's types win.
import type { Kysely, Selectable } from 'kysely';
import { preparedQuery } from '../../platform/db/fast/prepared.js';
import type { Queryable } from '../../platform/db/database.js';
import type { CatalogueIndex } from '../catalogue.js';
import type { OrderDetails } from '../orders-details.js';
import { priceList } from '../pricing.js';
import type { DeviceFirewallPolicyRow, DeviceIpRow, DeviceRow, InfraTables } from '../tables.js';

export type DeviceRecord = Selectable<DeviceRow>;
type IpRow = Selectable<DeviceIpRow>;
type PolicyRow = Selectable<DeviceFirewallPolicyRow>;

/** Everything one device's view is made of. */
export interface DeviceParts {
  row: DeviceRecord;
  ips: IpRow[];
  policies: PolicyRow[];
  /** The order's checked details; undefined for a device made otherwise (none today). */
  details?: OrderDetails;
}

/** A firewall policy as the Go client's FirewallPolicy decodes it (deviceId int AND deviceID str). */
export function presentPolicy(p: PolicyRow): Record<string, unknown> {
  return {
    id: p.id,
    deviceID: String(p.device_id),
    direction: p.direction,
    comment: p.comment,
    ipAddressTo: p.ip_to,
    ipAddressFrom: p.ip_from,
    protocol: p.protocol,
    portFrom: p.port_from,
    portTo: p.port_to,
    policy: p.policy,
    dateCreated: Number(p.date_created),
    dateModified: Number(p.date_modified),
    order: Number(p.sort_order),
    deviceId: p.device_id,
  };
}

/** The primary address: the row marked primary (IPv4 first), else the first; "" when none. */
export function primaryAddress(ips: IpRow[]): string {
  const sorted = [...ips].sort((a, b) => Number(b.is_primary) - Number(a.is_primary) || Number(a.family) - Number(b.family) || a.id - b.id);
  return sorted[0]?.address ?? '';
}

function network(ip: IpRow): { net: string; gateway: string; netmask: string } {
  if (Number(ip.family) === 4) {
    const parts = ip.address.split('.');
    return { net: `${parts.slice(0, 3).join('.')}.0`, gateway: `${parts.slice(0, 3).join('.')}.1`, netmask: '255.255.255.0' };
  }
  const head = ip.address.split(':').slice(0, 4).join(':');
  return { net: `${head}::`, gateway: `${head}::1`, netmask: 'ffff:ffff:ffff:ffff::' };
}

function presentIp(ip: IpRow): Record<string, unknown> {
  const n = network(ip);
  return {
    ipAddress: ip.address,
    primary: Number(ip.is_primary) === 1,
    routeType: 'UNICAST',
    networkNetwork: n.net,
    networkGateway: n.gateway,
    networkNetmask: n.netmask,
    networkVLANID: null,
    policy: 'ALWAYS',
    policyEval: null,
    portId: 0,
    networkId: ip.network_id === null ? 0 : Number(ip.network_id),
    deviceId: ip.device_id,
  };
}

/** A locally administered MAC made from the device id and port (stable, unique per device). */
function macOf(deviceId: number, port: number): string {
  const bytes = [0x02, 0x6b, (deviceId >>> 16) & 0xff, (deviceId >>> 8) & 0xff, deviceId & 0xff, port & 0xff];
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/**
 * The device's ports, one per ordered NIC. device.get shows `deviceInterface` as the fixture does
 * (a string); device.getall as the Go client's getall type wants it (an int).
 */
function presentPorts(d: DeviceParts, form: 'get' | 'list'): Record<string, unknown>[] {
  const nics = d.details?.nics ?? [{ name: 'public', vlan: 0, speed: 1000 }];
  const up = d.row.power_status === 'ONLINE' ? 'UP' : 'DOWN';
  return nics.map((nic, i) => ({
    name: nic.name,
    deviceInterface: form === 'get' ? String(i) : i,
    deviceTerminationDeviceName: null,
    deviceTerminationInterface: '-1',
    status: up,
    speedMbit: String(nic.speed),
    activityInMbit: 0,
    activityOutMbit: 0,
    bridge: false,
    deviceMAC: macOf(d.row.id, i),
    dateCreated: Number(d.row.date_created),
    dateModified: Number(d.row.date_modified),
    deviceId: d.row.id,
    deviceTerminationDeviceId: '-1',
    deviceVlanId: [String(nic.vlan || 1)],
  }));
}

/** `extra`: the provider's key/value sheet of the device; values are strings (VMMEMORY a number). */
function presentExtra(d: DeviceParts, catalogue: CatalogueIndex, primary?: IpRow): Record<string, unknown> {
  const det = d.details;
  const product = catalogue.product(d.row.product_code);
  const prices = product?.prices;
  const dc = catalogue.dataCentre(Number(d.row.dc_id));
  const storageGB = det ? det.storage.reduce((s, x) => s + x.sizeGB, 0) : 0;
  const ipv4 = det ? det.nics.reduce((s, n) => s + n.ipv4, 0) : 0;
  const ipv6 = det ? det.nics.reduce((s, n) => s + n.ipv6, 0) : 0;
  const net = primary && Number(primary.family) === 4 ? network(primary) : undefined;
  const online = d.row.power_status === 'ONLINE';
  return {
    SUPPORT: 'SUPPORTSTD',
    SUPPORT_PLAN: 'SUPPORTSTD',
    'SUPPORT:PRICE': 'SUPPORTSTD:0',
    IPV4: String(ipv4),
    'IPV4:PRICE': priceList([[1, prices?.perIPv4 ?? 0]]),
    IPV6: String(ipv6),
    'IPV6:PRICE': '16:0',
    PORTSPEED: String(det?.nics[0]?.speed ?? 1000),
    'PORTSPEED:PRICE': `${det?.nics[0]?.speed ?? 1000}:0`,
    OPERATINGSYSTEM: det?.install.operatingSystem ?? '',
    'OPERATINGSYSTEM:PRICE': priceList(catalogue.catalogue.operatingSystems.map((o) => [o.code, o.price])),
    TRAFFICGB: String(det?.trafficGB ?? 0),
    'TRAFFICGB:PRICE': priceList([[1, prices?.perTrafficGB ?? 0]]),
    STORAGEGB: String(storageGB),
    'STORAGEGB:PRICE': priceList([[1, prices?.perStorageGB.MAGNETIC ?? 0]]),
    VMHDD1: String((det?.storage[0]?.sizeGB ?? 0) * 1024),
    MEMORYGB: String(det?.memoryGB ?? 0),
    'MEMORYGB:PRICE': priceList([[1, prices?.perMemoryGB ?? 0]]),
    VMMEMORY: (det?.memoryGB ?? 0) * 1024,
    CPU: String(det?.cpu ?? 0),
    'CPU:PRICE': priceList([[1, prices?.perCpu ?? 0]]),
    VMCORES: String(det?.cpu ?? 0),
    CLOUDSERVER: 'TRUE',
    LOCATION: dc?.location ?? '',
    'LOCATION:PRICE': priceList((product?.dcIds ?? []).map((id) => [catalogue.dataCentre(id)?.location ?? String(id), prices?.base ?? 0])),
    DDOS: 'NONE',
    'DDOS:PRICE': 'NONE:0',
    HAENABLED: 'FALSE',
    HOSTDEVICEID: '0',
    HOSTDEVICENAME: d.row.machine_name,
    NET_DHCPENABLED: 'TRUE',
    NET_DNSSERVER1: '',
    NET_DNSSERVER2: '',
    NET_GATEWAY: net?.gateway ?? '',
    NET_NETMASK: net?.netmask ?? '',
    SYS_NETWORKSTATUS: online ? 'ONLINE' : 'OFFLINE',
    SYS_NETWORKSWITCH: 'ONLINE',
    // What Terraform waits on: the switch, then (when it is ONLINE) the status.
    SYS_POWERSTATUS: d.row.power_status,
    SYS_POWERSWITCH: d.row.power_switch,
  };
}

/** One device as device.get (form 'get') or device.getall (form 'list') answers it. */
export function presentDevice(d: DeviceParts, catalogue: CatalogueIndex, form: 'get' | 'list'): Record<string, unknown> {
  const r = d.row;
  const dc = catalogue.dataCentre(Number(r.dc_id));
  const primaryIp = primaryAddress(d.ips);
  const primary = d.ips.find((ip) => ip.address === primaryIp);
  const online = r.power_status === 'ONLINE';
  const det = d.details;
  return {
    // The fixture's set (GO Device, TF).
    id: String(r.id),
    deviceId: r.id,
    name: r.name,
    stdName: r.std_name,
    customerId: r.customer_id,
    status: r.status,
    primaryIP: primaryIp,
    dcid: Number(r.dc_id),
    dcId: Number(r.dc_id),
    dcName: dc?.name ?? '',
    dcDescription: dc?.description ?? '',
    trafficMB: Number(r.traffic_mb),
    trafficShared: false,
    trafficCurrent: String(Math.round(Number(r.traffic_mb) / 1024)),
    trafficEstimated: 0,
    dateCreated: Number(r.date_created),
    dateModified: Number(r.date_modified),
    highAvailability: false,
    assets: [],
    ips: d.ips.map(presentIp),
    firewallPolicies: d.policies.map(presentPolicy),
    ports: presentPorts(d, form),
    networkRoutes: [],
    extra: presentExtra(d, catalogue, primary),
    // The doc pages' set.
    type: 'VIRTUAL',
    customerid: r.customer_id,
    hostDeviceName: r.machine_name,
    vmhostName: r.machine_name,
    vmhostId: 0,
    operationalStatus: online ? 'RUNNING' : 'STOPPED',
    onlineStatus: online ? 'ONLINE' : 'OFFLINE',
    osGuess: det?.install.operatingSystem ?? '',
    osState: online ? 'RUNNING' : 'STOPPED',
    cpu: det?.cpu ?? 0,
    ram: det?.memoryGB ?? 0,
    storage: det ? det.storage.reduce((s, x) => s + x.sizeGB, 0) : 0,
  };
}

/**
 * Statements' bound parameters are limited (SQLite 32766, PostgreSQL 65535) and a list may show up to
 * RES_WINDOW_MAX devices, so their parts are read this many at a time.
 */
const CHUNK = 1000;

async function inChunks<T>(ids: number[], read: (chunk: number[]) => Promise<T[]>): Promise<T[]> {
  if (ids.length <= CHUNK) return read(ids);
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) out.push(...(await read(ids.slice(i, i + CHUNK))));
  return out;
}

/** The addresses, policies and order details of devices: three statements per thousand devices. */
export async function loadParts(db: Queryable<InfraTables>, rows: DeviceRecord[]): Promise<DeviceParts[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const contractIds = [...new Set(rows.map((r) => r.contract_id))];
  const [ips, policies, orders] = await Promise.all([
    inChunks(ids, (chunk) => db.selectFrom('device_ips').selectAll().where('device_id', 'in', chunk).orderBy('id').execute()),
    inChunks(ids, (chunk) => db.selectFrom('device_firewall_policies').selectAll().where('device_id', 'in', chunk).orderBy('sort_order').orderBy('id').execute()),
    inChunks(contractIds, (chunk) => db.selectFrom('contracts as c').innerJoin('orders as o', 'o.id', 'c.order_id').select(['c.id as contract_id', 'o.details']).where('c.id', 'in', chunk).execute()),
  ]);
  const detailsByContract = new Map<number, OrderDetails>();
  for (const o of orders) {
    try {
      detailsByContract.set(o.contract_id, JSON.parse(o.details) as OrderDetails);
    } catch {
      // A details column that is not JSON shows the device without its order's sizes.
    }
  }
  const group = <T extends { device_id: number }>(list: T[]) => {
    const m = new Map<number, T[]>();
    for (const x of list) {
      const l = m.get(x.device_id);
      if (l) l.push(x);
      else m.set(x.device_id, [x]);
    }
    return m;
  };
  const ipsBy = group(ips);
  const policiesBy = group(policies);
  return rows.map((row) => ({ row, ips: ipsBy.get(row.id) ?? [], policies: policiesBy.get(row.id) ?? [], details: detailsByContract.get(row.contract_id) }));
}

// device.get is the hot read (Terraform polls it): its four point look-ups as prepared queries.
const deviceById = preparedQuery((db: Kysely<InfraTables>, id: number) => db.selectFrom('devices').selectAll().where('id', '=', id).where('status', '!=', 'CANCELLED'));
const ipsOf = preparedQuery((db: Kysely<InfraTables>, id: number) => db.selectFrom('device_ips').selectAll().where('device_id', '=', id).orderBy('id'));
const policiesOf = preparedQuery((db: Kysely<InfraTables>, id: number) => db.selectFrom('device_firewall_policies').selectAll().where('device_id', '=', id).orderBy('sort_order').orderBy('id'));
const detailsOf = preparedQuery((db: Kysely<InfraTables>, contractId: number) =>
  db.selectFrom('contracts as c').innerJoin('orders as o', 'o.id', 'c.order_id').select('o.details').where('c.id', '=', contractId),
);

/** A device that is not cancelled, by id, whoever's it is (the caller checks the customer). */
export async function liveDevice(db: Kysely<InfraTables>, id: number): Promise<DeviceRecord | undefined> {
  return (await deviceById(db, id))[0];
}

/** One device's parts by point look-ups (loadParts for one, without its lists of ids). */
export async function loadOne(db: Kysely<InfraTables>, row: DeviceRecord): Promise<DeviceParts> {
  const [ips, policies, orders] = await Promise.all([ipsOf(db, row.id), policiesOf(db, row.id), detailsOf(db, row.contract_id)]);
  let details: OrderDetails | undefined;
  try {
    details = orders[0] ? (JSON.parse(orders[0].details) as OrderDetails) : undefined;
  } catch {
    details = undefined;
  }
  return { row, ips, policies, details };
}

// A device's name in DNS: its host name and addresses as A/AAAA records in the customer's hosted
// zone that holds the name, and as PTR records in the customer's reverse zone (in-addr.arpa,
// ip6.arpa) that holds each address, when Keel hosts such zones for the customer. The worker calls
// publishDevice on activation and unpublishDevice on cancellation (before the addresses are freed);
// device.update calls both around a rename. The records are ordinary records of the customer's zones
// (dns.record.* shows and edits them); a name that already has a CNAME, or a zone at its record bound,
// is left alone rather than broken.
import type { Selectable, Transaction } from 'kysely';
import type { InfraServices } from '../command.js';
import type { DnsDomainRow, DnsRecordRow, InfraTables } from '../tables.js';
import { bumpZone, type ZoneEffect } from '../dns-batches.js';
import { MAX_RECORDS_PER_ZONE } from '../dns-rules.js';
import { unixSeconds } from '../../platform/clock.js';
import type { Queryable } from '../../platform/db/database.js';

type Trx = Transaction<InfraTables>;
type DomainRow = Selectable<DnsDomainRow>;
type RecordRow = Selectable<DnsRecordRow>;

/** TTL of the records a device gets: short, as addresses of servers change with them. */
export const DEVICE_RECORD_TTL = 300;

/** What publishDevice or unpublishDevice changed. */
export interface DnsPublication {
  /** Zones whose records changed. */
  zones: string[];
  /**
   * Puts the changed zones into the catalog the DNS server answers from. With a caller's transaction
   * it must be awaited after that transaction commits; without one it was done already (no-op).
   */
  refresh(): Promise<void>;
}

interface Wanted {
  zone: DomainRow;
  lookup: string;
  type: 'A' | 'AAAA' | 'PTR';
  data: string;
}

/** The reverse-lookup name of an address (1.2.0.192.in-addr.arpa, or the 32 nibbles of ip6.arpa). */
export function reverseName(address: string, family: number): string {
  if (family === 4) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const full = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  const nibbles = full.map((g) => g.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa`;
}

/** The longest of `zones` that holds `name` (the zone itself or a name below it). */
function zoneFor(zones: DomainRow[], name: string): DomainRow | undefined {
  let best: DomainRow | undefined;
  for (const z of zones) {
    if ((name === z.name || name.endsWith(`.${z.name}`)) && (!best || z.name.length > best.name.length)) best = z;
  }
  return best;
}

const relative = (name: string, zone: string) => (name === zone ? '' : name.slice(0, -(zone.length + 1)));

/** The records a device's name and addresses call for, in the zones its customer hosts. */
async function wantedRecords(db: Queryable<InfraTables>, deviceId: number): Promise<Wanted[]> {
  const device = await db.selectFrom('devices').select(['id', 'name', 'customer_id']).where('id', '=', deviceId).executeTakeFirst();
  if (!device) return [];
  const [zones, ips] = await Promise.all([
    db.selectFrom('dns_domains').selectAll().where('customer_id', '=', device.customer_id).execute(),
    db.selectFrom('device_ips').select(['address', 'family']).where('device_id', '=', deviceId).orderBy('id').execute(),
  ]);
  const host = device.name.toLowerCase().replace(/\.$/, '');
  const out: Wanted[] = [];
  const forward = zoneFor(zones, host);
  for (const ip of ips) {
    const family = Number(ip.family);
    if (forward) out.push({ zone: forward, lookup: relative(host, forward.name), type: family === 4 ? 'A' : 'AAAA', data: ip.address });
    // A PTR names a host; a bare label is no name for one.
    const reverse = host.includes('.') ? reverseName(ip.address, family) : '';
    const rz = reverse ? zoneFor(zones, reverse) : undefined;
    if (rz) out.push({ zone: rz, lookup: relative(reverse, rz.name), type: 'PTR', data: host });
  }
  return out;
}

const byZone = (list: Wanted[]) => {
  const m = new Map<number, Wanted[]>();
  for (const w of list) {
    const l = m.get(w.zone.id);
    if (l) l.push(w);
    else m.set(w.zone.id, [w]);
  }
  return m;
};

/** What one zone's change wrote: the rows as stored and the ids deleted (the catalog is patched from them). */
interface Written {
  upserts: RecordRow[];
  deletes: number[];
}

/** Adds the records of one zone that are not there yet. */
async function addRecords(trx: Trx, services: InfraServices, zoneId: number, wanted: Wanted[]): Promise<Written> {
  const now = unixSeconds(services.clock);
  const lookups = [...new Set(wanted.map((w) => w.lookup))];
  const existing = await trx.selectFrom('dns_records').select(['lookup', 'type', 'data']).where('domain_id', '=', zoneId).where('lookup', 'in', lookups).execute();
  const count = await trx
    .selectFrom('dns_records')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('domain_id', '=', zoneId)
    .executeTakeFirstOrThrow();
  let room = MAX_RECORDS_PER_ZONE - Number(count.n);
  const upserts: RecordRow[] = [];
  for (const w of wanted) {
    const here = existing.filter((r) => r.lookup === w.lookup);
    if (here.some((r) => r.type === 'CNAME' || (r.type === w.type && r.data.toLowerCase() === w.data.toLowerCase()))) continue;
    if (room <= 0) break;
    const row = await trx
      .insertInto('dns_records')
      .values({
        domain_id: zoneId,
        lookup: w.lookup,
        type: w.type,
        data: w.data,
        ttl: DEVICE_RECORD_TTL,
        priority: 0,
        weight: 0,
        port: 0,
        caa_flag: 0,
        caa_tag: '',
        date_created: now,
        date_modified: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    upserts.push(row);
    existing.push({ lookup: w.lookup, type: w.type, data: w.data });
    room--;
  }
  return { upserts, deletes: [] };
}

/** Deletes the records of one zone that a device's name and addresses made. */
async function removeRecords(trx: Trx, zoneId: number, wanted: Wanted[]): Promise<Written> {
  const deletes: number[] = [];
  for (const w of wanted) {
    const rows = await trx.deleteFrom('dns_records').where('domain_id', '=', zoneId).where('lookup', '=', w.lookup).where('type', '=', w.type).where('data', '=', w.data).returning('id').execute();
    deletes.push(...rows.map((r) => r.id));
  }
  return { upserts: [], deletes };
}

const changedAny = (w: Written) => w.upserts.length > 0 || w.deletes.length > 0;

type ZoneChange = (trx: Trx, zoneId: number, wanted: Wanted[]) => Promise<Written>;

async function change(services: InfraServices, trx: Trx | undefined, deviceId: number, apply: ZoneChange): Promise<DnsPublication> {
  const wanted = await wantedRecords(trx ?? services.db.kysely, deviceId);
  const zones = byZone(wanted);
  const changed: string[] = [];
  if (trx) {
    for (const [zoneId, list] of [...zones].sort((a, b) => a[0] - b[0])) {
      // Locks the zone (and moves its serial) first, as every change of a zone does.
      const zone = await bumpZone(trx, services.clock, zoneId);
      if (!zone) continue;
      if (changedAny(await apply(trx, zoneId, list))) changed.push(zone.name);
    }
    return { zones: changed, refresh: async () => void (await Promise.all(changed.map((z) => services.zoneWriter.refresh(z)))) };
  }
  for (const [zoneId, list] of zones) {
    // The zone's write batches (dns-batches.ts) run it with the zone locked and patch the catalog
    // from the rows written. A zone where nothing changes still moves its serial: harmless, and rare.
    const did = await services.zoneWriter.submit(zoneId, async (t) => async (): Promise<ZoneEffect<boolean>> => {
      const written = await apply(t, zoneId, list);
      return { value: changedAny(written), ...written };
    });
    if (did) changed.push(list[0].zone.name);
  }
  return { zones: changed, refresh: async () => {} };
}

/**
 * Publishes device `deviceId` in DNS: A/AAAA at its host name in the customer's zone holding that
 * name, PTR for each address in the customer's reverse zone holding it. Records already there are
 * kept; nothing is published where the customer hosts no such zone. With `trx` the writes join the
 * caller's transaction and the caller awaits the result's refresh() after its commit; without it each
 * zone is changed in its own batch and is served when this resolves.
 */
export function publishDevice(services: InfraServices, trx: Trx | undefined, deviceId: number): Promise<DnsPublication> {
  return change(services, trx, deviceId, (t, zoneId, list) => addRecords(t, services, zoneId, list));
}

/**
 * Removes what publishDevice made for the device's current name and addresses (records the customer
 * changed since are left). Call it before the device's addresses are released. Same `trx` rules.
 */
export function unpublishDevice(services: InfraServices, trx: Trx | undefined, deviceId: number): Promise<DnsPublication> {
  return change(services, trx, deviceId, removeRecords);
}

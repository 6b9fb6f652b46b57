// Builds the DNS server's Zone objects from the stored zones, and keeps the ZoneCatalog current:
// every zone at start (loadAllZones), and one zone after each committed change (refreshZone).
import type { Selectable } from 'kysely';
import type { Database, Queryable } from '../platform/db/database.js';
import type { Zone, ZoneCatalog, ZoneRecord } from '../dns/zone.js';
import type { DnsRecordRow, InfraTables } from './tables.js';
import { txtStrings, type RecordType } from './dns-rules.js';

type RecordRow = Pick<Selectable<DnsRecordRow>, 'lookup' | 'type' | 'data' | 'ttl' | 'priority' | 'weight' | 'port' | 'caa_flag' | 'caa_tag'>;

function toZoneRecord(zone: string, r: RecordRow): ZoneRecord | undefined {
  const name = r.lookup === '' ? zone : `${r.lookup}.${zone}`;
  const ttl = Number(r.ttl);
  switch (r.type as RecordType) {
    case 'A':
    case 'AAAA':
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return { name, ttl, type: r.type as 'A', data: r.data };
    case 'MX':
      return { name, ttl, type: 'MX', data: { preference: Number(r.priority), exchange: r.data } };
    case 'SRV':
      return { name, ttl, type: 'SRV', data: { priority: Number(r.priority), weight: Number(r.weight), port: Number(r.port), target: r.data } };
    case 'CAA':
      return { name, ttl, type: 'CAA', data: { flags: Number(r.caa_flag), tag: r.caa_tag, value: r.data } };
    case 'TXT':
      return { name, ttl, type: 'TXT', data: txtStrings(r.data) };
    default:
      // Only the types above are ever stored; anything else is not served.
      return undefined;
  }
}

// The ZoneRecord made from a stored row, kept with the row: a zone patched from a change (see
// applyZoneChange) keeps the row objects it did not change, so only changed records are made again,
// and the DNS index (zone-index.ts) reuses what it prepared for the unchanged ones.
const made = new WeakMap<object, { zone: string; rec: ZoneRecord; key: string } | null>();

function zoneRecordOf(zone: string, row: RecordRow): { rec: ZoneRecord; key: string } | null {
  let m = made.get(row);
  if (m === undefined || (m !== null && m.zone !== zone)) {
    const rec = toZoneRecord(zone, row);
    m = rec ? { zone, rec, key: JSON.stringify([rec.name, rec.type, rec.data]) } : null;
    made.set(row, m);
  }
  return m;
}

/**
 * The Zone of stored records. An RRset is a set (RFC 2181 5): identical records are served once,
 * and all records of a name and type are served with the lowest TTL among them (RFC 2181 5.2).
 * Records are shared between versions of a zone: never changed in place.
 */
export function buildZone(name: string, serial: number, rows: RecordRow[]): Zone {
  const seen = new Set<string>();
  const records: ZoneRecord[] = [];
  const minTtl = new Map<string, number>();
  for (const row of rows) {
    const m = zoneRecordOf(name, row);
    if (!m) continue;
    if (seen.has(m.key)) continue;
    seen.add(m.key);
    const rec = m.rec;
    records.push(rec);
    const set = `${rec.name} ${rec.type}`;
    const min = minTtl.get(set);
    if (min === undefined || rec.ttl < min) minTtl.set(set, rec.ttl);
  }
  for (let i = 0; i < records.length; i++) {
    const rec = records[i];
    const ttl = minTtl.get(`${rec.name} ${rec.type}`)!;
    if (rec.ttl !== ttl) records[i] = { ...rec, ttl };
  }
  return { name, serial: Number(serial), records };
}

/** Puts a zone unless the catalog already holds the same or a newer serial of it. */
function putIfNewer(catalog: ZoneCatalog, zone: Zone): void {
  const current = catalog.get(zone.name);
  if (current && current.serial >= zone.serial) return;
  catalog.put(zone);
}

/** A served zone's stored rows by id (in id order), as the catalog's Zone was last built from them. */
interface ZoneRows { domainId: number; serial: number; rows: Map<number, StoredRow> }
type StoredRow = RecordRow & { id: number };

/** Reads zones (all active ones, or one by name) in one statement, so serial and records agree. */
async function readZones(db: Queryable<InfraTables>, name?: string): Promise<(ZoneRows & { name: string })[]> {
  let q = db
    .selectFrom('dns_domains as d')
    .leftJoin('dns_records as r', 'r.domain_id', 'd.id')
    .select(['d.id as domain_id', 'd.name', 'd.serial', 'r.id', 'r.lookup', 'r.type', 'r.data', 'r.ttl', 'r.priority', 'r.weight', 'r.port', 'r.caa_flag', 'r.caa_tag'])
    .where('d.status', '=', 'ACTIVE');
  if (name !== undefined) q = q.where('d.name', '=', name);
  const rows = await q.orderBy('d.id').orderBy('r.id').execute();
  const byDomain = new Map<number, ZoneRows & { name: string }>();
  for (const row of rows) {
    let z = byDomain.get(row.domain_id);
    if (!z) byDomain.set(row.domain_id, (z = { name: row.name, domainId: row.domain_id, serial: Number(row.serial), rows: new Map() }));
    if (row.id !== null && row.type !== null) z.rows.set(Number(row.id), row as StoredRow);
  }
  return [...byDomain.values()];
}

const zoneRows = new WeakMap<ZoneCatalog, Map<string, ZoneRows>>();

function rowsOf(catalog: ZoneCatalog): Map<string, ZoneRows> {
  let m = zoneRows.get(catalog);
  if (!m) zoneRows.set(catalog, (m = new Map()));
  return m;
}

/** Puts what was read (or patched) into the catalog, and keeps its rows for the next patch. */
function install(catalog: ZoneCatalog, name: string, z: ZoneRows): void {
  const kept = rowsOf(catalog);
  const known = kept.get(name);
  // The rows kept follow the store; the catalog itself may hold something newer (putIfNewer).
  if (!known || known.domainId !== z.domainId || known.serial < z.serial) kept.set(name, z);
  putIfNewer(catalog, buildZone(name, z.serial, [...z.rows.values()]));
}

/** At start: every active zone into the catalog. */
export async function loadAllZones(db: Database<InfraTables>, catalog: ZoneCatalog): Promise<number> {
  const zones = await readZones(db.kysely);
  for (const z of zones) install(catalog, z.name, z);
  return zones.length;
}

// Refreshes of one zone name run one after another, each reading the latest committed state, so the
// last one to run, which started after the last commit, leaves the catalog at the latest state even
// when a delete and an update of the zone race (a stale put can never follow the removal).
const queues = new WeakMap<ZoneCatalog, Map<string, Promise<void>>>();

function inTurn(catalog: ZoneCatalog, name: string, work: () => Promise<void> | void): Promise<void> {
  let perName = queues.get(catalog);
  if (!perName) queues.set(catalog, (perName = new Map()));
  const previous = perName.get(name) ?? Promise.resolve();
  const run = previous.then(work);
  const tail = run.catch(() => {});
  perName.set(name, tail);
  void tail.then(() => {
    if (perName.get(name) === tail) perName.delete(name);
  });
  return run;
}

async function reload(db: Database<InfraTables>, catalog: ZoneCatalog, name: string): Promise<void> {
  const [zone] = await readZones(db.kysely, name);
  if (zone) install(catalog, name, zone);
  else {
    rowsOf(catalog).delete(name);
    catalog.remove(name);
  }
}

/** After a commit that changed zone `name`: put its current state in the catalog, or remove it. */
export function refreshZone(db: Database<InfraTables>, catalog: ZoneCatalog, name: string): Promise<void> {
  return inTurn(catalog, name, () => reload(db, catalog, name));
}

/** What one committed transaction did to a zone's records: rows written (as stored) and rows deleted. */
export interface ZoneChange {
  domainId: number;
  /** The serial the transaction's first bump gave the zone (the zone's serial before it, plus one, or the day's base). */
  firstSerial: number;
  /** The serial the transaction left the zone at (above firstSerial when it stands for several changes). */
  serial: number;
  upserts: Iterable<StoredRow>;
  deletes: Iterable<number>;
}

/**
 * After a commit that made `change` to zone `name`: like refreshZone, without reading the zone again
 * when it can. Every committed change of a zone's records bumps its serial first, under the zone's row
 * lock, to max(previous + 1, the day's base). So when the kept rows are at serial s and the change's
 * first bump gave s + 1, the change started from exactly those rows, and they plus the change are the
 * stored zone at the change's serial; kept rows at or above that serial already include it. Anything
 * else (a gap: another node's change, a change of day in the serial, a zone not served) reads it again.
 */
export function applyZoneChange(db: Database<InfraTables>, catalog: ZoneCatalog, name: string, change: ZoneChange): Promise<void> {
  return inTurn(catalog, name, () => {
    const known = rowsOf(catalog).get(name);
    if (known && known.domainId === change.domainId) {
      if (known.serial >= change.serial) return;
      if (known.serial + 1 === change.firstSerial) {
        const rows = new Map(known.rows);
        let ordered = true;
        let last = -Infinity;
        for (const id of rows.keys()) last = Math.max(last, id);
        for (const id of change.deletes) rows.delete(id);
        for (const row of change.upserts) {
          const id = Number(row.id);
          if (!rows.has(id) && id < last) ordered = false;
          last = Math.max(last, id);
          rows.set(id, row);
        }
        // buildZone reads records in id order (dedupe and order of answers follow it).
        const sorted = ordered ? rows : new Map([...rows].sort((a, b) => a[0] - b[0]));
        install(catalog, name, { domainId: change.domainId, serial: change.serial, rows: sorted });
        return;
      }
    }
    return reload(db, catalog, name);
  });
}

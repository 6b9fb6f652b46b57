// How Infra's stored zones (dns_domains, dns_records) are read into the ZoneCatalog the DNS server
// answers from: the ZoneSource of the catalog's ZoneMirror (zones/mirror.ts), which keeps it current.
import type { Selectable } from 'kysely';
import type { Database, Queryable } from '../platform/db/database.js';
import type { ZoneCatalog, ZoneRecord } from '../zones/zone.js';
import { ZoneMirror, type StoredZone, type ZoneSource } from '../zones/mirror.js';
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

export type StoredRow = RecordRow & { id: number };

/** Reads zones (all active ones, or one by name) in one statement, so serial and records agree. */
async function readZones(db: Queryable<InfraTables>, name?: string): Promise<StoredZone<StoredRow>[]> {
  let q = db
    .selectFrom('dns_domains as d')
    .leftJoin('dns_records as r', 'r.domain_id', 'd.id')
    .select(['d.id as domain_id', 'd.name', 'd.serial', 'r.id', 'r.lookup', 'r.type', 'r.data', 'r.ttl', 'r.priority', 'r.weight', 'r.port', 'r.caa_flag', 'r.caa_tag'])
    .where('d.status', '=', 'ACTIVE');
  if (name !== undefined) q = q.where('d.name', '=', name);
  const rows = await q.orderBy('d.id').orderBy('r.id').execute();
  const byDomain = new Map<number, StoredZone<StoredRow>>();
  for (const row of rows) {
    let z = byDomain.get(row.domain_id);
    if (!z) byDomain.set(row.domain_id, (z = { name: row.name, domainId: row.domain_id, serial: Number(row.serial), rows: new Map() }));
    if (row.id !== null && row.type !== null) z.rows.set(Number(row.id), row as StoredRow);
  }
  return [...byDomain.values()];
}

/** How the catalog's mirror reads this store's zones (zones/mirror.ts). */
export function zoneSource(db: Database<InfraTables>): ZoneSource<StoredRow> {
  return { read: (name) => readZones(db.kysely, name), toRecord: toZoneRecord };
}

/** The mirror that keeps `catalog` in step with the zones of `db` (built once, by the composition root). */
export function zoneMirror(db: Database<InfraTables>, catalog: ZoneCatalog): ZoneMirror<StoredRow> {
  return new ZoneMirror(catalog, zoneSource(db));
}

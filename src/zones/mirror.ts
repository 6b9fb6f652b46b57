// Keeps a ZoneCatalog in step with the zones a store holds: every zone at start (loadAll), and one
// zone after each committed change (refresh, or applyChange, which patches the zone from the rows the
// change wrote instead of reading it again). The service that owns the zone tables says how to read
// them and how a stored row becomes a record (ZoneSource); the composition root builds one mirror per
// catalog and hands it to that service's writer.
import type { Zone, ZoneCatalog, ZoneRecord } from './zone.js';

/** A served zone's stored rows by id (in id order), as read in one statement with its serial. */
export interface StoredZone<R> {
  name: string;
  domainId: number;
  serial: number;
  rows: Map<number, R>;
}

/** How the store's zones are read, and what a stored row serves. */
export interface ZoneSource<R> {
  /** Every served zone, or the one named (none when it is not served), each read in one statement so serial and records agree. */
  read(name?: string): Promise<StoredZone<R>[]>;
  /** The record a stored row serves, or undefined when it serves none. */
  toRecord(zone: string, row: R): ZoneRecord | undefined;
}

/** What one committed transaction did to a zone's records: rows written (as stored) and rows deleted. */
export interface ZoneChange<R> {
  domainId: number;
  /** The serial the transaction's first bump gave the zone (the zone's serial before it, plus one, or the day's base). */
  firstSerial: number;
  /** The serial the transaction left the zone at (above firstSerial when it stands for several changes). */
  serial: number;
  /** Rows with their ids, by id. */
  upserts: Iterable<[number, R]>;
  deletes: Iterable<number>;
}

interface Made {
  zone: string;
  rec: ZoneRecord;
  key: string;
}

export class ZoneMirror<R extends object> {
  readonly catalog: ZoneCatalog;
  private readonly source: ZoneSource<R>;
  /** The rows each served zone was last built from, for the next patch (they follow the store; the catalog may hold something newer). */
  private readonly kept = new Map<string, StoredZone<R>>();
  /** The refresh of each zone name now running, or last queued (see inTurn). */
  private readonly turns = new Map<string, Promise<void>>();
  // The record made from a stored row, kept with the row: a zone patched from a change keeps the row
  // objects it did not change, so only changed records are made again, and the DNS index
  // (dns/zone-index.ts) reuses what it prepared for the unchanged ones. Rows are never changed in place.
  private readonly made = new WeakMap<R, Made | null>();

  constructor(catalog: ZoneCatalog, source: ZoneSource<R>) {
    this.catalog = catalog;
    this.source = source;
  }

  /** At start: every served zone into the catalog; returns how many. */
  async loadAll(): Promise<number> {
    const zones = await this.source.read();
    for (const z of zones) this.install(z);
    return zones.length;
  }

  /** After a commit that changed zone `name`: put its current state in the catalog, or remove it. */
  refresh(name: string): Promise<void> {
    return this.inTurn(name, () => this.reload(name));
  }

  /**
   * After a commit that made `change` to zone `name`: like refresh, without reading the zone again
   * when it can. Every committed change of a zone's records bumps its serial first, under the zone's
   * row lock, to max(previous + 1, the day's base). So when the kept rows are at serial s and the
   * change's first bump gave s + 1, the change started from exactly those rows, and they plus the
   * change are the stored zone at the change's serial; kept rows at or above that serial already
   * include it. Anything else (a gap: another node's change, a change of day in the serial, a zone
   * not served) reads it again.
   */
  applyChange(name: string, change: ZoneChange<R>): Promise<void> {
    return this.inTurn(name, () => {
      const known = this.kept.get(name);
      if (known && known.domainId === change.domainId) {
        if (known.serial >= change.serial) return;
        if (known.serial + 1 === change.firstSerial) {
          const rows = new Map(known.rows);
          let ordered = true;
          let last = -Infinity;
          for (const id of rows.keys()) last = Math.max(last, id);
          for (const id of change.deletes) rows.delete(id);
          for (const [id, row] of change.upserts) {
            if (!rows.has(id) && id < last) ordered = false;
            last = Math.max(last, id);
            rows.set(id, row);
          }
          // buildZone reads records in id order (dedupe and order of answers follow it).
          const sorted = ordered ? rows : new Map([...rows].sort((a, b) => a[0] - b[0]));
          this.install({ name, domainId: change.domainId, serial: change.serial, rows: sorted });
          return;
        }
      }
      return this.reload(name);
    });
  }

  /**
   * The Zone of stored records. An RRset is a set (RFC 2181 5): identical records are served once,
   * and all records of a name and type are served with the lowest TTL among them (RFC 2181 5.2).
   * Records are shared between versions of a zone: never changed in place.
   */
  buildZone(name: string, serial: number, rows: Iterable<R>): Zone {
    const seen = new Set<string>();
    const records: ZoneRecord[] = [];
    const minTtl = new Map<string, number>();
    for (const row of rows) {
      const m = this.recordOf(name, row);
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

  private recordOf(zone: string, row: R): Made | null {
    let m = this.made.get(row);
    if (m === undefined || (m !== null && m.zone !== zone)) {
      const rec = this.source.toRecord(zone, row);
      m = rec ? { zone, rec, key: JSON.stringify([rec.name, rec.type, rec.data]) } : null;
      this.made.set(row, m);
    }
    return m;
  }

  /** Puts what was read (or patched) into the catalog, and keeps its rows for the next patch. */
  private install(z: StoredZone<R>): void {
    const known = this.kept.get(z.name);
    if (!known || known.domainId !== z.domainId || known.serial < z.serial) this.kept.set(z.name, z);
    // Unless the catalog already holds the same or a newer serial of it.
    const zone = this.buildZone(z.name, z.serial, z.rows.values());
    const current = this.catalog.get(zone.name);
    if (current && current.serial >= zone.serial) return;
    this.catalog.put(zone);
  }

  private async reload(name: string): Promise<void> {
    const [zone] = await this.source.read(name);
    if (zone) this.install(zone);
    else {
      this.kept.delete(name);
      this.catalog.remove(name);
    }
  }

  // Refreshes of one zone name run one after another, each reading the latest committed state, so
  // the last one to run, which started after the last commit, leaves the catalog at the latest state
  // even when a delete and an update of the zone race (a stale put can never follow the removal).
  private inTurn(name: string, work: () => Promise<void> | void): Promise<void> {
    const previous = this.turns.get(name) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.catch(() => {});
    this.turns.set(name, tail);
    void tail.then(() => {
      if (this.turns.get(name) === tail) this.turns.delete(name);
    });
    return run;
  }
}

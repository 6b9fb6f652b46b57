// Concurrent changes to the records of one zone, run as one transaction (a batch).
//
// Every change of a zone bumps its SOA serial, which on PostgreSQL locks the zone's row until commit,
// so changes to one zone take turns anyway; done one transaction each, every change also paid its
// own commit (and, before group commit, its own fsync) and its own catalog refresh. Here a change of
// one zone's records is handed to the zone's writer instead. While a batch of the zone runs, new
// changes wait; when it ends they all run as the next batch: one transaction, one serial bump, one
// catalog update (patched from the rows written, see ZoneMirror.applyChange), then every caller is answered.
//
// Each change is still judged on its own. A change has two phases: its checks, which read (seeing
// every earlier change of the batch) and refuse by throwing an InfraError before anything is
// written, and then its writes, which do not refuse. A refused change is answered with its own error
// and leaves no trace; the others go on. A batch in which every change was refused rolls back (the
// serial does not move, as when a single change fails). A database error (anything not an
// InfraError) fails the whole transaction; the batch's changes are then run again one per transaction,
// so that only the change that causes it fails. Callers are answered only after the commit and the
// catalog update; the transport then waits for Database.synced() as for every answer.
import { sql, type Selectable, type Transaction } from 'kysely';
import type { Clock } from '../platform/clock.js';
import { unixSeconds } from '../platform/clock.js';
import type { Database } from '../platform/db/database.js';
import type { ZoneMirror } from '../zones/mirror.js';
import { InfraError, infraErrors } from './errors.js';
import { serialBase } from './dns-rules.js';
import type { StoredRow } from './dns-zones.js';
import type { DnsDomainRow, DnsRecordRow, InfraTables } from './tables.js';

type Trx = Transaction<InfraTables>;
type DomainRow = Selectable<DnsDomainRow>;
type RecordRow = Selectable<DnsRecordRow>;

/** What a change's writes did: its answer, the record rows it wrote (as stored) and deleted. */
export interface ZoneEffect<T> {
  value: T;
  upserts?: RecordRow[];
  deletes?: number[];
}

/**
 * One change of a zone's records: its checks run with the zone locked (its serial already bumped) and
 * return its writes. Checks refuse by throwing an InfraError; writes must not refuse.
 */
export type ZoneWork<T> = (trx: Trx, zone: DomainRow) => Promise<() => Promise<ZoneEffect<T>>>;

/** PostgreSQL may abort a transaction that lost a race; running it again is then correct. */
export async function inTransaction<T>(db: Database<InfraTables>, fn: (trx: Trx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(fn);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if ((code === '40001' || code === '40P01') && attempt < 5) continue;
      throw err;
    }
  }
}

/**
 * Bumps a zone's serial (today's YYYYMMDD00, or one more than the last when that is higher) and
 * returns its row, or undefined when there is no such zone. On PostgreSQL the UPDATE also locks the
 * row until commit, so changes of one zone take turns and each reads what the previous one committed;
 * SQLite runs one transaction at a time anyway.
 */
export async function bumpZone(trx: Trx, clock: Clock, domainId: number, customerId?: number): Promise<DomainRow | undefined> {
  const base = serialBase(clock.now());
  let q = trx
    .updateTable('dns_domains')
    .set({
      serial: sql<number>`CASE WHEN serial + 1 > ${base} THEN serial + 1 ELSE ${base} END`,
      date_modified: unixSeconds(clock),
    })
    .where('id', '=', domainId);
  if (customerId !== undefined) q = q.where('customer_id', '=', customerId);
  return q.returningAll().executeTakeFirst();
}

interface Pending {
  work: ZoneWork<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; effect: ZoneEffect<unknown> } | { ok: false; error: unknown };

/** Rolls a batch back when every change in it was refused. */
const NOTHING_DONE = Symbol('nothing done');

/** A bound on one transaction's size; more waiting changes go in the next batch. */
const MAX_BATCH = 256;

/**
 * The batches of every zone of one store and catalog. The composition root builds one per store and
 * catalog, so every change of a zone in this process meets in it.
 */
export class ZoneWriter {
  private readonly db: Database<InfraTables>;
  /** Keeps the catalog the DNS server answers from in step with the store. */
  readonly mirror: ZoneMirror<StoredRow>;
  private readonly clock: Clock;
  private readonly waiting = new Map<number, Pending[]>();

  constructor(db: Database<InfraTables>, mirror: ZoneMirror<StoredRow>, clock: Clock) {
    this.db = db;
    this.mirror = mirror;
    this.clock = clock;
  }

  /** After a commit that changed zone `name` outside a batch: its current state into the catalog (or out of it). */
  refresh(name: string): Promise<void> {
    return this.mirror.refresh(name);
  }

  /** Runs `work` on zone `domainId` in the next batch; resolves with its value once committed and in the catalog. */
  submit<T>(domainId: number, work: ZoneWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const queue = this.waiting.get(domainId);
      const pending: Pending = { work: work as ZoneWork<unknown>, resolve: resolve as (v: unknown) => void, reject };
      if (queue) queue.push(pending);
      else {
        this.waiting.set(domainId, [pending]);
        // Not at once: on SQLite a whole transaction runs without yielding to the event loop, so the
        // first batch starts once the requests already read in this turn of the loop have joined it.
        setImmediate(() => void this.drain(domainId));
      }
    });
  }

  /** Runs the zone's batches until nobody waits; the zone's entry in `waiting` marks it busy meanwhile. */
  private async drain(domainId: number): Promise<void> {
    const queue = this.waiting.get(domainId)!;
    while (queue.length) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        await this.runBatch(domainId, batch);
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.waiting.delete(domainId);
  }

  private async runBatch(domainId: number, batch: Pending[]): Promise<void> {
    let outcomes: Outcome[] = [];
    let zone: DomainRow;
    let firstSerial = 0;
    try {
      zone = await inTransaction(this.db, async (trx) => {
        outcomes = [];
        const row = await bumpZone(trx, this.clock, domainId);
        if (!row) throw infraErrors.domainNotFound();
        firstSerial = Number(row.serial);
        for (const p of batch) {
          let write: () => Promise<ZoneEffect<unknown>>;
          try {
            write = await p.work(trx, row);
          } catch (err) {
            if (!(err instanceof InfraError)) throw err;
            outcomes.push({ ok: false, error: err });
            continue;
          }
          outcomes.push({ ok: true, effect: await write() });
        }
        const done = outcomes.filter((o) => o.ok).length;
        if (done === 0) throw NOTHING_DONE;
        if (done === 1) return row;
        // The serial moves on by one per change, as if each had been its own transaction.
        return await trx
          .updateTable('dns_domains')
          .set({ serial: sql<number>`serial + ${done - 1}` })
          .where('id', '=', domainId)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    } catch (err) {
      if (err === NOTHING_DONE) {
        outcomes.forEach((o, i) => batch[i].reject((o as { error: unknown }).error));
      } else if (batch.length > 1 && !(err instanceof InfraError)) {
        // A database error: whose it is shows when each change runs alone.
        for (const p of batch) {
          try {
            await this.runBatch(domainId, [p]);
          } catch (e) {
            p.reject(e);
          }
        }
      } else {
        for (const p of batch) p.reject(err);
      }
      return;
    }
    // In order: a record written by one change may be deleted by a later one.
    const upserts = new Map<number, RecordRow>();
    const deletes = new Set<number>();
    for (const o of outcomes) {
      if (!o.ok) continue;
      for (const row of o.effect.upserts ?? []) upserts.set(Number(row.id), row);
      for (const id of o.effect.deletes ?? []) {
        upserts.delete(id);
        deletes.add(id);
      }
    }
    await this.mirror.applyChange(zone.name, { domainId, firstSerial, serial: Number(zone.serial), upserts: upserts.entries(), deletes });
    outcomes.forEach((o, i) => (o.ok ? batch[i].resolve(o.effect.value) : batch[i].reject(o.error)));
  }
}

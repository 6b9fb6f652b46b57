// Keeps SQLite's full-text index of messages (messages_fts, fulltext.ts) in few segments.
//
// FTS5 writes every transaction's new rows as a small segment and merges segments of the same
// level four at a time ('automerge'). A server where each message is a transaction of its own so
// ends up with segments on many levels (21 segments on 7 levels after 145,000 messages), and a
// search reads the word's list in every one of them: the query takes 2.5 times as long as on one
// merged segment (94 µs against 37 µs in a plain better-sqlite3 measurement; the `chat` benchmark's
// page query, 94 µs against 60 µs: docs/decisions/chat-search.md). So, after messages were written, this
// task merges every segment into one with FTS5's own 'merge' command, in slices of a few
// milliseconds with the event loop free between them. PostgreSQL's GIN index needs nothing of the
// sort: the task does nothing there.
//
// The cost is a rewrite of the index (about 40 ms for 145,000 messages), so runs are spaced: at
// least `everyMs` apart, and at least twenty times the last run's length, which keeps the task
// under 5% of one core however large the index grows.
import { sql } from 'kysely';
import type { Database } from './database.js';
import type { Logger } from '../log.js';

export interface FulltextUpkeepOptions {
  /** The least time between two runs (tests: 0, nothing runs by itself; they call run()). */
  everyMs: number;
  /** Pages of merged index one slice writes: the larger, the longer the event loop is held. */
  pagesPerSlice: number;
}

const DEFAULTS: FulltextUpkeepOptions = { everyMs: 10_000, pagesPerSlice: 64 };

/** How one run went: how many merge slices it took, whether any merged something, and how long it took. */
export interface UpkeepRun {
  slices: number;
  merged: boolean;
  ms: number;
}

/** A bound on one run's slices, so writes arriving as fast as it merges cannot keep it going. */
const MAX_SLICES = 10_000;

export class FulltextUpkeep<S> {
  private readonly db: Database<S>;
  private readonly options: FulltextUpkeepOptions;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<UpkeepRun> | undefined;
  private stopped = false;
  /** The messages table's write generation when the last run ended: unmoved, there is nothing new to merge. */
  private mergedAt = -1;
  private lastMs = 0;

  private readonly log: Logger | undefined;

  constructor(db: Database<S>, options: Partial<FulltextUpkeepOptions> = {}, log?: Logger) {
    this.db = db;
    this.log = log;
    this.options = { ...DEFAULTS, ...options };
  }

  /** Starts the periodic runs (SQLite only, and only when everyMs > 0). */
  start(): void {
    if (this.db.engine !== 'sqlite' || this.options.everyMs <= 0 || this.stopped) return;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    if (this.db.writeGeneration('messages') !== this.mergedAt) {
      // A failed slice (a full disk, say) leaves the index as it was: searches stay right, only
      // slower, and the next run tries again.
      try {
        const run = await this.run();
        if (run.merged) this.log?.debug('full-text index merged', { slices: run.slices, ms: Math.round(run.ms) });
      } catch (err) {
        this.log?.warn('full-text index merge failed', { error: (err as Error).message });
      }
    }
    if (!this.stopped) this.schedule(Math.max(this.options.everyMs, 20 * this.lastMs));
  }

  /**
   * Merges the index's segments into one, a slice at a time; on PostgreSQL it does nothing. A
   * call while a run is going waits for that run.
   */
  run(): Promise<UpkeepRun> {
    this.running ??= this.merge().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async merge(): Promise<UpkeepRun> {
    const started = performance.now();
    if (this.db.engine !== 'sqlite') return { slices: 0, merged: false, ms: 0 };
    let slices = 0;
    let merged = false;
    const pages = this.options.pagesPerSlice;
    while (slices < MAX_SLICES && !this.stopped) {
      // A negative page count first puts every segment on one level, so segments of all levels
      // are merged together; the positive counts after it go on with that merge. Each slice is a
      // transaction of its own, so total_changes() before and after counts only its own work:
      // FTS5 makes at least two changes when it merged anything, fewer when nothing was left.
      const did = await this.db.transaction(async (trx) => {
        const before = (await sql<{ n: number }>`select total_changes() as n`.execute(trx)).rows[0].n;
        await sql`insert into messages_fts(messages_fts, rank) values ('merge', ${slices === 0 ? -pages : pages})`.execute(trx);
        const after = (await sql<{ n: number }>`select total_changes() as n`.execute(trx)).rows[0].n;
        return after - before >= 2;
      });
      slices++;
      if (!did) break;
      merged = true;
      // The event loop's turn: requests waiting run between slices.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.mergedAt = this.db.writeGeneration('messages');
    this.lastMs = performance.now() - started;
    return { slices, merged, ms: this.lastMs };
  }

  /** Stops the runs; resolves once a run under way has finished its slice. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}

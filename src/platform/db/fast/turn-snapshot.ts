// Fast path "read snapshots" (README.md): the direct reads of one event-loop turn share one SQLite
// read transaction. Bench: bench/fast/read-snapshot.ts.
import type BetterSqlite3 from 'better-sqlite3';

/**
 * Direct reads made in one turn of the event loop share one read transaction, ended by setImmediate
 * or by the next statement Kysely runs (every write, every transaction), whichever comes first.
 *
 * Why: outside a transaction SQLite takes and drops its file locks (fcntl system calls) for every
 * statement, which costs more than the point lookup itself (4.8 us against 2.0 us inside a
 * transaction on this machine). Under load one turn runs the reads of many requests.
 *
 * What a read sees is unchanged in kind: a committed state no older than the start of this turn,
 * never another caller's uncommitted rows (a Kysely transaction ends the snapshot before its BEGIN,
 * and while one is open direct reads step aside). The snapshot only reads, so ending it writes
 * nothing to the WAL, and holding it for one turn never holds a checkpoint back for long.
 */
export class TurnSnapshot {
  private readonly raw: BetterSqlite3.Database;
  private readonly beginStmt: BetterSqlite3.Statement;
  private readonly commitStmt: BetterSqlite3.Statement;
  private open = false;
  private readonly endSoon = () => this.end();

  constructor(raw: BetterSqlite3.Database) {
    this.raw = raw;
    this.beginStmt = raw.prepare('BEGIN');
    this.commitStmt = raw.prepare('COMMIT');
  }

  /** Opens the snapshot if needed; false when a transaction of Kysely's is open instead. */
  begin(): boolean {
    if (this.open) return true;
    if (this.raw.inTransaction) return false;
    this.beginStmt.run();
    this.open = true;
    setImmediate(this.endSoon);
    return true;
  }

  end(): void {
    if (!this.open) return;
    this.open = false;
    if (this.raw.inTransaction) this.commitStmt.run();
  }
}

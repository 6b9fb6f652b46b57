// The embedded engine: better-sqlite3 in WAL mode. A commit is in the WAL file (and so survives
// kill -9) when it returns; it reaches stable storage (and so survives power loss) when the WAL
// file is fsynced. synchronous=FULL would fsync inside every commit, on the one JavaScript thread,
// capping writes at a few hundred a second; instead commits run with synchronous=NORMAL and
// `synced()` fsyncs the WAL in the thread pool, once for every commit made before it started
// (group commit). Servers answer a request only after `synced()`.
import { systemClock, type Clock } from '../clock.js';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import { DatabaseError, wrap, type Database } from './database.js';
import { sqliteDirectReaders } from './fast/direct-read.js';
import { LiteralLimits } from './fast/literal-limits.js';
import { statementCache, type StatementCache } from './fast/statement-cache.js';
import { TurnSnapshot } from './fast/turn-snapshot.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../file-modes.js';

export function openSqlite<S>(file: string, clock: Clock = systemClock): Database<S> {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  // A new database file is made here, empty, for the owner alone: SQLite would make it 0644, and it
  // gives the -wal and -shm files the database file's mode. An existing file is left as it is.
  try {
    fs.closeSync(fs.openSync(file, 'wx', PRIVATE_FILE_MODE));
  } catch {
    // There already (or not creatable: SQLite's open below says why).
  }
  let raw: BetterSqlite3.Database;
  try {
    raw = new BetterSqlite3(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.pragma('foreign_keys = ON');
    raw.pragma('busy_timeout = 5000');
  } catch (err) {
    throw new DatabaseError(`cannot open SQLite database ${file}: ${(err as Error).message}`);
  }
  const flusher = new WalFlusher(`${file}-wal`);
  const snapshot = new TurnSnapshot(raw);
  const statements = reusingStatements(
    raw,
    () => flusher.markDirty(),
    () => snapshot.end(),
  );
  // The measured fast paths (fast/README.md): literal limits, the statement cache, direct reads in a
  // turn's snapshot with generated row builders.
  const kysely = new Kysely<S>({ dialect: new SqliteDialect({ database: statements }), plugins: [new LiteralLimits()] });
  return wrap('sqlite', file, kysely, async () => flusher.close(), clock, flusher, sqliteDirectReaders(raw, statements.cached, snapshot));
}

/** Group commit: one fsync of the WAL file covers every write made before it started. */
class WalFlusher {
  private readonly walPath: string;
  private fd: number | undefined;
  private dirty = false;
  private flushing: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(walPath: string) {
    this.walPath = walPath;
  }

  markDirty(): void {
    this.dirty = true;
  }

  durable(): boolean {
    return !this.dirty && this.flushing === undefined;
  }

  synced(): Promise<void> {
    if (!this.dirty) return this.flushing ?? Promise.resolve();
    if (!this.flushing) return (this.flushing = this.flush());
    // Writes made after the running flush began need the one after it; every waiter shares it.
    return (this.next ??= this.flushing.then(() => {
      this.next = undefined;
      return this.synced();
    }));
  }

  private async flush(): Promise<void> {
    this.dirty = false;
    try {
      if (this.fd === undefined) {
        this.fd = fs.openSync(this.walPath, 'r');
        // The WAL file's own directory entry must be durable too, the first time.
        const dir = fs.openSync(path.dirname(this.walPath), 'r');
        try {
          fs.fsyncSync(dir);
        } finally {
          fs.closeSync(dir);
        }
      }
      const fd = this.fd;
      await new Promise<void>((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
    } finally {
      this.flushing = undefined;
    }
  }

  async close(): Promise<void> {
    await this.synced().catch(() => {});
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}

/** Kysely's connection, on the kept statements (fast/statement-cache.ts), which the direct reads share. */
function reusingStatements(raw: BetterSqlite3.Database, onWrite: () => void, beforeKysely: () => void): SqliteDatabase & { cached: StatementCache } {
  const cached = statementCache(raw);
  return {
    close() {
      beforeKysely();
      raw.close();
    },
    prepare(sql) {
      beforeKysely();
      // Kysely opens transactions with a deferred BEGIN, which takes a read snapshot at the first
      // read; if another process (`keel admin` beside `keel serve`) commits before this transaction's
      // first write, that write fails at once ("database is locked", SQLITE_BUSY_SNAPSHOT: no busy
      // timeout can help). Taking the write lock at BEGIN makes the other writer wait instead. This
      // connection runs one transaction at a time anyway, so nothing here waits longer for it.
      const stmt = cached(sql === 'begin' ? 'begin immediate' : sql);
      // Anything that may write (INSERT ... RETURNING reads too, so `reader` is not the test), and
      // anything inside a transaction (its COMMIT counts as read-only), makes the next synced() flush.
      if (!stmt.readonly || raw.inTransaction) onWrite();
      return stmt;
    },
    cached,
  };
}

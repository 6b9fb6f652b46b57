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
import {
  Kysely, LimitNode, OffsetNode, SelectQueryNode, SqliteDialect, ValueNode, type KyselyPlugin, type OperationNode, type PluginTransformQueryArgs,
  type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type SqliteDatabase, type UnknownRow,
} from 'kysely';
import { DatabaseError, wrap, type Database } from './database.js';
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
  const statements = reusingStatements(raw, () => flusher.markDirty(), () => snapshot.end());
  const kysely = new Kysely<S>({ dialect: new SqliteDialect({ database: statements }), plugins: [new LiteralLimits()] });
  // Reads only (the caller compiled a select); never inside another request's open transaction.
  const outside = (sql: string, parameters: readonly unknown[]) => {
    if (!snapshot.begin()) return undefined;
    return objectRows(statements.cached(sql), parameters);
  };
  // Inside the transaction whose callback is running, which is the one open on the connection.
  const inside = (sql: string, parameters: readonly unknown[]) => (raw.inTransaction ? objectRows(statements.cached(sql), parameters) : undefined);
  return wrap('sqlite', file, kysely, async () => flusher.close(), clock, flusher, { outside, inside });
}

/** Makes one row object from what better-sqlite3 returned: the row's values, or the one value of a one-column select. */
type RowBuilder = (values: unknown) => Record<string, unknown>;

interface RowShape {
  /** One column: read with pluck(), each row is its bare value (cheaper still than an array). */
  single: boolean;
  build: RowBuilder;
}

// Module-level on purpose: both memoize pure compilation of immutable things (a prepared statement's
// column list, a row builder per list of column names), the same for every store; no store's state.
const shapes = new WeakMap<BetterSqlite3.Statement, RowShape>();
const buildersByColumns = new Map<string, RowBuilder>();

/**
 * A function that makes a row object in one object literal, generated once per list of column names
 * (JSON-quoted, so any name is safe; "__proto__" as a computed key, which makes an own property).
 * Assigning the columns one by one through a variable key goes through V8's megamorphic keyed store
 * for every column of every row; a literal is made from one fixed shape, and the rows of a statement
 * share it, so the code reading them stays monomorphic. A repeated name keeps its last value, as
 * assignment would.
 */
function rowBuilder(names: string[]): RowBuilder {
  const key = names.join('\u0000');
  let build = buildersByColumns.get(key);
  if (!build) {
    const value = (i: number) => (names.length === 1 ? 'v' : `v[${i}]`);
    const members = names.map((n, i) => `${n === '__proto__' ? `[${JSON.stringify(n)}]` : JSON.stringify(n)}: ${value(i)}`);
    build = new Function('v', `return { ${members.join(', ')} };`) as RowBuilder;
    buildersByColumns.set(key, build);
  }
  return build;
}

/**
 * The rows of a select as objects, built here from better-sqlite3's arrays: it builds an object row
 * property by property from C++, through a slow path of V8's, and for a page of a hundred rows that
 * costs more than SQLite's own work. better-sqlite3's raw() and pluck() modes are switched on only for
 * the one call. Column names are read once per statement: the schema does not change while serving
 * (migrations run at open).
 */
function objectRows(stmt: BetterSqlite3.Statement, parameters: readonly unknown[]): Record<string, unknown>[] {
  let shape = shapes.get(stmt);
  if (!shape) {
    const names = stmt.columns().map((c) => c.name);
    shapes.set(stmt, (shape = { single: names.length === 1, build: rowBuilder(names) }));
  }
  const { single, build } = shape;
  if (single) stmt.pluck(true);
  else stmt.raw(true);
  let rows: unknown[];
  try {
    rows = stmt.all(parameters);
  } finally {
    // The statement is shared with Kysely's driver, which expects objects.
    if (single) stmt.pluck(false);
    else stmt.raw(false);
  }
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) out[r] = build(rows[r]);
  return out;
}

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
class TurnSnapshot {
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

/**
 * Writes a select's LIMIT and OFFSET numbers into its SQL text instead of binding them. SQLite plans
 * with the value of a bound LIMIT and marks the statement to be prepared again whenever it is bound,
 * that is on every run: parsing and planning anew cost as much as a page query itself. Numbers are
 * all this inlines (a prepared query's stand-ins stay bound), so no text from outside reaches the SQL.
 */
class LiteralLimits implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (!SelectQueryNode.is(node) || (!node.limit && !node.offset)) return node;
    return {
      ...node,
      ...(node.limit && { limit: LimitNode.create(literal(node.limit.limit)) }),
      ...(node.offset && { offset: OffsetNode.create(literal(node.offset.offset)) }),
    };
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

function literal(value: OperationNode): OperationNode {
  return ValueNode.is(value) && Number.isSafeInteger(value.value) ? ValueNode.createImmediate(value.value) : value;
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

// Kysely prepares every query afresh; SQLite's parse and plan then cost about as much as running a
// point lookup. Kysely's SQL text for a query shape is stable (values are bound parameters), so the
// statements are kept by text and reused. Bounded, since IN lists make one shape many texts.
const STATEMENT_CACHE_SIZE = 500;

function reusingStatements(raw: BetterSqlite3.Database, onWrite: () => void, beforeKysely: () => void): SqliteDatabase & { cached(sql: string): BetterSqlite3.Statement } {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const cached = (sql: string) => {
    const hit = cache.get(sql);
    // A statement still being iterated (a streamed query) cannot run again until it finishes.
    const stmt = hit && !hit.busy ? hit : raw.prepare(sql);
    if (!hit) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
    }
    return stmt;
  };
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

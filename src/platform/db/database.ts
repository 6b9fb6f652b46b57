// One Database interface over two engines: SQLite (embedded default) and PostgreSQL.
// Handlers write one Kysely query that runs unchanged on both; engine-specific SQL stays in this folder.
import {
  AliasNode,
  Kysely,
  sql,
  TableNode,
  type CompiledQuery,
  type InsertQueryNode,
  type UpdateQueryNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type Transaction,
  type UnknownRow,
} from 'kysely';
import type { Clock } from '../clock.js';

export type Engine = 'sqlite' | 'postgres';

export interface Database<S> {
  readonly engine: Engine;
  /** Where the data lives, for messages (a file path or a URL without its password). */
  readonly location: string;
  readonly kysely: Kysely<S>;
  /** Runs fn in one transaction: everything it wrote is committed together, or nothing is. */
  transaction<T>(fn: (trx: Transaction<S>) => Promise<T>): Promise<T>;
  /**
   * Runs fn in one transaction that one node at a time may run for a given `lock` (set-up steps
   * several nodes starting together would race on): on PostgreSQL it first takes the advisory lock
   * of that number, held until the commit; SQLite runs one writing transaction at a time anyway.
   */
  exclusive<T>(lock: number, fn: (trx: Transaction<S>) => Promise<T>): Promise<T>;
  /** What in-process caches of this store keep (table-cache.ts): it lives and dies with the store. */
  readonly caches: StoreCaches;
  /**
   * Resolves once every write committed so far is on stable storage. Answers that acknowledge a
   * write wait for it; on SQLite many commits share one flush (group commit), on PostgreSQL a
   * commit is already durable.
   */
  synced(): Promise<void>;
  /**
   * True when synced() would have nothing to wait for: no write since the last flush and no flush
   * running. An answer can then be written at once, without a promise.
   */
  durable(): boolean;
  /**
   * Changes whenever a statement that may write starts or finishes through this handle, and whenever
   * a transaction ends. An in-process cache of rows notes it before reading and treats its entry as
   * stale once it moved; writes by other processes or nodes are not seen here.
   *
   * With a table, it moves only for statements that may write that table (an insert into it, an
   * update of it; any delete, raw statement or other kind, since foreign keys may cascade) and for
   * the end of a transaction that ran one: a cache of one table's rows is not emptied by every
   * write to the others. (No table has triggers; one that writes another table would have to be
   * counted here.)
   */
  writeGeneration(table?: string): number;
  close(): Promise<void>;
}

export class DatabaseError extends Error {}

/** Whether a write failed on a unique constraint (a concurrent writer got there first), on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export type Queryable<S> = Kysely<S> | Transaction<S>;

const READ_ONLY_RAW = /^\s*select\b/i;

function mayWrite(node: RootOperationNode | OperationNode): boolean {
  if (node.kind === 'SelectQueryNode') return false;
  // sql`...` run on its own: a plain select reads; anything else might write.
  if (node.kind === 'RawNode') return !READ_ONLY_RAW.test((node as { sqlFragments: readonly string[] }).sqlFragments[0] ?? '');
  return true;
}

/** The one table a writing statement may change, or null when that is not known (it may be any). */
function writtenTable(node: RootOperationNode | OperationNode): string | null {
  // A WITH clause may hold writes of its own; deletes may cascade through foreign keys.
  if ('with' in node && node.with) return null;
  let target: OperationNode | undefined;
  if (node.kind === 'InsertQueryNode') target = (node as InsertQueryNode).into;
  else if (node.kind === 'UpdateQueryNode') target = (node as UpdateQueryNode).table;
  if (target && AliasNode.is(target)) target = target.node;
  return target && TableNode.is(target) ? target.table.identifier.name : null;
}

/**
 * Counts writing statements as they start and again as they finish (a reader that began in between
 * saw the old row), so the generation moves past any read that could have missed the write; the
 * same per table (`everything` counts the statements whose table is not known).
 */
class WriteCounter implements KyselyPlugin {
  generation = 0;
  private everything = 0;
  private readonly tables = new Map<string, number>();
  private readonly running = new WeakMap<object, string | null>();
  private openTransactions = 0;
  /** Tables written while a transaction was open: moved again when one ends (its writes show from the commit). */
  private readonly inTransactions = new Set<string | null>();

  tableGeneration(table: string): number {
    return this.everything + (this.tables.get(table) ?? 0);
  }

  private moved(table: string | null): void {
    this.generation++;
    if (table === null) this.everything++;
    else this.tables.set(table, (this.tables.get(table) ?? 0) + 1);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (mayWrite(args.node)) {
      const table = writtenTable(args.node);
      this.moved(table);
      this.running.set(args.queryId, table);
      if (this.openTransactions > 0) this.inTransactions.add(table);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const table = this.running.get(args.queryId);
    if (table !== undefined) {
      this.running.delete(args.queryId);
      this.moved(table);
    }
    return args.result;
  }

  transactionStarted(): void {
    this.openTransactions++;
  }

  transactionEnded(): void {
    this.openTransactions--;
    this.generation++;
    // Which open transaction wrote what is not known here: every table any of them wrote moves.
    for (const table of this.inTransactions) this.moved(table);
    if (this.openTransactions === 0) this.inTransactions.clear();
  }
}

const ALREADY_DURABLE = Promise.resolve();

// Fast path "direct SQLite reads" (fast/README.md): the generic half here, SQLite's in fast/direct-read.ts.
/**
 * Runs a compiled read at once, bypassing Kysely's driver (its connection mutex and plugin hooks cost
 * several promise hops, as much as a point lookup itself); undefined when it may not (SQLite with a
 * transaction open on the one connection, whose uncommitted rows a bypassing read would see).
 */
export type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

/**
 * The direct readers of an engine: `outside` for the store's query builder, `inside` for the query
 * builder of a transaction of this handle while its callback runs. On SQLite's one connection that
 * transaction is the open one, so a read there sees its own writes, as the same read through Kysely.
 */
export interface DirectReaders {
  outside: DirectReader;
  inside: DirectReader;
}

/**
 * What a query builder of a store carries, in a field of its own (LINK) set by wrap(): the direct
 * reader it may use, the store it belongs to (absent for a transaction's builder, whose reads must
 * not be served from a cache), and the store's builder (for a transaction's, the one it compiles
 * like). Kept on the builders themselves, not in module-level maps, so each store's state is its own.
 */
interface BuilderLink {
  readonly direct: DirectReader | undefined;
  readonly store: Database<unknown> | undefined;
  readonly root: object;
}

const LINK = Symbol('keel store link');

type Linked = { [LINK]?: BuilderLink };

function linkOf(builder: object): BuilderLink | undefined {
  return (builder as Linked)[LINK];
}

/** The direct reader of a store's query builder (the `kysely` of a Database), if its engine has one. */
export function directReaderOf(kysely: object): DirectReader | undefined {
  return linkOf(kysely)?.direct;
}

/**
 * Runs a compiled query the caller knows only reads (a select, also one written as raw SQL): on the
 * direct reader when the store has one and it may run now, else through Kysely. `parameters` replace
 * the query's own (a prepared query's values for this run).
 */
// biome-ignore lint/suspicious/noExplicitAny: any store's handle: Kysely's own type for a schema it need not know
export function runRead<R>(db: Kysely<any> | Transaction<any>, query: CompiledQuery<R>, parameters: readonly unknown[] = query.parameters): Promise<R[]> {
  let rows: unknown[] | undefined;
  try {
    rows = directReaderOf(db)?.(query.sql, parameters);
  } catch (err) {
    return Promise.reject(err);
  }
  if (rows) return Promise.resolve(rows as R[]);
  const run = parameters === query.parameters ? query : { ...query, parameters };
  return db.executeQuery<R>(run).then((r) => r.rows);
}

export function wrap<S>(
  engine: Engine,
  location: string,
  kysely: Kysely<S>,
  onClose: () => Promise<void>,
  clock: Clock,
  flushes?: Pick<Database<S>, 'synced' | 'durable'>,
  direct?: DirectReaders,
): Database<S> {
  const writes = new WriteCounter();
  const counted = kysely.withPlugin(writes);
  // A transaction's builder: the direct reader only while its callback runs (the transaction is
  // open, and holds the connection, until it returns), never the store (no cached reads).
  const inside: BuilderLink = { direct: direct?.inside, store: undefined, root: counted };
  const ended: BuilderLink = { direct: undefined, store: undefined, root: counted };
  const transaction = async <T>(fn: (trx: Transaction<S>) => Promise<T>, lock?: number): Promise<T> => {
    writes.transactionStarted();
    try {
      return await counted.transaction().execute(async (trx) => {
        (trx as Linked)[LINK] = inside;
        try {
          if (lock !== undefined && engine === 'postgres') await sql`select pg_advisory_xact_lock(${lock})`.execute(trx);
          return await fn(trx);
        } finally {
          (trx as Linked)[LINK] = ended;
        }
      });
    } finally {
      // Others see a transaction's writes only from its commit on, so they are new again now.
      writes.transactionEnded();
    }
  };
  const store: Database<S> = {
    engine,
    location,
    kysely: counted,
    transaction: (fn) => transaction(fn),
    exclusive: (lock, fn) => transaction(fn, lock),
    caches: new StoreCaches(clock),
    writeGeneration: (table) => (table === undefined ? writes.generation : writes.tableGeneration(table)),
    synced: flushes ? () => flushes.synced() : () => ALREADY_DURABLE,
    durable: flushes ? () => flushes.durable() : () => true,
    async close() {
      await kysely.destroy();
      await onClose();
    },
  };
  (counted as Linked)[LINK] = { direct: direct?.outside, store: store as Database<unknown>, root: counted };
  return store;
}

/**
 * For prepared queries (fast/prepared.ts).
 * The store's query builder for a transaction of it (a builder itself otherwise): the two compile a
 * query to the same SQL, so what was compiled for one serves the other.
 */
export function rootBuilder<T extends object>(db: T): T {
  return (linkOf(db)?.root as T | undefined) ?? db;
}

/** What a cache needs of a store: its write generations. */
export type Generations = Pick<Database<unknown>, 'writeGeneration'>;

/**
 * The store whose query builder this is (a Database's `kysely`), for caches that follow its write
 * generations; undefined for a transaction, whose reads must not be served from a cache.
 */
export function storeOf(kysely: object): Database<unknown> | undefined {
  return linkOf(kysely)?.store;
}

/**
 * The state caches keep for one store, on the store: a cache defined once for every store (a
 * TableCache, table-cache.ts) keeps its entries for this store here, made on first use, and reads
 * the time from the clock the store was opened with (the composition root's).
 */
export class StoreCaches {
  readonly clock: Clock;
  private readonly byCache = new Map<object, unknown>();

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** What `cache` keeps for this store, if it kept anything yet. */
  get<T>(cache: object): T | undefined {
    return this.byCache.get(cache) as T | undefined;
  }

  /** Keeps `state` as what `cache` keeps for this store; returns it. */
  set<T>(cache: object, state: T): T {
    this.byCache.set(cache, state);
    return state;
  }
}

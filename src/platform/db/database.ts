// One Database interface over two engines: SQLite (embedded default) and PostgreSQL.
// Handlers write one Kysely query that runs unchanged on both; engine-specific SQL stays in this folder.
import { Kysely, type CompiledQuery, type KyselyPlugin, type OperationNode, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type Transaction, type UnknownRow } from 'kysely';

export type Engine = 'sqlite' | 'postgres';

export interface Database<S> {
  readonly engine: Engine;
  /** Where the data lives, for messages (a file path or a URL without its password). */
  readonly location: string;
  readonly kysely: Kysely<S>;
  /** Runs fn in one transaction: everything it wrote is committed together, or nothing is. */
  transaction<T>(fn: (trx: Transaction<S>) => Promise<T>): Promise<T>;
  /**
   * Resolves once every write committed so far is on stable storage. Answers that acknowledge a
   * write wait for it; on SQLite many commits share one flush (group commit), on PostgreSQL a
   * commit is already durable.
   */
  synced(): Promise<void>;
  /**
   * Changes whenever a statement that may write starts or finishes through this handle, and whenever
   * a transaction ends. An in-process cache of rows notes it before reading and treats its entry as
   * stale once it moved; writes by other processes or nodes are not seen here.
   */
  writeGeneration(): number;
  close(): Promise<void>;
}

export class DatabaseError extends Error {}

export type Queryable<S> = Kysely<S> | Transaction<S>;

const READ_ONLY_RAW = /^\s*select\b/i;

function mayWrite(node: RootOperationNode | OperationNode): boolean {
  if (node.kind === 'SelectQueryNode') return false;
  // sql`...` run on its own: a plain select reads; anything else might write.
  if (node.kind === 'RawNode') return !READ_ONLY_RAW.test((node as { sqlFragments: readonly string[] }).sqlFragments[0] ?? '');
  return true;
}

/**
 * Counts writing statements as they start and again as they finish (a reader that began in between
 * saw the old row), so the generation moves past any read that could have missed the write.
 */
class WriteCounter implements KyselyPlugin {
  generation = 0;
  private readonly running = new WeakSet<object>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (mayWrite(args.node)) {
      this.generation++;
      this.running.add(args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.running.delete(args.queryId)) this.generation++;
    return args.result;
  }
}

const ALREADY_DURABLE = Promise.resolve();

/**
 * Runs a compiled read at once, bypassing Kysely's driver (its connection mutex and plugin hooks cost
 * several promise hops, as much as a point lookup itself); undefined when it may not (SQLite with a
 * transaction open on the one connection, whose uncommitted rows a bypassing read would see).
 */
export type DirectReader = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

const directReaders = new WeakMap<object, DirectReader>();

/** The direct reader of a store's query builder (the `kysely` of a Database), if its engine has one. */
export function directReaderOf(kysely: object): DirectReader | undefined {
  return directReaders.get(kysely);
}

/**
 * Runs a compiled query the caller knows only reads (a select, also one written as raw SQL): on the
 * direct reader when the store has one and it may run now, else through Kysely.
 */
export async function runRead<R>(db: Kysely<any> | Transaction<any>, query: CompiledQuery<R>): Promise<R[]> {
  const rows = directReaderOf(db)?.(query.sql, query.parameters);
  if (rows) return rows as R[];
  return (await db.executeQuery<R>(query)).rows;
}

export function wrap<S>(
  engine: Engine,
  location: string,
  kysely: Kysely<S>,
  onClose: () => Promise<void>,
  synced: () => Promise<void> = () => ALREADY_DURABLE,
  directReader?: DirectReader,
): Database<S> {
  const writes = new WriteCounter();
  const counted = kysely.withPlugin(writes);
  if (directReader) directReaders.set(counted, directReader);
  return {
    engine,
    location,
    kysely: counted,
    async transaction(fn) {
      try {
        return await counted.transaction().execute(fn);
      } finally {
        // Others see a transaction's writes only from its commit on, so they are new again now.
        writes.generation++;
      }
    },
    writeGeneration: () => writes.generation,
    synced,
    async close() {
      await kysely.destroy();
      await onClose();
    },
  };
}

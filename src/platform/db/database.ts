// One Database interface over two engines: SQLite (embedded default) and PostgreSQL.
// Handlers write one Kysely query that runs unchanged on both; engine-specific SQL stays in this folder.
import { Kysely, type Transaction } from 'kysely';

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
  close(): Promise<void>;
}

export class DatabaseError extends Error {}

export type Queryable<S> = Kysely<S> | Transaction<S>;

const ALREADY_DURABLE = Promise.resolve();

export function wrap<S>(
  engine: Engine,
  location: string,
  kysely: Kysely<S>,
  onClose: () => Promise<void>,
  synced: () => Promise<void> = () => ALREADY_DURABLE,
): Database<S> {
  return {
    engine,
    location,
    kysely,
    transaction: (fn) => kysely.transaction().execute(fn),
    synced,
    async close() {
      await kysely.destroy();
      await onClose();
    },
  };
}

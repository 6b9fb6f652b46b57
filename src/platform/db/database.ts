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
  close(): Promise<void>;
}

export class DatabaseError extends Error {}

export type Queryable<S> = Kysely<S> | Transaction<S>;

export function wrap<S>(engine: Engine, location: string, kysely: Kysely<S>, onClose: () => Promise<void>): Database<S> {
  return {
    engine,
    location,
    kysely,
    transaction: (fn) => kysely.transaction().execute(fn),
    async close() {
      await kysely.destroy();
      await onClose();
    },
  };
}

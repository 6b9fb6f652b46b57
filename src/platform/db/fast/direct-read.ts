// Fast path "direct SQLite reads" (README.md): SQLite's side of database.ts's DirectReaders, which run
// a compiled select on the connection without Kysely's driver. Bench: bench/fast/direct-read.ts.
import type BetterSqlite3 from 'better-sqlite3';
import type { DirectReaders } from '../database.js';
import { objectRows } from './row-builders.js';
import type { StatementCache } from './statement-cache.js';
import type { TurnSnapshot } from './turn-snapshot.js';

/**
 * `outside` reads in the turn's snapshot, and steps aside (undefined: the caller goes through Kysely)
 * while a transaction of Kysely's is open on the one connection, whose uncommitted rows it would see.
 * `inside` serves the transaction whose callback is running, which is the one open on the connection,
 * so it sees that transaction's own writes, as the same read through Kysely would.
 */
export function sqliteDirectReaders(raw: BetterSqlite3.Database, statements: StatementCache, snapshot: TurnSnapshot): DirectReaders {
  return {
    outside: (sql, parameters) => (snapshot.begin() ? objectRows(statements(sql), parameters) : undefined),
    inside: (sql, parameters) => (raw.inTransaction ? objectRows(statements(sql), parameters) : undefined),
  };
}

// Fast path "statement cache" (README.md): SQLite statements kept by their SQL text and reused, where
// Kysely's driver would prepare every query afresh. Bench: bench/fast/statement-cache.ts.
import type BetterSqlite3 from 'better-sqlite3';

// Kysely prepares every query afresh; SQLite's parse and plan then cost about as much as running a
// point lookup. Kysely's SQL text for a query shape is stable (values are bound parameters), so the
// statements are kept by text and reused. Bounded, since IN lists make one shape many texts.
export const STATEMENT_CACHE_SIZE = 500;

/** The connection's statement for `sql`: the kept one when it is free, else a new one (kept if none was). */
export type StatementCache = (sql: string) => BetterSqlite3.Statement;

export function statementCache(raw: BetterSqlite3.Database, size = STATEMENT_CACHE_SIZE): StatementCache {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return (sql) => {
    const hit = cache.get(sql);
    // A statement still being iterated (a streamed query) cannot run again until it finishes.
    const stmt = hit && !hit.busy ? hit : raw.prepare(sql);
    if (!hit) {
      if (cache.size >= size) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}

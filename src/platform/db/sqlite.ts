// The embedded engine: better-sqlite3 in WAL mode with synchronous=FULL, so a commit that was
// acknowledged is on disk before the answer leaves (it survives kill -9 and power loss).
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import { DatabaseError, wrap, type Database } from './database.js';

export function openSqlite<S>(file: string): Database<S> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let raw: BetterSqlite3.Database;
  try {
    raw = new BetterSqlite3(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.pragma('foreign_keys = ON');
    raw.pragma('busy_timeout = 5000');
  } catch (err) {
    throw new DatabaseError(`cannot open SQLite database ${file}: ${(err as Error).message}`);
  }
  const kysely = new Kysely<S>({ dialect: new SqliteDialect({ database: reusingStatements(raw) }) });
  return wrap('sqlite', file, kysely, async () => {});
}

// Kysely prepares every query afresh; SQLite's parse and plan then cost about as much as running a
// point lookup. Kysely's SQL text for a query shape is stable (values are bound parameters), so the
// statements are kept by text and reused. Bounded, since IN lists make one shape many texts.
const STATEMENT_CACHE_SIZE = 500;

function reusingStatements(raw: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => raw.close(),
    prepare(sql) {
      const cached = cache.get(sql);
      // A statement still being iterated (a streamed query) cannot run again until it finishes.
      if (cached && !cached.busy) return cached;
      const stmt = raw.prepare(sql);
      if (!cached) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

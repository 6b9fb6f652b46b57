// The embedded engine: better-sqlite3 in WAL mode with synchronous=FULL, so a commit that was
// acknowledged is on disk before the answer leaves (it survives kill -9 and power loss).
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
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
  const kysely = new Kysely<S>({ dialect: new SqliteDialect({ database: raw }) });
  return wrap('sqlite', file, kysely, async () => {});
}

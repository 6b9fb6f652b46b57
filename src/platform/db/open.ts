// Opens the engine the configuration asks for and brings its schema up to date.
import path from 'node:path';
import type { Database } from './database.js';
import { migrate, type Migration } from './migrate.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

/** The SQLite database file of a data dir (its -wal and -shm files lie beside it). */
export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, 'keel.sqlite');
}

export async function openDatabase<S>(opts: { dataDir: string; databaseUrl?: string; migrations: Migration[] }): Promise<Database<S>> {
  const db = opts.databaseUrl
    ? await openPostgres<S>(opts.databaseUrl)
    : openSqlite<S>(sqliteFile(opts.dataDir));
  try {
    await migrate(db, opts.migrations);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}

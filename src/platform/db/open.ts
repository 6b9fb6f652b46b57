// Opens the engine the configuration asks for and brings its schema up to date.
import path from 'node:path';
import type { Database } from './database.js';
import { migrate, type Migration } from './migrate.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

export async function openDatabase<S>(opts: { dataDir: string; databaseUrl?: string; migrations: Migration[] }): Promise<Database<S>> {
  const db = opts.databaseUrl
    ? await openPostgres<S>(opts.databaseUrl)
    : openSqlite<S>(path.join(opts.dataDir, 'keel.sqlite'));
  try {
    await migrate(db, opts.migrations);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}

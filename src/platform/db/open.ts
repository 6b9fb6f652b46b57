// Opens the engine the configuration asks for and brings its schema up to date.
import path from 'node:path';
import type { Clock } from '../clock.js';
import type { Database } from './database.js';
import { migrate, type Migration } from './migrate.js';
import { openPostgres } from './postgres.js';
import { openSqlite } from './sqlite.js';

/** The SQLite database file of a data dir (its -wal and -shm files lie beside it). */
export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, 'keel.sqlite');
}

/** `clock` is what the store's caches read the time from (default: the system's). */
export async function openDatabase<S>(opts: { dataDir: string; databaseUrl?: string; migrations: readonly Migration[]; clock?: Clock }): Promise<Database<S>> {
  const db = opts.databaseUrl ? await openPostgres<S>(opts.databaseUrl, opts.clock) : openSqlite<S>(sqliteFile(opts.dataDir), opts.clock);
  try {
    await migrate(db, opts.migrations);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}

/** Opens the store a configuration names, its schema brought up to date (the composition root's). */
export type OpenStore = <S>(config: { dataDir: string; databaseUrl?: string }) => Promise<Database<S>>;

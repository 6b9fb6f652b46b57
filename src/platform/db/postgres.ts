// The production engine: PostgreSQL through pg's pool.
import { systemClock, type Clock } from '../clock.js';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { DatabaseError, wrap, type Database } from './database.js';

// BIGINT ids and unix times come back as JS numbers (exact below 2^53), as on SQLite.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

export async function openPostgres<S>(url: string, clock: Clock = systemClock): Promise<Database<S>> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  const kysely = new Kysely<S>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(kysely);
  } catch (err) {
    await kysely.destroy().catch(() => {});
    throw new DatabaseError(`cannot reach PostgreSQL at ${redactUrl(url)}: ${(err as Error).message}`);
  }
  return wrap('postgres', redactUrl(url), kysely, async () => {}, clock);
}

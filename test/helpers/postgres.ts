// PostgreSQL for tests: each test gets a database of its own, dropped afterwards. Without a
// reachable server the PostgreSQL half of a test is skipped with the reason (CI requires it).
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.KEEL_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REQUIRED = process.env.KEEL_TEST_REQUIRE_POSTGRES === '1';

let probe: Promise<string | null> | undefined;

/** Null when PostgreSQL can be used; otherwise why not. Throws in CI, where it must be there. */
export function postgresUnavailable(): Promise<string | null> {
  probe ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('select 1');
      return null;
    } catch (err) {
      const why = `PostgreSQL is not reachable at ${ADMIN_URL} (${(err as Error).message}); set KEEL_TEST_POSTGRES_URL to run the PostgreSQL half of the tests`;
      if (REQUIRED) throw new Error(why);
      return why;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return probe;
}

export interface TempDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createTempDatabase(): Promise<TempDatabase> {
  const name = `keel_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

// Prepared queries (src/platform/db/fast/README.md): a select built and compiled by Kysely once and
// run with new values, against building and compiling it on every run; both run on the direct reader.
import type { Kysely } from 'kysely';
import { runRead } from '../../src/platform/db/database.js';
import { preparedQuery } from '../../src/platform/db/fast/prepared.js';
import type { Benchmark } from '../lib.js';
import { compare, itemId, withSqlite, type BenchTables } from '../micro.js';

const COLUMNS = ['id', 'realm_id', 'name', 'email', 'role', 'active', 'created', 'note', 'score'] as const;

function byRealmAndId(db: Kysely<BenchTables>, realmId: number, id: number) {
  return db.selectFrom('items').select(COLUMNS).where('realm_id', '=', realmId).where('id', '=', id);
}

export const benchmark: Benchmark = {
  name: 'fast/prepared',
  summary: 'point select of nine columns: preparedQuery vs Kysely build + compile per run (both through runRead), SQLite',
  run: () =>
    withSqlite(async (store) => {
      const db = store.kysely;
      const prepared = preparedQuery(byRealmAndId);
      return compare({
        unit: 'reads',
        plain: (i) => runRead(db, byRealmAndId(db, itemId(i) % 10, itemId(i)).compile()),
        fast: (i) => prepared(db, itemId(i) % 10, itemId(i)),
      });
    }),
};

// Direct SQLite reads (src/platform/db/fast/README.md): a compiled point select run on the connection
// (runRead: the direct reader, inside the turn's read snapshot) against the same query through
// Kysely's driver (its connection mutex, plugin hooks and promise hops, and a statement of its own).
import { runRead } from '../../src/platform/db/database.js';
import type { Benchmark } from '../lib.js';
import { compare, itemId, withSqlite } from '../micro.js';

export const benchmark: Benchmark = {
  name: 'fast/direct-read',
  summary: 'point select by id: runRead (direct reader) vs Kysely executeQuery, same compiled query, SQLite',
  run: () =>
    withSqlite(async (store) => {
      const db = store.kysely;
      const query = db.selectFrom('items').selectAll().where('id', '=', 1).compile();
      return compare({
        unit: 'reads',
        plain: (i) => db.executeQuery({ ...query, parameters: [itemId(i)] }),
        fast: (i) => runRead(db, query, [itemId(i)]),
        detail: '20 reads per event-loop turn; includes the turn snapshot (fast/read-snapshot alone)',
      });
    }),
};

// Statement cache (src/platform/db/fast/README.md): a Kysely-compiled point select run on the
// statement kept for its SQL text, against preparing it afresh on every run as Kysely's driver would.
import { statementCache } from '../../src/platform/db/fast/statement-cache.js';
import type { Benchmark } from '../lib.js';
import { compare, itemId, withSqlite } from '../micro.js';

export const benchmark: Benchmark = {
  name: 'fast/statement-cache',
  summary: 'point select of nine columns by realm and id: kept statement vs prepare per run, SQLite',
  run: () =>
    withSqlite(async (store, raw) => {
      const text = store.kysely.selectFrom('items').selectAll().where('realm_id', '=', 1).where('id', '=', 1).compile().sql;
      const cached = statementCache(raw);
      return compare({
        unit: 'reads',
        plain: (i) => raw.prepare(text).get(itemId(i) % 10, itemId(i)),
        fast: (i) => cached(text).get(itemId(i) % 10, itemId(i)),
      });
    }),
};

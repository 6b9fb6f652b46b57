// Generated row builders (src/platform/db/fast/README.md): a page of 100 nine-column rows taken from
// better-sqlite3 as arrays and made into objects by one generated literal (objectRows), against
// better-sqlite3's own object rows, on the same statement.
import { objectRows } from '../../src/platform/db/fast/row-builders.js';
import type { Benchmark } from '../lib.js';
import { compare, withSqlite } from '../micro.js';

export const benchmark: Benchmark = {
  name: 'fast/row-builders',
  summary: 'a page of 100 rows x 9 columns: objectRows vs better-sqlite3 object rows, same statement',
  run: () =>
    withSqlite(async (_store, raw) => {
      const stmt = raw.prepare('select * from items where realm_id = ? order by id desc limit 100');
      return compare({
        unit: 'pages',
        plain: (i) => stmt.all(i % 10),
        fast: (i) => objectRows(stmt, [i % 10]),
      });
    }),
};

// Literal limits (src/platform/db/fast/README.md): a select compiled with the LiteralLimits plugin
// (LIMIT written into the SQL) against the same select with its LIMIT bound, each on one statement
// prepared once, rows made by objectRows as a direct read does. The select is the shape of Chat's
// "message before this one in the conversation" (events/notices.ts): LIMIT 1, newest first. SQLite
// prepares the bound one again on every run, a fixed cost: a page of 100 rows hides it in its own.
import { Kysely, SqliteDialect } from 'kysely';
import { LiteralLimits } from '../../src/platform/db/fast/literal-limits.js';
import { objectRows } from '../../src/platform/db/fast/row-builders.js';
import type { Benchmark } from '../lib.js';
import { compare, itemId, withSqlite, type BenchTables } from '../micro.js';

export const benchmark: Benchmark = {
  name: 'fast/literal-limits',
  summary: 'the row before an id in a realm (order by id desc limit 1): LIMIT 1 in the SQL vs LIMIT bound, prepared once each, SQLite',
  run: () =>
    withSqlite(async (_store, raw) => {
      // Compiling needs a dialect, never a connection: nothing runs through these.
      const bound = new Kysely<BenchTables>({ dialect: new SqliteDialect({ database: raw }) });
      const literal = bound.withPlugin(new LiteralLimits());
      const page = (db: Kysely<BenchTables>) => db.selectFrom('items').select('id').where('realm_id', '=', 3).where('id', '<', 5000).orderBy('id', 'desc').limit(1).compile();
      const plain = page(bound);
      const fast = page(literal);
      if (!/limit \?/.test(plain.sql) || !/limit 1$/.test(fast.sql)) throw new Error(`unexpected SQL: ${plain.sql} / ${fast.sql}`);
      const plainStmt = raw.prepare(plain.sql);
      const fastStmt = raw.prepare(fast.sql);
      return compare({
        unit: 'reads',
        plain: (i) => objectRows(plainStmt, [i % 10, itemId(i), 1]),
        fast: (i) => objectRows(fastStmt, [i % 10, itemId(i)]),
      });
    }),
};

// Read caches (src/platform/db/fast/README.md): a row served from a ReadCache (a hit costs no promise,
// as the credential caches use it) against the prepared point read it saves, over 100 hot keys.
import { systemClock } from '../../src/platform/clock.js';
import { ReadCache } from '../../src/platform/db/fast/read-cache.js';
import { preparedQuery } from '../../src/platform/db/fast/prepared.js';
import type { Benchmark } from '../lib.js';
import { compare, withSqlite, type BenchTables, type Item } from '../micro.js';
import type { Kysely } from 'kysely';

const HOT_KEYS = 100;

export const benchmark: Benchmark = {
  name: 'fast/read-cache',
  summary: `a row by id among ${HOT_KEYS} hot ids: ReadCache peek (loaded on a miss) vs the prepared point read, SQLite`,
  run: () =>
    withSqlite(async (store) => {
      const db = store.kysely;
      const byId = preparedQuery((q: Kysely<BenchTables>, id: number) => q.selectFrom('items').selectAll().where('id', '=', id));
      const cache = new ReadCache<Item>(store, systemClock);
      const load = (id: number) => () => byId(db, id).then((rows) => rows[0]);
      return compare({
        unit: 'reads',
        plain: (i) => byId(db, (i % HOT_KEYS) + 1),
        fast: (i) => {
          const id = (i % HOT_KEYS) + 1;
          return cache.peek(String(id)) ?? cache.get(String(id), load(id));
        },
        detail: `entries live ${2} s (READ_CACHE_TTL_MS) with no writes`,
      });
    }),
};

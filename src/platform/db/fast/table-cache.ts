// Fast path "read caches" (README.md), per table. Bench: bench/fast/read-cache.ts.
// Values derived from a few tables (a realm's linkifiers, its alert words, group membership), kept
// per store until this node writes one of those tables (Database.writeGeneration(table)) or
// READ_CACHE_TTL_MS passes, the bound for other nodes' writes. A read through a transaction's query
// builder (one storeOf does not know) always loads afresh: it must see the transaction's own writes.
import { systemClock } from '../../clock.js';
import { storeOf, type Generations } from '../database.js';
import { ReadCache } from './read-cache.js';

export class TableCache<V> {
  private readonly tables: readonly string[];
  private readonly caches = new WeakMap<Generations, ReadCache<{ value: V }>>();

  constructor(...tables: string[]) {
    this.tables = tables;
  }

  /** The value kept for `key` in `db`'s store, else what `load` reads (then kept). */
  async get(db: object, key: string, load: () => Promise<V>): Promise<V> {
    const store = storeOf(db);
    if (!store) return load();
    let cache = this.caches.get(store);
    if (!cache) {
      const tables = this.tables;
      // Each table's generation only grows, so their sum moves whenever any of them does.
      const writeGeneration = () => tables.reduce((n, t) => n + store.writeGeneration(t), 0);
      this.caches.set(store, (cache = new ReadCache({ writeGeneration }, systemClock)));
    }
    return (await cache.get(key, async () => ({ value: await load() }))).value;
  }
}

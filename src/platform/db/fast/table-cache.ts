// Fast path "read caches" (README.md), per table. Bench: bench/fast/read-cache.ts.
// Values derived from a few tables (a realm's linkifiers, its alert words, group membership), kept
// per store until this node writes one of those tables (Database.writeGeneration(table)) or
// READ_CACHE_TTL_MS passes, the bound for other nodes' writes. A read through a transaction's query
// builder (one storeOf does not know) always loads afresh: it must see the transaction's own writes.
//
// A TableCache is defined once, at module level, by the tables it follows; it holds no entries itself.
// Each store keeps this cache's entries in its own StoreCaches (database.ts), timed by the clock the
// store was opened with: nothing outlives the store, and two stores never share an entry.
import type { Clock } from '../../clock.js';
import { storeOf, type Generations } from '../database.js';
import { ReadCache } from './read-cache.js';

export class TableCache<V> {
  private readonly tables: readonly string[];

  constructor(...tables: string[]) {
    this.tables = tables;
  }

  /** The value kept for `key` in `db`'s store, else what `load` reads (then kept). */
  async get(db: object, key: string, load: () => Promise<V>): Promise<V> {
    const store = storeOf(db);
    if (!store) return load();
    const cache = store.caches.get<ReadCache<{ value: V }>>(this) ?? store.caches.set(this, this.cacheFor(store));
    return (await cache.get(key, async () => ({ value: await load() }))).value;
  }

  /** This cache's entries for one store, timed by the store's clock. */
  private cacheFor(store: Generations & { caches: { clock: Clock } }): ReadCache<{ value: V }> {
    const tables = this.tables;
    // Each table's generation only grows, so their sum moves whenever any of them does.
    const writeGeneration = () => tables.reduce((n, t) => n + store.writeGeneration(t), 0);
    return new ReadCache({ writeGeneration }, store.caches.clock);
  }
}

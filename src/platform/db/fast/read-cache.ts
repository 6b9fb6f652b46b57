// Fast path "read caches" (README.md). Bench: bench/fast/read-cache.ts.
// An in-process cache of values read from the store (authenticated principals, the realm row), for
// reads every request would otherwise repeat. An entry dies as soon as this node writes anything
// through the store handle (Database.writeGeneration moves) and after a short TTL, which bounds how
// long a change made by another node (another handle) may go unseen.
import type { Clock } from '../../clock.js';

/** How long another node's change may go unseen by a node that did not write in between. */
export const READ_CACHE_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

interface Entry<V> {
  value: V;
  generation: number;
  expires: number;
}

/** When a value was read: the store's write generation then, and when the value expires. */
export interface ReadStamp {
  generation: number;
  expires: number;
}

export interface ReadCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
}

/** Keys are strings, or numbers where a hot path looks up many entries at once (no string built or hashed). */
export class ReadCache<V extends object, K extends string | number = string> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly source: { writeGeneration(): number };
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(source: { writeGeneration(): number }, clock: Clock, options: ReadCacheOptions = {}) {
    this.source = source;
    this.clock = clock;
    this.ttlMs = options.ttlMs ?? READ_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? MAX_ENTRIES;
  }

  /** The live entry for `key`, without reading the store (so a hit costs no promise). */
  peek(key: K): V | undefined {
    return this.live(key, this.source.writeGeneration(), this.clock.now());
  }

  /** peek of many keys (a page of messages), with the store's generation and the time read once. */
  peekMany(keys: readonly K[]): (V | undefined)[] {
    const generation = this.source.writeGeneration();
    const now = this.clock.now();
    return keys.map((key) => this.live(key, generation, now));
  }

  private live(key: K, generation: number, now: number): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.generation === generation && hit.expires > now) return hit.value;
    this.entries.delete(key);
    return undefined;
  }

  /**
   * The cached value, else what `load` reads (kept when it is not null or undefined: a refusal is
   * never cached, so it always goes back to the store). Values are frozen, since every request that
   * hits the entry shares them.
   */
  async get<R extends V | null | undefined>(key: K, load: () => Promise<R>): Promise<R> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit as R;
    // Noted before reading: a write that lands while the read runs leaves the entry stale at once.
    const stamp = this.stamp();
    const value = await load();
    if (value === null || value === undefined) {
      this.entries.delete(key);
      return value;
    }
    this.set(key, value, stamp);
    return value;
  }

  /**
   * The store's state now, to take before reading values that go in with `set` (a batch read of
   * many keys at once, where `get` would read them one by one).
   */
  stamp(): ReadStamp {
    return { generation: this.source.writeGeneration(), expires: this.clock.now() + this.ttlMs };
  }

  /** Keeps a value read after `stamp` was taken (stale at once if the store was written since). */
  set(key: K, value: V, stamp: ReadStamp): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value: Object.freeze(value) as V, generation: stamp.generation, expires: stamp.expires });
  }

  clear(): void {
    this.entries.clear();
  }
}

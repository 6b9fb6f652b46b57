// What a reader's GET /messages needs of the store besides the messages themselves: the narrow built
// into SQL (its channel looked up, access checked), the channels whose shared history the reader may
// read, and the reader's subscription spans. A client fetching page after page (or many clients of
// one user) would read these again for every request; they are kept in ReadCaches, so any write
// through the store handle, or READ_CACHE_TTL_MS, ends them and nothing stale is used.
// A user of the measured fast paths: read caches (platform/db/fast/README.md).
import type { Database } from '../../platform/db/database.js';
import type { Clock } from '../../platform/clock.js';
import { ReadCache } from '../../platform/db/fast/read-cache.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { buildNarrow, readNarrow, type NarrowQuery, type RawNarrow } from './narrow.js';
import { historyStreamIds, spansOf, type Received } from './receipt.js';

interface Caches {
  narrows: ReadCache<NarrowQuery>;
  spans: ReadCache<{ received: Received }>;
}

const byStore = new WeakMap<Database<ChatTables>, Caches>();

function caches(store: Database<ChatTables>, clock: Clock): Caches {
  let c = byStore.get(store);
  if (!c) byStore.set(store, (c = { narrows: new ReadCache(store, clock), spans: new ReadCache(store, clock) }));
  return c;
}

/**
 * The narrow as buildNarrow makes it, with the reader's shared-history channels. Refusals (unknown
 * channel, bad operand) are never cached: they are built, and thrown, again each time.
 */
export async function cachedNarrow(store: Database<ChatTables>, clock: Clock, realmId: number, me: ChatUser, raw: RawNarrow): Promise<NarrowQuery> {
  const { narrows } = caches(store, clock);
  const key = `${realmId} ${me.id} ${JSON.stringify(raw)}`;
  return narrows.peek(key) ?? narrows.get(key, async () => {
    const narrow = await buildNarrow(store.kysely, store.engine, realmId, me, readNarrow(raw));
    // Asked for even when this narrow does not search history: fetching by ids does.
    return { ...narrow, historyStreamIds: Object.freeze(await historyStreamIds(store.kysely, realmId, me)) };
  });
}

/** The reader's receipt through subscription spans (receipt.ts spansOf). */
export async function cachedSpans(store: Database<ChatTables>, clock: Clock, realmId: number, me: ChatUser): Promise<Received> {
  const { spans } = caches(store, clock);
  const key = `${realmId} ${me.id}`;
  return (spans.peek(key) ?? (await spans.get(key, async () => ({ received: await spansOf(store.kysely, me.id) })))).received;
}

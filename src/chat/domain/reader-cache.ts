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

/** A message's shared object (messages.ts sharedMessageObject) serialized once, for GET /messages pages. */
export interface SerializedMessage {
  /** The shared object's JSON in UTF-8, without its closing brace. */
  head: Buffer;
  rendered: string;
  subject: string;
}

const SERIALIZED_ENTRIES = 10_000;

/** A search's highlights of one message, serialized: `,"match_content":...,"match_subject":...}`. */
export interface SerializedHighlights {
  tail: Buffer;
}

/** The reader caches of one store, built by the composition root (app.ts) and reached through ChatServices. */
export class ReaderCaches {
  private readonly store: Database<ChatTables>;
  private readonly narrows: ReadCache<NarrowQuery>;
  private readonly spans: ReadCache<{ received: Received }>;
  /**
   * Serialized shared objects by message and presentation (messages.ts messagesJson; ids are unique
   * across realms). An entry dies with any write through the store handle (an edit, a reaction, a
   * renamed sender or channel...) and after READ_CACHE_TTL_MS, like every ReadCache, so nothing stale
   * is served; between writes, a hot page is built once.
   */
  readonly messages: ReadCache<SerializedMessage, number>;
  /**
   * A search's highlights by message, presentation and searched lexemes (messages.ts messagesJson):
   * the same for every reader, made from the message's rendered HTML and topic alone, so it dies
   * with them, as `messages` does (any write through the store handle, or READ_CACHE_TTL_MS).
   */
  readonly highlights: ReadCache<SerializedHighlights>;

  constructor(store: Database<ChatTables>, clock: Clock) {
    this.store = store;
    this.narrows = new ReadCache(store, clock);
    this.spans = new ReadCache(store, clock);
    this.messages = new ReadCache(store, clock, { maxEntries: SERIALIZED_ENTRIES });
    this.highlights = new ReadCache(store, clock, { maxEntries: SERIALIZED_ENTRIES });
  }

  /**
   * The narrow as buildNarrow makes it, with the reader's shared-history channels. Refusals (unknown
   * channel, bad operand) are never cached: they are built, and thrown, again each time.
   */
  async narrow(realmId: number, me: ChatUser, raw: RawNarrow): Promise<NarrowQuery> {
    const store = this.store;
    const narrows = this.narrows;
    const key = `${realmId} ${me.id} ${JSON.stringify(raw)}`;
    return (
      narrows.peek(key) ??
      narrows.get(key, async () => {
        const narrow = await buildNarrow(store.kysely, store.engine, realmId, me, readNarrow(raw));
        // Asked for even when this narrow does not search history: fetching by ids does.
        return { ...narrow, historyStreamIds: Object.freeze(await historyStreamIds(store.kysely, realmId, me)) };
      })
    );
  }

  /** The reader's receipt through subscription spans (receipt.ts spansOf). */
  async received(realmId: number, me: ChatUser): Promise<Received> {
    const spans = this.spans;
    const key = `${realmId} ${me.id}`;
    return (spans.peek(key) ?? (await spans.get(key, async () => ({ received: await spansOf(this.store.kysely, me.id) })))).received;
  }
}

// Messages: sending to a channel topic or a direct conversation (with each recipient's copy and
// flags), fetching around an anchor within a narrow, and the message object of the API.
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import { runRead, type Database, type Queryable } from '../../platform/db/database.js';
import { JsonText } from '../../platform/db/fast/json-text.js';
import type { ChatTables, ChatUser, Message, Realm, Stream } from '../tables.js';
import { FLAG, flagNames, flagNamesJson, HISTORICAL_FLAGS } from './flags.js';
import { isMeMessage } from './markdown.js';
import { realmLinkifiers, topicLinks } from './linkifiers.js';
import { directKey, type NarrowQuery } from './narrow.js';
import { displayTopic } from './topics.js';
import { avatarUrlFor } from './users.js';
import { checkCanPost } from './channel-access.js';
import { subscriberIds } from './channels.js';
import { escapeHtml, highlightHtml } from './search.js';
import { searchDriver, searchText } from '../../platform/db/fulltext.js';
import { flagsSql, historyStreamIds, NOTHING_RECEIVED, receivedSql, spansOf, type Received } from './receipt.js';
import type { ReaderCaches, SerializedMessage } from './reader-cache.js';
import { reactionsOf } from './reactions.js';
import { editFields } from './edit-history.js';
import { usersAlerted, type RealmAlertWords } from './alert-words.js';
import { mutersOf } from './muting.js';
import { isSpectator } from './spectators.js';
import { claimAttachments, linkedPathIds } from './uploads.js';

/** Zulip's stand-in for "after every message": the anchor `newest` and huge numbers become this. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;
export const MAX_MESSAGES_PER_FETCH = 5000;

export async function directRecipient(db: Queryable<ChatTables>, participantIds: number[]): Promise<number> {
  const key = directKey(participantIds);
  const found = await db.selectFrom('recipients').select('id').where('direct_key', '=', key).executeTakeFirst();
  if (found) return found.id;
  const made = await db.insertInto('recipients').values({ kind: 'direct', direct_key: key }).returning('id').executeTakeFirstOrThrow();
  return made.id;
}

export interface Outgoing {
  content: string;
  rendered: string;
  client: string;
  readBySender: boolean;
  nowSeconds: number;
  /** Mention flag bits for a recipient, from what rendering found. */
  mentionBits?: (userId: number, topicParticipants: Set<number>) => number;
  /** The realm's alert words (realmAlertWords), read before the transaction: from the cache, mostly. */
  alertWords: RealmAlertWords;
  /**
   * Work that commits with the message or not at all: `before` runs first in the send's transaction
   * (it may throw to send nothing), `after` once the message is written (a scheduled message's
   * claim and its delivered mark: domain/scheduled-delivery.ts).
   */
  sameTransaction?: { before(trx: Queryable<ChatTables>): Promise<void>; after(trx: Queryable<ChatTables>, messageId: number): Promise<void> };
  /** The realm's URL: links to its own /user_uploads/ written in full are uploads too (uploads.ts linkedPathIds). */
  realmUrl?: string;
}

/**
 * A message just stored: its row, everyone holding a copy with their flags (exactly what receipt.ts
 * holdersOf would read back after the commit), and what its message object names. The message event
 * is built from this, without reading back what the write had in hand.
 */
export interface Stored {
  message: StoredMessage;
  holders: Map<number, number>;
  /** The sender, and a direct message's recipients. */
  people: ChatUser[];
  /** A channel message's channel. */
  stream: Stream | null;
  /** Uploads the message linked and claimed (uploads.ts claimAttachments): their owner hears of it. */
  claimed?: number[];
}

/** Who has sent to a channel topic: the people @**topic** reaches. */
export async function topicParticipants(db: Queryable<ChatTables>, streamId: number, topic: string): Promise<Set<number>> {
  const rows = await db.selectFrom('messages').select('sender_id').distinct().where('stream_id', '=', streamId).where(sql`lower(topic)`, '=', topic.toLowerCase()).execute();
  return new Set(rows.map((r) => r.sender_id));
}

async function store(
  db: Queryable<ChatTables>,
  realmId: number,
  sender: ChatUser,
  recipientId: number,
  streamId: number | null,
  topic: string,
  receivers: number[],
  o: Outgoing,
): Promise<Omit<Stored, 'people' | 'stream'>> {
  const msg = await db
    .insertInto('messages')
    .values({
      realm_id: realmId,
      sender_id: sender.id,
      recipient_id: recipientId,
      stream_id: streamId,
      topic,
      content: o.content,
      rendered_content: o.rendered,
      search_text: searchText(topic, o.rendered),
      client: o.client,
      date_sent: o.nowSeconds,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // The sender always keeps a copy, even of a message to a channel they are not subscribed to.
  const users = [...new Set([...receivers, sender.id])];
  const participants = o.mentionBits && streamId !== null ? await topicParticipants(db, streamId, topic) : new Set(users);
  participants.add(sender.id);
  // Those who muted the sender get the message already read (no unread count, no notification).
  const muters = await mutersOf(db, sender.id, users);
  const read = (userId: number) => (userId === sender.id ? o.readBySender : muters.has(userId));
  const alerted = usersAlerted(
    o.alertWords,
    o.content,
    users.filter((id) => id !== sender.id),
  );
  const rows = users.map((user_id) => ({
    user_id,
    message_id: msg.id,
    flags: (read(user_id) ? FLAG.read : 0) | (o.mentionBits?.(user_id, participants) ?? 0) | (alerted.has(user_id) ? FLAG.has_alert_word : 0),
  }));
  // A channel's subscribers receive through their subscription spans (receipt.ts): rows only for
  // the sender and for flags other than the default.
  await db
    .insertInto('user_messages')
    .values(streamId === null ? rows : rows.filter((r) => r.user_id === sender.id || r.flags !== 0))
    .execute();
  // Uploads the message links are recorded as linked from it, in the same transaction.
  const claimed = await claimAttachments(db, realmId, sender, msg.id, streamId, linkedPathIds(o.rendered, o.realmUrl));
  const message: StoredMessage = {
    id: msg.id,
    realm_id: realmId,
    sender_id: sender.id,
    recipient_id: recipientId,
    stream_id: streamId,
    topic,
    content: o.content,
    rendered_content: o.rendered,
    search_text: searchText(topic, o.rendered),
    client: o.client,
    date_sent: o.nowSeconds,
    edit_history: null,
    last_edit_time: null,
    last_moved_time: null,
    direct_key: streamId === null ? directKey(users) : null,
  };
  return { message, holders: new Map(rows.map((r) => [r.user_id, r.flags])), claimed };
}

/** The write of a message and its recipients' state inside the caller's transaction (bench seeding, move notes). */
export { store as storeMessage };

export async function sendToChannel(db: Database<ChatTables>, realm: Realm, sender: ChatUser, stream: Stream, topic: string, o: Outgoing): Promise<Stored> {
  await checkCanPost(db.kysely, sender, stream);
  const stored = await db.transaction(async (trx) => {
    await o.sameTransaction?.before(trx);
    const s = await store(trx, realm.id, sender, stream.recipient_id, stream.id, topic, await subscriberIds(trx, stream.id), o);
    await o.sameTransaction?.after(trx, s.message.id);
    return s;
  });
  return { ...stored, people: [sender], stream };
}

export async function sendDirect(db: Database<ChatTables>, realm: Realm, sender: ChatUser, to: ChatUser[], o: Outgoing): Promise<Stored> {
  const stored = await db.transaction(async (trx) => {
    await o.sameTransaction?.before(trx);
    const ids = [...to.map((u) => u.id), sender.id];
    const s = await store(trx, realm.id, sender, await directRecipient(trx, ids), null, '', ids, o);
    await o.sameTransaction?.after(trx, s.message.id);
    return s;
  });
  return { ...stored, people: [sender, ...to], stream: null };
}

export interface Window {
  /** null = the first unread message matching the narrow. */
  anchor: number | null;
  numBefore: number;
  numAfter: number;
  includeAnchor: boolean;
}

/** A message that matched a narrow, with the reader's stored flags (null: no row of theirs, see receipt.ts). */
export interface Match {
  id: number;
  stream_id: number | null;
  flags: number | null;
}

export interface Found {
  anchor?: number;
  ids: number[];
  /** The same messages as `ids`, with what the reader's flags are made of. */
  matches: Match[];
  found_anchor?: boolean;
  found_newest?: boolean;
  found_oldest?: boolean;
}

/** A bound on the message id, written over the id column the query reads by. */
type IdBound = (id: RawBuilder<unknown>) => RawBuilder<unknown>;

/** A page's query compiled once, with where its anchor goes among the parameters (-1: nowhere). */
interface PageQuery {
  query: CompiledQuery<Match>;
  slot: number;
  /** The narrow's one channel, when every row is in it (the query then reads no stream_id). */
  channelId: number | undefined;
}

/** Where an anchor goes when a page's query is compiled: found among the parameters by identity. */
const ANCHOR_SLOT = Object.freeze({ anchorSlot: true });
/** Distinct page queries kept per narrow (bounds, orders and limits a client uses: a handful). */
const PAGE_QUERIES_PER_NARROW = 16;

// A memo of a pure function (design rule 7): a page's SQL depends on the narrow (a frozen object of
// the reader caches, built for one reader of one store, whose channels with shared history it holds)
// and the key's values alone. Keyed by the narrow object, so it dies with it. Building and compiling
// the query through Kysely cost a search a twentieth of its CPU.
const pageQueries = new WeakMap<NarrowQuery, Map<string, PageQuery>>();

/** The anchor's bound of a page: `< anchor`, `> anchor`, `= anchor`, or the reader's unread messages. */
type PageBound = { op: '<' | '>' | '='; anchor: number } | { op: 'unread' };

async function pageRows(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, bound: PageBound, order: 'asc' | 'desc', limit: number): Promise<Match[]> {
  const boundSql: IdBound = bound.op === 'unread' ? () => sql`(${flagsSql(me.id)} & ${FLAG.read}) = 0` : (id) => sql`${id} ${sql.raw(bound.op)} ${ANCHOR_SLOT}`;
  // Only a narrow that knows its shared-history channels compiles to the same SQL every time.
  const pure = !narrow.history || narrow.historyStreamIds !== undefined;
  const key = `${realmId} ${me.id} ${bound.op} ${order} ${limit}`;
  let byKey = pure ? pageQueries.get(narrow) : undefined;
  let page = byKey?.get(key);
  if (!page) {
    page = await pageQuery(db, realmId, me, narrow, boundSql, order, limit);
    if (pure) {
      if (!byKey) pageQueries.set(narrow, (byKey = new Map()));
      if (byKey.size >= PAGE_QUERIES_PER_NARROW) byKey.clear();
      byKey.set(key, page);
    }
  }
  let parameters = page.query.parameters;
  if (page.slot >= 0 && bound.op !== 'unread') {
    const p = [...parameters];
    p[page.slot] = bound.anchor;
    parameters = p;
  }
  const rows = await runRead(db, page.query, parameters);
  if (page.channelId === undefined) return rows;
  const channelId = page.channelId;
  return rows.map((r) => ({ id: r.id, stream_id: channelId, flags: r.flags }));
}

async function pageQuery(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, bound: IdBound, order: 'asc' | 'desc', limit: number | null): Promise<PageQuery> {
  const history = narrow.history ? (narrow.historyStreamIds ?? (await historyStreamIds(db, realmId, me))) : [];
  // Confined to one channel of the realm whose whole history the reader may read, every message
  // matching is readable: no access test per row, and the topic index alone finds the page.
  const everyoneReadable = narrow.channelId !== undefined && history.includes(narrow.channelId);
  const access = history.length ? sql`(m.stream_id in (${sql.join(history)}) or ${receivedSql(me.id)})` : receivedSql(me.id);
  // A search reads its page from the full-text index in id order (platform/db/fulltext.ts).
  const driver = searchDriver(narrow.conditions);
  const id = driver?.id ?? sql`m.id`;
  const conditions = driver?.conditions ?? narrow.conditions;
  const extra = bound(id);
  const where = sql.join(everyoneReadable ? [extra, ...conditions] : [sql`m.realm_id = ${realmId}`, access, extra, ...conditions], sql` and `);
  const from = sql`from ${driver?.from ?? sql`messages m`} left join user_messages um on um.message_id = m.id and um.user_id = ${me.id} where ${where} order by ${id} ${sql.raw(order)}`;
  // The limit is written into the text: SQLite prepares a statement with a bound LIMIT again on every run
  // (a raw query, which the LiteralLimits plugin does not rewrite; platform/db/fast/README.md).
  const limited = limit === null ? from : sql`${from} limit ${sql.lit(limit)}`;
  // Every row in the narrow's channel: a column fewer to read per row (a tenth of a page's cost).
  const query = (narrow.channelId === undefined ? sql<Match>`select m.id, m.stream_id, um.flags ${limited}` : sql<Match>`select m.id, um.flags ${limited}`).compile(db);
  return { query, slot: query.parameters.indexOf(ANCHOR_SLOT), channelId: narrow.channelId };
}

async function matchingRows(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, bound: IdBound, order: 'asc' | 'desc', limit: number | null): Promise<Match[]> {
  const page = await pageQuery(db, realmId, me, narrow, bound, order, limit);
  const rows = await runRead(db, page.query);
  if (page.channelId === undefined) return rows;
  const channelId = page.channelId;
  return rows.map((r) => ({ id: r.id, stream_id: channelId, flags: r.flags }));
}

export async function fetchWindow(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, w: Window): Promise<Found> {
  let anchor = w.anchor;
  if (anchor === null) {
    const unread = await pageRows(db, realmId, me, narrow, { op: 'unread' }, 'asc', 1);
    anchor = unread[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID;
  }
  // One more than asked on each side tells whether the oldest and newest were reached.
  const before = anchor > 0 ? await pageRows(db, realmId, me, narrow, { op: '<', anchor }, 'desc', w.numBefore + 1) : [];
  // No message is at or after the stand-in for "newest": skip asking (a search narrow's asking costs a full match).
  const pastAll = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const after = pastAll ? [] : await pageRows(db, realmId, me, narrow, { op: '>', anchor }, 'asc', w.numAfter + 1);
  const at = w.includeAnchor && !pastAll ? await pageRows(db, realmId, me, narrow, { op: '=', anchor }, 'asc', 1) : [];
  const matches = [...before.slice(0, w.numBefore).reverse(), ...at, ...after.slice(0, w.numAfter)];
  return {
    anchor,
    ids: matches.map((m) => m.id),
    matches,
    found_anchor: at.length === 1,
    found_oldest: anchor === 0 || before.length <= w.numBefore,
    found_newest: anchor >= LARGER_THAN_MAX_MESSAGE_ID || after.length <= w.numAfter,
  };
}

export async function fetchByIds(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, ids: number[]): Promise<Found> {
  if (!ids.length) return { ids: [], matches: [] };
  // Asking for ids searches shared history too, as a channel narrow does.
  const matches = await matchingRows(db, realmId, me, { ...narrow, history: true }, (id) => sql`${id} in (${sql.join(ids)})`, 'asc', null);
  return { ids: matches.map((m) => m.id), matches };
}

/**
 * Which of these ids match the narrow, among messages the caller received or (for a narrow that
 * searches shared history) may read: GET /messages/matches_narrow.
 */
export async function idsMatching(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  return (await matchingRows(db, realmId, me, narrow, (id) => sql`${id} in (${sql.join(ids)})`, 'asc', null)).map((m) => m.id);
}

/** match_content (rendered HTML) and match_subject (escaped topic), with search words highlighted. */
export function matchFields(rendered: string, subject: string, words: Set<string> | undefined): { match_content: string; match_subject: string } {
  const none = new Set<string>();
  return { match_content: highlightHtml(rendered, words ?? none), match_subject: highlightHtml(escapeHtml(subject), words ?? none) };
}

export interface Presentation {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allowEmptyTopicName: boolean;
  /** A search narrow's words: each message then carries match_content and match_subject. */
  search?: Set<string>;
}

/** A stored message with what its object needs beside its own columns. */
type StoredMessage = Message & { direct_key: string | null };

/** The users and channels message objects name (sender, direct recipients, channel). */
interface MessageRefs {
  users: Map<number, Pick<ChatUser, 'id' | 'email' | 'full_name' | 'delivery_email' | 'avatar_version' | 'avatar_path'>>;
  streams: Map<number, string>;
  reactions: Awaited<ReturnType<typeof reactionsOf>>;
  /** The realm's linkifiers as they are now: Zulip computes topic_links when it shows a message. */
  linkifiers: Awaited<ReturnType<typeof realmLinkifiers>>;
}

async function messageRefs(db: Queryable<ChatTables>, rows: StoredMessage[]): Promise<MessageRefs> {
  const userIds = new Set<number>();
  const streamIds = new Set<number>();
  for (const r of rows) {
    userIds.add(r.sender_id);
    if (r.stream_id !== null) streamIds.add(r.stream_id);
    for (const id of r.direct_key?.split(',') ?? []) userIds.add(Number(id));
  }
  // Only what a message object shows: whole user rows cost more than the messages themselves.
  const users = new Map(
    (
      await db
        .selectFrom('chat_users')
        .select(['id', 'email', 'full_name', 'delivery_email', 'avatar_version', 'avatar_path'])
        .where('id', 'in', [...userIds])
        .execute()
    ).map((u) => [u.id, u]),
  );
  const streams = new Map(
    streamIds.size
      ? (
          await db
            .selectFrom('streams')
            .select(['id', 'name'])
            .where('id', 'in', [...streamIds])
            .execute()
        ).map((s) => [s.id, s.name])
      : [],
  );
  const linkifiers = streamIds.size ? await realmLinkifiers(db, rows[0]!.realm_id) : [];
  return {
    users,
    streams,
    reactions: await reactionsOf(
      db,
      rows.map((r) => Number(r.id)),
    ),
    linkifiers,
  };
}

/**
 * The message object of the API as every reader sees it under one presentation: everything but the
 * reader's own flags (and a search's highlights), so GET /messages can serve one built copy to all.
 * Fields shown to everyone alike belong here.
 */
function sharedMessageObject(r: StoredMessage, refs: MessageRefs, realm: Realm, p: Presentation): Record<string, unknown> {
  const sender = refs.users.get(r.sender_id)!;
  const stream = r.stream_id !== null;
  const out: Record<string, unknown> = {
    id: r.id,
    sender_id: r.sender_id,
    content: p.applyMarkdown ? r.rendered_content : r.content,
    recipient_id: r.recipient_id,
    timestamp: r.date_sent,
    client: r.client,
    subject: stream ? displayTopic(r.topic, p.allowEmptyTopicName) : '',
    topic_links: stream ? topicLinks(r.topic, refs.linkifiers) : [],
    is_me_message: isMeMessage(r.content),
    reactions: refs.reactions.get(Number(r.id)) ?? [],
    submessages: [],
    sender_full_name: sender.full_name,
    sender_email: sender.email,
    sender_realm_str: realm.string_id,
    display_recipient: stream
      ? refs.streams.get(r.stream_id!)
      : r
          .direct_key!.split(',')
          .map(Number)
          .map((id) => {
            const u = refs.users.get(id)!;
            return { id: u.id, email: u.email, full_name: u.full_name, is_mirror_dummy: false };
          }),
    type: stream ? 'stream' : 'private',
    avatar_url: avatarUrlFor(sender, p.clientGravatar),
    content_type: p.applyMarkdown ? 'text/html' : 'text/x-markdown',
  };
  if (stream) out.stream_id = r.stream_id;
  Object.assign(out, editFields(r, realm.message_edit_history_visibility_policy, p.allowEmptyTopicName));
  return out;
}

/** Stored messages by id, in id order, with the reader's stored flags. */
async function storedMessages(db: Queryable<ChatTables>, readerId: number, ids: number[]): Promise<(StoredMessage & { flags: number | null })[]> {
  return db
    .selectFrom('messages')
    .innerJoin('recipients', 'recipients.id', 'messages.recipient_id')
    .leftJoin('user_messages', (j) => j.onRef('user_messages.message_id', '=', 'messages.id').on('user_messages.user_id', '=', readerId))
    .selectAll('messages')
    .select(['user_messages.flags', 'recipients.direct_key'])
    .where('messages.id', 'in', ids)
    .orderBy('messages.id')
    .execute();
}

/**
 * The reader's flag bits of a message: the stored ones, else none for a channel message received
 * through a subscription span (receipt.ts), else read and historical (shared history never received).
 */
function flagBits(m: Match, received: Received): number {
  return m.flags ?? (received(m) ? 0 : HISTORICAL_FLAGS);
}

/** Whether the stored flags leave any message's to its receipt (and so the reader's spans are needed). */
function needsSpans(messages: Match[]): boolean {
  return messages.some((m) => m.flags === null && m.stream_id !== null);
}

/** The message objects of these ids, in id order, as `me` reads them (GET /messages/{id}, events). */
export async function messageObjects(db: Queryable<ChatTables>, realm: Realm, me: ChatUser, ids: number[], p: Presentation): Promise<Record<string, unknown>[]> {
  if (!ids.length) return [];
  const rows = await storedMessages(db, me.id, ids);
  const refs = await messageRefs(db, rows);
  const received = needsSpans(rows) ? await spansOf(db, me.id) : NOTHING_RECEIVED;
  return rows.map((r) => {
    const out = sharedMessageObject(r, refs, realm, p);
    out.flags = flagNames(flagBits(r, received));
    if (p.search) Object.assign(out, matchFields(r.rendered_content, out.subject as string, p.search));
    return out;
  });
}

/**
 * The message object of a message just stored, as everyone sees it but for flags (its message
 * event): from what storing it had in hand, with no reactions or edits yet.
 */
export async function storedMessageObject(db: Queryable<ChatTables>, realm: Realm, stored: Stored, p: Presentation): Promise<Record<string, unknown>> {
  const m = stored.message;
  const refs: MessageRefs = {
    users: new Map(stored.people.map((u) => [u.id, u])),
    streams: new Map(stored.stream ? [[stored.stream.id, stored.stream.name]] : []),
    reactions: new Map(),
    linkifiers: stored.stream ? await realmLinkifiers(db, m.realm_id) : [],
  };
  return sharedMessageObject(m, refs, realm, p);
}

/** A message object serialized for one presentation, with what a search highlights in it. */
/** The presentation's three bits: with the message id, the key of its serialized object. */
function presentationKey(p: Presentation): number {
  return (p.applyMarkdown ? 1 : 0) | (p.clientGravatar ? 2 : 0) | (p.allowEmptyTopicName ? 4 : 0);
}

/**
 * The `messages` list of GET /messages as JSON text: each message's shared object, serialized once
 * and cached, joined with the reader's flags (and a search's highlights). The same value as
 * messageObjects gives, without building and stringifying a hundred objects per request (fast paths
 * "read caches" and "JSON splicing", platform/db/fast/README.md).
 */
export async function messagesJson(store: Database<ChatTables>, caches: ReaderCaches, realm: Realm, me: ChatUser, matches: Match[], p: Presentation): Promise<JsonText> {
  if (!matches.length) return new JsonText('[]');
  // Serialized shared objects by message and presentation (ReaderCaches.messages).
  const cache = caches.messages;
  const db = store.kysely;
  const variant = presentationKey(p);
  // A number, not a string to build and hash: a page looks up a hundred.
  const keyOf = (id: number) => id * 8 + variant;
  // Taken before anything is read: highlights made from a page that a write outdates meanwhile are stale at once.
  const highlightStamp = caches.highlights.stamp();
  const parts = cache.peekMany(matches.map((m) => keyOf(m.id)));
  const missing = matches.filter((_, i) => parts[i] === undefined).map((m) => m.id);
  if (missing.length) {
    const stamp = cache.stamp();
    const rows = await storedMessages(db, me.id, missing);
    const refs = await messageRefs(db, rows);
    const built = new Map<number, SerializedMessage>();
    for (const r of rows) {
      const shared = sharedMessageObject(r, refs, realm, p);
      const entry = { head: Buffer.from(JSON.stringify(shared).slice(0, -1)), rendered: r.rendered_content, subject: shared.subject as string };
      cache.set(keyOf(r.id), entry, stamp);
      built.set(r.id, entry);
    }
    matches.forEach((m, i) => (parts[i] ??= built.get(m.id)));
  }
  // A spectator holds no copies: Zulip shows every message to one as read, nothing more.
  const spectator = isSpectator(me);
  const received = !spectator && needsSpans(matches) ? await caches.received(realm.id, me) : NOTHING_RECEIVED;
  // A search's highlights depend on the message and the searched lexemes alone: made once for every
  // reader (ReaderCaches.highlights), under a key of the lexemes in order.
  const search = p.search;
  const words = search ? [...search].sort().join(' ') : '';
  const tails = search ? caches.highlights.peekMany(matches.map((m) => `${keyOf(m.id)} ${words}`)) : [];
  // UTF-8 pieces, copied once into the answer (json-text.ts).
  const out: Buffer[] = [OPEN_LIST];
  parts.forEach((part, i) => {
    // Deleted since it matched: left out, as a fetch a moment later would.
    if (!part) return;
    if (out.length > 1) out.push(COMMA);
    out.push(part.head);
    const bits = spectator ? FLAG.read : flagBits(matches[i], received);
    if (search) {
      out.push(flagsPiece(bits));
      let h = tails[i];
      if (!h) {
        const f = matchFields(part.rendered, part.subject, search);
        h = { tail: Buffer.from(`,"match_content":${JSON.stringify(f.match_content)},"match_subject":${JSON.stringify(f.match_subject)}}`) };
        caches.highlights.set(`${keyOf(matches[i].id)} ${words}`, h, highlightStamp);
      }
      out.push(h.tail);
    } else {
      out.push(flagsTail(bits));
    }
  });
  out.push(CLOSE_LIST);
  return new JsonText(out);
}

const OPEN_LIST = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE_LIST = Buffer.from(']');
const flagsTails = new Map<number, Buffer>();
const flagsPieces = new Map<number, Buffer>();

/** `,"flags":[...]`, before a search's highlights, by flag bits. */
function flagsPiece(bits: number): Buffer {
  let piece = flagsPieces.get(bits);
  if (!piece) flagsPieces.set(bits, (piece = Buffer.from(`,"flags":${flagNamesJson(bits)}`)));
  return piece;
}

/** `,"flags":[...]}`, which ends a message object in an answer, by flag bits. */
function flagsTail(bits: number): Buffer {
  let tail = flagsTails.get(bits);
  if (!tail) flagsTails.set(bits, (tail = Buffer.from(`,"flags":${flagNamesJson(bits)}}`)));
  return tail;
}

// Messages: sending to a channel topic or a direct conversation (with each recipient's copy and
// flags), fetching around an anchor within a narrow, and the message object of the API.
import { sql, type RawBuilder } from 'kysely';
import type { Database, Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Message, Realm, Stream } from '../tables.js';
import { badRequest } from '../errors.js';
import { FLAG, flagNames, HISTORICAL_FLAGS } from './flags.js';
import { isMeMessage } from './markdown.js';
import { directKey, type NarrowQuery } from './narrow.js';
import { displayTopic } from './topics.js';
import { avatarUrlFor } from './users.js';
import { isGuest } from './roles.js';
import { checkCanPost } from './channel-access.js';
import { subscriberIds } from './channels.js';
import { escapeHtml, highlightHtml } from './search.js';
import { flagsSql, receivedSql, spansOf } from './receipt.js';
import { usersAlerted } from './alert-words.js';

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
}

/** Who has sent to a channel topic: the people @**topic** reaches. */
async function topicParticipants(db: Queryable<ChatTables>, streamId: number, topic: string): Promise<Set<number>> {
  const rows = await db.selectFrom('messages').select('sender_id').distinct().where('stream_id', '=', streamId).where(sql`lower(topic)`, '=', topic.toLowerCase()).execute();
  return new Set(rows.map((r) => r.sender_id));
}

async function store(db: Queryable<ChatTables>, realmId: number, sender: ChatUser, recipientId: number, streamId: number | null, topic: string, receivers: number[], o: Outgoing): Promise<number> {
  const msg = await db
    .insertInto('messages')
    .values({ realm_id: realmId, sender_id: sender.id, recipient_id: recipientId, stream_id: streamId, topic, content: o.content, rendered_content: o.rendered, client: o.client, date_sent: o.nowSeconds })
    .returning('id')
    .executeTakeFirstOrThrow();
  // The sender always keeps a copy, even of a message to a channel they are not subscribed to.
  const users = [...new Set([...receivers, sender.id])];
  const participants = o.mentionBits && streamId !== null ? await topicParticipants(db, streamId, topic) : new Set(users);
  participants.add(sender.id);
  const alerted = await usersAlerted(db, realmId, o.content, users.filter((id) => id !== sender.id));
  const rows = users.map((user_id) => ({
    user_id,
    message_id: msg.id,
    flags: (user_id === sender.id && o.readBySender ? FLAG.read : 0) | (o.mentionBits?.(user_id, participants) ?? 0) | (alerted.has(user_id) ? FLAG.has_alert_word : 0),
  }));
  // A channel's subscribers receive through their subscription spans (receipt.ts): rows only for
  // the sender and for flags other than the default.
  await db.insertInto('user_messages').values(streamId === null ? rows : rows.filter((r) => r.user_id === sender.id || r.flags !== 0)).execute();
  return msg.id;
}

/** The write of a message and its recipients' state inside the caller's transaction (bench seeding). */
export { store as storeMessage };

export async function sendToChannel(db: Database<ChatTables>, realm: Realm, sender: ChatUser, stream: Stream, topic: string, o: Outgoing): Promise<number> {
  await checkCanPost(db.kysely, sender, stream);
  return db.transaction(async (trx) => store(trx, realm.id, sender, stream.recipient_id, stream.id, topic, await subscriberIds(trx, stream.id), o));
}

export async function sendDirect(db: Database<ChatTables>, realm: Realm, sender: ChatUser, to: ChatUser[], o: Outgoing): Promise<number> {
  return db.transaction(async (trx) => {
    const ids = [...to.map((u) => u.id), sender.id];
    return store(trx, realm.id, sender, await directRecipient(trx, ids), null, '', ids, o);
  });
}

/** Channels whose whole history the user may read: public ones (not for guests), and subscribed ones sharing history. */
async function historyStreamIds(db: Queryable<ChatTables>, realmId: number, me: ChatUser): Promise<number[]> {
  const rows = await db
    .selectFrom('streams')
    .leftJoin('subscriptions', (j) => j.onRef('subscriptions.stream_id', '=', 'streams.id').on('subscriptions.user_id', '=', me.id).on('subscriptions.active', '=', 1))
    .select(['streams.id', 'streams.invite_only', 'streams.history_public_to_subscribers', 'subscriptions.id as sub'])
    .where('streams.realm_id', '=', realmId)
    .execute();
  return rows
    .filter((r) => (r.invite_only === 0 && !isGuest(me.role)) || (r.sub !== null && r.history_public_to_subscribers === 1))
    .map((r) => r.id);
}

export interface Window {
  /** null = the first unread message matching the narrow. */
  anchor: number | null;
  numBefore: number;
  numAfter: number;
  includeAnchor: boolean;
}

export interface Found { anchor?: number; ids: number[]; found_anchor?: boolean; found_newest?: boolean; found_oldest?: boolean }

async function matchingIds(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, extra: RawBuilder<unknown>, order: 'asc' | 'desc', limit: number | null): Promise<number[]> {
  const history = narrow.history ? await historyStreamIds(db, realmId, me) : [];
  const access = history.length ? sql`(${receivedSql(me.id)} or m.stream_id in (${sql.join(history)}))` : receivedSql(me.id);
  const where = sql.join([sql`m.realm_id = ${realmId}`, access, extra, ...narrow.conditions], sql` and `);
  const rows = await sql<{ id: number }>`select m.id from messages m left join user_messages um on um.message_id = m.id and um.user_id = ${me.id} where ${where} order by m.id ${sql.raw(order)}${limit === null ? sql`` : sql` limit ${limit}`}`.execute(db);
  return rows.rows.map((r) => Number(r.id));
}

export async function fetchWindow(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, w: Window): Promise<Found> {
  let anchor = w.anchor;
  if (anchor === null) {
    const unread = await matchingIds(db, realmId, me, narrow, sql`(${flagsSql(me.id)} & ${FLAG.read}) = 0`, 'asc', 1);
    anchor = unread[0] ?? LARGER_THAN_MAX_MESSAGE_ID;
  }
  // One more than asked on each side tells whether the oldest and newest were reached.
  const before = anchor > 0 ? await matchingIds(db, realmId, me, narrow, sql`m.id < ${anchor}`, 'desc', w.numBefore + 1) : [];
  // No message is at or after the stand-in for "newest": skip asking (a search narrow's asking costs a full match).
  const pastAll = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const after = pastAll ? [] : await matchingIds(db, realmId, me, narrow, sql`m.id > ${anchor}`, 'asc', w.numAfter + 1);
  const at = w.includeAnchor && !pastAll ? await matchingIds(db, realmId, me, narrow, sql`m.id = ${anchor}`, 'asc', 1) : [];
  const ids = [...before.slice(0, w.numBefore).reverse(), ...at, ...after.slice(0, w.numAfter)];
  return {
    anchor,
    ids,
    found_anchor: at.length === 1,
    found_oldest: anchor === 0 || before.length <= w.numBefore,
    found_newest: anchor >= LARGER_THAN_MAX_MESSAGE_ID || after.length <= w.numAfter,
  };
}

export async function fetchByIds(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, ids: number[]): Promise<Found> {
  if (!ids.length) return { ids: [] };
  // Asking for ids searches shared history too, as a channel narrow does.
  const found = await matchingIds(db, realmId, me, { ...narrow, history: true }, sql`m.id in (${sql.join(ids)})`, 'asc', null);
  return { ids: found };
}

/**
 * Which of these ids match the narrow, among messages the caller received or (for a narrow that
 * searches shared history) may read: GET /messages/matches_narrow.
 */
export async function idsMatching(db: Queryable<ChatTables>, realmId: number, me: ChatUser, narrow: NarrowQuery, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  return matchingIds(db, realmId, me, narrow, sql`m.id in (${sql.join(ids)})`, 'asc', null);
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

/** The message objects of GET /messages, in id order. */
export async function messageObjects(db: Queryable<ChatTables>, realm: Realm, me: ChatUser, ids: number[], p: Presentation): Promise<Record<string, unknown>[]> {
  if (!ids.length) return [];
  const rows: (Message & { flags: number | null; direct_key: string | null })[] = await db
    .selectFrom('messages')
    .innerJoin('recipients', 'recipients.id', 'messages.recipient_id')
    .leftJoin('user_messages', (j) => j.onRef('user_messages.message_id', '=', 'messages.id').on('user_messages.user_id', '=', me.id))
    .selectAll('messages')
    .select(['user_messages.flags', 'recipients.direct_key'])
    .where('messages.id', 'in', ids)
    .orderBy('messages.id')
    .execute();
  const received = await spansOf(db, me.id);
  const userIds = new Set<number>();
  for (const r of rows) {
    userIds.add(r.sender_id);
    for (const id of r.direct_key?.split(',') ?? []) userIds.add(Number(id));
  }
  // Only what a message object shows: whole user rows cost more than the messages themselves.
  const users = new Map((await db.selectFrom('chat_users').select(['id', 'email', 'full_name', 'delivery_email', 'avatar_version']).where('id', 'in', [...userIds]).execute()).map((u) => [u.id, u]));
  const streamIds = [...new Set(rows.map((r) => r.stream_id).filter((s): s is number => s !== null))];
  const streams = new Map(streamIds.length ? (await db.selectFrom('streams').select(['id', 'name']).where('id', 'in', streamIds).execute()).map((s) => [s.id, s.name]) : []);
  return rows.map((r) => {
    const sender = users.get(r.sender_id)!;
    const stream = r.stream_id !== null;
    const out: Record<string, unknown> = {
      id: r.id,
      sender_id: r.sender_id,
      content: p.applyMarkdown ? r.rendered_content : r.content,
      recipient_id: r.recipient_id,
      timestamp: r.date_sent,
      client: r.client,
      subject: stream ? displayTopic(r.topic, p.allowEmptyTopicName) : '',
      topic_links: [],
      is_me_message: isMeMessage(r.content),
      reactions: [],
      submessages: [],
      sender_full_name: sender.full_name,
      sender_email: sender.email,
      sender_realm_str: realm.string_id,
      display_recipient: stream
        ? streams.get(r.stream_id!)
        : r.direct_key!.split(',').map(Number).map((id) => {
            const u = users.get(id)!;
            return { id: u.id, email: u.email, full_name: u.full_name, is_mirror_dummy: false };
          }),
      type: stream ? 'stream' : 'private',
      avatar_url: avatarUrlFor(sender, p.clientGravatar),
      content_type: p.applyMarkdown ? 'text/html' : 'text/x-markdown',
      flags: flagNames(r.flags ?? (received(r) ? 0 : HISTORICAL_FLAGS)),
    };
    if (stream) out.stream_id = r.stream_id;
    if (p.search) Object.assign(out, matchFields(r.rendered_content, out.subject as string, p.search));
    return out;
  });
}



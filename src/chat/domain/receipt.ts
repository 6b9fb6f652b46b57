// Who received a message and with which flags, without a row per recipient of a channel message.
// A subscriber receives every message sent to the channel while subscribed: subscription_spans holds
// those ranges of message ids, so a channel message stores user_messages rows only for its sender and
// for recipients whose flags differ from the default (unread, nothing else: mentions). Any later flag
// change writes the user's row then. Rows, where present, always win over the span.
// A send to a channel of 100 then writes 1 or 2 rows instead of 100, each at a different place of
// the (user_id, message_id) index: that scattering capped sends at a few hundred a second.
import { sql, type RawBuilder } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { isGuest } from './roles.js';
import { HISTORICAL_FLAGS } from './flags.js';

/** Holds when the channel message aliased `m` was sent while the user was subscribed. */
export function inSpan(userId: number, m = 'm'): RawBuilder<boolean> {
  const id = sql.ref(`${m}.id`);
  const streamId = sql.ref(`${m}.stream_id`);
  return sql<boolean>`(${streamId} is not null and exists (select 1 from subscription_spans ss where ss.user_id = ${userId} and ss.stream_id = ${streamId}
    and ss.after_message_id < ${id} and (ss.until_message_id is null or ${id} <= ss.until_message_id)))`;
}

/** Received: over messages `m` left-joined to the user's user_messages `um`. */
export function receivedSql(userId: number): RawBuilder<boolean> {
  return sql<boolean>`(um.user_id is not null or ${inSpan(userId)})`;
}

/** The user's flags (read+historical for a message never received), over `m` and `um` as above. */
export function flagsSql(userId: number): RawBuilder<number> {
  return sql<number>`coalesce(um.flags, case when ${inSpan(userId)} then 0 else ${HISTORICAL_FLAGS} end)`;
}

/** Received, for a query without the `um` join: over the message aliased `m`. */
export function receivedCondition(userId: number, m = 'm'): RawBuilder<boolean> {
  const id = sql.ref(`${m}.id`);
  return sql<boolean>`(exists (select 1 from user_messages um_r where um_r.user_id = ${userId} and um_r.message_id = ${id}) or ${inSpan(userId, m)})`;
}

async function newestMessageId(db: Queryable<ChatTables>): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** A subscription (new or re-activated) receives the messages sent from now on. */
export async function openSpan(db: Queryable<ChatTables>, userId: number, streamId: number): Promise<void> {
  const after = await newestMessageId(db);
  // Unsubscribed and back with no message in between: that span is empty, and simply reopens.
  const reopened = await db
    .updateTable('subscription_spans')
    .set({ until_message_id: null })
    .where('user_id', '=', userId)
    .where('stream_id', '=', streamId)
    .where('after_message_id', '=', after)
    .executeTakeFirst();
  if (Number(reopened.numUpdatedRows) > 0) return;
  await db.insertInto('subscription_spans').values({ user_id: userId, stream_id: streamId, after_message_id: after, until_message_id: null }).execute();
}

/** Unsubscribing ends the open span at the newest message. */
export async function closeSpan(db: Queryable<ChatTables>, userId: number, streamId: number): Promise<void> {
  await db
    .updateTable('subscription_spans')
    .set({ until_message_id: await newestMessageId(db) })
    .where('user_id', '=', userId)
    .where('stream_id', '=', streamId)
    .where('until_message_id', 'is', null)
    .execute();
}

/** The users whose subscription span holds this channel message. */
export async function spanHolders(db: Queryable<ChatTables>, streamId: number, messageId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('subscription_spans')
    .select('user_id')
    .where('stream_id', '=', streamId)
    .where('after_message_id', '<', messageId)
    .where((eb) => eb.or([eb('until_message_id', 'is', null), eb('until_message_id', '>=', messageId)]))
    .execute();
  return rows.map((r) => r.user_id);
}

/** Whether the user received a message, decided in JS over rows already loaded. */
export type Received = (m: { id: number; stream_id: number | null }) => boolean;

export const NOTHING_RECEIVED: Received = () => false;

/** The spans of a user, for deciding receipt in JS over rows already loaded. */
export async function spansOf(db: Queryable<ChatTables>, userId: number): Promise<Received> {
  const spans = await db.selectFrom('subscription_spans').select(['stream_id', 'after_message_id', 'until_message_id']).where('user_id', '=', userId).execute();
  return (m) => m.stream_id !== null && spans.some((s) => s.stream_id === m.stream_id && s.after_message_id < m.id && (s.until_message_id === null || m.id <= s.until_message_id));
}

/** Everyone holding a copy of a message, with their flags: rows, and span holders of a channel message. */
export async function holdersOf(db: Queryable<ChatTables>, messageId: number, streamId: number | null): Promise<Map<number, number>> {
  const rows = await db.selectFrom('user_messages').select(['user_id', 'flags']).where('message_id', '=', messageId).execute();
  const flags = new Map(rows.map((r) => [Number(r.user_id), Number(r.flags)]));
  if (streamId !== null) {
    for (const userId of await spanHolders(db, streamId, messageId)) if (!flags.has(userId)) flags.set(userId, 0);
  }
  return flags;
}

/**
 * Channels whose whole history the user may read: web-public ones (for everyone, guests and
 * spectators too), public ones (not for guests), and subscribed ones sharing history.
 */
export async function historyStreamIds(db: Queryable<ChatTables>, realmId: number, me: ChatUser): Promise<number[]> {
  const rows = await db
    .selectFrom('streams')
    .leftJoin('subscriptions', (j) => j.onRef('subscriptions.stream_id', '=', 'streams.id').on('subscriptions.user_id', '=', me.id).on('subscriptions.active', '=', 1))
    .select(['streams.id', 'streams.invite_only', 'streams.is_web_public', 'streams.history_public_to_subscribers', 'subscriptions.id as sub'])
    .where('streams.realm_id', '=', realmId)
    .execute();
  return rows.filter((r) => r.is_web_public === 1 || (r.invite_only === 0 && !isGuest(me.role)) || (r.sub !== null && r.history_public_to_subscribers === 1)).map((r) => r.id);
}

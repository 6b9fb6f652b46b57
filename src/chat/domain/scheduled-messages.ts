// Scheduled messages (Zulip's send-later ScheduledMessage): the API object, a user's pending list,
// the checks of a create or an edit (the send path's own: domain/addressee.ts), and the rows'
// writes. Delivery is domain/scheduled-delivery.ts.
import { sql } from 'kysely';
import type { Database, Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm, ScheduledMessage } from '../tables.js';
import { deliveryTimeNotInFuture, invalidChannelIdType, invalidRecipientsType, scheduledMessageMissing } from '../errors.js';
import { checkAddressee, composeOutgoing, isChannelType, type Addressee } from './addressee.js';
import { checkCanPost } from './channel-access.js';
import { normaliseBody } from './topics.js';

/** Zulip's SCHEDULED_MESSAGE_LATE_CUTOFF_MINUTES: a message found due later than this fails instead. */
export const LATE_CUTOFF_SECONDS = 10 * 60;

/** The API's scheduled message object (Zulip's ScheduledMessage.to_dict). */
export function scheduledObject(row: ScheduledMessage): Record<string, unknown> {
  const common = {
    scheduled_message_id: Number(row.id),
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: Number(row.scheduled_timestamp),
    failed: Number(row.failed) === 1,
  };
  if (row.kind === 'stream') return { ...common, to: Number(row.stream_id), type: 'stream', topic: row.topic };
  return { ...common, to: toIds(row), type: 'private' };
}

export function toIds(row: Pick<ScheduledMessage, 'to_ids'>): number[] {
  return row.to_ids === '' ? [] : row.to_ids.split(',').map(Number);
}

/** A user's undelivered scheduled messages (failed ones too, so failures stay visible), by delivery time. */
export async function pendingScheduled(db: Queryable<ChatTables>, userId: number): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom('scheduled_messages').selectAll().where('sender_id', '=', userId).where('delivered', '=', 0).orderBy('scheduled_timestamp').orderBy('id').execute();
  return rows.map(scheduledObject);
}

/**
 * The user's own scheduled message; on PostgreSQL `lock` takes its row lock (an edit waits for a
 * delivery under way, then sees it delivered).
 */
export async function ownScheduled(db: Queryable<ChatTables>, engine: Database<ChatTables>['engine'], userId: number, id: number, lock = false): Promise<ScheduledMessage> {
  let q = db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).where('sender_id', '=', userId);
  if (lock && engine === 'postgres') q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw scheduledMessageMissing();
  return row;
}

/** Zulip's rule: the delivery time must be after now (to the second it was given in). */
export function checkDeliveryTime(timestamp: number, nowMs: number): void {
  if (timestamp * 1000 <= nowMs) throw deliveryTimeNotInFuture();
}

/**
 * `to` as Zulip's recipient_parsing reads it for a scheduled message: one channel id for a channel
 * message, a list of user ids (duplicates dropped) for a direct one.
 */
export function parseScheduledTo(type: string, to: number | number[]): number | number[] {
  if (isChannelType(type)) {
    if (typeof to !== 'number') throw invalidChannelIdType();
    return to;
  }
  if (!Array.isArray(to)) throw invalidRecipientsType();
  return [...new Set(to)];
}

/**
 * Zulip's Client.default_read_by_sender: messages from its own apps (a person at the keyboard) start
 * read for the sender, those from other API clients (an integration with the user's key) do not.
 */
export function clientReadsOwnMessages(client: string): boolean {
  const name = client.toLowerCase();
  return ['zulipandroid', 'zulipios', 'zulipdesktop', 'zulipmobile', 'zulipelectron', 'zulipterminal', 'snipe', 'website', 'ios', 'android'].includes(name) || name.includes('desktop app');
}

/** A direct message's `to` as Zulip lists it: the others in the conversation, or the sender alone for a message to self. */
export function directToIds(sender: ChatUser, recipients: ChatUser[]): number[] {
  const others = [...new Set(recipients.map((u) => u.id))].filter((id) => id !== sender.id).sort((a, b) => a - b);
  return others.length ? others : [sender.id];
}

/** The columns an addressee sets. */
export function addresseeColumns(sender: ChatUser, to: Addressee): Pick<ScheduledMessage, 'kind' | 'stream_id' | 'to_ids' | 'topic'> {
  if (to.kind === 'channel') return { kind: 'stream', stream_id: to.stream.id, to_ids: '', topic: to.topic };
  return { kind: 'private', stream_id: null, to_ids: directToIds(sender, to.recipients).join(','), topic: '' };
}

/** A scheduled message checked as its send will be: the addressee, the channel's posting permission, the content rendered. */
export async function checkScheduled(
  db: Queryable<ChatTables>,
  realm: Realm,
  me: ChatUser,
  draft: { type: string; to: number | number[]; topic: string | undefined; content: string },
  how: { client: string; nowSeconds: number; realmUrl: string },
): Promise<{ to: Addressee; content: string; rendered: string }> {
  const content = normaliseBody(draft.content);
  const to = await checkAddressee(db, realm, me, draft.type, draft.to, draft.topic);
  if (to.kind === 'channel') await checkCanPost(db, me, to.stream);
  const o = await composeOutgoing(db, realm, me, content, { ...how, readBySender: false });
  return { to, content, rendered: o.rendered };
}

/** The earliest delivery time still to be attempted, in Unix seconds (null: none). */
export async function nextDue(db: Queryable<ChatTables>): Promise<number | null> {
  const row = await sql<{ t: number | string | null }>`select min(scheduled_timestamp) as t from scheduled_messages where delivered = 0 and failed = 0`.execute(db);
  const t = row.rows[0]?.t;
  return t === null || t === undefined ? null : Number(t);
}

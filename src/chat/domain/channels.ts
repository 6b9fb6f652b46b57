// Channels (streams): names, creation with Zulip's defaults, who may see them, and their API shapes.

import type { Kysely } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import { preparedQuery } from '../../platform/db/fast/prepared.js';
import type { ChatTables, ChatUser, Stream } from '../tables.js';
import { channelNameBadCharacter, channelNameEmpty, channelNameTooLong, invalidParameters, paramBadValue, paramTooLong } from '../errors.js';
import { renderMarkdown } from './markdown.js';
import { openSpan } from './receipt.js';
import { systemGroupId, parseGroupSetting, type GroupSettingValue } from './groups.js';
import { MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH } from './realm.js';
import { checkRoom } from './bounds.js';

/** Zulip's palette for a user's new subscriptions, taken in turn. */
export const COLORS = [
  '#76ce90',
  '#fae589',
  '#a6c7e5',
  '#e79ab5',
  '#bfd56f',
  '#f4ae55',
  '#b0a5fd',
  '#addfe5',
  '#f5ce6e',
  '#c2726a',
  '#94c849',
  '#bd86e5',
  '#ee7e4a',
  '#a6dcbf',
  '#95a5fd',
  '#53a063',
  '#9987e1',
  '#e4523d',
  '#c2c2c2',
  '#4f8de4',
  '#c6a8ad',
  '#e7cc4d',
  '#c8bebf',
  '#a47462',
];

export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw channelNameEmpty();
  if ([...name].length > MAX_CHANNEL_NAME_LENGTH) throw channelNameTooLong({ limit: MAX_CHANNEL_NAME_LENGTH });
  // eslint-disable-next-line no-control-regex
  const bad = [...name].findIndex((c) => /[\u0000-\u001f\u007f\ufffe\uffff]/.test(c));
  if (bad >= 0) throw channelNameBadCharacter({ position: bad + 1 });
  return name;
}

/**
 * A description is one line (Zulip turns newlines into spaces) of limited length. Too long, it is
 * refused as Zulip's typed parameter refuses it, by the name the client sent it under (`where`, in
 * the parameter `varName`).
 */
export function checkChannelDescription(raw: string, where = 'description', varName = where): string {
  const description = raw.replace(/\n/g, ' ').trim();
  if ([...description].length > MAX_CHANNEL_DESCRIPTION_LENGTH) throw paramTooLong({ name: where, var_name: varName, limit: MAX_CHANNEL_DESCRIPTION_LENGTH });
  return description;
}

export interface Privacy {
  isPrivate: boolean;
  isWebPublic: boolean;
  historyPublic: boolean;
}

/**
 * The privacy a channel ends up with after PATCH /streams: what was asked, the rest kept, except
 * that turning a channel private ends web-public access and, unless asked, a change of privacy
 * picks Zulip's default history (shared for public channels, not for private). Contradictions are "Invalid parameters".
 */
export function channelPrivacy(now: Privacy, asked: Partial<Record<keyof Privacy, boolean>>): Privacy {
  const isPrivate = asked.isPrivate ?? now.isPrivate;
  const isWebPublic = asked.isWebPublic ?? (asked.isPrivate === true ? false : now.isWebPublic);
  const historyPublic = asked.historyPublic ?? (isPrivate !== now.isPrivate ? !isPrivate : isPrivate ? now.historyPublic : true);
  if (isPrivate && isWebPublic) throw invalidParameters();
  // Public and web-public channels always share their history.
  if (!isPrivate && !historyPublic) throw invalidParameters();
  return { isPrivate, isWebPublic, historyPublic };
}

/** message_retention_days: a positive number of days, "unlimited" (-1) or "realm_default" (null). */
export function parseRetentionDays(raw: number | string): number | null {
  if (raw === 'realm_default') return null;
  if (raw === 'unlimited') return -1;
  if (typeof raw === 'number' && Number.isInteger(raw) && raw > 0) return raw;
  throw paramBadValue({ name: 'message_retention_days', var_name: 'message_retention_days', value: raw });
}

// Every send and every channel narrow looks its channel up: compiled once (prepared.ts).
const byName = preparedQuery((db: Kysely<ChatTables>, realmId: number, nameLower: string) => db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).where('name_lower', '=', nameLower));
const byId = preparedQuery((db: Kysely<ChatTables>, realmId: number, id: number) => db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).where('id', '=', id));

export async function streamByName(db: Queryable<ChatTables>, realmId: number, name: string): Promise<Stream | undefined> {
  return (await byName(db, realmId, name.trim().toLowerCase()))[0];
}

export async function streamById(db: Queryable<ChatTables>, realmId: number, id: number): Promise<Stream | undefined> {
  return (await byId(db, realmId, id))[0];
}

// The access rules live in channel-access.ts; these names stay importable from here.
export { canAccessContent, canSeeMetadata, isSubscribed } from './channel-access.js';

export interface NewChannel {
  name: string;
  description: string;
  /** Where the request carried the description (subscriptions[0]["description"]), for its error. */
  descriptionParam?: { where: string; varName: string };
  inviteOnly: boolean;
  /** Readable by spectators; checked by the caller (spectators.ts checkCanCreateWebPublic). */
  isWebPublic?: boolean;
  historyPublicToSubscribers?: boolean;
  /** Who may post; role:everyone when absent. Checked by the caller (checkGroupSettingValue). */
  canSendMessageGroup?: GroupSettingValue;
}

/** Creates a channel with Zulip 10's default permission groups; the caller holds the transaction. */
export async function createStream(db: Queryable<ChatTables>, realmId: number, creator: ChatUser, c: NewChannel, nowSeconds: number): Promise<Stream> {
  const name = checkChannelName(c.name);
  const description = checkChannelDescription(c.description, c.descriptionParam?.where, c.descriptionParam?.varName);
  // Public channels always share history; private ones hide it from later subscribers unless asked.
  await checkRoom(db, 'channelsPerRealm', realmId, 1);
  const historyPublic = c.inviteOnly ? (c.historyPublicToSubscribers ?? false) : true;
  const group = (n: string) => systemGroupId(db, realmId, n);
  const recipient = await db.insertInto('recipients').values({ kind: 'stream', direct_key: null }).returning('id').executeTakeFirstOrThrow();
  return db
    .insertInto('streams')
    .values({
      realm_id: realmId,
      recipient_id: recipient.id,
      name,
      name_lower: name.toLowerCase(),
      description,
      rendered_description: description ? renderMarkdown(description) : '',
      invite_only: c.inviteOnly ? 1 : 0,
      is_web_public: c.isWebPublic ? 1 : 0,
      history_public_to_subscribers: historyPublic ? 1 : 0,
      message_retention_days: null,
      creator_id: creator.id,
      is_archived: 0,
      can_add_subscribers_group: JSON.stringify(await group('role:nobody')),
      can_remove_subscribers_group: JSON.stringify(await group('role:administrators')),
      can_administer_channel_group: JSON.stringify({ direct_members: [creator.id], direct_subgroups: [await group('role:administrators')] }),
      can_send_message_group: JSON.stringify(c.canSendMessageGroup ?? (await group('role:everyone'))),
      can_subscribe_group: JSON.stringify(await group('role:nobody')),
      date_created: nowSeconds,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Subscribes (or re-activates); false when the user was subscribed already. */
export async function subscribe(db: Queryable<ChatTables>, userId: number, streamId: number): Promise<boolean> {
  const row = await db.selectFrom('subscriptions').select(['id', 'active']).where('user_id', '=', userId).where('stream_id', '=', streamId).executeTakeFirst();
  if (row?.active === 1) return false;
  if (row) {
    await db.updateTable('subscriptions').set({ active: 1 }).where('id', '=', row.id).execute();
    await openSpan(db, userId, streamId);
    return true;
  }
  const count = await db
    .selectFrom('subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  await db
    .insertInto('subscriptions')
    .values({
      user_id: userId,
      stream_id: streamId,
      active: 1,
      color: COLORS[Number(count.n) % COLORS.length],
      is_muted: 0,
      pin_to_top: 0,
      desktop_notifications: null,
      email_notifications: null,
      push_notifications: null,
      audible_notifications: null,
      wildcard_mentions_notify: null,
    })
    .execute();
  await openSpan(db, userId, streamId);
  return true;
}

const subscribers = preparedQuery((db: Kysely<ChatTables>, streamId: number) =>
  db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', streamId).where('active', '=', 1).orderBy('user_id'),
);

export async function subscriberIds(db: Queryable<ChatTables>, streamId: number): Promise<number[]> {
  return (await subscribers(db, streamId)).map((r) => r.user_id);
}

const RECENT_SECONDS = 180 * 86400;

/** Fields every channel object carries (GET /streams, subscriptions, register). */
export async function channelFields(db: Queryable<ChatTables>, s: Stream, nowSeconds: number): Promise<Record<string, unknown>> {
  const stats = await db
    .selectFrom('messages')
    .select((eb) => [eb.fn.min('id').as('first'), eb.fn.max('date_sent').as('last')])
    .where('stream_id', '=', s.id)
    .executeTakeFirst();
  const last = stats?.last === null || stats?.last === undefined ? null : Number(stats.last);
  return {
    stream_id: s.id,
    name: s.name,
    is_archived: s.is_archived === 1,
    description: s.description,
    rendered_description: s.rendered_description,
    date_created: s.date_created,
    creator_id: s.creator_id,
    invite_only: s.invite_only === 1,
    is_web_public: s.is_web_public === 1,
    stream_post_policy: 1,
    message_retention_days: s.message_retention_days,
    history_public_to_subscribers: s.history_public_to_subscribers === 1,
    first_message_id: stats?.first === null || stats?.first === undefined ? null : Number(stats.first),
    is_recently_active: (last ?? s.date_created) > nowSeconds - RECENT_SECONDS,
    is_announcement_only: false,
    can_add_subscribers_group: parseGroupSetting(s.can_add_subscribers_group),
    can_remove_subscribers_group: parseGroupSetting(s.can_remove_subscribers_group),
    can_administer_channel_group: parseGroupSetting(s.can_administer_channel_group),
    can_send_message_group: parseGroupSetting(s.can_send_message_group),
    can_subscribe_group: parseGroupSetting(s.can_subscribe_group),
    // Zulip leaves traffic null for channels too new to estimate; Keel does not estimate yet.
    stream_weekly_traffic: null,
  };
}

// Notices about channels after their creation: who may see a channel (and so its subscriber list),
// subscription peer_add/peer_remove and update, stream update and delete (with what the
// archived_channels capability changes), default_streams, and the stream create/delete a user gets
// when a change gives or takes away their sight of channels.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Stream } from '../tables.js';
import { canSeeMetadata } from '../domain/channel-access.js';
import { channelFields } from '../domain/channels.js';
import { isGuest } from '../domain/roles.js';
import type { EventQueue } from './queue.js';
import type { Notice } from './hub.js';

type Event = Record<string, unknown> & { type: string };

const archivedAware = (queue: EventQueue) => queue.options.capabilities.archived_channels === true;

/**
 * The active users who may know the channel exists, and so see its subscribers (Zulip's rule for
 * peer events and stream events). A public channel: every non-guest, and guests subscribed to it.
 */
export async function channelViewers(db: Queryable<ChatTables>, stream: Stream): Promise<number[]> {
  const users = await db.selectFrom('chat_users').selectAll().where('realm_id', '=', stream.realm_id).where('is_active', '=', 1).execute();
  if (stream.invite_only === 0 && stream.is_web_public === 0) {
    const subscribed = new Set((await db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', stream.id).where('active', '=', 1).execute()).map((r) => r.user_id));
    return users.filter((u) => !isGuest(u.role) || subscribed.has(u.id)).map((u) => u.id);
  }
  const out: number[] = [];
  for (const u of users) if (await canSeeMetadata(db, u, stream)) out.push(u.id);
  return out;
}

/** The ids of every channel of the realm the user may know exists (archived ones included). */
export async function visibleChannelIds(db: Queryable<ChatTables>, user: ChatUser): Promise<Set<number>> {
  const streams = await db.selectFrom('streams').selectAll().where('realm_id', '=', user.realm_id).execute();
  const out = new Set<number>();
  for (const s of streams) if (await canSeeMetadata(db, user, s)) out.add(s.id);
  return out;
}

/** The stream delete event; `streams` is the deprecated form clients before feature level 343 read. */
export function streamDeleteEvent(streamIds: number[]): Event {
  return { type: 'stream', op: 'delete', streams: streamIds.map((id) => ({ stream_id: id })), stream_ids: streamIds };
}

/**
 * subscription peer_add / peer_remove: `userIds` joined or left `stream`, told to everyone else who
 * may see its subscribers (those users get their own subscription add/remove instead). Clients
 * without archived_channels do not know archived channels, so they hear nothing of them.
 */
export async function peerNotice(db: Queryable<ChatTables>, op: 'peer_add' | 'peer_remove', stream: Stream, userIds: number[]): Promise<Notice[]> {
  if (!userIds.length) return [];
  const changed = new Set(userIds);
  const receivers = (await channelViewers(db, stream)).filter((id) => !changed.has(id));
  const event = { type: 'subscription', op, stream_ids: [stream.id], user_ids: [...changed].sort((a, b) => a - b) };
  return [{ type: 'subscription', userIds: receivers, render: (q) => (stream.is_archived === 1 && !archivedAware(q) ? null : event) }];
}

/** subscription update, to the user's own clients: one property of their subscription to a channel. */
export function subscriptionUpdateNotice(userId: number, streamId: number, property: string, value: unknown): Notice {
  const event = { type: 'subscription', op: 'update', stream_id: streamId, property, value };
  return { type: 'subscription', userIds: [userId], render: () => event };
}

/**
 * stream update: one property of a channel, to `receivers`. `name` is the channel's name before the
 * change (Zulip sends the old name with a rename); `extra` carries the companions of some properties
 * (rendered_description; history_public_to_subscribers and is_web_public with invite_only).
 */
export function streamUpdateNotice(stream: Stream, name: string, property: string, value: unknown, receivers: number[], extra: Record<string, unknown> = {}): Notice {
  const event = { type: 'stream', op: 'update', stream_id: stream.id, name, property, value, ...extra };
  return { type: 'stream', userIds: receivers, render: (q) => (stream.is_archived === 1 && !archivedAware(q) ? null : event) };
}

/**
 * A channel was archived: clients that declared archived_channels learn it through a stream update
 * of is_archived; the others lose the channel (stream delete), as Zulip does for them.
 */
export async function streamArchivedNotice(db: Queryable<ChatTables>, stream: Stream): Promise<Notice[]> {
  const update = { type: 'stream', op: 'update', stream_id: stream.id, name: stream.name, property: 'is_archived', value: true };
  const remove = streamDeleteEvent([stream.id]);
  return [{ type: 'stream', userIds: await channelViewers(db, stream), render: (q) => (archivedAware(q) ? update : remove) }];
}

/** default_streams: the realm's whole list of default channel ids, to every active user. */
export async function defaultStreamsNotice(db: Queryable<ChatTables>, realmId: number): Promise<Notice[]> {
  const ids = (await db.selectFrom('default_streams').select('stream_id').where('realm_id', '=', realmId).orderBy('stream_id').execute()).map((r) => r.stream_id);
  const users = (await db.selectFrom('chat_users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).execute()).map((r) => r.id);
  const event = { type: 'default_streams', default_streams: ids };
  return [{ type: 'default_streams', userIds: users, render: () => event }];
}

/**
 * What users get when a change (a role, a subscription, a channel's privacy) lets them see a channel
 * they could not: stream create and, unless they just subscribed (their subscription add lists
 * them), peer_add for its existing subscribers, now visible to them.
 */
export async function revealNotices(db: Queryable<ChatTables>, stream: Stream, userIds: number[], nowSeconds: number, o: { peers: boolean }): Promise<Notice[]> {
  if (!userIds.length) return [];
  const hidden = (q: EventQueue) => stream.is_archived === 1 && !archivedAware(q);
  const create = { type: 'stream', op: 'create', streams: [await channelFields(db, stream, nowSeconds)] };
  const out: Notice[] = [{ type: 'stream', userIds, render: (q) => (hidden(q) ? null : create) }];
  if (!o.peers) return out;
  const subscribers = (
    await db
      .selectFrom('subscriptions')
      .innerJoin('chat_users', 'chat_users.id', 'subscriptions.user_id')
      .select('subscriptions.user_id')
      .where('subscriptions.stream_id', '=', stream.id)
      .where('subscriptions.active', '=', 1)
      .where('chat_users.is_active', '=', 1)
      .orderBy('subscriptions.user_id')
      .execute()
  ).map((r) => r.user_id);
  // Each receiver hears of the others: a user subscribed already knows of their own subscription.
  for (const userId of userIds) {
    const others = subscribers.filter((id) => id !== userId);
    if (!others.length) continue;
    const event = { type: 'subscription', op: 'peer_add', stream_ids: [stream.id], user_ids: others };
    out.push({ type: 'subscription', userIds: [userId], render: (q) => (hidden(q) ? null : event) });
  }
  return out;
}

/** What users get when they can no longer see channels: stream delete. */
export function hideNotice(streamIds: number[], userIds: number[]): Notice[] {
  if (!streamIds.length || !userIds.length) return [];
  const event = streamDeleteEvent(streamIds);
  return [{ type: 'stream', userIds, render: () => event }];
}

/** One user's sight of channels before and after a change (a role change): what they gained and lost. */
export async function sightNotices(db: Queryable<ChatTables>, userId: number, before: Set<number>, after: Set<number>, nowSeconds: number): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const id of [...after].filter((x) => !before.has(x)).sort((a, b) => a - b)) {
    const stream = await db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    out.push(...(await revealNotices(db, stream, [userId], nowSeconds, { peers: true })));
  }
  out.push(
    ...hideNotice(
      [...before].filter((x) => !after.has(x)).sort((a, b) => a - b),
      [userId],
    ),
  );
  return out;
}

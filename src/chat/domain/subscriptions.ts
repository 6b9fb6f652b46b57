// The subscription object (a channel with the user's own settings for it), as GET
// /users/me/subscriptions, POST /register and subscription events show it.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Stream } from '../tables.js';
import { channelFields, COLORS, subscriberIds } from './channels.js';
import { booleanSetting } from './presence.js';

/** The per-channel notification settings, and the user setting (with Zulip's default) each inherits when null. */
const INHERITED = [
  ['desktop_notifications', 'enable_stream_desktop_notifications', false],
  ['email_notifications', 'enable_stream_email_notifications', false],
  ['push_notifications', 'enable_stream_push_notifications', false],
  ['audible_notifications', 'enable_stream_audible_notifications', false],
  ['wildcard_mentions_notify', 'wildcard_mentions_notify', true],
] as const;

/**
 * For clients without the notification_settings_null capability: a channel setting left null
 * (inherit) is sent as the user's own setting it inherits, as Zulip does for old clients.
 */
export function withInheritedNotifications(subs: Record<string, unknown>[], user: Pick<ChatUser, 'settings'>): Record<string, unknown>[] {
  return subs.map((sub) => {
    const out = { ...sub };
    for (const [field, setting, fallback] of INHERITED) if (out[field] === null) out[field] = booleanSetting(user, setting, fallback);
    return out;
  });
}

/** The user's subscription rows, active ones or those left (unsubscribed), by channel name. */
export async function subscriptionObjects(
  db: Queryable<ChatTables>,
  userId: number,
  nowSeconds: number,
  o: { active: boolean; streamIds?: number[]; includeSubscribers: boolean; includeArchived?: boolean },
): Promise<Record<string, unknown>[]> {
  if (o.streamIds && !o.streamIds.length) return [];
  let q = db
    .selectFrom('subscriptions')
    .innerJoin('streams', 'streams.id', 'subscriptions.stream_id')
    .selectAll('streams')
    .select([
      'subscriptions.color',
      'subscriptions.is_muted',
      'subscriptions.pin_to_top',
      'subscriptions.desktop_notifications',
      'subscriptions.email_notifications',
      'subscriptions.push_notifications',
      'subscriptions.audible_notifications',
      'subscriptions.wildcard_mentions_notify',
    ])
    .where('subscriptions.user_id', '=', userId)
    .where('subscriptions.active', '=', o.active ? 1 : 0);
  if (o.streamIds) q = q.where('streams.id', 'in', o.streamIds);
  // Archived channels only for clients that declared archived_channels (register passes it).
  if (o.includeArchived === false) q = q.where('streams.is_archived', '=', 0);
  const rows = await q.orderBy('streams.name_lower').execute();
  const bool = (v: number | null) => (v === null ? null : v === 1);
  const out = [];
  for (const r of rows) {
    const sub: Record<string, unknown> = {
      ...(await channelFields(db, r, nowSeconds)),
      color: r.color,
      is_muted: r.is_muted === 1,
      in_home_view: r.is_muted !== 1,
      pin_to_top: r.pin_to_top === 1,
      desktop_notifications: bool(r.desktop_notifications),
      email_notifications: bool(r.email_notifications),
      push_notifications: bool(r.push_notifications),
      audible_notifications: bool(r.audible_notifications),
      wildcard_mentions_notify: bool(r.wildcard_mentions_notify),
    };
    if (o.includeSubscribers) sub.subscribers = await subscriberIds(db, r.id);
    out.push(sub);
  }
  return out;
}

/**
 * A spectator's subscriptions: the web-public channels, as a new user's subscriptions to them would
 * be (Zulip's get_web_public_subs: colors in turn, not muted, notifications on).
 */
export async function spectatorSubscriptionObjects(db: Queryable<ChatTables>, streams: Stream[], nowSeconds: number): Promise<Record<string, unknown>[]> {
  const out = [];
  for (const [i, s] of streams.entries()) {
    out.push({
      ...(await channelFields(db, s, nowSeconds)),
      color: COLORS[i % COLORS.length],
      is_muted: false,
      in_home_view: true,
      pin_to_top: false,
      desktop_notifications: true,
      email_notifications: true,
      push_notifications: true,
      audible_notifications: true,
      wildcard_mentions_notify: true,
    });
  }
  return out;
}

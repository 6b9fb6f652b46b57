// Channels and subscriptions: subscribe (creating channels), list own subscriptions, list channels,
// find a channel's id by name, change a channel's settings (PATCH /streams/{stream_id}).
import { closeSpan, receivedCondition } from '../domain/receipt.js';
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall, type ChatResult } from '../endpoint.js';
import {
  adminRequired,
  badAddColor,
  badColor,
  channelAlreadyArchived,
  channelAlreadyNamed,
  channelContentAccessRequired,
  channelNameTaken,
  channelsDoNotExist,
  defaultChannelPrivate,
  insufficientPermission,
  invalidChannelId,
  invalidChannelName,
  invalidParameters,
  noAdministerPermission,
  noSuchUser,
  notAllowedForGuests,
  notAuthorizedForQuery,
  nothingToDoSubscriptions,
  notSubscribedToChannelId,
  ownerRequired,
  paramNotBoolean,
  privateDefaultChannel,
  unableToAccessChannel,
  unknownSubscriptionProperty,
} from '../errors.js';
import type { Updateable } from 'kysely';
import type { ChatTables, ChatUser, Stream, StreamRow } from '../tables.js';
import type { Queryable } from '../../platform/db/database.js';
import type { Notice } from '../events/hub.js';
import { channelFields, channelPrivacy, checkChannelDescription, checkChannelName, createStream, parseRetentionDays, streamById, streamByName, subscribe, subscriberIds } from '../domain/channels.js';
import { renderMarkdown } from '../domain/markdown.js';
import { canAccessContent, canAdminister, canSeeMetadata, isSubscribed } from '../domain/channel-access.js';
import { checkGroupSettingUpdate, checkGroupSettingValue, inGroupSetting, parseGroupSetting } from '../domain/groups.js';
import { displayTopic } from '../domain/topics.js';
import { subscriptionObjects } from '../domain/subscriptions.js';
import { streamCreateNotices, subscriptionAddNotices, subscriptionRemoveNotices } from '../events/notices.js';
import { defaultStreamsNotice, hideNotice, peerNotice, revealNotices, streamArchivedNotice, streamUpdateNotice, subscriptionUpdateNotice, channelViewers } from '../events/channel-notices.js';
import { isAdmin, isGuest, ROLE } from '../domain/roles.js';
import { userByEmail, userById } from '../domain/users.js';
import { unixSeconds } from '../../platform/clock.js';
import { checkCanCreateWebPublic } from '../domain/spectators.js';
import { holdsRealmPermission } from '../domain/realm-settings.js';

export const subscribeEndpoint = defineEndpoint({
  method: 'POST',
  path: '/users/me/subscriptions',
  summary: 'Subscribe to a channel',
  auth: 'user',
  params: Type.Object({
    subscriptions: Type.Array(Type.Object({ name: Type.String(), description: Type.Optional(Type.String()) }, { additionalProperties: false })),
    principals: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Array(Type.Integer())])),
    authorization_errors_fatal: Type.Boolean({ default: true }),
    invite_only: Type.Boolean({ default: false }),
    is_web_public: Type.Boolean({ default: false }),
    history_public_to_subscribers: Type.Optional(Type.Boolean()),
    // Applies only to channels this request creates, as in Zulip.
    can_send_message_group: Type.Optional(
      Type.Union([Type.Integer(), Type.Object({ direct_members: Type.Array(Type.Integer()), direct_subgroups: Type.Array(Type.Integer()) }, { additionalProperties: false })]),
    ),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    // Zulip's add_subscriptions_backend is require_non_guest_user: a guest subscribes to nothing itself.
    if (isGuest(me.role)) throw notAllowedForGuests();
    const { db, clock, events } = call.services;
    const now = unixSeconds(clock);
    // What the transaction did, for the events published after it commits.
    const created: Stream[] = [];
    const added = new Map<number, number[]>();
    // Channels a target could not see before this subscription (private ones; public ones for a
    // guest): they get stream create, as Zulip sends for previously inaccessible channels.
    const revealed = new Map<number, number[]>();
    const work = () =>
      db.transaction(async (trx) => {
        if (p.can_send_message_group !== undefined) {
          await checkGroupSettingValue(trx, call.realm.id, 'can_send_message_group', p.can_send_message_group, { allowNobody: true });
        }
        // Whom to subscribe: the caller, or the principals (ids preferred, emails accepted).
        let targets: ChatUser[] = [me];
        if (p.principals !== undefined) {
          targets = [];
          for (const who of p.principals as (string | number)[]) {
            const u = typeof who === 'number' ? await userById(trx, call.realm.id, who) : await userByEmail(trx, call.realm.id, who);
            if (!u || u.is_active !== 1) throw noSuchUser();
            if (!targets.some((t) => t.id === u.id)) targets.push(u);
          }
        }
        const others = targets.some((t) => t.id !== me.id);
        // The realm's can_add_subscribers_group (members by default) decides who may subscribe others.
        if (others && !(await holdsRealmPermission(trx, call.realm.id, me, 'can_add_subscribers_group'))) throw insufficientPermission();
        const subscribed: Record<string, string[]> = {};
        const already: Record<string, string[]> = {};
        const unauthorized: string[] = [];
        const streams: Stream[] = [];
        for (const entry of p.subscriptions) {
          const name = checkChannelName(entry.name);
          let stream = await streamByName(trx, call.realm.id, name);
          if (!stream) {
            // Who may create a channel of this kind (members by default); a web-public one is public too.
            const creators = p.invite_only ? 'can_create_private_channel_group' : 'can_create_public_channel_group';
            if (!(await holdsRealmPermission(trx, call.realm.id, me, creators))) throw insufficientPermission();
            if (p.is_web_public) {
              if (p.invite_only) throw invalidParameters();
              await checkCanCreateWebPublic(trx, call.realm, me);
            }
            stream = await createStream(
              trx,
              call.realm.id,
              me,
              {
                name,
                description: entry.description ?? '',
                descriptionParam: { where: `subscriptions[${p.subscriptions.indexOf(entry)}]["description"]`, varName: 'subscriptions' },
                inviteOnly: p.invite_only,
                isWebPublic: p.is_web_public,
                historyPublicToSubscribers: p.history_public_to_subscribers,
                canSendMessageGroup: p.can_send_message_group,
              },
              now,
            );
            created.push(stream);
          } else if (!(await canAccessContent(trx, me, stream)) && !(stream.invite_only === 1 && isAdmin(me.role))) {
            if (p.authorization_errors_fatal) throw unableToAccessChannel({ name: stream.name });
            unauthorized.push(stream.name);
            continue;
          }
          if (!streams.some((s) => s.id === stream!.id)) streams.push(stream);
        }
        for (const stream of streams) {
          for (const t of targets) {
            if (!created.includes(stream) && !(await canSeeMetadata(trx, t, stream))) {
              (revealed.get(t.id) ?? revealed.set(t.id, []).get(t.id)!).push(stream.id);
            }
            const isNew = await subscribe(trx, t.id, stream.id);
            (isNew ? subscribed : already)[String(t.id)] ??= [];
            (isNew ? subscribed : already)[String(t.id)].push(stream.name);
            if (isNew) (added.get(t.id) ?? added.set(t.id, []).get(t.id)!).push(stream.id);
          }
        }
        const out: Record<string, unknown> = { subscribed, already_subscribed: already };
        if (!p.authorization_errors_fatal) out.unauthorized = unauthorized;
        return out;
      });
    return events.write(work, async () => {
      const out = await streamCreateNotices(db.kysely, created, now);
      for (const [userId, ids] of revealed) {
        for (const id of ids) out.push(...(await revealNotices(db.kysely, (await streamById(db.kysely, call.realm.id, id))!, [userId], now, { peers: false })));
      }
      out.push(...(await subscriptionAddNotices(db.kysely, added, now)));
      for (const [stream, userIds] of await usersByChannel(db.kysely, call.realm.id, added)) out.push(...(await peerNotice(db.kysely, 'peer_add', stream, userIds)));
      return out;
    });
  },
});

export const getSubscriptions = defineEndpoint({
  method: 'GET',
  path: '/users/me/subscriptions',
  summary: 'Get subscribed channels',
  auth: 'user',
  params: Type.Object({ include_subscribers: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const subscriptions = await subscriptionObjects(call.services.db.kysely, me.id, unixSeconds(call.services.clock), { active: true, includeSubscribers: p.include_subscribers });
    return { subscriptions };
  },
});

export const getStreams = defineEndpoint({
  method: 'GET',
  path: '/streams',
  summary: 'Get all channels',
  auth: 'user',
  params: Type.Object({
    include_public: Type.Boolean({ default: true }),
    include_web_public: Type.Boolean({ default: false }),
    include_subscribed: Type.Boolean({ default: true }),
    exclude_archived: Type.Boolean({ default: true }),
    include_all_active: Type.Boolean({ default: false }),
    include_all: Type.Boolean({ default: false }),
    include_default: Type.Boolean({ default: false }),
    include_owner_subscribed: Type.Boolean({ default: false }),
    include_can_access_content: Type.Boolean({ default: false }),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    const all = p.include_all || p.include_all_active;
    if (p.include_all_active && !isAdmin(me.role)) throw notAuthorizedForQuery();
    const owner = p.include_owner_subscribed && me.is_bot === 1 && me.bot_owner_id !== null ? await userById(db, call.realm.id, me.bot_owner_id) : undefined;
    const rows = await db.selectFrom('streams').selectAll().where('realm_id', '=', call.realm.id).orderBy('name_lower').execute();
    const now = unixSeconds(call.services.clock);
    const defaults = await defaultStreamIds(db, call.realm.id);
    const streams = [];
    for (const s of rows) {
      if (p.exclude_archived && s.is_archived === 1) continue;
      const subscribedByMe = (await subscriberIds(db, s.id)).includes(me.id);
      const wanted =
        (all && (await canSeeMetadata(db, me, s))) ||
        (p.include_public && s.invite_only === 0 && !isGuest(me.role)) ||
        (p.include_web_public && s.is_web_public === 1) ||
        (p.include_subscribed && subscribedByMe) ||
        (p.include_default && defaults.has(s.id)) ||
        (p.include_can_access_content && (await canAccessContent(db, me, s))) ||
        (owner !== undefined && (await subscriberIds(db, s.id)).includes(owner.id));
      if (!wanted) continue;
      const fields = await channelFields(db, s, now);
      if (p.include_default) fields.is_default = defaults.has(s.id);
      streams.push(fields);
    }
    return { streams };
  },
});

export const getStreamId = defineEndpoint({
  method: 'GET',
  path: '/get_stream_id',
  summary: 'Get channel ID',
  auth: 'user',
  params: Type.Object({ stream: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const stream = await streamByName(call.services.db.kysely, call.realm.id, p.stream);
    if (!stream || !(await canSeeMetadata(call.services.db.kysely, me, stream))) throw invalidChannelName({ name: p.stream });
    return { stream_id: stream.id };
  },
});

/** The channel by id if the caller may know it exists; Zulip answers "Invalid channel ID" otherwise. */
async function visibleStream(db: Queryable<ChatTables>, realmId: number, me: ChatUser, id: number): Promise<Stream> {
  const stream = await streamById(db, realmId, id);
  if (!stream || !(await canSeeMetadata(db, me, stream))) throw invalidChannelId();
  return stream;
}

export const getStreamById = defineEndpoint({
  method: 'GET',
  path: '/streams/{stream_id}',
  summary: 'Get a channel by ID',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer() }),
  async handler(call, p) {
    const db = call.services.db.kysely;
    const stream = await visibleStream(db, call.realm.id, requireUser(call), p.stream_id);
    return { stream: await channelFields(db, stream, unixSeconds(call.services.clock)) };
  },
});

export const archiveStream = defineEndpoint({
  method: 'DELETE',
  path: '/streams/{stream_id}',
  summary: 'Archive a channel',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db;
    const work = () =>
      db.transaction(async (trx) => {
        const stream = await visibleStream(trx, call.realm.id, me, p.stream_id);
        if (!(await canAdminister(trx, me, stream))) throw noAdministerPermission();
        if (stream.is_archived === 1) throw channelAlreadyArchived();
        await trx.updateTable('streams').set({ is_archived: 1 }).where('id', '=', stream.id).execute();
        // An archived channel is no longer offered to new users.
        const wasDefault = await trx.deleteFrom('default_streams').where('stream_id', '=', stream.id).executeTakeFirst();
        return { stream: { ...stream, is_archived: 1 }, wasDefault: Number(wasDefault.numDeletedRows) > 0 };
      });
    await call.services.events.write(work, async ({ stream, wasDefault }) => [
      ...(await streamArchivedNotice(db.kysely, stream)),
      ...(wasDefault ? await defaultStreamsNotice(db.kysely, call.realm.id) : []),
    ]);
    return {};
  },
});

/** Active subscribers only: deactivated users keep their rows but are not listed (as in Zulip). */
async function activeSubscriberIds(db: Queryable<ChatTables>, streamId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('subscriptions')
    .innerJoin('chat_users', 'chat_users.id', 'subscriptions.user_id')
    .select('subscriptions.user_id')
    .where('subscriptions.stream_id', '=', streamId)
    .where('subscriptions.active', '=', 1)
    .where('chat_users.is_active', '=', 1)
    .orderBy('subscriptions.user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

export const getStreamMembers = defineEndpoint({
  method: 'GET',
  path: '/streams/{stream_id}/members',
  summary: 'Get the subscribers of a channel',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer() }),
  async handler(call, p) {
    const db = call.services.db.kysely;
    const stream = await visibleStream(db, call.realm.id, requireUser(call), p.stream_id);
    return { subscribers: await activeSubscriberIds(db, stream.id) };
  },
});

export const getSubscriptionStatus = defineEndpoint({
  method: 'GET',
  path: '/users/{user_id}/subscriptions/{stream_id}',
  summary: 'Get subscription status',
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer(), stream_id: Type.Integer() }),
  async handler(call, p) {
    const db = call.services.db.kysely;
    const target = await userById(db, call.realm.id, p.user_id);
    if (!target) throw noSuchUser();
    const stream = await visibleStream(db, call.realm.id, requireUser(call), p.stream_id);
    return { is_subscribed: await isSubscribed(db, target.id, stream.id) };
  },
});

export const getStreamTopics = defineEndpoint({
  method: 'GET',
  path: '/users/me/{stream_id}/topics',
  summary: 'Get topics in a channel',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer(), allow_empty_topic_name: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    const stream = await streamById(db, call.realm.id, p.stream_id);
    if (!stream || !(await canAccessContent(db, me, stream))) throw invalidChannelId();
    // Without shared history (or content access without a subscription) only received messages count.
    const shared = stream.history_public_to_subscribers === 1;
    let q = db
      .selectFrom('messages')
      .select(['messages.topic', (eb) => eb.fn.max('messages.id').as('max_id')])
      .where('messages.stream_id', '=', stream.id)
      .groupBy('messages.topic');
    if (!shared) q = q.where(receivedCondition(me.id, 'messages'));
    const rows = await q.execute();
    // Topics differing only in case are one topic, named as in its latest message.
    const byKey = new Map<string, { name: string; max_id: number }>();
    for (const r of rows) {
      const max = Number(r.max_id);
      const key = r.topic.toLowerCase();
      const had = byKey.get(key);
      if (!had || had.max_id < max) byKey.set(key, { name: r.topic, max_id: max });
    }
    const topics = [...byKey.values()].sort((a, b) => b.max_id - a.max_id).map((t) => ({ max_id: t.max_id, name: displayTopic(t.name, p.allow_empty_topic_name) }));
    return { topics };
  },
});

export const unsubscribeEndpoint = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/subscriptions',
  summary: 'Unsubscribe from a channel',
  auth: 'user',
  params: Type.Object({
    subscriptions: Type.Array(Type.String()),
    principals: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Array(Type.Integer())])),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const gone = new Map<number, Stream[]>();
    const work = () =>
      call.services.db.transaction(async (trx) => {
        let targets: ChatUser[] = [me];
        if (p.principals !== undefined && p.principals.length) {
          targets = [];
          for (const who of p.principals as (string | number)[]) {
            const u = typeof who === 'number' ? await userById(trx, call.realm.id, who) : await userByEmail(trx, call.realm.id, who);
            if (!u || u.is_active !== 1) throw noSuchUser();
            if (!targets.some((t) => t.id === u.id)) targets.push(u);
          }
        }
        const streams: Stream[] = [];
        const missing: string[] = [];
        for (const name of p.subscriptions) {
          const stream = await streamByName(trx, call.realm.id, name);
          // A private channel the caller cannot see answers exactly as a missing one.
          if (!stream || !(await canSeeMetadata(trx, me, stream))) missing.push(name.trim());
          else if (!streams.some((s) => s.id === stream.id)) streams.push(stream);
        }
        // Zulip names every unknown channel at once (zerver/lib/streams.py list_to_streams).
        if (missing.length) throw channelsDoNotExist({ names: missing.join(', ') });
        // Removing others: administrators; owners of a bot; members of can_remove_subscribers_group with access.
        for (const t of targets) {
          if (t.id === me.id || isAdmin(me.role) || (t.is_bot === 1 && t.bot_owner_id === me.id)) continue;
          for (const s of streams) {
            const allowed = (await canAccessContent(trx, me, s)) && (await inGroupSetting(trx, me.id, parseGroupSetting(s.can_remove_subscribers_group)));
            if (!allowed) throw insufficientPermission();
          }
        }
        const removed: string[] = [];
        const notRemoved: string[] = [];
        for (const s of streams) {
          for (const t of targets) {
            const res = await trx.updateTable('subscriptions').set({ active: 0 }).where('user_id', '=', t.id).where('stream_id', '=', s.id).where('active', '=', 1).executeTakeFirst();
            if (Number(res.numUpdatedRows) > 0) await closeSpan(trx, t.id, s.id);
            (Number(res.numUpdatedRows) > 0 ? removed : notRemoved).push(s.name);
            if (Number(res.numUpdatedRows) > 0) (gone.get(t.id) ?? gone.set(t.id, []).get(t.id)!).push(s);
          }
        }
        return { removed, not_removed: notRemoved };
      });
    return call.services.events.write(work, async () => {
      const db = call.services.db.kysely;
      const out = subscriptionRemoveNotices(gone);
      const left = new Map([...gone].map(([userId, streams]) => [userId, streams.map((s) => s.id)]));
      const channels = await usersByChannel(db, call.realm.id, left);
      for (const [stream, userIds] of channels) out.push(...(await peerNotice(db, 'peer_remove', stream, userIds)));
      // Leaving a private channel (a public one, for a guest) takes away the sight of it: stream delete.
      for (const [stream, userIds] of channels) {
        const blind = [];
        for (const userId of userIds) if (!(await canSeeMetadata(db, (await userById(db, call.realm.id, userId))!, stream))) blind.push(userId);
        out.push(...hideNotice([stream.id], blind));
      }
      return out;
    });
  },
});

/**
 * PATCH /users/me/subscriptions: subscribing to some channels and leaving others in one request
 * (Zulip's update_subscriptions_backend), answered with both answers' fields. Zulip runs both in
 * one transaction; here every name to leave is checked first, so an unknown one refuses the whole
 * request before anything is subscribed. A color asked for applies to channels this request
 * newly subscribes to, as in Zulip; it is announced as a subscription update after the add.
 */
export const updateSubscriptions = defineEndpoint({
  method: 'PATCH',
  path: '/users/me/subscriptions',
  summary: 'Update subscriptions',
  auth: 'user',
  params: Type.Object({
    delete: Type.Optional(Type.Array(Type.String())),
    add: Type.Optional(Type.Array(Type.Object({ name: Type.String(), color: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }, { additionalProperties: false }))),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const add = p.add ?? [];
    const leave = p.delete ?? [];
    if (!add.length && !leave.length) throw nothingToDoSubscriptions();
    // Zulip runs its add view even for an empty `add`, and that view refuses guests first.
    if (isGuest(me.role)) throw notAllowedForGuests();
    for (const entry of add) if (entry.color !== undefined && !/^#[0-9a-fA-F]{6}$/.test(entry.color)) throw badAddColor();
    const db = call.services.db.kysely;
    const missing: string[] = [];
    for (const name of leave) {
      const stream = await streamByName(db, call.realm.id, name);
      if (!stream || !(await canSeeMetadata(db, me, stream))) missing.push(name.trim());
    }
    if (missing.length) throw channelsDoNotExist({ names: missing.join(', ') });
    let added: ChatResult = { subscribed: {}, already_subscribed: {} };
    if (add.length) {
      const subscriptions = add.map((e) => (e.description === undefined ? { name: e.name } : { name: e.name, description: e.description }));
      added = await subscribeEndpoint.handler(call, { subscriptions, authorization_errors_fatal: true, invite_only: false, is_web_public: false });
      const mine = new Set((added.subscribed as Record<string, string[]>)[String(me.id)] ?? []);
      const colors = [];
      for (const e of add) {
        if (e.color === undefined) continue;
        const stream = await streamByName(db, call.realm.id, e.name.trim());
        if (stream && mine.has(stream.name)) colors.push({ stream_id: stream.id, property: 'color', value: e.color });
      }
      if (colors.length) await changeSubscriptionProperties(call, colors);
    }
    const removed = leave.length ? await unsubscribeEndpoint.handler(call, { subscriptions: leave }) : { removed: [], not_removed: [] };
    return { ...added, ...removed };
  },
});

/** Turns user -> channel ids into (channel as it is now, its user ids), for the peer notices. */
async function usersByChannel(db: Queryable<ChatTables>, realmId: number, m: Map<number, number[]>): Promise<[Stream, number[]][]> {
  const users = new Map<number, number[]>();
  for (const [userId, streamIds] of m) for (const id of streamIds) (users.get(id) ?? users.set(id, []).get(id)!).push(userId);
  const out: [Stream, number[]][] = [];
  for (const [id, userIds] of users) out.push([(await streamById(db, realmId, id))!, userIds]);
  return out;
}

const SUB_PROPERTIES = [
  'color',
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;
type SubProperty = (typeof SUB_PROPERTIES)[number];

export const updateSubscriptionSettings = defineEndpoint({
  method: 'POST',
  path: '/users/me/subscriptions/properties',
  summary: 'Update subscription settings',
  auth: 'user',
  params: Type.Object({
    subscription_data: Type.Array(Type.Object({ stream_id: Type.Integer(), property: Type.String(), value: Type.Union([Type.Boolean(), Type.String()]) })),
  }),
  async handler(call, p) {
    await changeSubscriptionProperties(call, p.subscription_data);
    // Zulip stopped echoing subscription_data at feature level 111; the documented answer is bare.
    return {};
  },
});

/**
 * PATCH /users/me/subscriptions/{stream_id}: one property of one subscription, the form before the
 * bulk endpoint above, which Zulip 10.2 still routes (update_subscriptions_property) to the same
 * rules and answer. `value` is a JSON boolean when it reads as one, otherwise the text (a color).
 */
export const updateSubscriptionProperty = defineEndpoint({
  method: 'PATCH',
  path: '/users/me/subscriptions/{stream_id}',
  summary: 'Update a subscription setting (legacy single-property form)',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer(), property: Type.String(), value: Type.Union([Type.Boolean(), Type.String()]) }),
  async handler(call, p) {
    await changeSubscriptionProperties(call, [{ stream_id: p.stream_id, property: p.property, value: p.value }]);
    return {};
  },
});

/** Applies subscription property changes, all or none, and announces each as Zulip does. */
async function changeSubscriptionProperties(call: ChatCall, entries: readonly { stream_id: number; property: string; value: boolean | string }[]): Promise<void> {
  const me = requireUser(call);
  // What each entry changed, as its subscription update events.
  const notices: Notice[] = [];
  const work = () =>
    call.services.db.transaction(async (trx) => {
      // Every entry is checked before any is applied: a bad one changes nothing.
      const changes: { streamId: number; set: Record<string, number | string> }[] = [];
      const told = (streamId: number, property: string, value: unknown) => notices.push(subscriptionUpdateNotice(me.id, streamId, property, value));
      for (const entry of entries) {
        const prop = entry.property as SubProperty;
        if (!SUB_PROPERTIES.includes(prop)) throw unknownSubscriptionProperty({ property: entry.property });
        const stream = await streamById(trx, call.realm.id, entry.stream_id);
        if (!stream || !(await canSeeMetadata(trx, me, stream))) throw invalidChannelId();
        if (!(await isSubscribed(trx, me.id, stream.id))) throw notSubscribedToChannelId({ id: stream.id });
        if (prop === 'color') {
          if (typeof entry.value !== 'string' || !/^#[0-9a-fA-F]{6}$/.test(entry.value)) throw badColor();
          changes.push({ streamId: stream.id, set: { color: entry.value.toLowerCase() } });
          told(stream.id, 'color', entry.value.toLowerCase());
          continue;
        }
        if (typeof entry.value !== 'boolean') throw paramNotBoolean({ name: prop, var_name: prop });
        if (prop === 'in_home_view' || prop === 'is_muted') {
          // in_home_view is the legacy inverse of is_muted; Zulip announces both (feature level 139), legacy first.
          const muted = prop === 'is_muted' ? entry.value : !entry.value;
          changes.push({ streamId: stream.id, set: { is_muted: muted ? 1 : 0 } });
          told(stream.id, 'in_home_view', !muted);
          told(stream.id, 'is_muted', muted);
        } else {
          changes.push({ streamId: stream.id, set: { [prop]: entry.value ? 1 : 0 } });
          told(stream.id, prop, entry.value);
        }
      }
      for (const c of changes) {
        await trx.updateTable('subscriptions').set(c.set).where('user_id', '=', me.id).where('stream_id', '=', c.streamId).execute();
      }
    });
  await call.services.events.write(work, () => notices);
}

export const addDefaultStream = defineEndpoint({
  method: 'POST',
  path: '/default_streams',
  summary: 'Add a default channel',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    if (!isAdmin(me.role)) throw adminRequired();
    const work = () =>
      call.services.db.transaction(async (trx) => {
        const stream = await visibleStream(trx, call.realm.id, me, p.stream_id);
        if (stream.invite_only === 1) throw privateDefaultChannel();
        if (stream.is_archived === 1) throw invalidChannelId();
        const had = await trx.selectFrom('default_streams').select('stream_id').where('realm_id', '=', call.realm.id).where('stream_id', '=', stream.id).executeTakeFirst();
        if (!had) await trx.insertInto('default_streams').values({ realm_id: call.realm.id, stream_id: stream.id }).execute();
        return !had;
      });
    await call.services.events.write(work, async (changed) => (changed ? defaultStreamsNotice(call.services.db.kysely, call.realm.id) : []));
    return {};
  },
});

export const removeDefaultStream = defineEndpoint({
  method: 'DELETE',
  path: '/default_streams',
  summary: 'Remove a default channel',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    if (!isAdmin(me.role)) throw adminRequired();
    const work = () =>
      call.services.db.transaction(async (trx) => {
        const stream = await visibleStream(trx, call.realm.id, me, p.stream_id);
        const gone = await trx.deleteFrom('default_streams').where('realm_id', '=', call.realm.id).where('stream_id', '=', stream.id).executeTakeFirst();
        return Number(gone.numDeletedRows) > 0;
      });
    await call.services.events.write(work, async (changed) => (changed ? defaultStreamsNotice(call.services.db.kysely, call.realm.id) : []));
    return {};
  },
});

export async function defaultStreamIds(db: Queryable<ChatTables>, realmId: number): Promise<Set<number>> {
  const rows = await db.selectFrom('default_streams').select('stream_id').where('realm_id', '=', realmId).execute();
  return new Set(rows.map((r) => r.stream_id));
}

export const GroupSettingValueSchema = Type.Union([
  Type.Integer(),
  Type.Object({ direct_members: Type.Array(Type.Integer()), direct_subgroups: Type.Array(Type.Integer()) }, { additionalProperties: false }),
]);
export const GroupSettingUpdateSchema = Type.Object({ new: GroupSettingValueSchema, old: Type.Optional(GroupSettingValueSchema) }, { additionalProperties: false });

/**
 * The channel's group settings: whether role:everyone may hold each (Zulip 10's rules), and whether
 * changing it needs content access to the channel besides administering it (the YAML's notes).
 */
const CHANNEL_GROUP_SETTINGS = {
  can_add_subscribers_group: { allowEveryone: false, contentAccess: true },
  can_remove_subscribers_group: { allowEveryone: true, contentAccess: false },
  can_administer_channel_group: { allowEveryone: false, contentAccess: false },
  can_send_message_group: { allowEveryone: true, contentAccess: false },
  can_subscribe_group: { allowEveryone: false, contentAccess: true },
} as const;
type ChannelGroupSetting = keyof typeof CHANNEL_GROUP_SETTINGS;

export const updateStream = defineEndpoint({
  method: 'PATCH',
  path: '/streams/{stream_id}',
  summary: 'Update a channel',
  auth: 'user',
  params: Type.Object({
    stream_id: Type.Integer(),
    description: Type.Optional(Type.String()),
    new_name: Type.Optional(Type.String()),
    is_private: Type.Optional(Type.Boolean()),
    is_web_public: Type.Optional(Type.Boolean()),
    history_public_to_subscribers: Type.Optional(Type.Boolean()),
    is_default_stream: Type.Optional(Type.Boolean()),
    message_retention_days: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    can_add_subscribers_group: Type.Optional(GroupSettingUpdateSchema),
    can_remove_subscribers_group: Type.Optional(GroupSettingUpdateSchema),
    can_administer_channel_group: Type.Optional(GroupSettingUpdateSchema),
    can_send_message_group: Type.Optional(GroupSettingUpdateSchema),
    can_subscribe_group: Type.Optional(GroupSettingUpdateSchema),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, clock, events } = call.services;
    const work = () =>
      db.transaction(async (trx) => {
        const stream = await visibleStream(trx, call.realm.id, me, p.stream_id);
        if (!(await canAdminister(trx, me, stream))) throw noAdministerPermission();
        // Every check runs before anything is written: a refused request changes nothing.
        const set: Updateable<StreamRow> = {};
        const privacy = p.is_private !== undefined || p.is_web_public !== undefined || p.history_public_to_subscribers !== undefined;
        const needsContent = privacy || (Object.keys(CHANNEL_GROUP_SETTINGS) as ChannelGroupSetting[]).some((k) => p[k] !== undefined && CHANNEL_GROUP_SETTINGS[k].contentAccess);
        // An administrator who may see a private channel but not read it can rename it, not open it up.
        if (needsContent && !(await canAccessContent(trx, me, stream))) throw channelContentAccessRequired();

        if (p.new_name !== undefined) {
          const name = checkChannelName(p.new_name);
          if (name === stream.name) throw channelAlreadyNamed();
          // A change of case only is no clash with itself.
          if (name.toLowerCase() !== stream.name_lower) {
            const taken = await streamByName(trx, call.realm.id, name);
            // This channel itself, renamed by a concurrent request that committed after this one read it
            // (PostgreSQL reads each statement at its own start): answered as the same request sent afterwards.
            if (taken?.id === stream.id && taken.name === name) throw channelAlreadyNamed();
            if (taken && taken.id !== stream.id) throw channelNameTaken({ name });
          }
          set.name = name;
          set.name_lower = name.toLowerCase();
        }
        if (p.description !== undefined) {
          const description = checkChannelDescription(p.description);
          set.description = description;
          set.rendered_description = description ? renderMarkdown(description) : '';
        }
        if (privacy) {
          const next = channelPrivacy(
            { isPrivate: stream.invite_only === 1, isWebPublic: stream.is_web_public === 1, historyPublic: stream.history_public_to_subscribers === 1 },
            { isPrivate: p.is_private, isWebPublic: p.is_web_public, historyPublic: p.history_public_to_subscribers },
          );
          // Checked only when asked to become web-public, as Zulip does.
          if (p.is_web_public === true) await checkCanCreateWebPublic(trx, call.realm, me);
          set.invite_only = next.isPrivate ? 1 : 0;
          set.is_web_public = next.isWebPublic ? 1 : 0;
          set.history_public_to_subscribers = next.historyPublic ? 1 : 0;
        }
        if (p.message_retention_days !== undefined) {
          if (me.role !== ROLE.owner) throw ownerRequired();
          set.message_retention_days = parseRetentionDays(p.message_retention_days);
        }
        for (const key of Object.keys(CHANNEL_GROUP_SETTINGS) as ChannelGroupSetting[]) {
          const update = p[key];
          if (update === undefined) continue;
          const value = await checkGroupSettingUpdate(trx, call.realm.id, key, update, parseGroupSetting(stream[key]), { allowEveryone: CHANNEL_GROUP_SETTINGS[key].allowEveryone });
          set[key] = JSON.stringify(value);
        }
        if (p.is_default_stream !== undefined && !isAdmin(me.role)) throw adminRequired();
        const defaultChange = p.is_default_stream;
        const willBePrivate = set.invite_only !== undefined ? set.invite_only === 1 : stream.invite_only === 1;
        const willBeDefault = defaultChange ?? (await defaultStreamIds(trx, call.realm.id)).has(stream.id);
        if (willBePrivate && willBeDefault) throw defaultChannelPrivate();

        // Who could see the channel before: a change of privacy or of its groups may show or hide it.
        const viewersBefore = await channelViewers(trx, stream);
        if (Object.keys(set).length) await trx.updateTable('streams').set(set).where('id', '=', stream.id).execute();
        const wasDefault = (await defaultStreamIds(trx, call.realm.id)).has(stream.id);
        if (defaultChange === true && !wasDefault) {
          await trx.insertInto('default_streams').values({ realm_id: call.realm.id, stream_id: stream.id }).execute();
        } else if (defaultChange === false && wasDefault) {
          await trx.deleteFrom('default_streams').where('realm_id', '=', call.realm.id).where('stream_id', '=', stream.id).execute();
        }
        return { before: stream, set, viewersBefore, defaultsChanged: defaultChange !== undefined && defaultChange !== wasDefault };
      });
    await events.write(work, (r) => streamUpdateNotices(db.kysely, r, unixSeconds(clock)));
    return {};
  },
});

interface StreamChange {
  before: Stream;
  set: Updateable<StreamRow>;
  viewersBefore: number[];
  defaultsChanged: boolean;
}

/**
 * The events of a PATCH /streams: stream create or delete for those who gained or lost sight of the
 * channel, then one stream update per changed property to those who saw it before and after, in
 * Zulip's shapes (a rename carries the old name; privacy is one invite_only event with the history
 * and web-public companions), and default_streams when that list changed.
 */
async function streamUpdateNotices(db: Queryable<ChatTables>, c: StreamChange, nowSeconds: number): Promise<Notice[]> {
  const stream = (await streamById(db, c.before.realm_id, c.before.id))!;
  const before = new Set(c.viewersBefore);
  const after = await channelViewers(db, stream);
  const both = after.filter((id) => before.has(id));
  const out: Notice[] = [
    ...(await revealNotices(
      db,
      stream,
      after.filter((id) => !before.has(id)),
      nowSeconds,
      { peers: true },
    )),
    ...hideNotice(
      [stream.id],
      c.viewersBefore.filter((id) => !after.includes(id)),
    ),
  ];
  const update = (property: string, value: unknown, extra?: Record<string, unknown>) =>
    out.push(streamUpdateNotice(stream, property === 'name' ? c.before.name : stream.name, property, value, both, extra));
  const { set } = c;
  if (set.name !== undefined) update('name', stream.name);
  if (set.description !== undefined) update('description', stream.description, { rendered_description: stream.rendered_description });
  if (set.invite_only !== undefined) {
    update('invite_only', stream.invite_only === 1, { history_public_to_subscribers: stream.history_public_to_subscribers === 1, is_web_public: stream.is_web_public === 1 });
  }
  if (set.message_retention_days !== undefined) update('message_retention_days', stream.message_retention_days);
  for (const key of Object.keys(CHANNEL_GROUP_SETTINGS) as ChannelGroupSetting[]) {
    if (set[key] !== undefined) update(key, parseGroupSetting(stream[key]));
  }
  if (c.defaultsChanged) out.push(...(await defaultStreamsNotice(db, stream.realm_id)));
  return out;
}

// Channels and subscriptions: subscribe (creating channels), list own subscriptions, list channels,
// find a channel's id by name.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { badRequest } from '../errors.js';
import type { ChatUser, Stream } from '../tables.js';
import { canAccessContent, canSeeMetadata, channelFields, checkChannelName, createStream, streamByName, subscribe, subscriberIds } from '../domain/channels.js';
import { isAdmin, isGuest } from '../domain/roles.js';
import { userByEmail, userById } from '../domain/users.js';
import { unixSeconds } from '../../platform/clock.js';

const noSuchUser = () => badRequest('No such user');

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
    history_public_to_subscribers: Type.Optional(Type.Boolean()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, clock } = call.services;
    const now = unixSeconds(clock);
    return db.transaction(async (trx) => {
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
      // The realm lets members (not guests) add others, as Zulip's default can_add_subscribers_group.
      if (others && isGuest(me.role)) throw badRequest('Insufficient permission');
      const subscribed: Record<string, string[]> = {};
      const already: Record<string, string[]> = {};
      const unauthorized: string[] = [];
      const streams: Stream[] = [];
      for (const entry of p.subscriptions) {
        const name = checkChannelName(entry.name);
        let stream = await streamByName(trx, call.realm.id, name);
        if (!stream) {
          if (isGuest(me.role)) throw badRequest('Insufficient permission');
          stream = await createStream(trx, call.realm.id, me, {
            name, description: entry.description ?? '', inviteOnly: p.invite_only, historyPublicToSubscribers: p.history_public_to_subscribers,
          }, now);
        } else if (!(await canAccessContent(trx, me, stream)) && !(stream.invite_only === 1 && isAdmin(me.role))) {
          if (p.authorization_errors_fatal) throw badRequest(`Unable to access channel (${stream.name}).`);
          unauthorized.push(stream.name);
          continue;
        }
        if (!streams.some((s) => s.id === stream!.id)) streams.push(stream);
      }
      for (const stream of streams) {
        for (const t of targets) {
          const into = (await subscribe(trx, t.id, stream.id)) ? subscribed : already;
          (into[String(t.id)] ??= []).push(stream.name);
        }
      }
      const out: Record<string, unknown> = { subscribed, already_subscribed: already };
      if (!p.authorization_errors_fatal) out.unauthorized = unauthorized;
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
    const db = call.services.db.kysely;
    const rows = await db
      .selectFrom('subscriptions')
      .innerJoin('streams', 'streams.id', 'subscriptions.stream_id')
      .selectAll('streams')
      .select([
        'subscriptions.color', 'subscriptions.is_muted', 'subscriptions.pin_to_top', 'subscriptions.desktop_notifications',
        'subscriptions.email_notifications', 'subscriptions.push_notifications', 'subscriptions.audible_notifications',
        'subscriptions.wildcard_mentions_notify',
      ])
      .where('subscriptions.user_id', '=', me.id)
      .where('subscriptions.active', '=', 1)
      .orderBy('streams.name_lower')
      .execute();
    const now = unixSeconds(call.services.clock);
    const bool = (v: number | null) => (v === null ? null : v === 1);
    const subscriptions = [];
    for (const r of rows) {
      const sub: Record<string, unknown> = {
        ...(await channelFields(db, r, now)),
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
      if (p.include_subscribers) sub.subscribers = await subscriberIds(db, r.id);
      subscriptions.push(sub);
    }
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
    if (p.include_all_active && !isAdmin(me.role)) throw badRequest('User not authorized for this query');
    const owner = p.include_owner_subscribed && me.is_bot === 1 && me.bot_owner_id !== null ? await userById(db, call.realm.id, me.bot_owner_id) : undefined;
    const rows = await db.selectFrom('streams').selectAll().where('realm_id', '=', call.realm.id).orderBy('name_lower').execute();
    const now = unixSeconds(call.services.clock);
    const streams = [];
    for (const s of rows) {
      if (p.exclude_archived && s.is_archived === 1) continue;
      const subscribedByMe = (await subscriberIds(db, s.id)).includes(me.id);
      const wanted =
        (all && (await canSeeMetadata(db, me, s))) ||
        (p.include_public && s.invite_only === 0 && !isGuest(me.role)) ||
        (p.include_web_public && s.is_web_public === 1) ||
        (p.include_subscribed && subscribedByMe) ||
        (p.include_can_access_content && (await canAccessContent(db, me, s))) ||
        (owner !== undefined && (await subscriberIds(db, s.id)).includes(owner.id));
      if (!wanted) continue;
      const fields = await channelFields(db, s, now);
      // There are no default channels yet, so every channel answers is_default false when asked.
      if (p.include_default) fields.is_default = false;
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
    if (!stream || !(await canSeeMetadata(call.services.db.kysely, me, stream))) throw badRequest(`Invalid channel name '${p.stream}'`);
    return { stream_id: stream.id };
  },
});

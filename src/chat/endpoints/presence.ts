// Presence and status: POST /users/me/presence (the ping every client sends each minute, answered
// with everyone's presence), GET /realm/presence, GET /users/{user_id_or_email}/presence,
// POST /users/me/status and GET /users/{user_id}/status.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { clientPassedNoValues, invalidPresenceStatus, noPresenceData, noSuchUser, presenceNotForBots, statusTextTooLong } from '../errors.js';
import { booleanSetting, OFFLINE_THRESHOLD_SECONDS, legacyInfo, presenceAnswer } from '../domain/presence.js';
import { checkStatusEmoji, MAX_STATUS_TEXT_LENGTH, statusObject } from '../domain/user-status.js';
import { userByApiEmail, userById } from '../domain/users.js';
import { presenceNotice, userStatusNotice, type StatusChange } from '../events/live-notices.js';
import { userSettingNotices } from '../events/pref-notices.js';

export const updatePresence = defineEndpoint({
  method: 'POST',
  path: '/users/me/presence',
  summary: 'Update your presence',
  auth: 'user',
  // The whole realm's presence for every client's minute ping, gzipped once per realm version.
  gzipShared: true,
  params: Type.Object({
    status: Type.String(),
    new_user_input: Type.Boolean({ default: false }),
    ping_only: Type.Boolean({ default: false }),
    slim_presence: Type.Boolean({ default: false }),
    last_update_id: Type.Optional(Type.Integer()),
    history_limit_days: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { presence, events, clock } = call.services;
    if (p.status !== 'active' && p.status !== 'idle') throw invalidPresenceStatus({ status: p.status });
    // Invisible mode (presence_enabled off): Zulip records nothing, so nobody sees the user online.
    if (booleanSetting(me, 'presence_enabled', true)) {
      const { record, notify } = await presence.ping(call.realm.id, me.id, p.status);
      if (notify && me.is_bot !== 1) {
        const receivers = (await presence.realmMembers(call.realm.id)).list.filter((m) => m.isActive).map((m) => m.id);
        // Not through events.write(): nothing is committed, and the map change and the publication
        // happen in one turn of the event loop, so a registration's state read (which follows its
        // queue's creation) either sees the change or its queue gets the event; at worst both.
        events.publish([presenceNotice(me, record, clock.now(), receivers)]);
      }
    }
    // Only for legacy Zephyr mirroring realms in Zulip; always false here, and clients ignore it.
    const out: Record<string, unknown> = { zephyr_mirror_active: false };
    if (p.ping_only) return out;
    return Object.assign(
      out,
      await presenceAnswer(presence, call.realm.id, clock.now(), {
        slim: p.slim_presence,
        lastUpdateId: p.last_update_id,
        historyLimitDays: p.history_limit_days,
      }),
    );
  },
});

export const getRealmPresence = defineEndpoint({
  method: 'GET',
  path: '/realm/presence',
  summary: 'Get presence of all users',
  auth: 'user',
  gzipShared: true,
  params: Type.Object({}),
  async handler(call) {
    requireUser(call);
    const { presences, server_timestamp } = await presenceAnswer(call.services.presence, call.realm.id, call.services.clock.now(), { slim: false });
    return { presences, server_timestamp };
  },
});

export const getUserPresence = defineEndpoint({
  method: 'GET',
  path: '/users/{user_id_or_email}/presence',
  summary: "Get a user's presence",
  auth: 'user',
  params: Type.Object({ user_id_or_email: Type.String() }),
  async handler(call, p) {
    const viewer = requireUser(call);
    const db = call.services.db.kysely;
    const key = p.user_id_or_email;
    // An id beyond any id column (and the safe integers) is no user, as Django finds none for it.
    const target = /^[0-9]+$/.test(key)
      ? Number.isSafeInteger(Number(key))
        ? await userById(db, call.realm.id, Number(key))
        : undefined
      : await userByApiEmail(db, call.realm.id, call.realm.email_host, viewer, key);
    if (!target) throw noSuchUser();
    if (target.is_bot === 1) throw presenceNotForBots();
    const record = await call.services.presence.record(call.realm.id, target.id);
    if (!record || !booleanSetting(target, 'presence_enabled', true) || target.is_active !== 1) throw noPresenceData({ user: key });
    // A user never reported active shows their date joined as last active, as in Zulip.
    const { status, timestamp } = legacyInfo(record, Math.floor(target.date_joined / 1000));
    const now = Math.floor(call.services.clock.now() / 1000);
    // As Zulip: the aggregate says "offline" once the last report is past the threshold.
    const aggregated = now - timestamp > OFFLINE_THRESHOLD_SECONDS ? 'offline' : status;
    return { presence: { website: { status, timestamp }, aggregated: { status: aggregated, timestamp } } };
  },
});

export const updateStatus = defineEndpoint({
  method: 'POST',
  path: '/users/me/status',
  summary: 'Update your status',
  auth: 'user',
  params: Type.Object({
    status_text: Type.Optional(Type.String()),
    away: Type.Optional(Type.Boolean()),
    emoji_name: Type.Optional(Type.String()),
    emoji_code: Type.Optional(Type.String()),
    reaction_type: Type.Optional(Type.String()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, clock } = call.services;
    const text = p.status_text?.trim();
    if (text !== undefined && [...text].length > MAX_STATUS_TEXT_LENGTH) throw statusTextTooLong({ limit: MAX_STATUS_TEXT_LENGTH });
    if (p.away === undefined && text === undefined && p.emoji_name === undefined) throw clientPassedNoValues();
    const emoji = checkStatusEmoji(p.emoji_name, p.emoji_code, p.reaction_type);
    const change: StatusChange = { away: p.away, status_text: text, emoji };
    const now = Math.floor(clock.now() / 1000);
    await events.write(
      async () =>
        db.transaction(async (trx) => {
          if (p.away !== undefined) {
            // `away` is the inverse of presence_enabled since Zulip 6.0: invisible mode.
            const row = await trx.selectFrom('chat_users').select('settings').where('id', '=', me.id).executeTakeFirstOrThrow();
            const settings = JSON.parse(row.settings) as Record<string, unknown>;
            settings.presence_enabled = !p.away;
            await trx
              .updateTable('chat_users')
              .set({ settings: JSON.stringify(settings) })
              .where('id', '=', me.id)
              .execute();
          }
          const fields = {
            timestamp: now,
            ...(text !== undefined ? { status_text: text } : {}),
            ...(emoji ?? {}),
          };
          await trx
            .insertInto('user_status')
            .values({ user_id: me.id, realm_id: call.realm.id, status_text: '', emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji', ...fields })
            .onConflict((oc) => oc.column('user_id').doUpdateSet(fields))
            .execute();
        }),
      async () => {
        const receivers = await db.kysely.selectFrom('chat_users').select('id').where('realm_id', '=', call.realm.id).where('is_active', '=', 1).execute();
        const status = userStatusNotice(
          me.id,
          change,
          receivers.map((r) => Number(r.id)),
        );
        // The setting `away` changed is announced like any other (Zulip: do_change_user_setting).
        return p.away === undefined ? [status] : [...userSettingNotices(me, 'presence_enabled', !p.away), status];
      },
    );
    return {};
  },
});

export const getUserStatus = defineEndpoint({
  method: 'GET',
  path: '/users/{user_id}/status',
  summary: "Get a user's status",
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer() }),
  async handler(call, p) {
    requireUser(call);
    const db = call.services.db.kysely;
    const target = await userById(db, call.realm.id, p.user_id);
    if (!target) throw noSuchUser();
    const row = await db.selectFrom('user_status').selectAll().where('user_id', '=', target.id).executeTakeFirst();
    return { status: statusObject(row, booleanSetting(target, 'presence_enabled', true)) };
  },
});

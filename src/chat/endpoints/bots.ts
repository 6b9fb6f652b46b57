// Bots: users create generic bots (email <short_name>-bot@<realm host>), which then authenticate
// with their own API key like any user; their owners (and administrators) list, rename, hand over,
// deactivate them and give them new keys.
import Type from 'typebox';
import type { Queryable } from '../../platform/db/database.js';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { realmBotAddNotice, realmBotDeleteNotice, realmBotUpdateNotice, realmUserUpdateNotice } from '../events/notices.js';
import { joinedNotices } from '../events/realm-notices.js';
import type { Notice } from '../events/hub.js';
import {
  badBotName,
  botOwnerInactive,
  botOwnerIsBot,
  botOwnerMissing,
  ChatError,
  insufficientPermission,
  invalidBotType,
  nameInUse,
  noSuchBot,
  notAllowedForGuests,
  usernameInUse,
} from '../errors.js';
import { isAdmin, isGuest, ROLE } from '../domain/roles.js';
import { avatarUrlFor, checkFullName, createUser, userByEmail, userById } from '../domain/users.js';
import { checkNameUnique } from '../domain/realm-rules.js';
import { botEmail } from '../domain/user-rules.js';
import { regenerateApiKey, type ApiKeySeal } from '../domain/api-keys.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { activationNotices, deactivate } from './users.js';

const GENERIC_BOT = 1;

export const createBot = defineEndpoint({
  method: 'POST',
  path: '/bots',
  summary: 'Create a bot',
  auth: 'user',
  params: Type.Object({
    full_name: Type.String(),
    short_name: Type.String(),
    bot_type: Type.Integer({ default: GENERIC_BOT }),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    if (isGuest(me.role)) throw notAllowedForGuests();
    // Incoming and outgoing webhook and embedded bots need services Keel does not run yet.
    if (p.bot_type !== GENERIC_BOT) throw invalidBotType();
    const { db, clock } = call.services;
    const fullName = checkFullName(p.full_name);
    await checkNameUnique(db.kysely, call.realm, fullName, null);
    const shortName = p.short_name.trim();
    if (shortName === '' || !/^[A-Za-z0-9._+-]+$/.test(shortName)) throw badBotName();
    const email = botEmail(shortName, call.realm.email_host);
    const created = await call.services.events.write(
      () =>
        db.transaction(async (trx) => {
          if (await userByEmail(trx, call.realm.id, email)) throw usernameInUse();
          const sameName = await trx
            .selectFrom('chat_users')
            .select('id')
            .where('realm_id', '=', call.realm.id)
            .where('is_bot', '=', 1)
            .where('is_active', '=', 1)
            .where('full_name', '=', fullName)
            .executeTakeFirst();
          // The username is checked first, as a request sent after a concurrent identical one that committed
          // since the check above (PostgreSQL reads each statement at its own start) is answered.
          const usernameTaken = async () => !!(await userByEmail(trx, call.realm.id, email));
          if (sameName) throw (await usernameTaken()) ? usernameInUse() : nameInUse();
          return createUser(
            trx,
            call.realm.id,
            { email, fullName, password: null, role: ROLE.member, isBot: true, botType: GENERIC_BOT, botOwnerId: me.id },
            clock.now(),
            call.services.apiKeySeal,
          ).catch(async (err: unknown) => {
            throw err instanceof ChatError && (await usernameTaken()) ? usernameInUse() : err;
          });
        }),
      async (made) => [...(await joinedNotices(db.kysely, call.realm.id, made.user)), ...(await realmBotAddNotice(db.kysely, made.user, made.apiKey))],
    );
    return {
      user_id: created.user.id,
      api_key: created.apiKey,
      avatar_url: avatarUrlFor(created.user, false),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    };
  },
});

/** Zulip's require_member_or_admin: guests may not manage bots. */
function botManager(call: ChatCall): ChatUser {
  const me = requireUser(call);
  if (isGuest(me.role)) throw notAllowedForGuests();
  return me;
}

/** Zulip's access_bot_by_id: a bot of the realm (active or not) that the caller owns or, as an administrator, administers. */
export async function botFor(db: Queryable<ChatTables>, call: ChatCall, me: ChatUser, botId: number): Promise<ChatUser> {
  const bot = await userById(db, call.realm.id, botId);
  if (!bot || bot.is_bot !== 1) throw noSuchBot();
  if (bot.bot_owner_id !== me.id && !isAdmin(me.role)) throw insufficientPermission();
  return bot;
}

/** GET /bots: the caller's own active bots, oldest first, with their keys (Zulip's get_bots_backend). */
export const getBots = defineEndpoint({
  method: 'GET',
  path: '/bots',
  summary: 'Get own bots',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = botManager(call);
    const { db } = call.services;
    const bots = await db.kysely
      .selectFrom('chat_users')
      .selectAll()
      .where('realm_id', '=', call.realm.id)
      .where('is_bot', '=', 1)
      .where('is_active', '=', 1)
      .where('bot_owner_id', '=', me.id)
      .orderBy('date_joined')
      .orderBy('id')
      .execute();
    const sealer = call.services.apiKeySeal;
    return {
      bots: bots.map((b) => ({
        username: b.email,
        full_name: b.full_name,
        api_key: sealer.unseal(b.api_key_sealed),
        avatar_url: avatarUrlFor(b, false),
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
      })),
    };
  },
});

/**
 * POST /bots/{bot_id}/api_key/regenerate: the bot's old key stops at the commit and its event
 * queues end; realm_bot update carries the new key to those who administer the bot.
 */
export const regenerateBotApiKey = defineEndpoint({
  method: 'POST',
  path: '/bots/{bot_id}/api_key/regenerate',
  summary: 'Regenerate a bot API key',
  auth: 'user',
  params: Type.Object({ bot_id: Type.Integer() }),
  async handler(call, p) {
    const me = botManager(call);
    const { db } = call.services;
    const done = await call.services.events.write(
      () =>
        db.transaction(async (trx) => {
          const bot = await botFor(trx, call, me, p.bot_id);
          return { bot, apiKey: await regenerateApiKey(trx, call.services.apiKeySeal, bot.id) };
        }),
      ({ bot, apiKey }) => realmBotUpdateNotice(db.kysely, bot, { api_key: apiKey }),
      ({ bot }) => [bot.id],
    );
    return { api_key: done.apiKey };
  },
});

/** DELETE /bots/{bot_id}: deactivates the bot (its key and queues stop at the commit); one already deactivated is left as it is. */
export const deactivateBot = defineEndpoint({
  method: 'DELETE',
  path: '/bots/{bot_id}',
  summary: 'Deactivate a bot',
  auth: 'user',
  params: Type.Object({ bot_id: Type.Integer() }),
  async handler(call, p) {
    const me = botManager(call);
    const { db } = call.services;
    await call.services.events.write(
      () =>
        db.transaction(async (trx) => {
          const bot = await botFor(trx, call, me, p.bot_id);
          // As Zulip's do_deactivate_user: deactivating a deactivated user does nothing.
          return bot.is_active === 1 ? deactivate(trx, bot.id) : [];
        }),
      (ids) => activationNotices(call, ids, false),
      (ids) => ids,
    );
    return {};
  },
});

/**
 * PATCH /bots/{bot_id}: the bot's name and owner (Zulip's patch_bot_backend; every check before
 * any change). Keel's generic bots have no default channels, services or config data, so those
 * parameters are not taken (they come back in ignored_parameters_unsupported) and the answer
 * shows them empty, as Zulip shows a generic bot's.
 */
export const updateBot = defineEndpoint({
  method: 'PATCH',
  path: '/bots/{bot_id}',
  summary: 'Update a bot',
  auth: 'user',
  params: Type.Object({
    bot_id: Type.Integer(),
    full_name: Type.Optional(Type.String()),
    bot_owner_id: Type.Optional(Type.Integer()),
  }),
  async handler(call, p) {
    const me = botManager(call);
    const { db } = call.services;
    const work = () =>
      db.transaction(async (trx) => {
        const bot = await botFor(trx, call, me, p.bot_id);
        let fullName: string | undefined;
        if (p.full_name !== undefined) {
          const name = checkFullName(p.full_name);
          // As Zulip's check_change_bot_full_name: the same name again changes nothing.
          if (name !== bot.full_name) {
            await checkNameUnique(trx, call.realm, name, bot.id);
            const taken = await trx
              .selectFrom('chat_users')
              .select('id')
              .where('realm_id', '=', call.realm.id)
              .where('is_bot', '=', 1)
              .where('is_active', '=', 1)
              .where('full_name', '=', name)
              .where('id', '!=', bot.id)
              .executeTakeFirst();
            if (taken) throw nameInUse();
            fullName = name;
          }
        }
        let owner: ChatUser | undefined;
        if (p.bot_owner_id !== undefined) {
          owner = await userById(trx, call.realm.id, p.bot_owner_id);
          if (!owner) throw botOwnerMissing();
          if (owner.is_active !== 1) throw botOwnerInactive();
          if (owner.is_bot === 1) throw botOwnerIsBot();
          if (owner.id === bot.bot_owner_id) owner = undefined;
        }
        const previousOwner = owner && bot.bot_owner_id !== null ? await userById(trx, call.realm.id, bot.bot_owner_id) : undefined;
        if (fullName !== undefined) await trx.updateTable('chat_users').set({ full_name: fullName }).where('id', '=', bot.id).execute();
        if (owner) await trx.updateTable('chat_users').set({ bot_owner_id: owner.id }).where('id', '=', bot.id).execute();
        const after = (await userById(trx, call.realm.id, bot.id))!;
        const ownerNow = after.bot_owner_id === null ? undefined : await userById(trx, call.realm.id, after.bot_owner_id);
        return { bot: after, fullName, owner, previousOwner, ownerEmail: ownerNow?.email };
      });
    const done = await call.services.events.write(work, async ({ bot, fullName, owner, previousOwner }) => {
      const out: Notice[] = [];
      if (fullName !== undefined) {
        out.push(...(await realmUserUpdateNotice(db.kysely, call.realm.id, bot.id, { full_name: fullName })));
        out.push(...(await realmBotUpdateNotice(db.kysely, bot, { full_name: fullName })));
      }
      if (owner) out.push(...(await ownerChangeNotices(db.kysely, call.services.apiKeySeal, bot, owner, previousOwner)));
      return out;
    });
    const result: Record<string, unknown> = {
      full_name: done.bot.full_name,
      avatar_url: avatarUrlFor(done.bot, false),
      service_interface: 1,
      service_payload_url: null,
      config_data: null,
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    };
    if (done.ownerEmail !== undefined) result.bot_owner = done.ownerEmail;
    return result;
  },
});

/**
 * What a bot's new owner changes, as Zulip's do_change_bot_owner sends it: the former owner (unless
 * an administrator, who still sees every bot) gets realm_bot delete, the new one (likewise) realm_bot
 * add, everyone else who administers the bot realm_bot update owner_id, and every user realm_user
 * update bot_owner_id.
 */
async function ownerChangeNotices(db: Queryable<ChatTables>, sealer: ApiKeySeal, bot: ChatUser, owner: ChatUser, previous: ChatUser | undefined): Promise<Notice[]> {
  const out: Notice[] = [];
  const skip: number[] = [];
  if (previous && !isAdmin(previous.role)) {
    out.push(...realmBotDeleteNotice(bot, previous.id));
    skip.push(previous.id);
  }
  if (!isAdmin(owner.role)) {
    out.push(...(await realmBotAddNotice(db, bot, sealer.unseal(bot.api_key_sealed), [owner.id])));
    skip.push(owner.id);
  }
  out.push(...(await realmBotUpdateNotice(db, bot, { owner_id: owner.id }, skip)));
  out.push(...(await realmUserUpdateNotice(db, bot.realm_id, bot.id, { bot_owner_id: owner.id })));
  return out;
}

// Users: who am I, the directory, one user by id or email, creating, updating, deactivating and
// reactivating users (administrators), and leaving the organization.
import Type from 'typebox';
import { sql } from 'kysely';
import { receivedSql } from '../domain/receipt.js';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { adminRequired, botOwnerDeactivated, botsNotAccepted, cannotChangeUserEmails, noSuchUser, ownerRequired } from '../errors.js';
import type { ChatTables, ChatUser } from '../tables.js';
import type { Queryable } from '../../platform/db/database.js';
import { isAdmin, ROLE } from '../domain/roles.js';
import { activeHumanCount, activeOwnerCount, avatarUrlFor, checkFullName, createUser, isoWithOffset, setRole, userByApiEmail, userById, userObject } from '../domain/users.js';
import { checkNameUnique } from '../domain/realm-rules.js';
import { checkDeactivation, checkRoleChange, checkSelfDeactivation } from '../domain/user-rules.js';
import { realmBotActiveNotice, realmUserUpdateNotice } from '../events/notices.js';
import { peerNotice, sightNotices, visibleChannelIds } from '../events/channel-notices.js';
import { unixSeconds } from '../../platform/clock.js';
import { joinedNotices, userMembershipNotices } from '../events/realm-notices.js';
import { directGroupIdsOf } from '../domain/user-groups.js';
import type { Notice } from '../events/hub.js';
import { regenerateApiKey } from '../domain/api-keys.js';
import { profileDataOf } from '../domain/profile-fields.js';
import { applyProfileData } from './profile-fields.js';

export const getOwnUser = defineEndpoint({
  method: 'GET',
  path: '/users/me',
  summary: 'Get own user',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    // The newest message received: scanning from the newest, the first one received.
    const newest = await sql<{ max: number }>`select m.id as max from messages m left join user_messages um on um.message_id = m.id and um.user_id = ${me.id}
      where ${receivedSql(me.id)} order by m.id desc limit 1`.execute(call.services.db.kysely);
    const max = newest.rows[0];
    return {
      avatar_url: avatarUrlFor(me, false),
      avatar_version: me.avatar_version,
      email: me.email,
      delivery_email: me.delivery_email,
      full_name: me.full_name,
      is_admin: me.role <= ROLE.administrator,
      is_owner: me.role === ROLE.owner,
      role: me.role,
      is_guest: me.role === ROLE.guest,
      is_bot: me.is_bot === 1,
      is_active: me.is_active === 1,
      timezone: me.timezone,
      date_joined: isoWithOffset(me.date_joined),
      max_message_id: max?.max === null || max?.max === undefined ? -1 : Number(max.max),
      user_id: me.id,
      profile_data: (await profileDataOf(call.services.db.kysely, call.realm.id, [me.id])).get(me.id) ?? {},
    };
  },
});

const directoryParams = {
  client_gravatar: Type.Boolean({ default: true }),
  include_custom_profile_fields: Type.Boolean({ default: false }),
};

export const getUsers = defineEndpoint({
  method: 'GET',
  path: '/users',
  summary: 'Get all users',
  auth: 'user',
  params: Type.Object(directoryParams),
  async handler(call, p) {
    const viewer = requireUser(call);
    const rows = await call.services.db.kysely.selectFrom('chat_users').selectAll().where('realm_id', '=', call.realm.id).orderBy('id').execute();
    const profileData = p.include_custom_profile_fields ? await profileDataOf(call.services.db.kysely, call.realm.id) : undefined;
    const opts = { clientGravatar: p.client_gravatar, includeProfileFields: p.include_custom_profile_fields, viewer, profileData };
    return { members: rows.map((u) => userObject(u, opts)) };
  },
});

export const getUser = defineEndpoint({
  method: 'GET',
  path: '/users/{user_id}',
  summary: 'Get a user',
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer(), ...directoryParams }),
  async handler(call, p) {
    const user = await userById(call.services.db.kysely, call.realm.id, p.user_id);
    if (!user) throw noSuchUser();
    return { user: await shownUser(call, user, p) };
  },
});

/** One user as GET /users/{user_id} and /users/{email} show them, with their profile values when asked. */
async function shownUser(call: ChatCall, user: ChatUser, p: { client_gravatar: boolean; include_custom_profile_fields: boolean }): Promise<Record<string, unknown>> {
  const profileData = p.include_custom_profile_fields ? await profileDataOf(call.services.db.kysely, call.realm.id, [user.id]) : undefined;
  return userObject(user, { clientGravatar: p.client_gravatar, includeProfileFields: p.include_custom_profile_fields, viewer: requireUser(call), profileData });
}

/** {user_id} is an integer; anything else under /users/ is an email address (GET/PATCH /users/{email}). */
async function targetByEmail(call: ChatCall, email: string): Promise<ChatUser> {
  const user = await userByApiEmail(call.services.db.kysely, call.realm.id, call.realm.email_host, requireUser(call), email);
  if (!user) throw noSuchUser();
  return user;
}

export const getUserByEmail = defineEndpoint({
  method: 'GET',
  path: '/users/{email}',
  summary: 'Get a user by email',
  auth: 'user',
  params: Type.Object({ email: Type.String(), ...directoryParams }),
  async handler(call, p) {
    const user = await targetByEmail(call, p.email);
    return { user: await shownUser(call, user, p) };
  },
});

export const createUserEndpoint = defineEndpoint({
  method: 'POST',
  path: '/users',
  summary: 'Create a user',
  auth: 'user',
  params: Type.Object({ email: Type.String(), password: Type.String(), full_name: Type.String() }),
  async handler(call, p) {
    if (!isAdmin(requireUser(call).role)) throw adminRequired();
    const { db, clock } = call.services;
    const created = await call.services.events.write(
      () =>
        db.transaction(async (trx) => {
          await checkNameUnique(trx, call.realm, p.full_name.trim(), null);
          return createUser(trx, call.realm.id, { email: p.email, fullName: p.full_name, password: p.password, role: ROLE.member }, clock.now(), call.services.apiKeySeal);
        }),
      async (made) => [...(await joinedNotices(db.kysely, call.realm.id, made.user)), ...(await subscriberPeerNotices(db.kysely, made.user.id))],
    );
    return { user_id: created.user.id };
  },
});

const updateParams = {
  full_name: Type.Optional(Type.String()),
  role: Type.Optional(Type.Integer()),
  // A custom profile field's new value: text, user ids (a user field), or null to clear it (Zulip's check_profile_data).
  profile_data: Type.Optional(Type.Array(Type.Object({ id: Type.Integer(), value: Type.Union([Type.String(), Type.Array(Type.Integer()), Type.Null()]) }))),
  new_email: Type.Optional(Type.String()),
};

interface UpdateUser {
  full_name?: string;
  role?: number;
  profile_data?: { id: number; value: string | number[] | null }[];
  new_email?: string;
}

/** PATCH /users/{user_id} and /users/{email}: every check first, then the changes in one transaction. */
async function updateUser(call: ChatCall, targetId: number, p: UpdateUser): Promise<Record<string, never>> {
  const me = requireUser(call);
  if (!isAdmin(me.role)) throw adminRequired();
  const { db } = call.services;
  const changes: Record<string, unknown>[] = [];
  // The channels the user could see before and after a role change (guests see fewer, administrators more).
  let sight: { before: Set<number>; after: Set<number> } | null = null;
  // A role change moves the user between system groups: add_members / remove_members follow.
  const groups = { before: [] as number[], after: [] as number[] };
  const work = () =>
    db.transaction(async (trx) => {
      const target = await userById(trx, call.realm.id, targetId);
      if (!target) throw noSuchUser();
      const fullName = p.full_name === undefined ? undefined : checkFullName(p.full_name);
      if (fullName !== undefined) await checkNameUnique(trx, call.realm, fullName, target.id);
      const roleChanges = p.role !== undefined && checkRoleChange(me, target, p.role, await activeOwnerCount(trx, call.realm.id));
      // Custom profile field values: an empty or null value removes it (profile-fields.ts applyProfileData).
      const profileChanges = p.profile_data ? await applyProfileData(trx, call.realm.id, me, target.id, p.profile_data) : [];
      // Changing emails needs the can_change_user_emails server permission, which no Keel user has.
      if (p.new_email !== undefined) throw cannotChangeUserEmails();
      if (fullName !== undefined && fullName !== target.full_name) {
        await trx.updateTable('chat_users').set({ full_name: fullName }).where('id', '=', target.id).execute();
        changes.push({ full_name: fullName });
      }
      if (roleChanges) {
        const before = await visibleChannelIds(trx, target);
        groups.before = await directGroupIdsOf(trx, target.id);
        await setRole(trx, call.realm.id, target.id, p.role!);
        groups.after = await directGroupIdsOf(trx, target.id);
        changes.push({ role: p.role! });
        sight = { before, after: await visibleChannelIds(trx, { ...target, role: p.role! }) };
      }
      for (const c of profileChanges) changes.push({ custom_profile_field: c });
    });
  await call.services.events.write(work, async () => {
    const out = await updatesNotices(call, targetId, changes);
    if (sight) out.push(...(await sightNotices(db.kysely, targetId, sight.before, sight.after, unixSeconds(call.services.clock))));
    out.push(
      ...(await userMembershipNotices(
        db.kysely,
        call.realm.id,
        targetId,
        groups.after.filter((g) => !groups.before.includes(g)),
        groups.before.filter((g) => !groups.after.includes(g)),
      )),
    );
    return out;
  });
  return {};
}

/** One realm_user update event per changed property, as Zulip sends them. */
async function updatesNotices(call: ChatCall, userId: number, changes: Record<string, unknown>[]): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const change of changes) out.push(...(await realmUserUpdateNotice(call.services.db.kysely, call.realm.id, userId, change)));
  return out;
}

/**
 * Who an activation change touched: the user and, on deactivation, their bots. Since feature level
 * 222 that is realm_user update is_active (and realm_bot update for bots), not remove/add. A
 * reactivated user is back in the subscriber lists of their channels: peer_add, as Zulip sends (on
 * deactivation clients drop the user from every list themselves, so no peer_remove is sent). A
 * deactivated user leaves every group's member list while deactivated, and is back on reactivation.
 */
export async function activationNotices(call: ChatCall, userIds: number[], isActive: boolean): Promise<Notice[]> {
  const db = call.services.db.kysely;
  const out: Notice[] = [];
  for (const id of userIds) {
    out.push(...(await realmUserUpdateNotice(db, call.realm.id, id, { is_active: isActive })));
    const user = (await userById(db, call.realm.id, id))!;
    if (user.is_bot === 1) out.push(...(await realmBotActiveNotice(db, user, isActive)));
    if (isActive) out.push(...(await subscriberPeerNotices(db, id)));
    const groups = await directGroupIdsOf(db, id);
    out.push(...(await userMembershipNotices(db, call.realm.id, id, isActive ? groups : [], isActive ? [] : groups)));
  }
  return out;
}

/** peer_add for every channel the user is subscribed to: they just joined (or came back to) its subscriber list. */
export async function subscriberPeerNotices(db: Queryable<ChatTables>, userId: number): Promise<Notice[]> {
  const streams = await db
    .selectFrom('subscriptions')
    .innerJoin('streams', 'streams.id', 'subscriptions.stream_id')
    .selectAll('streams')
    .where('subscriptions.user_id', '=', userId)
    .where('subscriptions.active', '=', 1)
    .orderBy('streams.id')
    .execute();
  const out: Notice[] = [];
  for (const s of streams) out.push(...(await peerNotice(db, 'peer_add', s, [userId])));
  return out;
}

export const updateUserById = defineEndpoint({
  method: 'PATCH',
  path: '/users/{user_id}',
  summary: 'Update a user',
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer(), ...updateParams }),
  async handler(call, p) {
    return updateUser(call, p.user_id, p);
  },
});

export const updateUserByEmail = defineEndpoint({
  method: 'PATCH',
  path: '/users/{email}',
  summary: 'Update a user by email',
  auth: 'user',
  params: Type.Object({ email: Type.String(), ...updateParams }),
  async handler(call, p) {
    if (!isAdmin(requireUser(call).role)) throw adminRequired();
    return updateUser(call, (await targetByEmail(call, p.email)).id, p);
  },
});

export const deactivateUser = defineEndpoint({
  method: 'DELETE',
  path: '/users/{user_id}',
  summary: 'Deactivate a user',
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer(), deactivation_notification_comment: Type.Optional(Type.String()) }),
  async handler(call, p) {
    const me = requireUser(call);
    if (!isAdmin(me.role)) throw adminRequired();
    await call.services.events.write(
      () =>
        call.services.db.transaction(async (trx) => {
          const target = await userById(trx, call.realm.id, p.user_id);
          // Bots are deactivated through the bot endpoints; a deactivated user is not found again.
          if (!target || target.is_bot === 1 || target.is_active !== 1) throw noSuchUser();
          checkDeactivation(me, target, await activeOwnerCount(trx, call.realm.id));
          return deactivate(trx, target.id);
        }),
      (ids) => activationNotices(call, ids, false),
      // Their keys stop at the commit, and their event queues end with them.
      (ids) => ids,
    );
    return {};
  },
});

/** Deactivates a user and, as Zulip does, the bots they own; their API keys stop working at once. */
export async function deactivate(trx: Queryable<ChatTables>, userId: number): Promise<number[]> {
  const ids = (
    await trx
      .selectFrom('chat_users')
      .select('id')
      .where('is_active', '=', 1)
      .where((eb) => eb.or([eb('id', '=', userId), eb('bot_owner_id', '=', userId)]))
      .execute()
  ).map((r) => r.id);
  await trx
    .updateTable('chat_users')
    .set({ is_active: 0 })
    .where((eb) => eb.or([eb('id', '=', userId), eb('bot_owner_id', '=', userId)]))
    .execute();
  return ids;
}

export const reactivateUser = defineEndpoint({
  method: 'POST',
  path: '/users/{user_id}/reactivate',
  summary: 'Reactivate a user',
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    if (!isAdmin(me.role)) throw adminRequired();
    const work = () =>
      call.services.db.transaction(async (trx) => {
        const target = await userById(trx, call.realm.id, p.user_id);
        if (!target) throw noSuchUser();
        if (target.role === ROLE.owner && me.role !== ROLE.owner) throw ownerRequired();
        // Zulip's reactivate_user_backend does not look at is_active: reactivating an active user
        // succeeds. Nothing changes, so nothing is announced.
        if (target.is_active === 1) return false;
        if (target.is_bot === 1 && target.bot_owner_id !== null) {
          const owner = await userById(trx, call.realm.id, target.bot_owner_id);
          if (owner?.is_active !== 1) throw botOwnerDeactivated();
        }
        await trx.updateTable('chat_users').set({ is_active: 1 }).where('id', '=', target.id).execute();
        return true;
      });
    await call.services.events.write(work, async (changed) => (changed ? activationNotices(call, [p.user_id], true) : []));
    return {};
  },
});

export const deactivateOwnUser = defineEndpoint({
  method: 'DELETE',
  path: '/users/me',
  summary: 'Deactivate own user',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    await call.services.events.write(
      () =>
        call.services.db.transaction(async (trx) => {
          checkSelfDeactivation(me, await activeOwnerCount(trx, call.realm.id), await activeHumanCount(trx, call.realm.id));
          return deactivate(trx, me.id);
        }),
      (ids) => activationNotices(call, ids, false),
      // Their keys stop at the commit, and their event queues end with them.
      (ids) => ids,
    );
    return {};
  },
});

/**
 * POST /users/me/api_key/regenerate (people only, as Zulip's human_users_only): a new key; the old
 * one stops at the commit, and the caller's event queues end with it.
 */
export const regenerateOwnApiKey = defineEndpoint({
  method: 'POST',
  path: '/users/me/api_key/regenerate',
  summary: 'Regenerate own API key',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    if (me.is_bot === 1) throw botsNotAccepted();
    const apiKey = await call.services.events.write(
      () => call.services.db.transaction((trx) => regenerateApiKey(trx, call.services.apiKeySeal, me.id)),
      () => [],
      () => [me.id],
    );
    return { api_key: apiKey };
  },
});

// User groups: listing, creating, updating (name, description, permission settings), members and
// subgroups, membership checks and deactivation. System groups exist with the realm and cannot be
// changed here. Every change publishes its user_group event after the commit.
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import {
  alreadyMember,
  alreadySubgroup,
  alreadySupergroup,
  groupAlreadyDeactivated,
  groupDeactivated,
  groupInUse,
  insufficientPermission,
  invalidGroupId,
  invalidGroupMemberId,
  noNewData,
  noSuchUser,
  notMember,
  notSubgroup,
  nothingToDoMembers,
  nothingToDoMembersOrSubgroups,
  oldValueMismatch,
} from '../errors.js';
import type { ChatTables, ChatUser, UserGroup } from '../tables.js';
import type { Queryable } from '../../platform/db/database.js';
import { unixSeconds } from '../../platform/clock.js';
import { sameGroupSetting, type GroupSettingValue } from '../domain/groups.js';
import { userById } from '../domain/users.js';
import {
  allMembers,
  allSubgroups,
  checkGroupDescription,
  checkGroupName,
  checkNameFree,
  checkPermissionValue,
  directMembers,
  directSubgroups,
  GROUP_PERMISSIONS,
  groupById,
  groupForUpdate,
  groupObjections,
  groupObjects,
  groupSetting,
  hasGroupPermission,
  initialSetting,
  nobodyGroupId,
  requireMemberOrAdmin,
  type GroupPermission,
} from '../domain/user-groups.js';
import { holdsRealmPermission } from '../domain/realm-settings.js';
import { userGroupAddNotice, userGroupMembershipNotices, userGroupUpdateNotice } from '../events/realm-notices.js';
import { GroupSettingUpdateSchema, GroupSettingValueSchema } from './channels.js';
import { checkRoom } from '../domain/bounds.js';

const permissionParams = <T extends typeof GroupSettingValueSchema | typeof GroupSettingUpdateSchema>(schema: T) =>
  Object.fromEntries(GROUP_PERMISSIONS.map((s) => [s, Type.Optional(schema)])) as Record<GroupPermission, ReturnType<typeof Type.Optional<T>>>;

const IdList = Type.Array(Type.Integer());

export const getUserGroups = defineEndpoint({
  method: 'GET',
  path: '/user_groups',
  summary: 'Get user groups',
  auth: 'user',
  params: Type.Object({ include_deactivated_groups: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    requireMemberOrAdmin(requireUser(call));
    return { user_groups: await groupObjects(call.services.db.kysely, call.realm.id, { includeDeactivated: p.include_deactivated_groups }) };
  },
});

/** Active users of the realm by id, or Zulip's "Invalid user ID". */
async function activeUsers(db: Queryable<ChatTables>, realmId: number, ids: number[]): Promise<number[]> {
  for (const id of ids) {
    const u = await userById(db, realmId, id);
    if (!u || u.is_active !== 1) throw invalidGroupMemberId({ id });
  }
  return [...new Set(ids)];
}

/** Active groups of the realm that may become subgroups, or Zulip's "Invalid user group ID". */
async function usableGroups(db: Queryable<ChatTables>, realmId: number, ids: number[]): Promise<number[]> {
  for (const id of ids) {
    const g = await db.selectFrom('user_groups').select('deactivated').where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
    if (!g || g.deactivated === 1) throw invalidGroupId({ id });
  }
  return [...new Set(ids)];
}

export const createUserGroup = defineEndpoint({
  method: 'POST',
  path: '/user_groups/create',
  summary: 'Create a user group',
  auth: 'user',
  params: Type.Object({
    name: Type.String(),
    description: Type.String(),
    members: IdList,
    subgroups: Type.Array(Type.Integer(), { default: [] }),
    ...permissionParams(GroupSettingValueSchema),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    requireMemberOrAdmin(me);
    const { db, clock, events } = call.services;
    const realmId = call.realm.id;
    const groupId = await events.write(
      () =>
        db.transaction(async (trx) => {
          if (!(await holdsRealmPermission(trx, realmId, me, 'can_create_groups'))) throw insufficientPermission();
          const name = checkGroupName(p.name);
          const description = checkGroupDescription(p.description);
          await checkNameFree(trx, realmId, name);
          await checkRoom(trx, 'groupsPerRealm', realmId, 1);
          const members = await activeUsers(trx, realmId, p.members);
          const subgroups = await usableGroups(trx, realmId, p.subgroups);
          const settings: Partial<Record<GroupPermission, string>> = {};
          for (const s of GROUP_PERMISSIONS) settings[s] = JSON.stringify(await initialSetting(trx, realmId, me.id, s, p[s] as GroupSettingValue | undefined));
          const row = await trx
            .insertInto('user_groups')
            .values({
              realm_id: realmId,
              name,
              description,
              is_system_group: 0,
              deactivated: 0,
              date_created: unixSeconds(clock),
              creator_id: me.id,
              ...settings,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          for (const user_id of members) await trx.insertInto('user_group_members').values({ group_id: row.id, user_id }).execute();
          for (const subgroup_id of subgroups) await trx.insertInto('user_group_subgroups').values({ group_id: row.id, subgroup_id }).execute();
          return row.id;
        }),
      (id) => userGroupAddNotice(db.kysely, realmId, id),
    );
    return { group_id: groupId };
  },
});

export const updateUserGroup = defineEndpoint({
  method: 'PATCH',
  path: '/user_groups/{user_group_id}',
  summary: 'Update a user group',
  auth: 'user',
  params: Type.Object({
    user_group_id: Type.Integer(),
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    ...permissionParams(GroupSettingUpdateSchema),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    requireMemberOrAdmin(me);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    const asked = p.name !== undefined || p.description !== undefined || GROUP_PERMISSIONS.some((s) => p[s] !== undefined);
    if (!asked) throw noNewData();
    const data: Record<string, unknown> = {};
    await events.write(
      () =>
        db.transaction(async (trx) => {
          // Permission settings of a deactivated group may change (feature level 340): no deactivation check.
          const g = await groupForUpdate(trx, realmId, me, p.user_group_id, ['can_manage_group']);
          const set: Partial<Record<'name' | 'description' | GroupPermission, string>> = {};
          if (p.name !== undefined) {
            const name = checkGroupName(p.name);
            if (name !== g.name) {
              await checkNameFree(trx, realmId, name, g.id);
              set.name = data.name = name;
            }
          }
          if (p.description !== undefined) {
            const description = checkGroupDescription(p.description);
            if (description !== g.description) set.description = data.description = description;
          }
          const nobody = await nobodyGroupId(trx, realmId);
          for (const s of GROUP_PERMISSIONS) {
            const update = p[s] as { new: GroupSettingValue; old?: GroupSettingValue } | undefined;
            if (update === undefined) continue;
            const current = groupSetting(g, s, nobody);
            const value = await checkPermissionValue(trx, realmId, s, update.new);
            if (update.old !== undefined && !sameGroupSetting(update.old, current)) throw oldValueMismatch();
            if (sameGroupSetting(value, current)) continue;
            set[s] = JSON.stringify(value);
            data[s] = value;
          }
          if (Object.keys(set).length) await trx.updateTable('user_groups').set(set).where('id', '=', g.id).execute();
          return g;
        }),
      (g) => userGroupUpdateNotice(db.kysely, realmId, g.id, data, g.deactivated === 1),
    );
    return {};
  },
});

interface MembershipChange {
  add: number[];
  delete: number[];
  add_subgroups: number[];
  delete_subgroups: number[];
}

function isOnlyMe(ids: number[], me: ChatUser): boolean {
  return ids.length > 0 && ids.every((id) => id === me.id);
}

/**
 * Checks and applies a change of members and subgroups: joining or leaving oneself needs
 * can_join_group or can_leave_group, others' membership can_add_members_group or
 * can_remove_members_group, subgroups can_manage_group (each also granted by managing the group).
 */
async function changeMembership(call: ChatCall, groupId: number, c: MembershipChange): Promise<void> {
  const me = requireUser(call);
  requireMemberOrAdmin(me);
  const { db, events } = call.services;
  const realmId = call.realm.id;
  const done = { add_members: [] as number[], remove_members: [] as number[], add_subgroups: [] as number[], remove_subgroups: [] as number[] };
  await events.write(
    () =>
      db.transaction(async (trx) => {
        const g = await groupById(trx, realmId, groupId);
        if (g.is_system_group === 1) throw insufficientPermission();
        if (g.deactivated === 1) throw groupDeactivated();
        const allowed = async (settings: GroupPermission[]) => {
          if (!(await hasGroupPermission(trx, realmId, me, g, settings))) throw insufficientPermission();
        };
        if (c.add.length) await allowed(isOnlyMe(c.add, me) ? ['can_join_group', 'can_add_members_group'] : ['can_add_members_group']);
        if (c.delete.length) await allowed(isOnlyMe(c.delete, me) ? ['can_leave_group', 'can_remove_members_group'] : ['can_remove_members_group']);
        if (c.add_subgroups.length || c.delete_subgroups.length) await allowed(['can_manage_group']);
        const members = new Set(await directMembers(trx, g.id));
        for (const id of await activeUsers(trx, realmId, c.add)) {
          if (members.has(id)) throw alreadyMember({ id });
          done.add_members.push(id);
        }
        for (const id of await activeUsers(trx, realmId, c.delete)) {
          if (!members.has(id)) throw notMember({ id });
          done.remove_members.push(id);
        }
        const subgroups = new Set(await directSubgroups(trx, g.id));
        for (const id of await usableGroups(trx, realmId, c.add_subgroups)) {
          if (subgroups.has(id)) throw alreadySubgroup({ id });
          // A group may not contain itself, however deep.
          if (id === g.id || (await allSubgroups(trx, id)).includes(g.id)) throw alreadySupergroup({ id });
          done.add_subgroups.push(id);
        }
        for (const id of [...new Set(c.delete_subgroups)]) {
          if (!subgroups.has(id)) throw notSubgroup({ id });
          done.remove_subgroups.push(id);
        }
        for (const user_id of done.add_members) await trx.insertInto('user_group_members').values({ group_id: g.id, user_id }).execute();
        if (done.remove_members.length) await trx.deleteFrom('user_group_members').where('group_id', '=', g.id).where('user_id', 'in', done.remove_members).execute();
        for (const subgroup_id of done.add_subgroups) await trx.insertInto('user_group_subgroups').values({ group_id: g.id, subgroup_id }).execute();
        if (done.remove_subgroups.length) await trx.deleteFrom('user_group_subgroups').where('group_id', '=', g.id).where('subgroup_id', 'in', done.remove_subgroups).execute();
        return g;
      }),
    (g: UserGroup) => userGroupMembershipNotices(db.kysely, realmId, g.id, false, done),
  );
}

export const updateUserGroupMembers = defineEndpoint({
  method: 'POST',
  path: '/user_groups/{user_group_id}/members',
  summary: 'Update user group members',
  auth: 'user',
  params: Type.Object({
    user_group_id: Type.Integer(),
    add: Type.Optional(IdList),
    delete: Type.Optional(IdList),
    add_subgroups: Type.Optional(IdList),
    delete_subgroups: Type.Optional(IdList),
  }),
  async handler(call, p) {
    if (!p.add?.length && !p.delete?.length && !p.add_subgroups?.length && !p.delete_subgroups?.length) {
      throw nothingToDoMembersOrSubgroups();
    }
    await changeMembership(call, p.user_group_id, { add: p.add ?? [], delete: p.delete ?? [], add_subgroups: p.add_subgroups ?? [], delete_subgroups: p.delete_subgroups ?? [] });
    return {};
  },
});

export const updateUserGroupSubgroups = defineEndpoint({
  method: 'POST',
  path: '/user_groups/{user_group_id}/subgroups',
  summary: 'Update subgroups of a user group',
  auth: 'user',
  params: Type.Object({ user_group_id: Type.Integer(), add: Type.Optional(IdList), delete: Type.Optional(IdList) }),
  async handler(call, p) {
    if (!p.add?.length && !p.delete?.length) throw nothingToDoMembers();
    await changeMembership(call, p.user_group_id, { add: [], delete: [], add_subgroups: p.add ?? [], delete_subgroups: p.delete ?? [] });
    return {};
  },
});

export const getUserGroupMembers = defineEndpoint({
  method: 'GET',
  path: '/user_groups/{user_group_id}/members',
  summary: 'Get user group members',
  auth: 'user',
  params: Type.Object({ user_group_id: Type.Integer(), direct_member_only: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    // Zulip's require_member_or_admin: guests read no group's members or subgroups.
    requireMemberOrAdmin(requireUser(call));
    const db = call.services.db.kysely;
    const g = await groupById(db, call.realm.id, p.user_group_id);
    return { members: p.direct_member_only ? await directMembers(db, g.id) : await allMembers(db, g.id) };
  },
});

export const getUserGroupSubgroups = defineEndpoint({
  method: 'GET',
  path: '/user_groups/{user_group_id}/subgroups',
  summary: 'Get subgroups of a user group',
  auth: 'user',
  params: Type.Object({ user_group_id: Type.Integer(), direct_subgroup_only: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    // Zulip's require_member_or_admin: guests read no group's members or subgroups.
    requireMemberOrAdmin(requireUser(call));
    const db = call.services.db.kysely;
    const g = await groupById(db, call.realm.id, p.user_group_id);
    return { subgroups: p.direct_subgroup_only ? await directSubgroups(db, g.id) : await allSubgroups(db, g.id) };
  },
});

export const getIsUserGroupMember = defineEndpoint({
  method: 'GET',
  path: '/user_groups/{user_group_id}/members/{user_id}',
  summary: 'Get user group membership status',
  auth: 'user',
  params: Type.Object({ user_group_id: Type.Integer(), user_id: Type.Integer(), direct_member_only: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    // Zulip's require_member_or_admin: guests read no group's members or subgroups.
    requireMemberOrAdmin(requireUser(call));
    const db = call.services.db.kysely;
    const g = await groupById(db, call.realm.id, p.user_group_id);
    const user = await userById(db, call.realm.id, p.user_id);
    if (!user) throw noSuchUser();
    const members = p.direct_member_only ? await directMembers(db, g.id) : await allMembers(db, g.id);
    return { is_user_group_member: members.includes(user.id) };
  },
});

export const deactivateUserGroup = defineEndpoint({
  method: 'POST',
  path: '/user_groups/{user_group_id}/deactivate',
  summary: 'Deactivate a user group',
  auth: 'user',
  params: Type.Object({ user_group_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    requireMemberOrAdmin(me);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const g = await groupForUpdate(trx, realmId, me, p.user_group_id, ['can_manage_group']);
          if (g.deactivated === 1) throw groupAlreadyDeactivated();
          const objections = await groupObjections(trx, realmId, g.id);
          if (objections.length) throw groupInUse({ objections });
          await trx.updateTable('user_groups').set({ deactivated: 1 }).where('id', '=', g.id).execute();
          return g.id;
        }),
      (id) => userGroupUpdateNotice(db.kysely, realmId, id, { deactivated: true }, true),
    );
    return {};
  },
});

// User groups beyond the system ones: names, their permission settings (group-setting values) with
// the defaults Zulip gives a new group, who may do what to a group, the group object clients see,
// and what a deactivation would break.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, UserGroup } from '../tables.js';
import {
  botsNotAccepted,
  cannotMentionGroup,
  groupDescriptionTooLong,
  groupNameEmpty,
  groupNameReservedPrefix,
  groupNameTaken,
  groupNameTooLong,
  insufficientPermission,
  invalidGroup,
  notAllowedForGuests,
  settingGroupNotAllowed,
} from '../errors.js';
import { checkGroupSettingValue, inGroupSetting, normaliseGroupSetting, parseGroupSetting, systemGroupId, type GroupSettingValue } from './groups.js';
import { isGuest, NOBODY_GROUP } from './roles.js';
import { holdsRealmPermission, REALM_GROUP_SETTING_NAMES, realmRow } from './realm-settings.js';

export const GROUP_PERMISSIONS = ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group'] as const;
export type GroupPermission = (typeof GROUP_PERMISSIONS)[number];

/** 'creator' is Zulip's "group_creator" default: an anonymous group holding the creator alone. */
const DEFAULTS: Record<GroupPermission, string> = {
  can_add_members_group: 'creator',
  can_join_group: NOBODY_GROUP.name,
  can_leave_group: 'role:everyone',
  can_manage_group: 'creator',
  can_mention_group: 'role:everyone',
  can_remove_members_group: NOBODY_GROUP.name,
};

/** System groups a setting may not hold, beyond role:internet, which none may (seed: PATCH /user_groups). */
const FORBIDDEN: Partial<Record<GroupPermission, string[]>> = {
  can_manage_group: ['role:everyone'],
  can_mention_group: ['role:owners'],
};

export const MAX_GROUP_NAME_LENGTH = 100;
export const MAX_GROUP_DESCRIPTION_LENGTH = 1024;

/** Zulip's user group endpoints are for members and administrators, not guests or bots. */
export function requireMemberOrAdmin(user: ChatUser): void {
  if (isGuest(user.role)) throw notAllowedForGuests();
  if (user.is_bot === 1) throw botsNotAccepted();
}

export function checkGroupName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw groupNameEmpty();
  if (trimmed.length > MAX_GROUP_NAME_LENGTH) throw groupNameTooLong({ limit: MAX_GROUP_NAME_LENGTH });
  // Names of the system groups' form, and the mention sigil, are reserved.
  for (const prefix of ['@', 'role:', 'user:', 'stream:', 'channel:']) {
    if (trimmed.startsWith(prefix)) throw groupNameReservedPrefix({ prefix });
  }
  return trimmed;
}

export function checkGroupDescription(description: string): string {
  if (description.length > MAX_GROUP_DESCRIPTION_LENGTH) throw groupDescriptionTooLong({ limit: MAX_GROUP_DESCRIPTION_LENGTH });
  return description;
}

export async function checkNameFree(db: Queryable<ChatTables>, realmId: number, name: string, exceptId?: number): Promise<void> {
  const clash = await db.selectFrom('user_groups').select('id').where('realm_id', '=', realmId).where('name', '=', name).executeTakeFirst();
  if (clash && clash.id !== exceptId) throw groupNameTaken({ name });
}

/** A permission's value for a new group: what the caller gave (checked), or the default. */
export async function initialSetting(db: Queryable<ChatTables>, realmId: number, creatorId: number, setting: GroupPermission, given: GroupSettingValue | undefined): Promise<GroupSettingValue> {
  if (given !== undefined) return checkPermissionValue(db, realmId, setting, given);
  const def = DEFAULTS[setting];
  return def === 'creator' ? { direct_members: [creatorId], direct_subgroups: [] } : systemGroupId(db, realmId, def);
}

/** Checks a value for one of a group's permissions and returns it normalised, as stored. */
export async function checkPermissionValue(db: Queryable<ChatTables>, realmId: number, setting: GroupPermission, value: GroupSettingValue): Promise<GroupSettingValue> {
  const normal = normaliseGroupSetting(value);
  await checkGroupSettingValue(db, realmId, setting, normal);
  const named = typeof normal === 'number' ? [normal] : normal.direct_subgroups;
  for (const id of named) {
    const g = await db.selectFrom('user_groups').select(['name', 'is_system_group']).where('id', '=', id).executeTakeFirstOrThrow();
    if (g.is_system_group === 1 && FORBIDDEN[setting]?.includes(g.name) && typeof normal === 'number') {
      throw settingGroupNotAllowed({ setting, group: g.name });
    }
  }
  return normal;
}

/** A group's permission; a system group's are fixed at role:nobody (nobody may change one). */
export function groupSetting(g: UserGroup, setting: GroupPermission, nobodyId: number): GroupSettingValue {
  const raw = g[setting];
  return raw === null ? nobodyId : parseGroupSetting(raw);
}

export async function nobodyGroupId(db: Queryable<ChatTables>, realmId: number): Promise<number> {
  return systemGroupId(db, realmId, NOBODY_GROUP.name);
}

/** The group by id in the realm, or Zulip's "Invalid user group". */
export async function groupById(db: Queryable<ChatTables>, realmId: number, id: number): Promise<UserGroup> {
  const g = await db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
  if (!g) throw invalidGroup();
  return g;
}

/**
 * Whether the user holds one of the group's permissions: through the setting itself, through
 * can_manage_group (which implies every other), or through the realm's can_manage_all_groups.
 */
export async function hasGroupPermission(db: Queryable<ChatTables>, realmId: number, user: ChatUser, g: UserGroup, settings: GroupPermission[]): Promise<boolean> {
  if (g.is_system_group === 1) return false;
  if (await holdsRealmPermission(db, realmId, user, 'can_manage_all_groups')) return true;
  const nobody = await nobodyGroupId(db, realmId);
  for (const s of new Set<GroupPermission>([...settings, 'can_manage_group'])) {
    if (await inGroupSetting(db, user.id, groupSetting(g, s, nobody))) return true;
  }
  return false;
}

/** Fetches a group for a change, refusing system groups and callers without one of the permissions. */
export async function groupForUpdate(db: Queryable<ChatTables>, realmId: number, user: ChatUser, id: number, settings: GroupPermission[]): Promise<UserGroup> {
  const g = await groupById(db, realmId, id);
  if (g.is_system_group === 1 || !(await hasGroupPermission(db, realmId, user, g, settings))) throw insufficientPermission();
  return g;
}

/** Refuses a message that mentions (not silently) a group the sender is not in can_mention_group of. */
export async function checkGroupMentions(db: Queryable<ChatTables>, realmId: number, sender: ChatUser, groupIds: number[]): Promise<void> {
  if (!groupIds.length) return;
  const nobody = await nobodyGroupId(db, realmId);
  for (const id of groupIds) {
    const g = await groupById(db, realmId, id);
    if (!(await inGroupSetting(db, sender.id, groupSetting(g, 'can_mention_group', nobody)))) throw cannotMentionGroup({ name: g.name });
  }
}

/** Active direct members (deactivated users are not members while deactivated: feature level 303). */
export async function directMembers(db: Queryable<ChatTables>, groupId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('user_group_members')
    .innerJoin('chat_users', 'chat_users.id', 'user_group_members.user_id')
    .select('user_group_members.user_id')
    .where('user_group_members.group_id', '=', groupId)
    .where('chat_users.is_active', '=', 1)
    .execute();
  return rows.map((r) => r.user_id).sort((a, b) => a - b);
}

/** The groups a user is a direct member of (system groups included), in id order. */
export async function directGroupIdsOf(db: Queryable<ChatTables>, userId: number): Promise<number[]> {
  return (await db.selectFrom('user_group_members').select('group_id').where('user_id', '=', userId).execute()).map((r) => r.group_id).sort((a, b) => a - b);
}

export async function directSubgroups(db: Queryable<ChatTables>, groupId: number): Promise<number[]> {
  return (await db.selectFrom('user_group_subgroups').select('subgroup_id').where('group_id', '=', groupId).execute()).map((r) => r.subgroup_id).sort((a, b) => a - b);
}

/** Every group reachable through subgroups (not the group itself). */
export async function allSubgroups(db: Queryable<ChatTables>, groupId: number): Promise<number[]> {
  const seen = new Set<number>([groupId]);
  let frontier = [groupId];
  const out: number[] = [];
  while (frontier.length) {
    const subs = await db.selectFrom('user_group_subgroups').select('subgroup_id').where('group_id', 'in', frontier).execute();
    frontier = subs.map((s) => s.subgroup_id).filter((g) => !seen.has(g));
    for (const g of frontier) {
      seen.add(g);
      out.push(g);
    }
  }
  return out.sort((a, b) => a - b);
}

/** Active members of the group and of its subgroups, however deep. */
export async function allMembers(db: Queryable<ChatTables>, groupId: number): Promise<number[]> {
  const ids = new Set<number>();
  for (const g of [groupId, ...(await allSubgroups(db, groupId))]) for (const u of await directMembers(db, g)) ids.add(u);
  return [...ids].sort((a, b) => a - b);
}

/** Drops deactivated users from an anonymous group's direct members, as Zulip shows them. */
function shownSetting(v: GroupSettingValue, active: Set<number>): GroupSettingValue {
  return typeof v === 'number' ? v : { direct_members: v.direct_members.filter((id) => active.has(id)), direct_subgroups: v.direct_subgroups };
}

/** The user group objects of a realm (GET /user_groups, register, user_group add), in id order. */
export async function groupObjects(db: Queryable<ChatTables>, realmId: number, opts: { includeDeactivated: boolean; ids?: number[] }): Promise<Record<string, unknown>[]> {
  let q = db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId);
  if (!opts.includeDeactivated) q = q.where('deactivated', '=', 0);
  if (opts.ids) q = opts.ids.length ? q.where('id', 'in', opts.ids) : q.where('id', '=', -1);
  const groups = await q.orderBy('id').execute();
  const ids = groups.map((g) => g.id);
  const active = new Set((await db.selectFrom('chat_users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).execute()).map((u) => u.id));
  const members = ids.length ? await db.selectFrom('user_group_members').selectAll().where('group_id', 'in', ids).execute() : [];
  const subgroups = ids.length ? await db.selectFrom('user_group_subgroups').selectAll().where('group_id', 'in', ids).execute() : [];
  const nobody = await nobodyGroupId(db, realmId);
  return groups.map((g) => {
    const out: Record<string, unknown> = {
      id: g.id,
      name: g.name,
      description: g.description,
      // Zulip records no creation time or creator for the system groups made with the realm.
      date_created: g.is_system_group === 1 ? null : g.date_created,
      creator_id: g.creator_id,
      members: members
        .filter((m) => m.group_id === g.id && active.has(m.user_id))
        .map((m) => m.user_id)
        .sort((a, b) => a - b),
      direct_subgroup_ids: subgroups
        .filter((s) => s.group_id === g.id)
        .map((s) => s.subgroup_id)
        .sort((a, b) => a - b),
      is_system_group: g.is_system_group === 1,
    };
    for (const s of GROUP_PERMISSIONS) out[s] = shownSetting(groupSetting(g, s, nobody), active);
    out.deactivated = g.deactivated === 1;
    return out;
  });
}

const CHANNEL_SETTINGS = ['can_add_subscribers_group', 'can_remove_subscribers_group', 'can_administer_channel_group', 'can_send_message_group', 'can_subscribe_group'] as const;

function uses(json: string | null, groupId: number): boolean {
  if (json === null) return false;
  const v = parseGroupSetting(json);
  return typeof v === 'number' ? v === groupId : v.direct_subgroups.includes(groupId);
}

/**
 * Where an active group is in use (Zulip's CANNOT_DEACTIVATE_GROUP_IN_USE objections): as a
 * subgroup of an active group, or in a setting of the realm, of a channel or of another active group.
 */
export async function groupObjections(db: Queryable<ChatTables>, realmId: number, groupId: number): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const supergroups = await db
    .selectFrom('user_group_subgroups')
    .innerJoin('user_groups', 'user_groups.id', 'user_group_subgroups.group_id')
    .select('user_groups.id')
    .where('user_group_subgroups.subgroup_id', '=', groupId)
    .where('user_groups.deactivated', '=', 0)
    .execute();
  if (supergroups.length) out.push({ type: 'subgroup', supergroup_ids: supergroups.map((s) => s.id).sort((a, b) => a - b) });
  const realm = await realmRow(db, realmId);
  const realmSettings = REALM_GROUP_SETTING_NAMES.filter((s) => uses(realm[s], groupId));
  if (realmSettings.length) out.push({ type: 'realm', settings: realmSettings });
  const channels = await db.selectFrom('streams').selectAll().where('realm_id', '=', realmId).where('is_archived', '=', 0).orderBy('id').execute();
  for (const c of channels) {
    const settings = CHANNEL_SETTINGS.filter((s) => uses(c[s], groupId));
    if (settings.length) out.push({ type: 'channel', channel_id: c.id, settings });
  }
  const groups = await db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).where('deactivated', '=', 0).where('id', '!=', groupId).orderBy('id').execute();
  for (const g of groups) {
    const settings = GROUP_PERMISSIONS.filter((s) => uses(g[s], groupId));
    if (settings.length) out.push({ type: 'user_group', group_id: g.id, settings });
  }
  return out;
}

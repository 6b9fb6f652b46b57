// User groups: the system groups made with the realm, and whether a user is in a group-setting value
// (seed convention 6: a group id, or {direct_members, direct_subgroups}), subgroups included.
import type { Queryable } from '../../platform/db/database.js';
import { TableCache } from '../../platform/db/fast/table-cache.js';
import type { ChatTables } from '../tables.js';
import { invalidGroupId, invalidGroupMemberId, oldValueMismatch, settingGroupNotAllowed, settingMustBeSystemGroup } from '../errors.js';
import { NOBODY_GROUP, SYSTEM_GROUPS } from './roles.js';

export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

export async function createSystemGroups(db: Queryable<ChatTables>, realmId: number, now: number): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const g of [...SYSTEM_GROUPS, NOBODY_GROUP]) {
    const row = await db
      .insertInto('user_groups')
      .values({ realm_id: realmId, name: g.name, description: g.description, is_system_group: 1, deactivated: 0, date_created: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.set(g.name, row.id);
  }
  for (let i = 0; i + 1 < SYSTEM_GROUPS.length; i++) {
    await db
      .insertInto('user_group_subgroups')
      .values({ group_id: ids.get(SYSTEM_GROUPS[i + 1].name)!, subgroup_id: ids.get(SYSTEM_GROUPS[i].name)! })
      .execute();
  }
  return ids;
}

export async function systemGroupId(db: Queryable<ChatTables>, realmId: number, name: string): Promise<number> {
  const row = await db.selectFrom('user_groups').select('id').where('realm_id', '=', realmId).where('name', '=', name).where('is_system_group', '=', 1).executeTakeFirst();
  if (!row) throw new Error(`system group ${name} is missing`);
  return row.id;
}

/** The realm's system groups by name, in one query. */
export async function systemGroupIds(db: Queryable<ChatTables>, realmId: number): Promise<Map<string, number>> {
  const rows = await db.selectFrom('user_groups').select(['id', 'name']).where('realm_id', '=', realmId).where('is_system_group', '=', 1).execute();
  return new Map(rows.map((r) => [r.name, r.id]));
}

const answers = new TableCache<boolean>('user_group_members', 'user_group_subgroups');

/**
 * Whether the user is in the group or any of its subgroups, however deep. Every send asks it (who may
 * post to the channel): answers are kept until this node writes group members or subgroups (or for
 * the read cache's TTL, for other nodes' changes); inside a transaction they are found afresh.
 */
export async function inGroup(db: Queryable<ChatTables>, userId: number, groupId: number): Promise<boolean> {
  return answers.get(db, `${userId} ${groupId}`, () => searchGroup(db, userId, groupId));
}

async function searchGroup(db: Queryable<ChatTables>, userId: number, groupId: number): Promise<boolean> {
  const seen = new Set<number>();
  let frontier = [groupId];
  while (frontier.length) {
    frontier.forEach((g) => seen.add(g));
    const hit = await db.selectFrom('user_group_members').select('user_id').where('group_id', 'in', frontier).where('user_id', '=', userId).executeTakeFirst();
    if (hit) return true;
    const subs = await db.selectFrom('user_group_subgroups').select('subgroup_id').where('group_id', 'in', frontier).execute();
    frontier = subs.map((s) => s.subgroup_id).filter((g) => !seen.has(g));
  }
  return false;
}

export function parseGroupSetting(json: string): GroupSettingValue {
  return JSON.parse(json) as GroupSettingValue;
}

export async function inGroupSetting(db: Queryable<ChatTables>, userId: number, value: GroupSettingValue): Promise<boolean> {
  if (typeof value === 'number') return inGroup(db, userId, value);
  if (value.direct_members.includes(userId)) return true;
  for (const g of value.direct_subgroups) if (await inGroup(db, userId, g)) return true;
  return false;
}

/** Zulip stores a setting of exactly one subgroup and no members as that group's id. */
export function normaliseGroupSetting(v: GroupSettingValue): GroupSettingValue {
  if (typeof v === 'number') return v;
  if (v.direct_members.length === 0 && v.direct_subgroups.length === 1) return v.direct_subgroups[0];
  const sorted = (a: number[]) => [...new Set(a)].sort((x, y) => x - y);
  return { direct_members: sorted(v.direct_members), direct_subgroups: sorted(v.direct_subgroups) };
}

export function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  return JSON.stringify(normaliseGroupSetting(a)) === JSON.stringify(normaliseGroupSetting(b));
}

export interface GroupSettingUpdate {
  new: GroupSettingValue;
  old?: GroupSettingValue;
}

/**
 * Refuses a group-setting value naming a group or a user the realm does not have, and the system
 * groups the setting may not use (role:internet always unless allowed; role:everyone and
 * role:nobody where the setting forbids them; any group but the listed system ones for a setting
 * that takes only those), before anything is stored.
 */
export async function checkGroupSettingValue(
  db: Queryable<ChatTables>,
  realmId: number,
  setting: string,
  value: GroupSettingValue,
  opts: { allowInternet?: boolean; allowNobody?: boolean; allowEveryone?: boolean; systemGroups?: readonly string[] } = {},
): Promise<void> {
  if (opts.systemGroups && typeof value !== 'number') throw settingMustBeSystemGroup({ setting });
  const groups = typeof value === 'number' ? [value] : value.direct_subgroups;
  for (const id of groups) {
    const g = await db.selectFrom('user_groups').select(['name', 'is_system_group', 'deactivated']).where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
    if (!g || g.deactivated === 1) throw invalidGroupId({ id });
    if (opts.systemGroups) {
      if (g.is_system_group !== 1) throw settingMustBeSystemGroup({ setting });
      if (!opts.systemGroups.includes(g.name)) throw settingGroupNotAllowed({ setting, group: g.name });
    }
    const forbidden =
      g.is_system_group === 1 &&
      ((g.name === 'role:internet' && !opts.allowInternet) ||
        (g.name === NOBODY_GROUP.name && opts.allowNobody === false) ||
        (g.name === 'role:everyone' && opts.allowEveryone === false && typeof value === 'number'));
    if (forbidden) throw settingGroupNotAllowed({ setting, group: g.name });
  }
  if (typeof value === 'number') return;
  for (const id of value.direct_members) {
    const u = await db.selectFrom('chat_users').select('id').where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
    if (!u) throw invalidGroupMemberId({ id });
  }
}

/** Checks an update ({new, old}) of a group setting and returns the value to store. */
export async function checkGroupSettingUpdate(
  db: Queryable<ChatTables>,
  realmId: number,
  setting: string,
  update: GroupSettingUpdate,
  current: GroupSettingValue,
  allowed: { allowEveryone: boolean; allowNobody?: boolean; systemGroups?: readonly string[] },
): Promise<GroupSettingValue> {
  const value = normaliseGroupSetting(update.new);
  await checkGroupSettingValue(db, realmId, setting, value, allowed);
  if (update.old !== undefined && !sameGroupSetting(update.old, current)) throw oldValueMismatch();
  return value;
}

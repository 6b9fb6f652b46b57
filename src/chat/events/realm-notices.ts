// The notices of organization-level changes, sent to every active user of the realm: user groups
// (shown to clients without the include_deactivated_groups capability as if deactivated groups were
// gone), linkifiers (only to clients that understand URL templates), custom emoji and the realm's
// settings.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { directGroupIdsOf, groupObjects } from '../domain/user-groups.js';
import { linkifierObjects } from '../domain/linkifiers.js';
import { realmEmojiObjects } from '../domain/realm-emoji.js';
import { activeUsers, realmUserAddNotice } from './notices.js';
import type { Notice } from './hub.js';
import type { EventQueue } from './queue.js';

async function everyone(db: Queryable<ChatTables>, realmId: number): Promise<number[]> {
  return (await activeUsers(db, realmId)).map((u) => u.id);
}

const seesDeactivatedGroups = (queue: EventQueue) => queue.options.capabilities.include_deactivated_groups === true;

/** user_group add: the new group, as GET /user_groups shows it. */
export async function userGroupAddNotice(db: Queryable<ChatTables>, realmId: number, groupId: number): Promise<Notice[]> {
  const [group] = await groupObjects(db, realmId, { includeDeactivated: true, ids: [groupId] });
  return [{ type: 'user_group', userIds: await everyone(db, realmId), render: () => ({ type: 'user_group', op: 'add', group }) }];
}

/**
 * user_group update with the changed fields. Deactivation reaches clients without the
 * include_deactivated_groups capability as `remove`; other changes to a deactivated group do not
 * reach them at all.
 */
export async function userGroupUpdateNotice(db: Queryable<ChatTables>, realmId: number, groupId: number, data: Record<string, unknown>, groupDeactivated: boolean): Promise<Notice[]> {
  if (!Object.keys(data).length) return [];
  return [
    {
      type: 'user_group',
      userIds: await everyone(db, realmId),
      render: (queue) => {
        if (seesDeactivatedGroups(queue)) return { type: 'user_group', op: 'update', group_id: groupId, data };
        if (data.deactivated === true) return { type: 'user_group', op: 'remove', group_id: groupId };
        return groupDeactivated ? null : { type: 'user_group', op: 'update', group_id: groupId, data };
      },
    },
  ];
}

/** add_members / remove_members (user_ids) and add_subgroups / remove_subgroups (direct_subgroup_ids). */
export async function userGroupMembershipNotices(
  db: Queryable<ChatTables>,
  realmId: number,
  groupId: number,
  groupDeactivated: boolean,
  changes: { add_members: number[]; remove_members: number[]; add_subgroups: number[]; remove_subgroups: number[] },
): Promise<Notice[]> {
  const userIds = await everyone(db, realmId);
  const out: Notice[] = [];
  for (const [op, ids] of Object.entries(changes)) {
    if (!ids.length) continue;
    const key = op.endsWith('members') ? 'user_ids' : 'direct_subgroup_ids';
    const list = [...ids].sort((a, b) => a - b);
    out.push({
      type: 'user_group',
      userIds,
      render: (queue) => (groupDeactivated && !seesDeactivatedGroups(queue) ? null : { type: 'user_group', op, group_id: groupId, [key]: list }),
    });
  }
  return out;
}

/**
 * add_members / remove_members for one user's groups, when a user's life changes them: joining the
 * realm, a role change (system groups), deactivation and reactivation (a deactivated user is in no
 * group while deactivated: feature level 303). One event per group, as Zulip sends them.
 */
export async function userMembershipNotices(db: Queryable<ChatTables>, realmId: number, userId: number, added: number[], removed: number[]): Promise<Notice[]> {
  const ids = [...new Set([...added, ...removed])];
  if (!ids.length) return [];
  const deactivated = new Map((await db.selectFrom('user_groups').select(['id', 'deactivated']).where('id', 'in', ids).execute()).map((g) => [g.id, g.deactivated === 1]));
  const out: Notice[] = [];
  for (const [list, op] of [
    [added, 'add_members'],
    [removed, 'remove_members'],
  ] as const) {
    for (const groupId of [...list].sort((a, b) => a - b)) {
      const changes = { add_members: [] as number[], remove_members: [] as number[], add_subgroups: [], remove_subgroups: [] };
      changes[op].push(userId);
      out.push(...(await userGroupMembershipNotices(db, realmId, groupId, deactivated.get(groupId) ?? false, changes)));
    }
  }
  return out;
}

/** realm_user add, then add_members for the groups a new user joined with their role. */
export async function joinedNotices(db: Queryable<ChatTables>, realmId: number, user: ChatUser): Promise<Notice[]> {
  return [...(await realmUserAddNotice(db, realmId, user)), ...(await userMembershipNotices(db, realmId, user.id, await directGroupIdsOf(db, user.id), []))];
}

/** realm_linkifiers: the whole ordered list, to clients that declared linkifier_url_template. */
export async function linkifiersNotice(db: Queryable<ChatTables>, realmId: number): Promise<Notice[]> {
  const list = await linkifierObjects(db, realmId);
  return [
    {
      type: 'realm_linkifiers',
      userIds: await everyone(db, realmId),
      render: (queue) => (queue.options.capabilities.linkifier_url_template === true ? { type: 'realm_linkifiers', realm_linkifiers: list } : null),
    },
  ];
}

/** realm_emoji update: every custom emoji of the realm, deactivated ones included. */
export async function realmEmojiNotice(db: Queryable<ChatTables>, realmId: number): Promise<Notice[]> {
  const realm_emoji = await realmEmojiObjects(db, realmId);
  return [{ type: 'realm_emoji', userIds: await everyone(db, realmId), render: () => ({ type: 'realm_emoji', op: 'update', realm_emoji }) }];
}

/** One changed realm setting: update_dict carries it in `data` (see SIMPLE_SETTINGS.dict). */
export interface RealmSettingChange {
  name: string;
  value: unknown;
  dict: boolean;
}

/** realm update (property, value) or update_dict (property "default", data), one per changed setting. */
export async function realmSettingsNotices(db: Queryable<ChatTables>, realmId: number, changes: RealmSettingChange[]): Promise<Notice[]> {
  if (!changes.length) return [];
  const userIds = await everyone(db, realmId);
  return changes.map((c) => {
    const event = c.dict ? { type: 'realm', op: 'update_dict', property: 'default', data: { [c.name]: c.value } } : { type: 'realm', op: 'update', property: c.name, value: c.value };
    return { type: 'realm', userIds, render: () => event };
  });
}

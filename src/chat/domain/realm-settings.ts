// The organization settings PATCH /realm changes and POST /register shows as realm_<name>: each
// one's parameter type and checks (Zulip 10's update_realm), whether Zulip announces its change as
// realm `update` or `update_dict`, and the values as they stand, read from the realms row.
// Group settings stored NULL hold Zulip's default system group for them (migrations 12 and 14).
import Type, { type TSchema } from 'typebox';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm, RealmRow } from '../tables.js';
import type { Updateable } from 'kysely';
import { invalidLanguage, paramBadValue, paramTooLong, realmNameRequired } from '../errors.js';
import { inGroupSetting, parseGroupSetting, systemGroupId, systemGroupIds, type GroupSettingValue } from './groups.js';
import { isGuest } from './roles.js';
import { renderMarkdown } from './markdown.js';
import { LANGUAGES } from './user-settings.js';

export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** The organization name as stored: trimmed, not empty, at most 40 characters (also at creation). */
export function checkRealmName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw realmNameRequired();
  if ([...name].length > MAX_REALM_NAME_LENGTH) throw paramTooLong({ name: 'name', var_name: 'name', limit: MAX_REALM_NAME_LENGTH });
  return name;
}

export type SimpleValue = string | number | boolean | null;

interface SimpleSetting {
  param: TSchema;
  /** Checks a decoded parameter; answers the value as the API shows it (and the event carries). */
  check(value: unknown, name: string): SimpleValue;
  read(row: Realm): SimpleValue;
  write(value: SimpleValue): Updateable<RealmRow>;
  /**
   * Zulip announces these with update_dict rather than update: allow_message_editing and
   * message_content_edit_limit_seconds keep the event format they had when they changed together.
   */
  dict?: true;
}

/** A time limit in seconds: a positive integer, or "unlimited" (stored as null). */
const timeLimit = (
  column: 'message_content_edit_limit_seconds' | 'move_messages_within_stream_limit_seconds' | 'move_messages_between_streams_limit_seconds' | 'message_content_delete_limit_seconds',
): SimpleSetting => ({
  param: Type.Union([Type.Integer(), Type.String()]),
  check(value, name) {
    if (value === 'unlimited') return null;
    if (typeof value === 'number' && value > 0) return value;
    throw paramBadValue({ name, var_name: name, value: String(value) });
  },
  read: (row) => (row[column] === null ? null : Number(row[column])),
  write: (value) => ({ [column]: value as number | null }),
});

const HISTORY_POLICIES = ['all', 'moves', 'none'] as const;

/** A yes/no setting stored as 0/1. */
const flag = (
  column: 'enable_spectator_access' | 'mandatory_topics' | 'name_changes_disabled' | 'email_changes_disabled' | 'require_unique_names' | 'enable_read_receipts' | 'invite_required',
): SimpleSetting => ({
  param: Type.Boolean(),
  check: (value) => value as boolean,
  read: (row) => row[column] === 1,
  write: (value) => ({ [column]: value ? 1 : 0 }),
});

/** In the order Zulip's register lists them; changes are announced in this order too. */
export const SIMPLE_SETTINGS = {
  name: {
    param: Type.String(),
    check: (value) => checkRealmName(value as string),
    read: (row) => row.name,
    write: (value) => ({ name: value as string }),
  },
  description: {
    param: Type.String(),
    check(value) {
      const description = value as string;
      if ([...description].length > MAX_REALM_DESCRIPTION_LENGTH) {
        throw paramTooLong({ name: 'description', var_name: 'description', limit: MAX_REALM_DESCRIPTION_LENGTH });
      }
      return description;
    },
    read: (row) => row.description,
    // GET /server_settings shows the description as HTML; register and events show the source.
    write: (value) => ({ description: value as string, rendered_description: value ? renderMarkdown(value as string) : '' }),
  },
  default_language: {
    param: Type.String(),
    check(value) {
      if (!LANGUAGES.includes(value as never)) throw invalidLanguage({ language: String(value) });
      return value as string;
    },
    read: (row) => row.default_language,
    write: (value) => ({ default_language: value as string }),
  },
  allow_message_editing: {
    param: Type.Boolean(),
    check: (value) => value as boolean,
    read: (row) => row.allow_message_editing === 1,
    write: (value) => ({ allow_message_editing: value ? 1 : 0 }),
    dict: true,
  },
  message_content_edit_limit_seconds: { ...timeLimit('message_content_edit_limit_seconds'), dict: true },
  move_messages_within_stream_limit_seconds: timeLimit('move_messages_within_stream_limit_seconds'),
  move_messages_between_streams_limit_seconds: timeLimit('move_messages_between_streams_limit_seconds'),
  message_content_delete_limit_seconds: timeLimit('message_content_delete_limit_seconds'),
  message_edit_history_visibility_policy: {
    param: Type.Union(HISTORY_POLICIES.map((p) => Type.Literal(p))),
    check: (value) => value as string,
    read: (row) => row.message_edit_history_visibility_policy,
    write: (value) => ({ message_edit_history_visibility_policy: value as string }),
  },
  // Spectator (logged-out) access to web-public channels (domain/spectators.ts); off for a new realm.
  enable_spectator_access: flag('enable_spectator_access'),
  // Channel messages need a topic: sending or editing to the empty topic is refused (message-rules.ts).
  mandatory_topics: flag('mandatory_topics'),
  // Members' own name changes are skipped and email changes refused (user-rules.ts); administrators are exempt.
  name_changes_disabled: flag('name_changes_disabled'),
  email_changes_disabled: flag('email_changes_disabled'),
  // Names of users and bots must differ (realm-rules.ts checkNameUnique).
  require_unique_names: flag('require_unique_names'),
  // Whether GET /messages/{id}/read_receipts answers (endpoints/read-receipts.ts); on for a new realm.
  enable_read_receipts: flag('enable_read_receipts'),
  // Whether joining needs an invitation (on, as Zulip creates a realm); off, members whose accounts
  // are under three days old may not invite (domain/invites.ts).
  invite_required: flag('invite_required'),
} satisfies Record<string, SimpleSetting>;

export type SimpleSettingName = keyof typeof SIMPLE_SETTINGS;

interface GroupSettingRule {
  /** Zulip's default system group, while the column is NULL. */
  default: string;
  allowNobody: boolean;
  /** Whether role:everyone (which holds guests) may be the whole setting. */
  allowEveryone: boolean;
  /** Only owners may change it: it decides who manages user groups, owners included. */
  ownerOnly?: true;
  /** The whole setting must be one of these system groups (Zulip's require_system_group and allowed_system_groups). */
  systemGroups?: readonly string[];
}

/** Zulip 10's configuration of the realm group settings Keel has (Realm.REALM_PERMISSION_GROUP_SETTINGS). */
export const REALM_GROUP_SETTINGS = {
  // Who may subscribe other users to channels (endpoints/channels.ts), and create channels of each kind.
  can_add_subscribers_group: { default: 'role:members', allowNobody: true, allowEveryone: false },
  can_create_groups: { default: 'role:members', allowNobody: true, allowEveryone: false, ownerOnly: true },
  can_create_private_channel_group: { default: 'role:members', allowNobody: true, allowEveryone: false },
  can_create_public_channel_group: { default: 'role:members', allowNobody: true, allowEveryone: false },
  // Owners by default: web-public channels can be read by anyone on the Internet.
  can_create_web_public_channel_group: {
    default: 'role:owners',
    allowNobody: true,
    allowEveryone: false,
    systemGroups: ['role:moderators', 'role:administrators', 'role:owners', 'role:nobody'],
  },
  can_delete_any_message_group: { default: 'role:administrators', allowNobody: false, allowEveryone: false },
  can_delete_own_message_group: { default: 'role:everyone', allowNobody: true, allowEveryone: true },
  can_manage_all_groups: { default: 'role:owners', allowNobody: false, allowEveryone: false, ownerOnly: true },
  can_move_messages_between_channels_group: { default: 'role:members', allowNobody: true, allowEveryone: false },
  can_move_messages_between_topics_group: { default: 'role:everyone', allowNobody: true, allowEveryone: true },
  can_resolve_topics_group: { default: 'role:everyone', allowNobody: true, allowEveryone: true },
  // Who may start direct message conversations, and whom one must include (realm-rules.ts).
  direct_message_initiator_group: { default: 'role:everyone', allowNobody: true, allowEveryone: true },
  direct_message_permission_group: { default: 'role:everyone', allowNobody: true, allowEveryone: true },
  // Who may send e-mail invitations, and make reusable invitation links (domain/invites.ts).
  can_invite_users_group: { default: 'role:members', allowNobody: true, allowEveryone: false },
  create_multiuse_invite_group: { default: 'role:administrators', allowNobody: true, allowEveryone: false },
} as const satisfies Record<string, GroupSettingRule>;

export type RealmGroupSetting = keyof typeof REALM_GROUP_SETTINGS;
export const REALM_GROUP_SETTING_NAMES = Object.keys(REALM_GROUP_SETTINGS) as RealmGroupSetting[];

export async function realmRow(db: Queryable<ChatTables>, realmId: number): Promise<Realm> {
  return db.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirstOrThrow();
}

/**
 * Every group setting of the realm row: the stored value, or its default group (one query for those,
 * unless the caller has the realm's system groups already).
 */
export async function realmGroupValues(db: Queryable<ChatTables>, row: Realm, systemGroups?: Map<string, number>): Promise<Record<RealmGroupSetting, GroupSettingValue>> {
  const defaults = systemGroups ?? (REALM_GROUP_SETTING_NAMES.some((n) => row[n] === null) ? await systemGroupIds(db, row.id) : new Map<string, number>());
  const out = {} as Record<RealmGroupSetting, GroupSettingValue>;
  for (const name of REALM_GROUP_SETTING_NAMES) {
    const raw = row[name];
    out[name] = raw === null ? defaults.get(REALM_GROUP_SETTINGS[name].default)! : parseGroupSetting(raw);
  }
  return out;
}

/** One group setting of the realm, as it stands (a permission check: the one column, the one default group). */
export async function realmGroupValue(db: Queryable<ChatTables>, realmId: number, name: RealmGroupSetting): Promise<GroupSettingValue> {
  const row = await db.selectFrom('realms').select(name).where('id', '=', realmId).executeTakeFirstOrThrow();
  const raw = row[name] as string | null;
  return raw === null ? systemGroupId(db, realmId, REALM_GROUP_SETTINGS[name].default) : parseGroupSetting(raw);
}

type PermissionHolder = Pick<ChatUser, 'id' | 'role'>;

/**
 * Whether the user is in a realm group setting's value. As in Zulip, a guest never holds a
 * permission whose setting may not be role:everyone, even as a member of the groups it names.
 */
function holds(db: Queryable<ChatTables>, user: PermissionHolder, name: RealmGroupSetting, value: GroupSettingValue): Promise<boolean> {
  if (!REALM_GROUP_SETTINGS[name].allowEveryone && isGuest(user.role)) return Promise.resolve(false);
  return inGroupSetting(db, user.id, value);
}

/** Whether the user holds one of the realm's group permissions now (reads that one setting). */
export async function holdsRealmPermission(db: Queryable<ChatTables>, realmId: number, user: PermissionHolder, name: RealmGroupSetting): Promise<boolean> {
  return holds(db, user, name, await realmGroupValue(db, realmId, name));
}

/** Several of the realm's group permissions at once, from one read of the realm row. */
export async function realmPermissions<N extends RealmGroupSetting>(db: Queryable<ChatTables>, realmId: number, user: PermissionHolder, names: readonly N[]): Promise<Record<N, boolean>> {
  const values = await realmGroupValues(db, await realmRow(db, realmId));
  const out = {} as Record<N, boolean>;
  for (const name of names) out[name] = await holds(db, user, name, values[name]);
  return out;
}

/**
 * The settings as POST /register shows them (realm_<name>), read from the row as committed now: the
 * realm the request carries may come from a cache older than the snapshot. `systemGroups` are the
 * realm's system groups by name, which register reads for its other keys too.
 */
export async function realmSettingsState(db: Queryable<ChatTables>, realmId: number, systemGroups: Map<string, number>): Promise<Record<string, unknown>> {
  const row = await realmRow(db, realmId);
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SIMPLE_SETTINGS) as [SimpleSettingName, SimpleSetting][]) out[`realm_${name}`] = s.read(row);
  // Deprecated boolean that register still carries: false only when no history at all is visible.
  out.realm_allow_edit_history = row.message_edit_history_visibility_policy !== 'none';
  for (const [name, value] of Object.entries(await realmGroupValues(db, row, systemGroups))) out[`realm_${name}`] = value;
  return out;
}

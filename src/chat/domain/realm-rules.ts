// The realm settings that decide what members may do with their messages and their own account,
// applied where the request is handled (Zulip 10's rules), and the record of which of register's
// realm_* keys the server acts on. Every other realm_* key of register is listed, with the reason,
// in docs/chat.md under "Realm settings reported but not enforced"; test/chat/endpoints/realm-rules.test.ts
// keeps the two lists and the register answer in step.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';
import { directMessagesDisabled, directMessageInitiationRefused, directMessageUnauthorized, emailChangesDisabled, namesNotUnique, topicsRequiredToEdit, topicsRequiredToSend } from '../errors.js';
import { inGroupSetting, parseGroupSetting, systemGroupIds } from './groups.js';
import { directKey } from './narrow.js';
import { isAdmin } from './roles.js';
import { realmDefaultsStored, type SettingValue } from './user-settings.js';

type RealmRules = Pick<Realm, 'mandatory_topics' | 'name_changes_disabled' | 'email_changes_disabled'>;
type NameRules = Pick<Realm, 'id' | 'require_unique_names'>;

/**
 * mandatory_topics: a channel message needs a topic. `topic` is normalised already (topics.ts), so
 * "(no topic)", the empty-topic display name and blanks are all "" here. Zulip's send path and its
 * edit path word the error differently.
 */
export function checkTopicGiven(realm: RealmRules, topic: string, when: 'send' | 'edit'): void {
  if (realm.mandatory_topics === 1 && topic === '') throw when === 'send' ? topicsRequiredToSend() : topicsRequiredToEdit();
}

/**
 * name_changes_disabled: Zulip skips a member's change of their own name without an error (its web
 * app offers no way to ask), and the rest of the request goes on; administrators are exempt.
 */
export function ownNameChangeAllowed(realm: RealmRules, user: Pick<ChatUser, 'role'>): boolean {
  return realm.name_changes_disabled !== 1 || isAdmin(user.role);
}

/** email_changes_disabled: a member's change of their own address is refused; administrators are exempt. */
export function checkOwnEmailChangeAllowed(realm: RealmRules, user: Pick<ChatUser, 'role'>): void {
  if (realm.email_changes_disabled === 1 && !isAdmin(user.role)) throw emailChangesDisabled();
}

/**
 * How Zulip compares names for require_unique_names: NFKC, then case-folded (JavaScript has no
 * casefold; upper- then lower-casing folds what it does for names, ß and ﬁ included).
 */
export function nameForComparison(name: string): string {
  return name.normalize('NFKC').toUpperCase().toLowerCase();
}

/**
 * require_unique_names: a name (checked and trimmed already) given to a user or bot must differ, as
 * compared above, from every other account's of the realm, deactivated ones and bots included.
 * `exceptUserId` is the account being renamed.
 */
export async function checkNameUnique(db: Queryable<ChatTables>, realm: NameRules, name: string, exceptUserId: number | null): Promise<void> {
  if (realm.require_unique_names !== 1) return;
  const wanted = nameForComparison(name);
  let q = db.selectFrom('chat_users').select('full_name').where('realm_id', '=', realm.id);
  if (exceptUserId !== null) q = q.where('id', '!=', exceptUserId);
  for (const u of await q.execute()) if (nameForComparison(u.full_name) === wanted) throw namesNotUnique();
}

type DirectMessageRules = Pick<Realm, 'id' | 'direct_message_permission_group' | 'direct_message_initiator_group'>;
type Person = Pick<ChatUser, 'id' | 'is_bot'>;

/**
 * direct_message_permission_group and direct_message_initiator_group (Zulip 10's
 * check_can_send_direct_message): bots, and messages only to oneself and bots, are never
 * restricted; otherwise someone in the conversation (the sender included) must be in the permission
 * group, and a sender outside the initiator group may only write where the conversation has
 * messages already. Both are role:everyone (NULL) by default, which costs no query.
 */
export async function checkDirectMessageAllowed(db: Queryable<ChatTables>, realm: DirectMessageRules, sender: Person, recipients: Person[]): Promise<void> {
  const permission = realm.direct_message_permission_group;
  const initiator = realm.direct_message_initiator_group;
  if (permission === null && initiator === null) return;
  if (sender.is_bot === 1 || recipients.every((u) => u.is_bot === 1 || u.id === sender.id)) return;
  const groups = await systemGroupIds(db, realm.id);
  const everyone = groups.get('role:everyone');
  if (permission !== null) {
    const value = parseGroupSetting(permission);
    if (value !== everyone) {
      let authorized = false;
      for (const u of [...recipients, sender]) if (!authorized) authorized = await inGroupSetting(db, u.id, value);
      if (!authorized) throw value === groups.get('role:nobody') ? directMessagesDisabled() : directMessageUnauthorized();
    }
  }
  if (initiator !== null) {
    const value = parseGroupSetting(initiator);
    if (value === everyone || (await inGroupSetting(db, sender.id, value))) return;
    // The conversation's recipient row exists once a message was sent to it (messages.ts directRecipient).
    const key = directKey([...new Set([...recipients.map((u) => u.id), sender.id])]);
    const started = await db
      .selectFrom('recipients')
      .innerJoin('messages', 'messages.recipient_id', 'recipients.id')
      .select('messages.id')
      .where('recipients.direct_key', '=', key)
      .limit(1)
      .executeTakeFirst();
    if (!started) throw directMessageInitiationRefused();
  }
}

/**
 * A new user's settings: the realm's defaults for new users, and the organization language as their
 * language (Zulip's create_user; realm_user_settings_defaults has no language of its own).
 */
export async function newUserSettings(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, SettingValue>> {
  const realm = await db.selectFrom('realms').select('default_language').where('id', '=', realmId).executeTakeFirstOrThrow();
  return { ...(await realmDefaultsStored(db, realmId)), default_language: realm.default_language };
}

/**
 * register's realm_* keys whose value the server acts on, and where. Settings PATCH /realm changes
 * (realm-settings.ts) are here with the rule that applies them; a key fixed at one value is here
 * only when that value is what the server does.
 */
export const ENFORCED_REALM_KEYS: Readonly<Record<string, string>> = {
  realm_name: 'shown by GET /server_settings and register; PATCH /realm',
  realm_description: 'shown by GET /server_settings (rendered) and register; PATCH /realm',
  realm_default_language: "a new user's default_language, and a spectator's (users.ts, spectators.ts)",
  realm_allow_message_editing: 'content edits refused when off (message-edits.ts)',
  realm_message_content_edit_limit_seconds: 'content edits after the limit refused (message-edits.ts)',
  realm_move_messages_within_stream_limit_seconds: 'topic moves after the limit refused (message-edits.ts)',
  realm_move_messages_between_streams_limit_seconds: 'channel moves after the limit refused (message-edits.ts)',
  realm_message_content_delete_limit_seconds: 'deleting one’s own message after the limit refused (message-rules.ts)',
  realm_message_edit_history_visibility_policy: 'GET /messages/{id}/history (edit-history.ts)',
  realm_allow_edit_history: 'derived from the policy above: false when history is refused',
  realm_enable_spectator_access: 'logged-out register and GET /messages (spectators.ts)',
  realm_mandatory_topics: 'POST /messages and topic edits refuse the empty topic (this module)',
  realm_name_changes_disabled: "members' own name changes skipped by PATCH /settings (this module)",
  realm_email_changes_disabled: "members' own email changes refused by PATCH /settings (this module)",
  realm_enable_read_receipts: 'GET /messages/{id}/read_receipts refused when off (endpoints/read-receipts.ts)',
  realm_default_external_accounts: 'external account profile fields of a default subtype take their label and hint from it (profile-fields.ts)',
  realm_can_add_subscribers_group: 'subscribing others (endpoints/channels.ts)',
  realm_can_create_groups: 'POST /user_groups/create (user-groups.ts)',
  realm_can_create_private_channel_group: 'creating private channels (endpoints/channels.ts)',
  realm_can_create_public_channel_group: 'creating public channels (endpoints/channels.ts)',
  realm_can_create_web_public_channel_group: 'creating or making web-public channels (endpoints/channels.ts)',
  realm_can_delete_any_message_group: 'DELETE /messages/{id} (message-rules.ts)',
  realm_can_delete_own_message_group: 'DELETE /messages/{id} (message-rules.ts)',
  realm_can_manage_all_groups: 'changing any user group (user-groups.ts)',
  realm_can_move_messages_between_channels_group: 'channel moves (message-edits.ts)',
  realm_can_move_messages_between_topics_group: 'topic moves (message-edits.ts)',
  realm_can_resolve_topics_group: 'resolving topics (message-edits.ts)',
  realm_can_invite_users_group: 'POST /invites (invites.ts)',
  realm_create_multiuse_invite_group: 'POST /invites/multiuse (invites.ts)',
  realm_invite_required: 'off: members younger than three days may not invite (invites.ts)',
  // The deprecated policy numbers, derived from the group settings above (events/fixed-state.ts).
  realm_create_public_stream_policy: 'derived from realm_can_create_public_channel_group',
  realm_create_private_stream_policy: 'derived from realm_can_create_private_channel_group',
  realm_create_web_public_stream_policy: 'derived from realm_can_create_web_public_channel_group',
  // Fixed values that are what the server does (PATCH /realm does not change them).
  realm_can_create_bots_group: 'fixed role:members: guests may not create bots (endpoints/bots.ts)',
  realm_can_create_write_only_bots_group: 'fixed role:members: guests may not create bots (endpoints/bots.ts)',
  realm_can_mention_many_users_group: 'fixed role:everyone: no wildcard mention is refused',
  realm_wildcard_mention_policy: 'fixed 1 (everyone), as realm_can_mention_many_users_group',
  realm_direct_message_initiator_group: 'direct messages that start a conversation (this module)',
  realm_direct_message_permission_group: 'direct messages without anyone authorized in the conversation (this module)',
  realm_can_access_all_users_group: 'fixed role:everyone: every user sees every user of the realm',
  realm_waiting_period_threshold: 'fixed 0: members are full members from the start (roles.ts)',
  realm_bot_domain: "bots' addresses are <name>-bot@<realm host> (endpoints/bots.ts)",
  realm_authentication_methods: 'fixed: email and password (POST /fetch_api_key) is the only way in',
  realm_email_auth_enabled: 'fixed true: email and password log in',
  realm_password_auth_enabled: 'fixed true: email and password log in',
  realm_is_zephyr_mirror_realm: 'fixed false: no Zephyr mirroring',
  realm_presence_disabled: 'fixed false: presence is shared (presence.ts)',
  realm_message_retention_days: 'fixed -1: messages are kept for ever',
  realm_default_code_block_language: "fixed '': a fence without a language is plain code (markdown.ts)",
  realm_inline_url_embed_preview: 'fixed false: no website previews are made',
  realm_require_unique_names: 'names of new and renamed users and bots (POST /users, PATCH /users/{id}, PATCH /settings, POST and PATCH /bots; this module)',
  realm_empty_topic_display_name: "'general chat': read as the empty topic, and shown for it to clients without empty_topic_name (topics.ts)",
};

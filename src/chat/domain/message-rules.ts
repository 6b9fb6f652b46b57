// Who may edit, move and delete a message (Zulip 10's rules over the realm settings of migration
// 012, which PATCH /realm changes: realm-settings.ts): content edits are the sender's, within
// message_content_edit_limit_seconds; topic moves need can_move_messages_between_topics_group
// (resolving alone, can_resolve_topics_group), channel moves
// can_move_messages_between_channels_group, each within its time limit except for administrators and
// moderators; deletion needs can_delete_any_message_group, or one's own message, the
// can_delete_own_message_group and message_content_delete_limit_seconds.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import type { ChatError } from '../errors.js';
import { deleteTimeLimitPassed, moveTimeLimitExceeded, noDeletePermission } from '../errors.js';
import { inGroupSetting, type GroupSettingValue } from './groups.js';
import { realmGroupValues, realmRow, type RealmGroupSetting } from './realm-settings.js';
import { ROLE } from './roles.js';

export type MessageGroupSetting = Extract<
  RealmGroupSetting,
  'can_move_messages_between_topics_group' | 'can_move_messages_between_channels_group' | 'can_resolve_topics_group' | 'can_delete_any_message_group' | 'can_delete_own_message_group'
>;

/** Zulip lets a content edit through this long after the limit: the time the editor took to type. */
export const EDIT_LIMIT_GRACE_SECONDS = 20;

export const RESOLVED_TOPIC_PREFIX = '✔ ';

export interface MessageSettings {
  allowMessageEditing: boolean;
  contentEditLimit: number | null;
  topicMoveLimit: number | null;
  channelMoveLimit: number | null;
  deleteLimit: number | null;
  historyPolicy: 'all' | 'moves' | 'none';
  groups: Record<MessageGroupSetting, GroupSettingValue>;
}

/** Read fresh on every use: the realm row the request carries may be cached. */
export async function messageSettings(db: Queryable<ChatTables>, realmId: number): Promise<MessageSettings> {
  const r = await realmRow(db, realmId);
  const groups = await realmGroupValues(db, r);
  const limit = (v: number | null) => (v === null ? null : Number(v));
  return {
    allowMessageEditing: r.allow_message_editing === 1,
    contentEditLimit: limit(r.message_content_edit_limit_seconds),
    topicMoveLimit: limit(r.move_messages_within_stream_limit_seconds),
    channelMoveLimit: limit(r.move_messages_between_streams_limit_seconds),
    deleteLimit: limit(r.message_content_delete_limit_seconds),
    historyPolicy: r.message_edit_history_visibility_policy as MessageSettings['historyPolicy'],
    groups,
  };
}

/** Administrators and moderators move messages without time limits. */
export const exemptFromMoveLimits = (user: ChatUser) => user.role <= ROLE.moderator;

export function inGroupOf(db: Queryable<ChatTables>, s: MessageSettings, user: ChatUser, setting: MessageGroupSetting): Promise<boolean> {
  return inGroupSetting(db, user.id, s.groups[setting]);
}

/** Whether a topic change only resolves or unresolves the topic (adds or removes the check mark). */
export function isResolveToggle(oldTopic: string, newTopic: string): boolean {
  const bare = (t: string) => (t.startsWith(RESOLVED_TOPIC_PREFIX) ? t.slice(RESOLVED_TOPIC_PREFIX.length) : t);
  return oldTopic !== newTopic && bare(oldTopic) === bare(newTopic) && oldTopic.startsWith(RESOLVED_TOPIC_PREFIX) !== newTopic.startsWith(RESOLVED_TOPIC_PREFIX);
}

/** Zulip's answer when change_all reaches messages older than the move time limit. */
export function moveLimitExceeded(allowedIds: number[], total: number): ChatError {
  return moveTimeLimitExceeded({
    allowed: allowedIds.length,
    total,
    first_message_id_allowed_to_move: allowedIds.length ? Math.min(...allowedIds) : null,
    total_messages_in_topic: total,
    total_messages_allowed_to_move: allowedIds.length,
  });
}

/** Throws unless the user may delete the message now. */
export async function checkCanDelete(db: Queryable<ChatTables>, s: MessageSettings, user: ChatUser, m: { sender_id: number; date_sent: number }, nowSeconds: number): Promise<void> {
  if (await inGroupOf(db, s, user, 'can_delete_any_message_group')) return;
  if (m.sender_id !== user.id || !(await inGroupOf(db, s, user, 'can_delete_own_message_group'))) throw noDeletePermission();
  if (s.deleteLimit !== null && nowSeconds - Number(m.date_sent) > s.deleteLimit + EDIT_LIMIT_GRACE_SECONDS) throw deleteTimeLimitPassed();
}

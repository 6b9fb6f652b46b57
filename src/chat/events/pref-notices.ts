// Notices of a user's own preferences: settings (the modern user_settings event, and the legacy
// update_display_settings / update_global_notifications for queues without the
// user_settings_object capability), the realm's defaults, drafts, muted users and topic policies.
import type { ChatUser } from '../tables.js';
import { languageName, legacyEventOf, type SettingValue } from '../domain/user-settings.js';
import { displayTopic } from '../domain/topics.js';
import type { Notice } from './hub.js';

const emptyTopicName = (queue: { options: { capabilities: Record<string, boolean> } }) => queue.options.capabilities.empty_topic_name === true;
const modern = (queue: { options: { capabilities: Record<string, boolean> } }) => queue.options.capabilities.user_settings_object === true;

/** One changed setting, to the user's queues. */
export function userSettingNotices(me: Pick<ChatUser, 'id' | 'email'>, name: string, value: SettingValue): Notice[] {
  const language = name === 'default_language' ? { language_name: languageName(value as string) } : {};
  const out: Notice[] = [
    {
      type: 'user_settings',
      userIds: [me.id],
      render: () => ({ type: 'user_settings', op: 'update', property: name, value, ...language }),
    },
  ];
  const legacy = legacyEventOf(name);
  if (legacy === 'display') {
    out.push({
      type: 'update_display_settings',
      userIds: [me.id],
      render: (queue) => (modern(queue) ? null : { type: 'update_display_settings', user: me.email, setting_name: name, setting: value, ...language }),
    });
  } else if (legacy === 'notification') {
    out.push({
      type: 'update_global_notifications',
      userIds: [me.id],
      render: (queue) => (modern(queue) ? null : { type: 'update_global_notifications', user: me.email, notification_name: name, setting: value }),
    });
  }
  return out;
}

/** One changed default for new users, to every active user of the realm. */
export function realmDefaultsNotice(userIds: number[], name: string, value: SettingValue): Notice {
  return { type: 'realm_user_settings_defaults', userIds, render: () => ({ type: 'realm_user_settings_defaults', op: 'update', property: name, value }) };
}

export type DraftChange = { op: 'add'; drafts: Record<string, unknown>[] } | { op: 'update'; draft: Record<string, unknown> } | { op: 'remove'; draft_id: number };

export function draftsNotice(userId: number, change: DraftChange): Notice {
  return { type: 'drafts', userIds: [userId], render: () => ({ type: 'drafts', ...change }) };
}

export function mutedUsersNotice(userId: number, mutedUsers: { id: number; timestamp: number }[]): Notice {
  return { type: 'muted_users', userIds: [userId], render: () => ({ type: 'muted_users', muted_users: mutedUsers }) };
}

export interface UserTopicChange {
  stream_id: number;
  topic_name: string;
  last_updated: number;
  visibility_policy: number;
}

/** user_topic, preceded by the legacy muted_topics list, as Zulip still sends both. */
export function userTopicNotices(userId: number, change: UserTopicChange, mutedTopics: [string, string, number][]): Notice[] {
  return [
    {
      type: 'muted_topics',
      userIds: [userId],
      render: (queue) => ({ type: 'muted_topics', muted_topics: mutedTopics.map(([s, t, at]) => [s, displayTopic(t, emptyTopicName(queue)), at]) }),
    },
    { type: 'user_topic', userIds: [userId], render: (queue) => ({ type: 'user_topic', ...change, topic_name: displayTopic(change.topic_name, emptyTopicName(queue)) }) },
  ];
}

// Notices for what lives outside messages: presence (a user came back), a user's status, and typing
// (in a conversation, or while editing a message). None is a stored write that a registration could
// race with in a harmful way (see each publisher), so they are published directly, not through write().
import type { ChatUser } from '../tables.js';
import { displayTopic } from '../domain/topics.js';
import { legacyInfo, type PresenceRecord } from '../domain/presence.js';
import type { Notice } from './hub.js';

/** `presence`, to every active user of the realm (the user included, as Zulip does). */
export function presenceNotice(user: Pick<ChatUser, 'id' | 'email'>, record: PresenceRecord, nowMs: number, receivers: number[]): Notice {
  const { status, timestamp } = legacyInfo(record);
  const event = {
    type: 'presence',
    user_id: user.id,
    email: user.email,
    server_timestamp: nowMs / 1000,
    presence: { website: { client: 'website', status, timestamp, pushable: false } },
  };
  return { type: 'presence', userIds: receivers, render: () => event };
}

/** What changed in a status; absent fields did not change (Zulip sends only those). */
export interface StatusChange {
  away?: boolean;
  status_text?: string;
  emoji?: { emoji_name: string; emoji_code: string; reaction_type: string };
}

export function userStatusNotice(userId: number, change: StatusChange, receivers: number[]): Notice {
  const event: Record<string, unknown> & { type: string } = { type: 'user_status', user_id: userId };
  if (change.away !== undefined) event.away = change.away;
  if (change.status_text !== undefined) event.status_text = change.status_text;
  if (change.emoji) Object.assign(event, change.emoji);
  return { type: 'user_status', userIds: receivers, render: () => event };
}

export type TypingOp = 'start' | 'stop';

const who = (u: Pick<ChatUser, 'id' | 'email'>) => ({ user_id: u.id, email: u.email });

/** `typing` for a direct conversation: the recipients list includes the sender. */
export function directTypingNotice(op: TypingOp, sender: ChatUser, recipients: ChatUser[], receivers: number[]): Notice {
  const event = { type: 'typing', op, message_type: 'direct', sender: who(sender), recipients: recipients.map(who) };
  return { type: 'typing', userIds: receivers, render: () => event };
}

/** `typing` in a channel: only queues that declared stream_typing_notifications receive it. */
export function streamTypingNotice(op: TypingOp, sender: ChatUser, streamId: number, topic: string, receivers: number[]): Notice {
  return {
    type: 'typing',
    userIds: receivers,
    render(queue) {
      const caps = queue.options.capabilities;
      if (caps.stream_typing_notifications !== true) return null;
      return { type: 'typing', op, message_type: 'stream', sender: who(sender), stream_id: streamId, topic: displayTopic(topic, caps.empty_topic_name === true) };
    },
  };
}

export type EditRecipient = { type: 'channel'; channel_id: number; topic: string } | { type: 'direct'; user_ids: number[] };

/** `typing_edit_message`, to those who would be notified of the edit. */
export function editTypingNotice(op: TypingOp, senderId: number, messageId: number, recipient: EditRecipient, receivers: number[]): Notice {
  return {
    type: 'typing_edit_message',
    userIds: receivers,
    render(queue) {
      const r = recipient.type === 'channel' ? { ...recipient, topic: displayTopic(recipient.topic, queue.options.capabilities.empty_topic_name === true) } : recipient;
      return { type: 'typing_edit_message', op, sender_id: senderId, message_id: messageId, recipient: r };
    },
  };
}

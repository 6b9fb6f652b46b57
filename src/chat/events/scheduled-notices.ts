// scheduled_messages events: to the owner's queues only (Zulip's notify_*_scheduled_message).
import type { Notice } from './hub.js';

export type ScheduledChange =
  | { op: 'add'; scheduled_messages: Record<string, unknown>[] }
  | { op: 'update'; scheduled_message: Record<string, unknown> }
  | { op: 'remove'; scheduled_message_id: number };

export function scheduledMessagesNotice(userId: number, change: ScheduledChange): Notice {
  return { type: 'scheduled_messages', userIds: [userId], render: () => ({ type: 'scheduled_messages', ...change }) };
}

// The events of changes to sent messages: update_message (content edits and moves), delete_message
// (one id, or message_ids for queues with bulk_message_deletion) and reaction add/remove, each to
// the users holding a copy of the message; and stream updates when a channel's oldest message changes.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { canSeeMetadata } from '../domain/channel-access.js';
import { flagNames, HISTORICAL_FLAGS } from '../domain/flags.js';
import { isMeMessage } from '../domain/markdown.js';
import { displayTopic } from '../domain/topics.js';
import type { EditOutcome, FirstIds } from '../domain/message-edits.js';
import type { Emoji } from '../domain/emoji.js';
import type { Notice } from './hub.js';
import type { EventQueue } from './queue.js';

const showTopic = (queue: EventQueue, topic: string) => displayTopic(topic, queue.options.capabilities.empty_topic_name === true);

/** update_message to every holder of the edited or moved messages; delete_message to those who lost them. */
export function updateMessageNotices(o: EditOutcome): Notice[] {
  const { plan } = o;
  const m = plan.message;
  const base: Record<string, unknown> = {
    type: 'update_message',
    user_id: plan.editor.id,
    edit_timestamp: plan.now,
    message_id: m.id,
    message_ids: [...(plan.move?.ids ?? [m.id])].sort((a, b) => a - b),
    rendering_only: false,
  };
  if (m.stream_id !== null) Object.assign(base, { stream_name: o.origStreamName, stream_id: Number(m.stream_id) });
  if (plan.content) {
    Object.assign(base, {
      orig_content: m.content,
      orig_rendered_content: m.rendered_content,
      content: plan.content.content,
      rendered_content: plan.content.rendered,
      is_me_message: isMeMessage(plan.content.content),
    });
  }
  if (plan.move?.stream) base.new_stream_id = plan.move.stream.id;
  if (plan.move) base.propagate_mode = plan.move.propagateMode;
  const userIds = [...o.receivers.keys(), ...o.alsoNotified];
  const notices: Notice[] = [
    {
      type: 'update_message',
      userIds,
      render(queue) {
        const event: Record<string, unknown> & { type: string } = { ...base, type: 'update_message' };
        // Someone told of a move without holding the target message sees it as shared history would.
        event.flags = flagNames(o.receivers.get(queue.options.userId) ?? HISTORICAL_FLAGS);
        if (plan.move) event.orig_subject = showTopic(queue, m.topic);
        if (plan.move?.topic !== undefined) Object.assign(event, { subject: showTopic(queue, plan.move.topic), topic_links: [] });
        return event;
      },
    },
  ];
  if (o.losers.size && m.stream_id !== null) {
    for (const [userId, ids] of o.losers) notices.push(...deleteMessagesNotices([userId], ids, { streamId: Number(m.stream_id), topic: m.topic }));
  }
  return notices;
}

/** delete_message of these ids as one event; a channel message's names its channel and topic. */
function deleteMessageNotice(userIds: number[], messageIds: number[], where: { streamId: number; topic: string } | null): Notice {
  const ids = [...messageIds].sort((a, b) => a - b);
  return {
    type: 'delete_message',
    userIds,
    render(queue) {
      const event: Record<string, unknown> & { type: string } = { type: 'delete_message', message_type: where ? 'stream' : 'private' };
      if (where) Object.assign(event, { stream_id: where.streamId, topic: showTopic(queue, where.topic) });
      if (queue.options.capabilities.bulk_message_deletion === true) return { ...event, message_ids: ids };
      return { ...event, message_id: ids[0] };
    },
  };
}

/** delete_message: one event for queues with bulk_message_deletion, one per id for the others. */
export function deleteMessagesNotices(userIds: number[], messageIds: number[], where: { streamId: number; topic: string } | null): Notice[] {
  if (messageIds.length <= 1) return [deleteMessageNotice(userIds, messageIds, where)];
  const bulk = deleteMessageNotice(userIds, messageIds, where);
  const out: Notice[] = [{ ...bulk, render: (q) => (q.options.capabilities.bulk_message_deletion === true ? bulk.render(q) : null) }];
  for (const id of messageIds) {
    const one = deleteMessageNotice(userIds, [id], where);
    out.push({ ...one, render: (q) => (q.options.capabilities.bulk_message_deletion === true ? null : one.render(q)) });
  }
  return out;
}

/** reaction add/remove, with the deprecated `user` object the React Native app still reads. */
export function reactionNotice(op: 'add' | 'remove', user: ChatUser, messageId: number, emoji: Emoji, userIds: number[]): Notice {
  const event = {
    type: 'reaction',
    op,
    user_id: user.id,
    user: { user_id: user.id, email: user.email, full_name: user.full_name },
    message_id: messageId,
    ...emoji,
  };
  return { type: 'reaction', userIds, render: () => event };
}

/**
 * stream update of first_message_id, to everyone who may know the channel, when a deletion or a
 * move changed its oldest message. A channel left empty sends nothing: the event's value cannot be
 * null in Zulip's description, and clients treat a missing newer first message the same way.
 */
export async function firstMessageIdNotices(db: Queryable<ChatTables>, realmId: number, firstIds: FirstIds): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const [streamId, first] of firstIds) {
    if (first === null) continue;
    const stream = await db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirst();
    if (!stream) continue;
    const users = await db.selectFrom('chat_users').selectAll().where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
    const who: number[] = [];
    for (const u of users) if (await canSeeMetadata(db, u, stream)) who.push(u.id);
    const event = { type: 'stream', op: 'update', property: 'first_message_id', value: first, stream_id: streamId, name: stream.name };
    out.push({ type: 'stream', userIds: who, render: () => event });
  }
  return out;
}

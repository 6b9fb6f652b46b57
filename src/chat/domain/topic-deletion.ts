// Deleting a topic (POST /streams/{id}/delete_topic, Zulip's delete_in_topic): the messages the
// administrator may read, newest first, in batches that each commit on their own, so that a request
// cut short by its time budget keeps its progress and the client repeats it. Each batch deletes
// the messages with their copies, reactions and upload claims, and says who held them (the
// delete_message events) and whether the channel's oldest message changed.
import { sql } from 'kysely';
import type { Database, Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Stream } from '../tables.js';
import { holdersOf, receivedCondition } from './receipt.js';
import { trackingFirstIds, type FirstIds } from './message-edits.js';

export interface TopicBatch {
  /** The messages deleted, newest first. */
  ids: number[];
  /** Everyone told of the deletion: those who held any of the messages, and the administrator. */
  holders: number[];
  where: { streamId: number; topic: string };
  firstIds: FirstIds;
}

/** Messages of the topic the user may delete: all of them with shared history, else those they received. */
function topicMessages(db: Queryable<ChatTables>, me: ChatUser, stream: Stream, topic: string) {
  let q = db.selectFrom('messages').select(['messages.id', 'messages.topic']).where('messages.stream_id', '=', stream.id).where(sql`lower(messages.topic)`, '=', topic.toLowerCase());
  if (stream.history_public_to_subscribers !== 1) q = q.where(receivedCondition(me.id, 'messages'));
  return q;
}

/** Deletes the newest `batchSize` messages of the topic in one transaction; null when none is left. */
export async function deleteTopicBatch(database: Database<ChatTables>, me: ChatUser, stream: Stream, topic: string, batchSize: number): Promise<TopicBatch | null> {
  return database.transaction(async (trx) => {
    let q = topicMessages(trx, me, stream, topic).orderBy('messages.id', 'desc').limit(batchSize);
    // Two requests deleting the same topic on PostgreSQL: the second waits for the first's batch and
    // then finds the rows left (SQLite runs one writing transaction at a time).
    if (database.engine === 'postgres') q = q.forUpdate();
    const rows = await q.execute();
    if (!rows.length) return null;
    const ids = rows.map((r) => Number(r.id));
    const holders = new Set<number>([me.id]);
    for (const id of ids) for (const userId of (await holdersOf(trx, id, stream.id)).keys()) holders.add(userId);
    const { firstIds } = await trackingFirstIds(trx, [stream.id], async () => {
      await trx.deleteFrom('reactions').where('message_id', 'in', ids).execute();
      await trx.deleteFrom('user_messages').where('message_id', 'in', ids).execute();
      // The uploads these messages linked are no longer claimed by them (the files stay their owner's).
      await trx.deleteFrom('attachment_messages').where('message_id', 'in', ids).execute();
      await trx.deleteFrom('messages').where('id', 'in', ids).execute();
    });
    return { ids, holders: [...holders], where: { streamId: stream.id, topic: rows[0].topic }, firstIds };
  });
}

/**
 * Once the topic is gone, the users' policies for it (muted, followed...) go too, as Zulip resets
 * them: in a channel without shared history, only for those left with no message of the topic.
 * Answers whose policies were removed.
 */
export async function clearTopicPolicies(db: Queryable<ChatTables>, stream: Stream, topic: string): Promise<number[]> {
  const lower = topic.toLowerCase();
  const rows = await db.selectFrom('user_topics').select('user_id').where('stream_id', '=', stream.id).where('topic_lower', '=', lower).execute();
  let users = rows.map((r) => Number(r.user_id));
  if (users.length && stream.history_public_to_subscribers !== 1) {
    const keep = new Set<number>();
    for (const userId of users) {
      const any = await db
        .selectFrom('messages')
        .select('messages.id')
        .where('messages.stream_id', '=', stream.id)
        .where(sql`lower(messages.topic)`, '=', lower)
        .where(receivedCondition(userId, 'messages'))
        .limit(1)
        .executeTakeFirst();
      if (any) keep.add(userId);
    }
    users = users.filter((u) => !keep.has(u));
  }
  if (users.length) await db.deleteFrom('user_topics').where('stream_id', '=', stream.id).where('topic_lower', '=', lower).where('user_id', 'in', users).execute();
  return users;
}

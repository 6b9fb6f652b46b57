// Muted users and per-topic visibility policies (Zulip's UserTopic): what POST /register shows, the
// `is:muted`/`is:followed`/`in:home` narrows, and which receivers get a new message already read.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import { preparedQuery } from '../../platform/db/fast/prepared.js';
import type { ChatTables } from '../tables.js';

/** Zulip's UserTopic.VisibilityPolicy. */
export const VISIBILITY = { inherit: 0, muted: 1, unmuted: 2, followed: 3 } as const;

export async function mutedUsersOf(db: Queryable<ChatTables>, userId: number): Promise<{ id: number; timestamp: number }[]> {
  const rows = await db.selectFrom('muted_users').select(['muted_user_id', 'date_muted']).where('user_id', '=', userId).orderBy('muted_user_id').execute();
  return rows.map((r) => ({ id: Number(r.muted_user_id), timestamp: Number(r.date_muted) }));
}

// Read inside every send's transaction: compiled once (prepared.ts).
const mutedBy = preparedQuery((db: Kysely<ChatTables>, senderId: number) => db.selectFrom('muted_users').select('user_id').where('muted_user_id', '=', senderId));

/** Of these receivers, those who muted the sender: their copy arrives read. */
export async function mutersOf(db: Queryable<ChatTables>, senderId: number, receivers: number[]): Promise<Set<number>> {
  if (!receivers.length) return new Set();
  const rows = await mutedBy(db, senderId);
  const wanted = new Set(receivers);
  return new Set(rows.map((r) => Number(r.user_id)).filter((id) => wanted.has(id)));
}

/** user_topics of POST /register: every policy set, in channels that are not archived. */
export async function userTopicsOf(db: Queryable<ChatTables>, userId: number): Promise<{ stream_id: number; topic_name: string; last_updated: number; visibility_policy: number }[]> {
  const rows = await db
    .selectFrom('user_topics')
    .innerJoin('streams', 'streams.id', 'user_topics.stream_id')
    .select(['user_topics.stream_id', 'user_topics.topic', 'user_topics.last_updated', 'user_topics.visibility_policy'])
    .where('user_topics.user_id', '=', userId)
    .where('streams.is_archived', '=', 0)
    .orderBy('user_topics.stream_id')
    .orderBy('user_topics.topic_lower')
    .execute();
  return rows.map((r) => ({ stream_id: Number(r.stream_id), topic_name: r.topic, last_updated: Number(r.last_updated), visibility_policy: Number(r.visibility_policy) }));
}

/** The legacy muted_topics list: [channel name, topic, last updated] of each muted topic. */
export async function mutedTopicsOf(db: Queryable<ChatTables>, userId: number): Promise<[string, string, number][]> {
  const rows = await db
    .selectFrom('user_topics')
    .innerJoin('streams', 'streams.id', 'user_topics.stream_id')
    .select(['streams.name', 'user_topics.topic', 'user_topics.last_updated'])
    .where('user_topics.user_id', '=', userId)
    .where('user_topics.visibility_policy', '=', VISIBILITY.muted)
    .where('streams.is_archived', '=', 0)
    .orderBy('user_topics.stream_id')
    .orderBy('user_topics.topic_lower')
    .execute();
  return rows.map((r) => [r.name, r.topic, Number(r.last_updated)]);
}

/** Sets (or, for inherit, removes) a topic's policy; answers the time recorded. */
export async function setTopicPolicy(db: Queryable<ChatTables>, userId: number, streamId: number, topic: string, policy: number, nowSeconds: number): Promise<void> {
  const key = { user_id: userId, stream_id: streamId, topic_lower: topic.toLowerCase() };
  if (policy === VISIBILITY.inherit) {
    await db.deleteFrom('user_topics').where('user_id', '=', key.user_id).where('stream_id', '=', key.stream_id).where('topic_lower', '=', key.topic_lower).execute();
    return;
  }
  // One upsert, not a delete and an insert: concurrent identical requests would each delete the
  // other's row and race on the key again, every time they were run.
  await db
    .insertInto('user_topics')
    .values({ ...key, topic, visibility_policy: policy, last_updated: nowSeconds })
    .onConflict((oc) => oc.columns(['user_id', 'stream_id', 'topic_lower']).doUpdateSet({ topic, visibility_policy: policy, last_updated: nowSeconds }))
    .execute();
}

/** Holds when the message aliased `m` is in a topic the user gave this policy. */
function topicPolicyIs(userId: number, policy: number, m = 'm'): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${m}.stream_id`)} is not null and exists (select 1 from user_topics ut where ut.user_id = ${userId}
    and ut.stream_id = ${sql.ref(`${m}.stream_id`)} and ut.topic_lower = lower(${sql.ref(`${m}.topic`)}) and ut.visibility_policy = ${policy}))`;
}

/** A topic the user muted. */
export function mutedTopicSql(userId: number): RawBuilder<boolean> {
  return topicPolicyIs(userId, VISIBILITY.muted);
}

/** `is:followed`. */
export function followedSql(userId: number): RawBuilder<boolean> {
  return topicPolicyIs(userId, VISIBILITY.followed);
}

/**
 * `is:muted` (Zulip's rule): a muted topic, or a muted channel's topic that the user did not unmute
 * or follow. `in:home` is its negation.
 */
export function mutedSql(userId: number): RawBuilder<boolean> {
  const inMutedChannel = sql<boolean>`(m.stream_id is not null and exists (select 1 from subscriptions s where s.user_id = ${userId}
    and s.stream_id = m.stream_id and s.active = 1 and s.is_muted = 1))`;
  return sql<boolean>`(${mutedTopicSql(userId)} or (${inMutedChannel} and not ${topicPolicyIs(userId, VISIBILITY.unmuted)}
    and not ${topicPolicyIs(userId, VISIBILITY.followed)}))`;
}

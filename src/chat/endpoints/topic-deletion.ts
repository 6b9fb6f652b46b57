// POST /streams/{stream_id}/delete_topic (administrators): deletes the topic's messages in batches,
// newest first, each committed and announced on its own (delete_message: message_ids for queues
// with bulk_message_deletion, one event per message for the others; a stream update when the
// channel's oldest message changed). A request that runs past its time budget answers
// `complete: false` and the client repeats it; the one that finishes also resets the users'
// policies for the topic (user_topic events).
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { adminRequired, invalidChannelId } from '../errors.js';
import { isAdmin } from '../domain/roles.js';
import { canAccessContent, streamById } from '../domain/channels.js';
import { normaliseTopic } from '../domain/topics.js';
import { clearTopicPolicies, deleteTopicBatch } from '../domain/topic-deletion.js';
import { mutedTopicsOf, VISIBILITY } from '../domain/muting.js';
import { deleteMessagesNotices, firstMessageIdNotices } from '../events/edit-notices.js';
import { userTopicNotices } from '../events/pref-notices.js';
import type { Notice } from '../events/hub.js';
import { unixSeconds } from '../../platform/clock.js';

export const deleteTopic = defineEndpoint({
  method: 'POST',
  path: '/streams/{stream_id}/delete_topic',
  summary: 'Delete a topic',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer(), topic_name: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    if (!isAdmin(me.role)) throw adminRequired();
    const { db, events, clock } = call.services;
    const stream = await streamById(db.kysely, call.realm.id, p.stream_id);
    if (!stream || !(await canAccessContent(db.kysely, me, stream))) throw invalidChannelId();
    const topic = normaliseTopic(p.topic_name);
    const { batchSize, budgetMs } = call.services.topicDeletion ?? { batchSize: 100, budgetMs: 50_000 };
    const started = performance.now();
    for (;;) {
      const batch = await events.write(
        () => deleteTopicBatch(db, me, stream, topic, batchSize),
        async (b) => (b ? [...deleteMessagesNotices(b.holders, b.ids, b.where), ...(await firstMessageIdNotices(db.kysely, call.realm.id, b.firstIds))] : []),
      );
      if (!batch || batch.ids.length < batchSize) break;
      // At least one batch per request, so that repeating it always gets somewhere.
      if (performance.now() - started >= budgetMs || call.signal.aborted) return { complete: false };
    }
    const now = unixSeconds(clock);
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const users = await clearTopicPolicies(trx, stream, topic);
          const muted = new Map<number, [string, string, number][]>();
          for (const userId of users) muted.set(userId, await mutedTopicsOf(trx, userId));
          return muted;
        }),
      (muted) => {
        const notices: Notice[] = [];
        for (const [userId, list] of muted) {
          notices.push(...userTopicNotices(userId, { stream_id: stream.id, topic_name: topic, last_updated: now, visibility_policy: VISIBILITY.inherit }, list));
        }
        return notices;
      },
    );
    return { complete: true };
  },
});

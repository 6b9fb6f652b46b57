// Muting: users (POST/DELETE /users/me/muted_users/{muted_user_id}) and topics (POST /user_topics
// with a visibility policy, and the deprecated PATCH /users/me/subscriptions/muted_topics).
import Type from 'typebox';
import { sql } from 'kysely';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { cannotMuteSelf, chooseStreamOrStreamId, invalidChannelId, invalidChannelName, noSuchUser, paramNotInList, streamRequired, topicNotMuted, userAlreadyMuted, userNotMuted } from '../errors.js';
import { FLAG } from '../domain/flags.js';
import { setFlag, unreadIds } from '../domain/read-state.js';
import { userById } from '../domain/users.js';
import { canAccessContent, streamById, streamByName } from '../domain/channels.js';
import { normaliseTopic } from '../domain/topics.js';
import { mutedTopicsOf, mutedUsersOf, setTopicPolicy, VISIBILITY } from '../domain/muting.js';
import type { Stream } from '../tables.js';
import { flagsNotice } from '../events/notices.js';
import { mutedUsersNotice, userTopicNotices } from '../events/pref-notices.js';

export const muteUser = defineEndpoint({
  method: 'POST',
  path: '/users/me/muted_users/{muted_user_id}',
  summary: 'Mute a user',
  auth: 'user',
  params: Type.Object({ muted_user_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, clock } = call.services;
    if (p.muted_user_id === me.id) throw cannotMuteSelf();
    const now = Math.floor(clock.now() / 1000);
    let read: number[] = [];
    await events.write(
      () =>
        db.transaction(async (trx) => {
          // Bots and deactivated users can be muted too.
          if (!(await userById(trx, call.realm.id, p.muted_user_id))) throw noSuchUser();
          const muted = await trx.selectFrom('muted_users').select('user_id').where('user_id', '=', me.id).where('muted_user_id', '=', p.muted_user_id).executeTakeFirst();
          if (muted) throw userAlreadyMuted();
          await trx.insertInto('muted_users').values({ user_id: me.id, muted_user_id: p.muted_user_id, date_muted: now }).execute();
          // Everything the muted user sent is read from now on (which also clears notifications).
          read = await unreadIds(trx, me.id, sql`m.sender_id = ${p.muted_user_id}`);
          await setFlag(trx, me.id, read, FLAG.read, true);
          return mutedUsersOf(trx, me.id);
        }),
      (list) => [...flagsNotice(me.id, 'add', 'read', read), mutedUsersNotice(me.id, list)],
    );
    return {};
  },
});

export const unmuteUser = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/muted_users/{muted_user_id}',
  summary: 'Unmute a user',
  auth: 'user',
  params: Type.Object({ muted_user_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          if (!(await userById(trx, call.realm.id, p.muted_user_id))) throw noSuchUser();
          const r = await trx.deleteFrom('muted_users').where('user_id', '=', me.id).where('muted_user_id', '=', p.muted_user_id).executeTakeFirst();
          if (Number(r.numDeletedRows) === 0) throw userNotMuted();
          return mutedUsersOf(trx, me.id);
        }),
      (list) => [mutedUsersNotice(me.id, list)],
    );
    return {};
  },
});

/**
 * The channel a topic policy is set in: one the user can read. Removing a policy also works in a
 * channel the user can no longer read, as long as they had set one there (Zulip's rule).
 */
async function policyChannel(call: ChatCall, stream: Stream | undefined, topic: string, policy: number, missing: () => Error): Promise<Stream> {
  const me = requireUser(call);
  const db = call.services.db.kysely;
  if (stream && (await canAccessContent(db, me, stream))) return stream;
  if (stream && policy === VISIBILITY.inherit) {
    const had = await db.selectFrom('user_topics').select('user_id').where('user_id', '=', me.id).where('stream_id', '=', stream.id).where('topic_lower', '=', topic.toLowerCase()).executeTakeFirst();
    if (had) return stream;
  }
  throw missing();
}

async function setPolicy(call: ChatCall, stream: Stream, topic: string, policy: number): Promise<void> {
  const me = requireUser(call);
  const { db, events, clock } = call.services;
  const now = Math.floor(clock.now() / 1000);
  await events.write(
    () =>
      db.transaction(async (trx) => {
        await setTopicPolicy(trx, me.id, stream.id, topic, policy, now);
        return mutedTopicsOf(trx, me.id);
      }),
    (muted) => userTopicNotices(me.id, { stream_id: stream.id, topic_name: topic, last_updated: now, visibility_policy: policy }, muted),
  );
}

export const updateUserTopic = defineEndpoint({
  method: 'POST',
  path: '/user_topics',
  summary: 'Update personal preferences for a topic',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer(), topic: Type.String(), visibility_policy: Type.Integer() }),
  async handler(call, p) {
    if (!(Object.values(VISIBILITY) as number[]).includes(p.visibility_policy)) throw paramNotInList({ name: 'visibility_policy', var_name: 'visibility_policy' });
    const topic = normaliseTopic(p.topic);
    const stream = await policyChannel(call, await streamById(call.services.db.kysely, call.realm.id, p.stream_id), topic, p.visibility_policy, invalidChannelId);
    await setPolicy(call, stream, topic, p.visibility_policy);
    return {};
  },
});

export const updateMutedTopic = defineEndpoint({
  method: 'PATCH',
  path: '/users/me/subscriptions/muted_topics',
  summary: 'Topic muting',
  auth: 'user',
  params: Type.Object({
    stream_id: Type.Optional(Type.Integer()),
    stream: Type.Optional(Type.String()),
    topic: Type.String(),
    op: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
  }),
  async handler(call, p) {
    if (p.stream !== undefined && p.stream_id !== undefined) throw chooseStreamOrStreamId();
    if (p.stream === undefined && p.stream_id === undefined) throw streamRequired();
    const db = call.services.db.kysely;
    const topic = normaliseTopic(p.topic);
    const policy = p.op === 'add' ? VISIBILITY.muted : VISIBILITY.inherit;
    const stream =
      p.stream !== undefined
        ? await policyChannel(call, await streamByName(db, call.realm.id, p.stream), topic, policy, () => (policy === VISIBILITY.inherit ? topicNotMuted() : invalidChannelName({ name: p.stream! })))
        : await policyChannel(call, await streamById(db, call.realm.id, p.stream_id!), topic, policy, () => (policy === VISIBILITY.inherit ? topicNotMuted() : invalidChannelId()));
    await setPolicy(call, stream, topic, policy);
    return {};
  },
});

// Typing notifications: POST /typing (composing in a direct conversation or a channel topic) and
// POST /messages/{message_id}/typing (editing a message). Nothing is stored: events go straight to
// the users who would receive the message and want typing notifications (Zulip's stateless protocol:
// clients expire a "start" on their own after server_typing_started_expiry_period_milliseconds).
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { channelIdMissing, channelTypingDisabled, emptyToList, invalidMessages, invalidUserId, missingChannelId, missingTo, missingTopic, privateTypingDisabled } from '../errors.js';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { canAccessContent, streamById, subscriberIds } from '../domain/channels.js';
import { checkCanPost } from '../domain/channel-access.js';
import { booleanSetting } from '../domain/presence.js';
import { normaliseTopic } from '../domain/topics.js';
import { directTypingNotice, editTypingNotice, streamTypingNotice, type EditRecipient } from '../events/live-notices.js';

/** Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS: larger channels get no typing events. */
export const MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

const Op = Type.Union([Type.Literal('start'), Type.Literal('stop')]);

/** The active users among ids whose receives_typing_notifications is on (Zulip's default: on). */
async function typingReceivers(db: Queryable<ChatTables>, realmId: number, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const rows = await db.selectFrom('chat_users').select(['id', 'settings']).where('realm_id', '=', realmId).where('id', 'in', ids).where('is_active', '=', 1).execute();
  return rows.filter((u) => booleanSetting(u, 'receives_typing_notifications', true)).map((u) => Number(u.id));
}

/** Channel subscribers who get typing events, or none when the channel is too big for them. */
async function channelReceivers(db: Queryable<ChatTables>, realmId: number, streamId: number): Promise<number[]> {
  const subscribers = await subscriberIds(db, streamId);
  if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return [];
  return typingReceivers(db, realmId, subscribers);
}

function checkSendsTyping(me: ChatUser, kind: 'direct' | 'stream'): void {
  if (kind === 'direct' && !booleanSetting(me, 'send_private_typing_notifications', true)) throw privateTypingDisabled();
  if (kind === 'stream' && !booleanSetting(me, 'send_stream_typing_notifications', true)) throw channelTypingDisabled();
}

export const setTypingStatus = defineEndpoint({
  method: 'POST',
  path: '/typing',
  summary: 'Set "typing" status',
  auth: 'user',
  params: Type.Object({
    type: Type.Union([Type.Literal('direct'), Type.Literal('stream'), Type.Literal('channel')], { default: 'direct' }),
    op: Op,
    to: Type.Optional(Type.Array(Type.Integer())),
    stream_id: Type.Optional(Type.Integer()),
    topic: Type.Optional(Type.String()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    const k = db.kysely;
    if (p.type === 'stream' || p.type === 'channel') {
      if (p.stream_id === undefined) throw missingChannelId();
      if (p.topic === undefined) throw missingTopic();
      checkSendsTyping(me, 'stream');
      const stream = await streamById(k, call.realm.id, p.stream_id);
      // A channel the user cannot read answers as a missing one, as for sending.
      if (!stream || !(await canAccessContent(k, me, stream))) throw channelIdMissing({ id: p.stream_id });
      await checkCanPost(k, me, stream);
      const topic = normaliseTopic(p.topic);
      events.publish([streamTypingNotice(p.op, me, stream.id, topic, await channelReceivers(k, call.realm.id, stream.id))]);
      return {};
    }
    if (p.to === undefined) throw missingTo();
    if (!p.to.length) throw emptyToList();
    checkSendsTyping(me, 'direct');
    const ids = [...new Set([...p.to, me.id])];
    const users = await k.selectFrom('chat_users').selectAll().where('realm_id', '=', call.realm.id).where('id', 'in', ids).execute();
    const missing = ids.find((id) => !users.some((u) => u.id === id));
    if (missing !== undefined) throw invalidUserId({ id: missing });
    users.sort((a, b) => a.id - b.id);
    const receivers = await typingReceivers(k, call.realm.id, ids);
    events.publish([directTypingNotice(p.op, me, users, receivers)]);
    return {};
  },
});

export const setEditTypingStatus = defineEndpoint({
  method: 'POST',
  path: '/messages/{message_id}/typing',
  summary: 'Set "typing" status for message editing',
  auth: 'user',
  params: Type.Object({ message_id: Type.Integer(), op: Op }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    const k = db.kysely;
    const message = await k.selectFrom('messages').select(['id', 'stream_id', 'topic']).where('realm_id', '=', call.realm.id).where('id', '=', p.message_id).executeTakeFirst();
    if (!message) throw invalidMessages();
    if (message.stream_id === null) {
      // Those holding a copy of a direct message are its participants.
      const holders = (await k.selectFrom('user_messages').select('user_id').where('message_id', '=', message.id).execute()).map((r) => Number(r.user_id));
      if (!holders.includes(me.id)) throw invalidMessages();
      checkSendsTyping(me, 'direct');
      const recipient: EditRecipient = { type: 'direct', user_ids: holders.sort((a, b) => a - b) };
      events.publish([editTypingNotice(p.op, me.id, message.id, recipient, await typingReceivers(k, call.realm.id, holders))]);
      return {};
    }
    const streamId = Number(message.stream_id);
    const stream = await streamById(k, call.realm.id, streamId);
    if (!stream || !(await canAccessContent(k, me, stream))) throw invalidMessages();
    checkSendsTyping(me, 'stream');
    const recipient: EditRecipient = { type: 'channel', channel_id: streamId, topic: message.topic };
    events.publish([editTypingNotice(p.op, me.id, message.id, recipient, await channelReceivers(k, call.realm.id, streamId))]);
    return {};
  },
});

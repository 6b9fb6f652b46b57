// PATCH /messages/{message_id}: a content edit (re-rendered, mention flags recomputed), a topic
// move and/or a channel move of one message, the later ones or the whole topic. check() applies
// the realm's rules (message-rules.ts) and decides what moves before anything is written; apply()
// writes it in one transaction and returns what the update_message events need.
import { sql } from 'kysely';
import type { Database, Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Message, Realm, Stream } from '../tables.js';
import {
  channelEditTimeLimitPassed,
  contentWithChannelChange,
  directMessageMove,
  directMessageTopic,
  editingDisabled,
  editTimeLimitPassed,
  generalChatResolved,
  invalidChannelId,
  invalidMessages,
  noEditPermission,
  noMovePermission,
  nothingToChange,
  propagateModeWithoutTopic,
  topicEditTimeLimitPassed,
} from '../errors.js';
import { FLAG } from './flags.js';
import { renderMessage } from './markdown.js';
import { hasMentions, loadMarkdownContext, mentionFlagger } from './mentions.js';
import { fetchByIds, topicParticipants } from './messages.js';
import { checkTopicGiven } from './realm-rules.js';
import { realmAlertWords, usersAlerted } from './alert-words.js';
import { canAccessContent, checkCanPost } from './channel-access.js';
import { streamById, subscriberIds } from './channels.js';
import { holdersOf, spanHolders } from './receipt.js';
import { EDIT_LIMIT_GRACE_SECONDS, exemptFromMoveLimits, inGroupOf, isResolveToggle, messageSettings, moveLimitExceeded, RESOLVED_TOPIC_PREFIX } from './message-rules.js';
import { searchText } from '../../platform/db/fulltext.js';
import { type AttachmentChange, refreshAttachmentMarks, relinkAttachments } from './uploads.js';

export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

export interface EditAsk {
  /** Normalised already (normaliseBody / normaliseTopic). */
  content?: string;
  topic?: string;
  streamId?: number;
  propagateMode: PropagateMode;
  /** The realm's URL, for Markdown's relative links to the realm's own narrows. */
  realmUrl?: string;
}

/** One entry of a message's edit_history (the message object's shape). */
export interface HistoryEntry {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

export interface EditPlan {
  message: Message;
  editor: ChatUser;
  now: number;
  content?: { content: string; rendered: string; mentionBits?: (userId: number, participants: Set<number>) => number };
  /** The realm's URL, for links to its uploads written in full. */
  realmUrl?: string;
  /** Present when the topic and/or channel change: every message that moves (the target included). */
  move?: { ids: number[]; topic?: string; stream?: Stream; propagateMode: PropagateMode };
}

export interface EditOutcome {
  plan: EditPlan;
  /** Holders of the target message after the edit, with their flags (bits). */
  receivers: Map<number, number>;
  /** Others told of the move: holders of other moved messages, those who gained or lost a copy but may read it. */
  alsoNotified: number[];
  /** Users who lost access to moved messages (a channel move), with the ids they lost. */
  losers: Map<number, number[]>;
  origStreamName: string | null;
  /** Channels whose oldest message the move changed. */
  firstIds: FirstIds;
  /** What an edit of the content did to the uploads it links (uploads.ts relinkAttachments). */
  attachments?: AttachmentChange;
}

/** The flags that follow from a message's content. */
const CONTENT_BITS = FLAG.mentioned | FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned | FLAG.has_alert_word;

/** The message, if the user may read it (received, or in shared channel history); else Zulip's error. */
export async function readableMessage(db: Queryable<ChatTables>, realmId: number, user: ChatUser, messageId: number): Promise<Message> {
  const found = await fetchByIds(db, realmId, user, { conditions: [], history: true }, [messageId]);
  if (!found.ids.length) throw invalidMessages();
  // Deleted by a concurrent request since the read above: as missing (fuzz seed 8 on PostgreSQL answered 500).
  const message = await db.selectFrom('messages').selectAll().where('id', '=', messageId).executeTakeFirst();
  if (!message) throw invalidMessages();
  return message;
}

/** Checks the request against the message and the realm's rules; nothing is written. */
export async function checkEdit(db: Queryable<ChatTables>, realm: Realm, editor: ChatUser, message: Message, ask: EditAsk, now: number): Promise<EditPlan> {
  const isChannel = message.stream_id !== null;
  if (ask.content !== undefined && ask.streamId !== undefined) throw contentWithChannelChange();
  if (!isChannel && ask.topic !== undefined) throw directMessageTopic();
  if (!isChannel && ask.streamId !== undefined) throw directMessageMove();
  // Zulip checks the topic asked for, even one the message already has.
  if (ask.topic !== undefined) checkTopicGiven(realm, ask.topic, 'edit');
  // Naming the topic or channel the message already has changes nothing.
  const topic = ask.topic !== undefined && ask.topic !== message.topic ? ask.topic : undefined;
  const streamId = ask.streamId !== undefined && ask.streamId !== Number(message.stream_id) ? ask.streamId : undefined;
  if (ask.content === undefined && topic === undefined && streamId === undefined) throw nothingToChange();
  if (topic === undefined && streamId === undefined && ask.propagateMode !== 'change_one') throw propagateModeWithoutTopic();
  const s = await messageSettings(db, realm.id);
  const age = now - Number(message.date_sent);
  const plan: EditPlan = { message, editor, now, realmUrl: ask.realmUrl };

  if (ask.content !== undefined) {
    if (!s.allowMessageEditing) throw editingDisabled();
    if (message.sender_id !== editor.id) throw noEditPermission();
    if (s.contentEditLimit !== null && age > s.contentEditLimit + EDIT_LIMIT_GRACE_SECONDS) throw editTimeLimitPassed();
    const ctx = await loadMarkdownContext(db, realm.id, editor, ask.content, ask.realmUrl);
    const rendered = renderMessage(ask.content, ctx);
    plan.content = { content: ask.content, rendered: rendered.html, mentionBits: hasMentions(rendered) ? mentionFlagger(rendered, ctx) : undefined };
  }
  if (topic === undefined && streamId === undefined) return plan;

  const exempt = exemptFromMoveLimits(editor);
  // change_all answers a too-old topic with MOVE_MESSAGES_TIME_LIMIT_EXCEEDED and its counts below,
  // even when the target itself is among the too old.
  const tooOld = (limitSeconds: number) => ask.propagateMode !== 'change_all' && age > limitSeconds;
  let limit: number | null = null;
  if (topic !== undefined) {
    // The check mark and a space around the empty topic trim down to the mark alone.
    if (topic === RESOLVED_TOPIC_PREFIX.trim()) throw generalChatResolved();
    // Resolving or unresolving alone is its own permission, without a time limit.
    const resolving = streamId === undefined && isResolveToggle(message.topic, topic);
    if (resolving) {
      if (!(await inGroupOf(db, s, editor, 'can_resolve_topics_group'))) throw noEditPermission();
    } else {
      if (!(await inGroupOf(db, s, editor, 'can_move_messages_between_topics_group'))) throw noEditPermission();
      if (!exempt && s.topicMoveLimit !== null) {
        if (tooOld(s.topicMoveLimit)) throw topicEditTimeLimitPassed();
        limit = s.topicMoveLimit;
      }
    }
  }
  let stream: Stream | undefined;
  if (streamId !== undefined) {
    if (!(await inGroupOf(db, s, editor, 'can_move_messages_between_channels_group'))) throw noMovePermission();
    stream = await streamById(db, realm.id, streamId);
    if (!stream || !(await canAccessContent(db, editor, stream))) throw invalidChannelId();
    await checkCanPost(db, editor, stream);
    if (!exempt && s.channelMoveLimit !== null) {
      if (tooOld(s.channelMoveLimit)) throw channelEditTimeLimitPassed();
      limit = limit === null ? s.channelMoveLimit : Math.min(limit, s.channelMoveLimit);
    }
  }

  let ids = [message.id];
  if (ask.propagateMode !== 'change_one') {
    let q = db.selectFrom('messages').select('id').where('stream_id', '=', message.stream_id).where(sql`lower(topic)`, '=', message.topic.toLowerCase());
    if (ask.propagateMode === 'change_later') q = q.where('id', '>=', message.id);
    const candidates = (await q.orderBy('id').execute()).map((r) => Number(r.id));
    // Only what the editor may read moves (a private channel's protected history stays).
    ids = (await fetchByIds(db, realm.id, editor, { conditions: [], history: true }, candidates)).ids;
    if (ask.propagateMode === 'change_all' && limit !== null) {
      const rows = await db.selectFrom('messages').select(['id', 'date_sent']).where('id', 'in', ids).execute();
      const allowed = rows.filter((r) => now - Number(r.date_sent) <= limit!).map((r) => Number(r.id));
      if (allowed.length < ids.length) throw moveLimitExceeded(allowed, ids.length);
    }
  }
  plan.move = { ids, topic, stream, propagateMode: ask.propagateMode };
  return plan;
}

function withHistory(json: string | null, entry: HistoryEntry): string {
  const list = json ? (JSON.parse(json) as HistoryEntry[]) : [];
  return JSON.stringify([entry, ...list]);
}

/** Writes the plan in one transaction. */
export async function applyEdit(database: Database<ChatTables>, plan: EditPlan): Promise<EditOutcome> {
  const { message, editor, now } = plan;
  return database.transaction(async (trx) => {
    const losers = new Map<number, number[]>();
    const alsoNotified = new Set<number>();
    const origStream = message.stream_id === null ? undefined : await trx.selectFrom('streams').select('name').where('id', '=', message.stream_id).executeTakeFirst();
    const moved = new Set(plan.move?.ids ?? []);
    if (!moved.size) moved.add(message.id);
    const rows = await trx
      .selectFrom('messages')
      .select(['id', 'edit_history', 'topic', 'stream_id', 'rendered_content'])
      .where('id', 'in', [...moved])
      .execute();
    const newStream = plan.move?.stream;
    const channels = newStream ? [Number(message.stream_id), newStream.id] : [];
    const { firstIds } = await trackingFirstIds(trx, channels, async () => {
      for (const r of rows) {
        const entry: HistoryEntry = { user_id: editor.id, timestamp: now };
        const set: Record<string, unknown> = {};
        if (r.id === message.id && plan.content) {
          Object.assign(entry, { prev_content: message.content, prev_rendered_content: message.rendered_content });
          Object.assign(set, { content: plan.content.content, rendered_content: plan.content.rendered, last_edit_time: now });
        }
        if (plan.move) {
          if (plan.move.topic !== undefined) {
            Object.assign(entry, { prev_topic: r.topic, topic: plan.move.topic });
            set.topic = plan.move.topic;
          }
          if (newStream) {
            Object.assign(entry, { prev_stream: Number(r.stream_id), stream: newStream.id });
            Object.assign(set, { stream_id: newStream.id, recipient_id: newStream.recipient_id });
          }
          set.last_moved_time = now;
        }
        // The search index follows the new text and topic (the engines index search_text only).
        if (set.rendered_content !== undefined || set.topic !== undefined) {
          set.search_text = searchText(String(set.topic ?? r.topic), String(set.rendered_content ?? r.rendered_content));
        }
        if (newStream) await moveReceipt(trx, Number(r.id), Number(r.stream_id), newStream, { told: alsoNotified, losers });
        set.edit_history = withHistory(r.edit_history, entry);
        await trx.updateTable('messages').set(set).where('id', '=', r.id).execute();
      }
    });
    if (plan.content) await refreshContentFlags(trx, plan);
    const attachments = plan.content ? await relinkAttachments(trx, message, plan.content.rendered, plan.realmUrl) : undefined;
    // Moved between channels: the uploads they link may have become (or stopped being) realm-public.
    if (newStream) await refreshAttachmentMarks(trx, [...moved]);
    const target = await trx.selectFrom('messages').select('stream_id').where('id', '=', message.id).executeTakeFirstOrThrow();
    const receivers = await holdersOf(trx, message.id, target.stream_id === null ? null : Number(target.stream_id));
    // Holders of the other moved messages hear of the move too.
    for (const id of moved) {
      if (id === message.id) continue;
      for (const u of (await holdersOf(trx, id, newStream ? newStream.id : target.stream_id === null ? null : Number(target.stream_id))).keys()) alsoNotified.add(u);
    }
    for (const u of receivers.keys()) alsoNotified.delete(u);
    return { plan, receivers, alsoNotified: [...alsoNotified], losers, origStreamName: origStream?.name ?? null, firstIds, attachments };
  });
}

/**
 * A channel move changes who receives the message (Zulip's rule): the new channel's subscribers
 * hold it (those who held it keep their flags; the others get it already read), everyone else who
 * held it loses their copy: they still see it as shared history if they may read the channel
 * (told by update_message), or lose it altogether (told by delete_message).
 */
async function moveReceipt(trx: Queryable<ChatTables>, id: number, fromStreamId: number, to: Stream, moved: MoveReach): Promise<void> {
  const before = await holdersOf(trx, id, fromStreamId);
  const rowUsers = new Set((await trx.selectFrom('user_messages').select('user_id').where('message_id', '=', id).execute()).map((r) => Number(r.user_id)));
  const span = new Set(await spanHolders(trx, to.id, id));
  const subscribed = new Set([...span, ...(await subscriberIds(trx, to.id))]);
  const leaving = [...before.keys()].filter((u) => !subscribed.has(u));
  const users = new Map((leaving.length ? await trx.selectFrom('chat_users').selectAll().where('id', 'in', leaving).execute() : []).map((u) => [Number(u.id), u]));
  for (const [userId, flags] of before) {
    if (subscribed.has(userId)) {
      // A row keeps the flags where the new channel's span does not cover the message.
      if (!rowUsers.has(userId) && !span.has(userId)) await trx.insertInto('user_messages').values({ user_id: userId, message_id: id, flags }).execute();
      continue;
    }
    if (rowUsers.has(userId)) await trx.deleteFrom('user_messages').where('message_id', '=', id).where('user_id', '=', userId).execute();
    const user = users.get(userId);
    if (user && (await canAccessContent(trx, user, to))) moved.told.add(userId);
    else moved.losers.set(userId, [...(moved.losers.get(userId) ?? []), id]);
  }
  for (const userId of subscribed) {
    if (before.has(userId)) continue;
    await trx.insertInto('user_messages').values({ user_id: userId, message_id: id, flags: FLAG.read }).execute();
    moved.told.add(userId);
  }
}

/** Who a channel move reaches beyond the holders afterwards. */
interface MoveReach {
  told: Set<number>;
  losers: Map<number, number[]>;
}

/** Mention and alert-word flags follow the new content: cleared where it no longer applies, set where it now does. */
async function refreshContentFlags(trx: Queryable<ChatTables>, plan: EditPlan): Promise<void> {
  const { message } = plan;
  const streamId = message.stream_id === null ? null : Number(message.stream_id);
  const holders = await holdersOf(trx, message.id, streamId);
  const rowUsers = new Set((await trx.selectFrom('user_messages').select('user_id').where('message_id', '=', message.id).execute()).map((r) => Number(r.user_id)));
  const bits = plan.content!.mentionBits;
  const participants = bits && streamId !== null ? await topicParticipants(trx, streamId, plan.move?.topic ?? message.topic) : new Set(holders.keys());
  participants.add(message.sender_id);
  const alerted = usersAlerted(
    await realmAlertWords(trx, Number(message.realm_id)),
    plan.content!.content,
    [...holders.keys()].filter((id) => id !== message.sender_id),
  );
  for (const [userId, flags] of holders) {
    const next = (flags & ~CONTENT_BITS) | (bits?.(userId, participants) ?? 0) | (alerted.has(userId) ? FLAG.has_alert_word : 0);
    if (next === flags) continue;
    if (rowUsers.has(userId)) await trx.updateTable('user_messages').set({ flags: next }).where('message_id', '=', message.id).where('user_id', '=', userId).execute();
    else await trx.insertInto('user_messages').values({ user_id: userId, message_id: message.id, flags: next }).execute();
  }
}

/** Channels whose oldest message changed, with the new oldest id (null: the channel is now empty). */
export type FirstIds = Map<number, number | null>;

async function firstIds(db: Queryable<ChatTables>, streamIds: number[]): Promise<Map<number, number | null>> {
  const out = new Map<number, number | null>(streamIds.map((id) => [id, null]));
  if (!streamIds.length) return out;
  const rows = await db
    .selectFrom('messages')
    .select((eb) => ['stream_id', eb.fn.min('id').as('first')])
    .where('stream_id', 'in', streamIds)
    .groupBy('stream_id')
    .execute();
  for (const r of rows) out.set(Number(r.stream_id), r.first === null ? null : Number(r.first));
  return out;
}

/** Runs a change and reports which of these channels' oldest message it changed. */
export async function trackingFirstIds<T>(db: Queryable<ChatTables>, streamIds: number[], work: () => Promise<T>): Promise<{ result: T; firstIds: FirstIds }> {
  const before = await firstIds(db, streamIds);
  const result = await work();
  const after = await firstIds(db, streamIds);
  return { result, firstIds: new Map([...after].filter(([id, first]) => before.get(id) !== first)) };
}

export interface Deleted {
  holders: number[];
  where: { streamId: number; topic: string } | null;
  firstIds: FirstIds;
}

/** Deletes a message with its copies and reactions; returns who held it, for delete_message. */
export async function deleteMessage(database: Database<ChatTables>, message: Message): Promise<Deleted> {
  return database.transaction(async (trx) => {
    const streamId = message.stream_id === null ? null : Number(message.stream_id);
    const holders = [...(await holdersOf(trx, message.id, streamId)).keys()];
    const { firstIds } = await trackingFirstIds(trx, streamId === null ? [] : [streamId], async () => {
      await trx.deleteFrom('reactions').where('message_id', '=', message.id).execute();
      // Its uploads are linked from one message fewer (uploads.ts).
      await trx.deleteFrom('attachment_messages').where('message_id', '=', message.id).execute();
      await trx.deleteFrom('user_messages').where('message_id', '=', message.id).execute();
      await trx.deleteFrom('messages').where('id', '=', message.id).execute();
    });
    return { holders, where: streamId === null ? null : { streamId, topic: message.topic }, firstIds };
  });
}

// Changes to sent messages: edit and move (PATCH /messages/{id}), edit history, deletion and emoji
// reactions. Each write publishes its events after the commit, to those holding the message.
import Type from 'typebox';
import { sql } from 'kysely';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { editHistoryDisabled, reactionExists, reactionMissing } from '../errors.js';
import { unixSeconds } from '../../platform/clock.js';
import { normaliseBody, normaliseTopic } from '../domain/topics.js';
import { applyEdit, checkEdit, deleteMessage, readableMessage } from '../domain/message-edits.js';
import { checkCanDelete, messageSettings } from '../domain/message-rules.js';
import { historySnapshots } from '../domain/edit-history.js';
import { emojiToAdd, emojiToRemove } from '../domain/reactions.js';
import { holdersOf } from '../domain/receipt.js';
import { ensureNotificationBot, moveNotes, postNotes } from '../domain/move-notices.js';
import type { Stored } from '../domain/messages.js';
import { deleteMessagesNotices, firstMessageIdNotices, reactionNotice, updateMessageNotices } from '../events/edit-notices.js';
import { messageNotice, realmUserAddNotice } from '../events/notices.js';
import { isUniqueViolation, type Queryable } from '../../platform/db/database.js';
import type { ChatTables, Message } from '../tables.js';
import { claimNotices } from '../domain/uploads.js';

/** Zulip keeps an edit that empties a message as this text rather than refusing it. */
const DELETED_CONTENT = '(deleted)';

/** Whether no message is left in the message's original topic (the notes then say the topic moved). */
async function topicEmptied(db: Queryable<ChatTables>, m: Message): Promise<boolean> {
  if (m.stream_id === null) return false;
  const left = await db.selectFrom('messages').select('id').where('stream_id', '=', m.stream_id).where(sql`lower(topic)`, '=', m.topic.toLowerCase()).limit(1).executeTakeFirst();
  return !left;
}

export const updateMessage = defineEndpoint({
  method: 'PATCH',
  path: '/messages/{message_id}',
  summary: 'Edit a message',
  auth: 'user',
  params: Type.Object({
    message_id: Type.Integer(),
    topic: Type.Optional(Type.String()),
    // The name of topic before Zulip 2.0, still sent by old clients.
    subject: Type.Optional(Type.String()),
    propagate_mode: Type.Union([Type.Literal('change_one'), Type.Literal('change_later'), Type.Literal('change_all')], { default: 'change_one' }),
    send_notification_to_old_thread: Type.Boolean({ default: false }),
    send_notification_to_new_thread: Type.Boolean({ default: true }),
    content: Type.Optional(Type.String()),
    stream_id: Type.Optional(Type.Integer()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, clock, events } = call.services;
    const message = await readableMessage(db.kysely, call.realm.id, me, p.message_id);
    const rawTopic = p.topic ?? p.subject;
    const ask = {
      content: p.content === undefined ? undefined : p.content.trim() === '' ? DELETED_CONTENT : normaliseBody(p.content),
      topic: rawTopic === undefined ? undefined : normaliseTopic(rawTopic),
      streamId: p.stream_id,
      propagateMode: p.propagate_mode,
      realmUrl: call.services.realmUrl(call.realm),
    };
    const now = unixSeconds(clock);
    const plan = await checkEdit(db.kysely, call.realm, me, message, ask, now);
    const notify = { old: p.send_notification_to_old_thread, new: p.send_notification_to_new_thread };
    const { outcome: edited } = await events.write(
      async () => {
        // The bot a move's notes come from (whether there are notes does not depend on the edit's outcome)
        // is made, on the realm's first note, before the edit commits:
        // a request that loses a race there is run again from the start (store-races.ts), which must
        // find nothing of its own committed. After the edit only message inserts follow, on no unique key.
        const bot = moveNotes(plan, '', notify, false).length ? await ensureNotificationBot(db, call.realm, clock.now(), call.services.apiKeySeal) : null;
        const outcome = await applyEdit(db, plan);
        const notes = moveNotes(plan, outcome.origStreamName ?? '', notify, await topicEmptied(db.kysely, message));
        if (!notes.length || !bot) return { outcome, posted: [] as Stored[], bot };
        return { outcome, posted: await postNotes(db, call.realm, bot.bot, me, notes, now), bot };
      },
      async ({ outcome, posted, bot }) => {
        const notices = [...updateMessageNotices(outcome), ...(await firstMessageIdNotices(db.kysely, call.realm.id, outcome.firstIds))];
        if (bot?.made) notices.unshift(...(await realmUserAddNotice(db.kysely, call.realm.id, bot.bot)));
        for (const stored of posted) notices.push(...(await messageNotice(db.kysely, call.realm, stored, null)));
        // Uploads the new content claimed: an `attachment` update to the message's sender.
        notices.push(...(await claimNotices(db.kysely, call.realm.id, message.sender_id, outcome.attachments?.claimed)));
        return notices;
      },
    );
    // The sender's uploads the edit left linked from no message (Zulip's check_attachment_reference_change).
    return { detached_uploads: edited.attachments?.detached ?? [] };
  },
});

export const deleteMessageEndpoint = defineEndpoint({
  method: 'DELETE',
  path: '/messages/{message_id}',
  summary: 'Delete a message',
  auth: 'user',
  params: Type.Object({ message_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, clock, events } = call.services;
    const message = await readableMessage(db.kysely, call.realm.id, me, p.message_id);
    await checkCanDelete(db.kysely, await messageSettings(db.kysely, call.realm.id), me, message, unixSeconds(clock));
    await events.write(
      () => deleteMessage(db, message),
      async (d) => [...deleteMessagesNotices(d.holders, [message.id], d.where), ...(await firstMessageIdNotices(db.kysely, call.realm.id, d.firstIds))],
    );
    return {};
  },
});

export const getMessageHistory = defineEndpoint({
  method: 'GET',
  path: '/messages/{message_id}/history',
  summary: "Get a message's edit history",
  auth: 'user',
  params: Type.Object({ message_id: Type.Integer(), allow_empty_topic_name: Type.Boolean({ default: false }) }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    const settings = await messageSettings(db, call.realm.id);
    if (settings.historyPolicy === 'none') throw editHistoryDisabled();
    const message = await readableMessage(db, call.realm.id, me, p.message_id);
    return { message_history: historySnapshots(message, settings.historyPolicy, p.allow_empty_topic_name) };
  },
});

const ReactionParams = {
  message_id: Type.Integer(),
  emoji_code: Type.Optional(Type.String()),
  reaction_type: Type.Optional(Type.String()),
};

export const addReaction = defineEndpoint({
  method: 'POST',
  path: '/messages/{message_id}/reactions',
  summary: 'Add an emoji reaction',
  auth: 'user',
  params: Type.Object({ ...ReactionParams, emoji_name: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    const message = await readableMessage(db.kysely, call.realm.id, me, p.message_id);
    const emoji = await emojiToAdd(db.kysely, call.realm.id, message.id, p);
    await events.write(
      async () => {
        return db.transaction(async (trx) => {
          const mine = await trx
            .selectFrom('reactions')
            .select('id')
            .where('message_id', '=', message.id)
            .where('user_id', '=', me.id)
            .where('reaction_type', '=', emoji.reaction_type)
            .where('emoji_code', '=', emoji.emoji_code)
            .executeTakeFirst();
          const exists = reactionExists;
          if (mine) throw exists();
          // Two identical reactions at once on PostgreSQL: the second meets the unique index.
          await trx
            .insertInto('reactions')
            .values({ message_id: message.id, user_id: me.id, ...emoji })
            .execute()
            .catch((err: unknown) => {
              throw isUniqueViolation(err) ? exists() : err;
            });
          return reactionReceivers(trx, message, me.id);
        });
      },
      (userIds) => [reactionNotice('add', me, message.id, emoji, userIds)],
    );
    return {};
  },
});

export const removeReaction = defineEndpoint({
  method: 'DELETE',
  path: '/messages/{message_id}/reactions',
  summary: 'Remove an emoji reaction',
  auth: 'user',
  params: Type.Object({ ...ReactionParams, emoji_name: Type.Optional(Type.String()) }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    const message = await readableMessage(db.kysely, call.realm.id, me, p.message_id);
    const asked = await emojiToRemove(db.kysely, call.realm.id, p);
    await events.write(
      async () => {
        return db.transaction(async (trx) => {
          const mine = await trx
            .selectFrom('reactions')
            .select(['id', 'emoji_name'])
            .where('message_id', '=', message.id)
            .where('user_id', '=', me.id)
            .where('reaction_type', '=', asked.reaction_type)
            .where('emoji_code', '=', asked.emoji_code)
            .executeTakeFirst();
          if (!mine) throw reactionMissing();
          await trx.deleteFrom('reactions').where('id', '=', mine.id).execute();
          // The event names the emoji as it was stored (a removal by code alone has no name).
          return { userIds: await reactionReceivers(trx, message, me.id), emoji: { ...asked, emoji_name: mine.emoji_name } };
        });
      },
      (r) => [reactionNotice('remove', me, message.id, r.emoji, r.userIds)],
    );
    return {};
  },
});

/** Those holding the message, and the reacting user (who may be reading shared history). */
async function reactionReceivers(db: Parameters<typeof holdersOf>[0], message: { id: number; stream_id: number | null }, userId: number): Promise<number[]> {
  const holders = await holdersOf(db, message.id, message.stream_id === null ? null : Number(message.stream_id));
  return [...new Set([...holders.keys(), userId])];
}

// The messages Zulip's Notification Bot posts about a move: in the old and/or new topic (by the
// send_notification_to_old_thread/new_thread choices), or, when a topic is only resolved or
// unresolved, one note in it. The bot is a realm bot made on first use (Zulip has it as a
// cross-realm system bot; one realm per server makes that distinction moot here).
import type { Database, Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';
import { renderMessage } from './markdown.js';
import { hasMentions, loadMarkdownContext, mentionFlagger } from './mentions.js';
import { storeMessage, type Stored } from './messages.js';
import { realmAlertWords } from './alert-words.js';
import { subscriberIds } from './channels.js';
import { createUser } from './users.js';
import type { ApiKeySeal } from './api-keys.js';
import { isResolveToggle, RESOLVED_TOPIC_PREFIX } from './message-rules.js';
import { ROLE } from './roles.js';
import type { EditPlan } from './message-edits.js';

export const NOTIFICATION_BOT = { local: 'notification-bot', fullName: 'Notification Bot' } as const;

/** The realm's Notification Bot, and whether this call made it (then clients hear of a new user). */
export async function notificationBot(db: Queryable<ChatTables>, realm: Realm, nowMs: number, sealer: ApiKeySeal): Promise<{ bot: ChatUser; made: boolean }> {
  const email = `${NOTIFICATION_BOT.local}@${realm.email_host}`;
  const found = await db.selectFrom('chat_users').selectAll().where('realm_id', '=', realm.id).where('email_lower', '=', email.toLowerCase()).executeTakeFirst();
  if (found) return { bot: found, made: false };
  // No password and an API key nobody is told: the bot only posts what the server writes.
  const { user } = await createUser(db, realm.id, { email, fullName: NOTIFICATION_BOT.fullName, password: null, role: ROLE.member, isBot: true, botType: 1 }, nowMs, sealer);
  return { bot: user, made: true };
}

/**
 * notificationBot in a transaction of its own, once a concurrent first use may have made the bot:
 * a request that lost that race (the insert's unique key, or createUser's "already in use" once the
 * other commit shows) takes the bot the other made.
 */
export async function ensureNotificationBot(database: Database<ChatTables>, realm: Realm, nowMs: number, sealer: ApiKeySeal): Promise<{ bot: ChatUser; made: boolean }> {
  try {
    return await database.transaction((trx) => notificationBot(trx, realm, nowMs, sealer));
  } catch (err) {
    const again = await database.transaction((trx) => notificationBot(trx, realm, nowMs, sealer)).catch(() => undefined);
    if (again && !again.made) return again;
    throw err;
  }
}

interface Note {
  streamId: number;
  streamName: string;
  topic: string;
  content: string;
}

const link = (stream: string, topic: string) => `#**${stream}>${topic}**`;

/** What the bot posts after this move, given how many messages moved and whether the old topic is now empty. */
export function moveNotes(plan: EditPlan, origStreamName: string, notify: { old: boolean; new: boolean }, oldTopicEmptied: boolean): Note[] {
  const m = plan.message;
  const move = plan.move;
  if (!move || m.stream_id === null) return [];
  const who = `@_**${plan.editor.full_name}|${plan.editor.id}**`;
  const oldStreamId = Number(m.stream_id);
  const newStreamId = move.stream?.id ?? oldStreamId;
  const newStreamName = move.stream?.name ?? origStreamName;
  const newTopic = move.topic ?? m.topic;
  if (!move.stream && move.topic !== undefined && isResolveToggle(m.topic, move.topic)) {
    const resolved = move.topic.startsWith(RESOLVED_TOPIC_PREFIX);
    return [{ streamId: newStreamId, streamName: newStreamName, topic: newTopic, content: `${who} has marked this topic as ${resolved ? 'resolved' : 'unresolved'}.` }];
  }
  const n = move.ids.length;
  const notes: Note[] = [];
  if (notify.new) {
    const from = link(origStreamName, m.topic);
    const content = oldTopicEmptied
      ? `This topic was moved here from ${from} by ${who}.`
      : n === 1
        ? `A message was moved here from ${from} by ${who}.`
        : `${n} messages were moved here from ${from} by ${who}.`;
    notes.push({ streamId: newStreamId, streamName: newStreamName, topic: newTopic, content });
  }
  if (notify.old) {
    const to = link(newStreamName, newTopic);
    const content = oldTopicEmptied
      ? `This topic was moved to ${to} by ${who}.`
      : n === 1
        ? `A message was moved from this topic to ${to} by ${who}.`
        : `${n} messages were moved from this topic to ${to} by ${who}.`;
    notes.push({ streamId: oldStreamId, streamName: origStreamName, topic: m.topic, content });
  }
  return notes;
}

/** Posts the notes as the bot (it may post anywhere, as Zulip's system bots do); returns the new messages. */
export async function postNotes(database: Database<ChatTables>, realm: Realm, bot: ChatUser, viewer: ChatUser, notes: Note[], nowSeconds: number): Promise<Stored[]> {
  const posted: Stored[] = [];
  for (const note of notes) {
    // Links resolve as the editor sees channels: the bot need not be in them.
    const ctx = await loadMarkdownContext(database.kysely, realm.id, viewer, note.content);
    const rendered = renderMessage(note.content, ctx);
    const stream = await database.kysely.selectFrom('streams').selectAll().where('id', '=', note.streamId).executeTakeFirstOrThrow();
    const alertWords = await realmAlertWords(database.kysely, realm.id);
    const stored = await database.transaction(async (trx) =>
      storeMessage(trx, realm.id, bot, Number(stream.recipient_id), note.streamId, note.topic, await subscriberIds(trx, note.streamId), {
        content: note.content,
        rendered: rendered.html,
        client: 'Internal',
        readBySender: false,
        nowSeconds,
        mentionBits: hasMentions(rendered) ? mentionFlagger(rendered, ctx) : undefined,
        alertWords,
      }),
    );
    posted.push({ ...stored, people: [bot], stream });
  }
  return posted;
}

// Whom a message goes to, checked as a send checks it (Zulip's Addressee and check_message): the
// channel (by id or name, the sender may reach it, a topic is given) or the direct recipients (each
// exists and is active; the realm's direct-message rules allow it). POST /messages, scheduled
// messages (at scheduling and again at delivery) and anything else that sends use these.
import type { Queryable } from '../../platform/db/database.js';
import type { Database } from '../../platform/db/database.js';
import { cannotSendToMultipleChannels, channelIdMissing, channelNameMissing, invalidEmail, invalidUserId, missingTopic, noRecipients, notAuthorizedToSend, userNoLongerActive } from '../errors.js';
import type { ChatTables, ChatUser, Realm, Stream } from '../tables.js';
import { canAccessContent, streamById, streamByName } from './channels.js';
import { checkDirectMessageAllowed, checkTopicGiven } from './realm-rules.js';
import { normaliseTopic } from './topics.js';
import { userByEmail, userById } from './users.js';
import { sendDirect, sendToChannel, type Outgoing, type Stored } from './messages.js';
import { renderMessage } from './markdown.js';
import { hasMentions, loadMarkdownContext, mentionFlagger } from './mentions.js';
import { checkGroupMentions } from './user-groups.js';
import { realmAlertWords } from './alert-words.js';

export type Addressee = { kind: 'channel'; stream: Stream; topic: string } | { kind: 'direct'; recipients: ChatUser[] };

/** A message type as the API names it: `channel`/`stream` or `direct`/`private`. */
export function isChannelType(type: string): boolean {
  return type === 'stream' || type === 'channel';
}

/** A channel message's target: its id or name, or a one-element list of either (the legacy form). */
export async function checkChannelAddressee(
  db: Queryable<ChatTables>,
  realm: Realm,
  me: ChatUser,
  to: number | string | readonly (number | string)[],
  rawTopic: string | undefined,
): Promise<Addressee & { kind: 'channel' }> {
  const target = Array.isArray(to) ? (to.length === 1 ? to[0] : undefined) : (to as number | string);
  if (target === undefined) throw cannotSendToMultipleChannels();
  const byId = typeof target === 'number';
  const stream = byId ? await streamById(db, realm.id, target) : await streamByName(db, realm.id, target);
  if (!stream) throw byId ? channelIdMissing({ id: target as number }) : channelNameMissing({ name: String(target) });
  // Zulip names a channel the sender may not post in (zerver/actions/message_send.py).
  if (!(await canAccessContent(db, me, stream))) throw notAuthorizedToSend({ name: stream.name });
  if (rawTopic === undefined) throw missingTopic();
  const topic = normaliseTopic(rawTopic);
  checkTopicGiven(realm, topic, 'send');
  return { kind: 'channel', stream, topic };
}

/** A direct message's recipients: ids or emails, as a list, one, or a comma-separated string. */
export async function checkDirectAddressee(db: Queryable<ChatTables>, realm: Realm, me: ChatUser, to: number | string | readonly (number | string)[]): Promise<Addressee & { kind: 'direct' }> {
  const list: (string | number)[] = Array.isArray(to)
    ? [...to]
    : typeof to === 'number'
      ? [to]
      : (to as string)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  if (!list.length) throw noRecipients();
  const recipients: ChatUser[] = [];
  for (const who of list) {
    const u = typeof who === 'number' ? await userById(db, realm.id, who) : await userByEmail(db, realm.id, who);
    if (!u) throw typeof who === 'number' ? invalidUserId({ id: who }) : invalidEmail({ email: who });
    if (u.is_active !== 1) throw userNoLongerActive({ email: u.email });
    recipients.push(u);
  }
  await checkDirectMessageAllowed(db, realm, me, recipients);
  return { kind: 'direct', recipients };
}

/** Either kind, by the API's `type`. */
export function checkAddressee(
  db: Queryable<ChatTables>,
  realm: Realm,
  me: ChatUser,
  type: string,
  to: number | string | readonly (number | string)[],
  rawTopic: string | undefined,
): Promise<Addressee> {
  return isChannelType(type) ? checkChannelAddressee(db, realm, me, to, rawTopic) : checkDirectAddressee(db, realm, me, to);
}

/** Sends to a checked addressee (the channel's posting permission is checked there: messages.ts). */
export function sendTo(db: Database<ChatTables>, realm: Realm, sender: ChatUser, to: Addressee, o: Outgoing): Promise<Stored> {
  return to.kind === 'channel' ? sendToChannel(db, realm, sender, to.stream, to.topic, o) : sendDirect(db, realm, sender, to.recipients, o);
}

/**
 * What a send of `content` (already normalised) writes: rendered now, with the mention flags and
 * the realm's alert words; refuses a mention of a group the sender may not mention.
 */
export async function composeOutgoing(
  db: Queryable<ChatTables>,
  realm: Realm,
  me: ChatUser,
  content: string,
  how: { client: string; readBySender: boolean; nowSeconds: number; realmUrl: string },
): Promise<Outgoing> {
  const ctx = await loadMarkdownContext(db, realm.id, me, content, how.realmUrl);
  const rendered = renderMessage(content, ctx);
  await checkGroupMentions(db, realm.id, me, rendered.mentionedGroupIds);
  return {
    content,
    rendered: rendered.html,
    client: how.client,
    readBySender: how.readBySender,
    nowSeconds: how.nowSeconds,
    // Without a mention every recipient's bits are 0: skip the flagger (and the topic's participants it needs).
    mentionBits: hasMentions(rendered) ? mentionFlagger(rendered, ctx) : undefined,
    alertWords: await realmAlertWords(db, realm.id),
    realmUrl: how.realmUrl,
  };
}

// The notices each write publishes after its commit (see hub.ts): what happened, to whom, and how
// each receiving queue sees it (markdown or not, gravatar, empty topic names, local echo ids).
import type { Kysely } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import { preparedQuery } from '../../platform/db/fast/prepared.js';
import type { ChatTables, ChatUser, Realm, Stream } from '../tables.js';
import { flagNames } from '../domain/flags.js';
import { storedMessageObject, type Stored } from '../domain/messages.js';
import { displayTopic } from '../domain/topics.js';
import { avatarUrlFor, botObject, userObject } from '../domain/users.js';
import { channelFields } from '../domain/channels.js';
import { ROLE } from '../domain/roles.js';
import { subscriptionObjects, withInheritedNotifications } from '../domain/subscriptions.js';
import type { Notice } from './hub.js';
import type { EventBody } from './queue.js';
import { channelViewers, streamUpdateNotice } from './channel-notices.js';

/** Where a sender asked for local echo: the queue that sent it, and the client's own id for it. */
export interface LocalEcho {
  queueId: string;
  localId: string;
}

/** The `message` event of a message just committed, to everyone holding a copy (the sender included). */
export async function messageNotice(db: Queryable<ChatTables>, realm: Realm, stored: Stored, echo: LocalEcho | null): Promise<Notice[]> {
  // Who received a copy, with their flags: exactly the users who may see the message now. The send
  // knew them (the subscribers it read inside its transaction, and the sender): see messages.ts Stored.
  const row = stored.message;
  const sender = stored.people[0]!;
  const { holders, stream } = stored;
  // Receivers with the same bits share one list (an event's flags are never changed).
  const names = new Map<number, string[]>();
  const flagsOf = (userId: number): string[] => {
    const bits = holders.get(userId);
    if (bits === undefined) return [];
    let list = names.get(bits);
    if (!list) names.set(bits, (list = flagNames(bits)));
    return list;
  };
  const base = await storedMessageObject(db, realm, stored, { applyMarkdown: true, clientGravatar: false, allowEmptyTopicName: true });
  const renderings = new Map<string, EventBody>();
  const direct = Array.isArray(base.display_recipient) ? (base.display_recipient as { id: number }[]).map((u) => u.id) : null;
  const out: Notice[] = stream === null ? [] : await firstMessageNotice(db, stream.id, row.recipient_id, row.id);
  out.push({
    type: 'message',
    userIds: [...holders.keys()],
    message: {
      facts: { streamId: row.stream_id, streamName: stream ? stream.name.toLowerCase() : null, topic: row.topic, senderId: sender.id, senderEmail: sender.email, directUserIds: direct },
      flagsFor: flagsOf,
      publicStreamId: stream && stream.invite_only === 0 ? stream.id : null,
      realmId: realm.id,
    },
    render(queue) {
      const o = queue.options;
      // Only the sending client's own queue learns which of its local echoes this message replaces.
      const echoed = echo !== null && queue.id === echo.queueId && o.userId === sender.id;
      const userFlags = flagsOf(o.userId);
      const emptyTopicName = o.capabilities.empty_topic_name === true;
      // Queues that see the message alike share one event (the hub serializes it once for all).
      const key = echoed ? null : `${+o.applyMarkdown}${+o.clientGravatar}${+emptyTopicName}${userFlags.join(',')}`;
      const seen = key === null ? undefined : renderings.get(key);
      if (seen) return seen;
      const message: Record<string, unknown> = {
        ...base,
        content: o.applyMarkdown ? base.content : row.content,
        content_type: o.applyMarkdown ? 'text/html' : 'text/x-markdown',
        avatar_url: avatarUrlFor(sender, o.clientGravatar),
        subject: row.stream_id === null ? '' : displayTopic(row.topic, emptyTopicName),
      };
      const event: EventBody = { type: 'message', message, flags: userFlags };
      if (echoed) event.local_message_id = echo.localId;
      else renderings.set(key!, event);
      return event;
    },
  });
  return out;
}

// Every send to a channel asks it: compiled once (prepared.ts).
const earlierInChannel = preparedQuery((db: Kysely<ChatTables>, recipientId: number, messageId: number) =>
  db.selectFrom('messages').select('id').where('recipient_id', '=', recipientId).where('id', '<', messageId).limit(1),
);

/**
 * The channel's first message: its first_message_id changed from null, which Zulip announces with a
 * stream update since feature level 256. One indexed look-up for an earlier message in the channel.
 */
async function firstMessageNotice(db: Queryable<ChatTables>, streamId: number, recipientId: number, messageId: number): Promise<Notice[]> {
  if ((await earlierInChannel(db, recipientId, messageId)).length) return [];
  const stream = await db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirstOrThrow();
  return [streamUpdateNotice(stream, stream.name, 'first_message_id', messageId, await channelViewers(db, stream))];
}

/** update_message_flags for the user's other clients; both `op` and the legacy `operation`. */
export function flagsNotice(userId: number, op: 'add' | 'remove', flag: string, messageIds: number[]): Notice[] {
  if (!messageIds.length) return [];
  const messages = [...messageIds].sort((a, b) => a - b);
  return [
    {
      type: 'update_message_flags',
      userIds: [userId],
      render: () => ({ type: 'update_message_flags', op, operation: op, flag, messages, all: false }),
    },
  ];
}

export async function activeUsers(db: Queryable<ChatTables>, realmId: number): Promise<ChatUser[]> {
  return db.selectFrom('chat_users').selectAll().where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
}

/** stream create, to every active user who may know the channel exists. */
export async function streamCreateNotices(db: Queryable<ChatTables>, streams: Stream[], nowSeconds: number): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const s of streams) {
    const fields = await channelFields(db, s, nowSeconds);
    const who = await channelViewers(db, s);
    out.push({ type: 'stream', userIds: who, render: () => ({ type: 'stream', op: 'create', streams: [fields] }) });
  }
  return out;
}

/**
 * subscription add, to each user who was just subscribed, with their subscription objects: archived
 * channels only for clients that declared archived_channels, and inherited notification settings
 * filled in for clients without notification_settings_null.
 */
export async function subscriptionAddNotices(db: Queryable<ChatTables>, added: Map<number, number[]>, nowSeconds: number): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const [userId, streamIds] of added) {
    const user = await db.selectFrom('chat_users').select('settings').where('id', '=', userId).executeTakeFirstOrThrow();
    const subscriptions = await subscriptionObjects(db, userId, nowSeconds, { active: true, streamIds, includeSubscribers: true });
    const inherited = withInheritedNotifications(subscriptions, user);
    out.push({
      type: 'subscription',
      userIds: [userId],
      render: (queue) => {
        const caps = queue.options.capabilities;
        let subs = caps.notification_settings_null === true ? subscriptions : inherited;
        if (caps.archived_channels !== true) subs = subs.filter((sub) => sub.is_archived !== true);
        return subs.length ? { type: 'subscription', op: 'add', subscriptions: subs } : null;
      },
    });
  }
  return out;
}

/** subscription remove, to each user who just left channels. */
export function subscriptionRemoveNotices(removed: Map<number, Stream[]>): Notice[] {
  return [...removed].map(([userId, streams]) => ({
    type: 'subscription',
    userIds: [userId],
    render: () => ({ type: 'subscription', op: 'remove', subscriptions: streams.map((s) => ({ stream_id: s.id, name: s.name })) }),
  }));
}

/** realm_user add: the new user as each active user (the viewer) may see them. */
export async function realmUserAddNotice(db: Queryable<ChatTables>, realmId: number, user: ChatUser): Promise<Notice[]> {
  const viewers = await activeUsers(db, realmId);
  const roles = new Map(viewers.map((v) => [v.id, v.role]));
  return [
    {
      type: 'realm_user',
      userIds: viewers.map((v) => v.id),
      render: (queue) => ({
        type: 'realm_user',
        op: 'add',
        person: userObject(user, {
          clientGravatar: queue.options.clientGravatar,
          includeProfileFields: true,
          viewer: { id: queue.options.userId, role: roles.get(queue.options.userId)! },
        }),
      }),
    },
  ];
}

/** realm_user update: one changed property of one user, to every active user (and the user). */
export async function realmUserUpdateNotice(db: Queryable<ChatTables>, realmId: number, userId: number, change: Record<string, unknown>): Promise<Notice[]> {
  const viewers = (await activeUsers(db, realmId)).map((v) => v.id);
  if (!viewers.includes(userId)) viewers.push(userId);
  return [{ type: 'realm_user', userIds: viewers, render: () => ({ type: 'realm_user', op: 'update', person: { user_id: userId, ...change } }) }];
}

/** Who administers a bot: its owner and the realm's active administrators (Zulip's bot_owner_user_ids). */
async function botAdministrators(db: Queryable<ChatTables>, bot: ChatUser): Promise<number[]> {
  const admins = await db.selectFrom('chat_users').select('id').where('realm_id', '=', bot.realm_id).where('is_active', '=', 1).where('role', '<=', ROLE.administrator).execute();
  const ids = new Set(admins.map((a) => a.id));
  if (bot.bot_owner_id !== null) ids.add(bot.bot_owner_id);
  return [...ids];
}

/** realm_bot add: the new bot with its API key, to those who may administer it (or to `only`: a bot's new owner). */
export async function realmBotAddNotice(db: Queryable<ChatTables>, bot: ChatUser, apiKey: string, only?: number[]): Promise<Notice[]> {
  const event = { type: 'realm_bot', op: 'add', bot: botObject(bot, apiKey) };
  return [{ type: 'realm_bot', userIds: only ?? (await botAdministrators(db, bot)), render: () => event }];
}

/** realm_bot update: a bot was deactivated or reactivated (since feature level 222, instead of remove). */
export async function realmBotActiveNotice(db: Queryable<ChatTables>, bot: ChatUser, isActive: boolean): Promise<Notice[]> {
  return realmBotUpdateNotice(db, bot, { is_active: isActive });
}

/**
 * realm_bot update: one changed property of a bot (api_key, full_name, owner_id, is_active), to those
 * who administer it, less `except` (Zulip leaves out the owners an owner change sent add or delete).
 */
export async function realmBotUpdateNotice(db: Queryable<ChatTables>, bot: ChatUser, change: Record<string, unknown>, except: number[] = []): Promise<Notice[]> {
  const event = { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...change } };
  const userIds = (await botAdministrators(db, bot)).filter((id) => !except.includes(id));
  return [{ type: 'realm_bot', userIds, render: () => event }];
}

/** realm_bot delete: a bot's former owner (not an administrator) no longer administers it. */
export function realmBotDeleteNotice(bot: ChatUser, userId: number): Notice[] {
  const event = { type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } };
  return [{ type: 'realm_bot', userIds: [userId], render: () => event }];
}

/** alert_words, to the user's own clients: the whole list after a change. */
export function alertWordsNotice(userId: number, words: string[]): Notice[] {
  return [{ type: 'alert_words', userIds: [userId], render: () => ({ type: 'alert_words', alert_words: words }) }];
}

// Read state and personal flags: POST /messages/flags (by ids), /messages/flags/narrow (a range of
// a narrow), and the deprecated mark-as-read endpoints.
import Type from 'typebox';
import { sql } from 'kysely';
import { defineEndpoint, requireUser, type ChatServices } from '../endpoint.js';
import { anchorExcludedMidRange, flagNotEditable, invalidChannelId, invalidFlag, invalidMessages, noSuchTopic } from '../errors.js';
import type { ChatUser } from '../tables.js';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { canAccessContent, streamById } from '../domain/channels.js';
import { checkEditableFlag, FLAG, HISTORICAL_FLAGS } from '../domain/flags.js';
import { buildNarrow, readNarrow, type RawNarrow } from '../domain/narrow.js';
import { fetchByIds, fetchWindow, MAX_MESSAGES_PER_FETCH } from '../domain/messages.js';
import { setFlag, unreadIds } from '../domain/read-state.js';
import { receivedCondition } from '../domain/receipt.js';
import { normaliseTopic } from '../domain/topics.js';
import { NarrowTerm, parseAnchor } from './messages.js';
import { flagsNotice } from '../events/notices.js';

const Op = Type.Union([Type.Literal('add'), Type.Literal('remove')]);

function flagBit(flag: string): number {
  const bit = checkEditableFlag(flag);
  if (bit === -1) throw flagNotEditable({ flag });
  if (bit === 0) throw invalidFlag({ flag });
  return bit;
}

/**
 * Zulip keeps unread messages only in channels the user is subscribed to: marking a message unread
 * skips the others and names their channels.
 */
async function skipUnsubscribed(db: Queryable<ChatTables>, me: ChatUser, ids: number[]): Promise<{ ids: number[]; channels: number[] }> {
  if (!ids.length) return { ids, channels: [] };
  const rows = await sql<{ id: number; stream_id: number }>`select m.id, m.stream_id from messages m where m.id in (${sql.join(ids)}) and m.stream_id is not null
    and not exists (select 1 from subscriptions s where s.stream_id = m.stream_id and s.user_id = ${me.id} and s.active = 1)`.execute(db);
  const skip = new Set(rows.rows.map((r) => Number(r.id)));
  return { ids: ids.filter((id) => !skip.has(id)), channels: [...new Set(rows.rows.map((r) => Number(r.stream_id)))].sort((a, b) => a - b) };
}

export const updateMessageFlags = defineEndpoint({
  method: 'POST',
  path: '/messages/flags',
  summary: 'Update personal message flags',
  auth: 'user',
  params: Type.Object({ messages: Type.Array(Type.Integer()), op: Op, flag: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const bit = flagBit(p.flag);
    const { db, events } = call.services;
    let changed: number[] = [];
    const work = () =>
      db.transaction(async (trx) => {
        const ids = [...new Set(p.messages)];
        const own = new Set(
          ids.length ? (await sql<{ id: number }>`select m.id from messages m where m.id in (${sql.join(ids)}) and ${receivedCondition(me.id)}`.execute(trx)).rows.map((r) => Number(r.id)) : [],
        );
        const others = ids.filter((id) => !own.has(id));
        // Messages the user never received but may read (shared channel history) are valid targets.
        const readable = new Set((await fetchByIds(trx, call.realm.id, me, { conditions: [], history: true }, others)).ids);
        if (others.some((id) => !readable.has(id))) throw invalidMessages();
        const out: Record<string, unknown> = { messages: p.messages };
        if (p.op === 'add' && bit !== FLAG.read && others.length) {
          // Starring or collapsing history gives the user a copy marked historical (and read).
          await trx
            .insertInto('user_messages')
            .values(others.map((message_id) => ({ user_id: me.id, message_id, flags: HISTORICAL_FLAGS })))
            .execute();
          own.clear();
          ids.forEach((id) => own.add(id));
        }
        let targets = [...own];
        if (bit === FLAG.read && p.op === 'remove') {
          const kept = await skipUnsubscribed(trx, me, targets);
          targets = kept.ids;
          out.ignored_because_not_subscribed_channels = kept.channels;
        }
        await setFlag(trx, me.id, targets, bit, p.op === 'add');
        changed = targets;
        return out;
      });
    return events.write(work, () => flagsNotice(me.id, p.op, p.flag, changed));
  },
});

export const updateMessageFlagsForNarrow = defineEndpoint({
  method: 'POST',
  path: '/messages/flags/narrow',
  summary: 'Update personal message flags for narrow',
  auth: 'user',
  params: Type.Object({
    anchor: Type.String(),
    include_anchor: Type.Boolean({ default: true }),
    num_before: Type.Integer({ minimum: 0 }),
    num_after: Type.Integer({ minimum: 0 }),
    narrow: Type.Array(NarrowTerm),
    op: Op,
    flag: Type.String(),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const bit = flagBit(p.flag);
    const { db } = call.services;
    const anchor = parseAnchor(p.anchor);
    // As Zulip: the anchor may be left out only at an end of the range, not from its middle.
    if (p.num_before > 0 && p.num_after > 0 && !p.include_anchor) throw anchorExcludedMidRange();
    const narrow = await buildNarrow(db.kysely, db.engine, call.realm.id, me, readNarrow(p.narrow as RawNarrow));
    // Only the user's own copies are updated, so shared history stays out of the range; the server
    // may shrink the range to bound the transaction, as Zulip's description allows.
    const window = {
      anchor,
      numBefore: Math.min(p.num_before, MAX_MESSAGES_PER_FETCH),
      numAfter: Math.min(p.num_after, MAX_MESSAGES_PER_FETCH),
      includeAnchor: p.include_anchor,
    };
    let changed: number[] = [];
    const work = () =>
      db.transaction(async (trx) => {
        const found = await fetchWindow(trx, call.realm.id, me, { ...narrow, history: false }, window);
        const out: Record<string, unknown> = {
          processed_count: found.ids.length,
          updated_count: 0,
          first_processed_id: found.ids[0] ?? null,
          last_processed_id: found.ids.at(-1) ?? null,
          found_oldest: found.found_oldest,
          found_newest: found.found_newest,
        };
        let targets = found.ids;
        if (bit === FLAG.read && p.op === 'remove') {
          const kept = await skipUnsubscribed(trx, me, targets);
          targets = kept.ids;
          out.ignored_because_not_subscribed_channels = kept.channels;
        }
        out.updated_count = await setFlag(trx, me.id, targets, bit, p.op === 'add');
        changed = targets;
        return out;
      });
    return call.services.events.write(work, () => flagsNotice(me.id, p.op, p.flag, changed));
  },
});

/** Marks the user's unread copies matching `where` as read, and tells their clients which. */
async function markRead(services: ChatServices, userId: number, where: ReturnType<typeof sql>): Promise<void> {
  let ids: number[] = [];
  await services.events.write(
    () =>
      services.db.transaction(async (trx) => {
        ids = await unreadIds(trx, userId, where);
        await setFlag(trx, userId, ids, FLAG.read, true);
      }),
    () => flagsNotice(userId, 'add', 'read', ids),
  );
}

export const markAllAsRead = defineEndpoint({
  method: 'POST',
  path: '/mark_all_as_read',
  summary: 'Mark all messages as read (deprecated)',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    await markRead(call.services, me.id, sql`1 = 1`);
    return { complete: true };
  },
});

async function accessibleChannel(db: Queryable<ChatTables>, realmId: number, me: ChatUser, streamId: number) {
  const stream = await streamById(db, realmId, streamId);
  if (!stream || !(await canAccessContent(db, me, stream))) throw invalidChannelId();
  return stream;
}

export const markStreamAsRead = defineEndpoint({
  method: 'POST',
  path: '/mark_stream_as_read',
  summary: 'Mark messages in a channel as read (deprecated)',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db } = call.services;
    const stream = await accessibleChannel(db.kysely, call.realm.id, me, p.stream_id);
    await markRead(call.services, me.id, sql`m.stream_id = ${stream.id}`);
    return {};
  },
});

export const markTopicAsRead = defineEndpoint({
  method: 'POST',
  path: '/mark_topic_as_read',
  summary: 'Mark messages in a topic as read (deprecated)',
  auth: 'user',
  params: Type.Object({ stream_id: Type.Integer(), topic_name: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db } = call.services;
    const stream = await accessibleChannel(db.kysely, call.realm.id, me, p.stream_id);
    const topic = normaliseTopic(p.topic_name);
    const any = await db.kysely.selectFrom('messages').select('id').where('stream_id', '=', stream.id).where(sql`lower(topic)`, '=', topic.toLowerCase()).executeTakeFirst();
    if (!any) throw noSuchTopic({ topic: p.topic_name });
    await markRead(call.services, me.id, sql`m.stream_id = ${stream.id} and lower(m.topic) = ${topic.toLowerCase()}`);
    return {};
  },
});

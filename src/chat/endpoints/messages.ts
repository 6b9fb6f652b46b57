// Messages: send (channel or direct) and fetch (anchor window or ids, within a narrow).
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { missingAnchor, missingArgument, paramInvalid, tooManyMessages, anchorExcludedMidRange, unsupportedParameterCombination } from '../errors.js';
import { renderMessage } from '../domain/markdown.js';
import { loadMarkdownContext } from '../domain/mentions.js';
import { buildNarrow, readNarrow, type RawNarrow } from '../domain/narrow.js';
import { displayTopic, normaliseBody } from '../domain/topics.js';
import { fetchByIds, fetchWindow, idsMatching, LARGER_THAN_MAX_MESSAGE_ID, MAX_MESSAGES_PER_FETCH, matchFields, messageObjects, messagesJson, type Found, type Stored } from '../domain/messages.js';
import { unixSeconds } from '../../platform/clock.js';
import { messageNotice } from '../events/notices.js';
import { readableMessage } from '../domain/message-edits.js';
import { checkSpectatorNarrow, spectatorOf } from '../domain/spectators.js';
import { checkAddressee, composeOutgoing, sendTo } from '../domain/addressee.js';
import { claimNotices } from '../domain/uploads.js';

export const sendMessage = defineEndpoint({
  method: 'POST',
  path: '/messages',
  summary: 'Send a message',
  auth: 'user',
  params: Type.Object({
    type: Type.Union([Type.Literal('direct'), Type.Literal('channel'), Type.Literal('stream'), Type.Literal('private')]),
    to: Type.Union([Type.Integer(), Type.Array(Type.Integer()), Type.Array(Type.String()), Type.String()]),
    content: Type.String(),
    topic: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String()),
    queue_id: Type.Optional(Type.String()),
    local_id: Type.Optional(Type.String()),
    read_by_sender: Type.Optional(Type.Boolean()),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, clock, events } = call.services;
    // The message event goes out after the commit; the sending queue's copy carries local_id back.
    const echo = p.queue_id !== undefined && p.local_id !== undefined ? { queueId: p.queue_id, localId: p.local_id } : null;
    // Uploads the message claimed: an `attachment` update to the sender (Zulip's do_claim_attachments).
    const publish = async (stored: Stored) => [...(await messageNotice(db.kysely, call.realm, stored, echo)), ...(await claimNotices(db.kysely, call.realm.id, me.id, stored.claimed))];
    const content = normaliseBody(p.content);
    const o = await composeOutgoing(db.kysely, call.realm, me, content, {
      client: call.client,
      // Zulip's default: people's own messages start read; a bot's (an API integration's) do not.
      readBySender: p.read_by_sender ?? me.is_bot !== 1,
      nowSeconds: unixSeconds(clock),
      realmUrl: call.services.realmUrl(call.realm),
    });
    const to = await checkAddressee(db.kysely, call.realm, me, p.type, p.to, p.topic ?? p.subject);
    return { id: (await events.write(() => sendTo(db, call.realm, me, to, o), publish)).message.id };
  },
});

export const NarrowTerm = Type.Union([
  Type.Object({
    operator: Type.String(),
    operand: Type.Union([Type.String(), Type.Integer(), Type.Array(Type.Integer()), Type.Array(Type.String())]),
    negated: Type.Optional(Type.Boolean()),
  }),
  Type.Array(Type.String(), { minItems: 2, maxItems: 2 }),
]);

/** anchor: an integer (clamped into 0..LARGER_THAN_MAX_MESSAGE_ID, so huge values mean "newest") or a name. */
export function parseAnchor(raw: string): number | null {
  if (raw === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (raw === 'oldest') return 0;
  if (raw === 'first_unread') return null;
  if (!/^-?\d+$/.test(raw.trim())) throw paramInvalid({ name: 'anchor', var_name: 'anchor' });
  return Math.max(0, Math.min(Number(raw), LARGER_THAN_MAX_MESSAGE_ID));
}

/**
 * GET /messages, also for spectators: without credentials, only a query that says it is web-public
 * (domain/spectators.ts checkSpectatorNarrow), answered as for a guest who holds nothing, from the
 * web-public channels alone, every message read.
 */
export const getMessages = defineEndpoint({
  method: 'GET',
  path: '/messages',
  summary: 'Get messages',
  auth: 'spectator',
  params: Type.Object({
    anchor: Type.Optional(Type.String()),
    include_anchor: Type.Optional(Type.Boolean()),
    num_before: Type.Optional(Type.Integer({ minimum: 0 })),
    num_after: Type.Optional(Type.Integer({ minimum: 0 })),
    narrow: Type.Array(NarrowTerm, { default: [] }),
    client_gravatar: Type.Boolean({ default: true }),
    apply_markdown: Type.Boolean({ default: true }),
    use_first_unread_anchor: Type.Optional(Type.Boolean()),
    message_ids: Type.Optional(Type.Array(Type.Integer())),
    allow_empty_topic_name: Type.Boolean({ default: false }),
  }),
  async handler(call, p) {
    const db = call.services.db.kysely;
    let me = call.user;
    if (!me) {
      await checkSpectatorNarrow(db, call.realm, readNarrow(p.narrow as RawNarrow));
      me = spectatorOf(call.realm);
    }
    const narrow = await call.services.caches.narrow(call.realm.id, me, p.narrow as RawNarrow);
    let found: Found;
    if (p.message_ids !== undefined) {
      const clash = (['anchor', 'include_anchor', 'use_first_unread_anchor', 'num_before', 'num_after'] as const).filter((k) => p[k] !== undefined);
      if (clash.length) {
        const names = ['message_ids', ...clash].join(', ');
        throw unsupportedParameterCombination({ names });
      }
      found = await fetchByIds(db, call.realm.id, me, narrow, p.message_ids);
    } else {
      if (p.num_before === undefined) throw missingArgument({ var_name: 'num_before' });
      if (p.num_after === undefined) throw missingArgument({ var_name: 'num_after' });
      if (p.num_before + p.num_after > MAX_MESSAGES_PER_FETCH) throw tooManyMessages({ max: MAX_MESSAGES_PER_FETCH });
      if (p.num_before > 0 && p.num_after > 0 && p.include_anchor === false) throw anchorExcludedMidRange();
      // use_first_unread_anchor wins over anchor: clients send both (anchor=0 with it set).
      if (!p.use_first_unread_anchor && p.anchor === undefined) throw missingAnchor();
      const anchor = p.use_first_unread_anchor ? null : parseAnchor(p.anchor!);
      found = await fetchWindow(db, call.realm.id, me, narrow, { anchor, numBefore: p.num_before, numAfter: p.num_after, includeAnchor: p.include_anchor ?? true });
    }
    const messages = await messagesJson(call.services.db, call.services.caches, call.realm, me, found.matches, {
      applyMarkdown: p.apply_markdown,
      clientGravatar: p.client_gravatar,
      allowEmptyTopicName: p.allow_empty_topic_name,
      search: narrow.search,
    });
    const out: Record<string, unknown> = { messages };
    if (found.anchor !== undefined) {
      Object.assign(out, { anchor: found.anchor, found_anchor: found.found_anchor, found_newest: found.found_newest, found_oldest: found.found_oldest });
    }
    out.history_limited = false;
    return out;
  },
});

export const matchesNarrow = defineEndpoint({
  method: 'GET',
  path: '/messages/matches_narrow',
  summary: 'Check if messages match a narrow',
  auth: 'user',
  params: Type.Object({
    msg_ids: Type.Array(Type.Integer()),
    narrow: Type.Array(NarrowTerm),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    const narrow = await buildNarrow(db, call.services.db.engine, call.realm.id, me, readNarrow(p.narrow as RawNarrow));
    const ids = await idsMatching(db, call.realm.id, me, narrow, [...new Set(p.msg_ids)]);
    const messages: Record<string, { match_content: string; match_subject: string }> = {};
    if (ids.length) {
      const rows = await db.selectFrom('messages').select(['id', 'topic', 'rendered_content', 'stream_id']).where('id', 'in', ids).orderBy('id').execute();
      // The topic as GET /messages shows it to clients that did not ask for empty topic names.
      for (const r of rows) messages[String(r.id)] = matchFields(r.rendered_content, r.stream_id === null ? '' : displayTopic(r.topic, false), narrow.search);
    }
    return { messages };
  },
});

export const getMessage = defineEndpoint({
  method: 'GET',
  path: '/messages/{message_id}',
  summary: 'Fetch a single message',
  auth: 'user',
  params: Type.Object({
    message_id: Type.Integer(),
    apply_markdown: Type.Boolean({ default: true }),
    allow_empty_topic_name: Type.Boolean({ default: false }),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    // Readable means received, or in a channel whose shared history the user may read.
    const raw = await readableMessage(db, call.realm.id, me, p.message_id);
    const [message] = await messageObjects(db, call.realm, me, [raw.id], { applyMarkdown: p.apply_markdown, clientGravatar: false, allowEmptyTopicName: p.allow_empty_topic_name });
    return { raw_content: raw.content, message };
  },
});

export const renderMessageEndpoint = defineEndpoint({
  method: 'POST',
  path: '/messages/render',
  summary: 'Render a message',
  auth: 'user',
  params: Type.Object({ content: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const ctx = await loadMarkdownContext(call.services.db.kysely, call.realm.id, me, p.content, call.services.realmUrl(call.realm));
    return { rendered: renderMessage(p.content, ctx).html };
  },
});

// Real-time events: POST /register (an event queue plus the initial state, read so that no event is
// lost or doubled), GET /events (long-polling), DELETE /events.
import Type from 'typebox';
import { defineEndpoint, LATER, requireUser, type LateAnswer } from '../endpoint.js';
import {
  anonymousParameter,
  eventsMissingLastEventId,
  eventsMissingQueueId,
  invalidApiKey,
  notAuthorizedForQuery,
  notLoggedIn,
  queueNarrowOperand,
  queueNarrowOperator,
  realmDeactivated,
  userDeactivated,
  type ChatError,
} from '../errors.js';
import type { Queryable } from '../../platform/db/database.js';
import { readNarrow, type NarrowTerm, type RawNarrow } from '../domain/narrow.js';
import { isGuest } from '../domain/roles.js';
import { NarrowTerm as NarrowParam } from './messages.js';
import { eventsJsonPieces, MAX_LIFESPAN_SECS, QUEUE_NARROW_IS, QUEUE_NARROW_OPERATORS, type QueuedEvent, type QueueOptions, type Waiter } from '../events/queue.js';
import { initialState, SUPPORTED_STATE } from '../events/state.js';
import { spectatorOf, webPublicAccess } from '../domain/spectators.js';
import type { ChatTables, ChatUser } from '../tables.js';

function checkQueueNarrow(terms: NarrowTerm[]): NarrowTerm[] {
  for (const t of terms) {
    if (!QUEUE_NARROW_OPERATORS.has(t.operator)) throw queueNarrowOperator({ operator: t.operator });
    if (t.operator === 'is' && !QUEUE_NARROW_IS.has(String(t.operand).toLowerCase())) throw queueNarrowOperand({ operand: String(t.operand) });
  }
  return terms;
}

/**
 * POST /register. Without credentials (a spectator, where the realm allows them: spectators.ts) it
 * makes no queue (queue_id null, last_event_id -1) and returns what anyone may see; client_gravatar
 * and include_subscribers may not be true then (Zulip's errors since feature level 149).
 */
export const registerQueue = defineEndpoint({
  method: 'POST',
  path: '/register',
  summary: 'Register an event queue',
  auth: 'spectator',
  params: Type.Object({
    apply_markdown: Type.Boolean({ default: false }),
    // True by default for users, false for spectators.
    client_gravatar: Type.Optional(Type.Boolean()),
    include_subscribers: Type.Boolean({ default: false }),
    slim_presence: Type.Boolean({ default: false }),
    presence_history_limit_days: Type.Optional(Type.Integer()),
    event_types: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    all_public_streams: Type.Boolean({ default: false }),
    // notification_settings_null is required when client_capabilities is sent, as in Zulip (made
    // required by accident in 2.1, kept so for compatibility); any other key is a boolean.
    client_capabilities: Type.Object({ notification_settings_null: Type.Boolean() }, { additionalProperties: Type.Boolean(), default: { notification_settings_null: false } }),
    fetch_event_types: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    narrow: Type.Array(NarrowParam, { default: [] }),
    // Zulip's documentation_pending parameter: how long the queue may go unpolled (0: the server's
    // idle expiry; at most a week).
    queue_lifespan_secs: Type.Integer({ minimum: 0, default: 0 }),
  }),
  async handler(call, p) {
    const { db, events, clock } = call.services;
    // A spectator's refusals come first, as in Zulip's events_register_backend.
    if (!call.user) {
      if (!(await webPublicAccess(db.kysely, call.realm))) throw notLoggedIn();
      if (p.client_gravatar) throw anonymousParameter({ name: 'client_gravatar' });
      if (p.include_subscribers) throw anonymousParameter({ name: 'include_subscribers' });
    }
    const narrow = checkQueueNarrow(readNarrow(p.narrow as RawNarrow));
    const eventTypes = p.event_types ?? null;
    // fetch_event_types defaults to event_types, and both to everything.
    const fetchTypes = p.fetch_event_types ?? eventTypes;
    const fetch = new Set<string>(fetchTypes === null ? SUPPORTED_STATE : fetchTypes);
    const capabilities = p.client_capabilities as Record<string, boolean>;
    const stateOf = (me: ChatUser, clientGravatar: boolean) =>
      initialState(db.kysely, {
        realm: call.realm,
        realmUrl: call.services.realmUrl(call.realm),
        me,
        fetch,
        clientGravatar,
        includeSubscribers: p.include_subscribers,
        emptyTopicName: capabilities.empty_topic_name === true,
        capabilities,
        nowMs: clock.now(),
        presence: call.services.presence,
        apiKeySeal: call.services.apiKeySeal,
        pushEnabled: call.services.push !== undefined,
        slimPresence: p.slim_presence,
        presenceHistoryLimitDays: p.presence_history_limit_days,
        userSettingsObject: capabilities.user_settings_object === true,
        maxFileUploadMib: call.services.maxFileUploadMib,
      });
    if (!call.user) return { queue_id: null, last_event_id: -1, ...(await stateOf(spectatorOf(call.realm), false)) };
    const me = call.user;
    const clientGravatar = p.client_gravatar ?? true;
    if (p.all_public_streams && isGuest(me.role)) throw notAuthorizedForQuery();
    return events.gate.snapshot(async () => {
      // The credentials were read before the gate let this in: a deactivation (of the user or the
      // realm) or a new key committed meanwhile (which ended the queues) must not be followed by a
      // new queue.
      await checkStillAuthorized(db.kysely, me);
      const queue = events.create({
        userId: me.id,
        realmId: call.realm.id,
        eventTypes: eventTypes === null ? null : new Set(eventTypes),
        narrow,
        allPublicStreams: p.all_public_streams,
        applyMarkdown: p.apply_markdown,
        clientGravatar,
        capabilities,
        lifespanSecs: lifespan(p.queue_lifespan_secs),
      });
      try {
        const state = await stateOf(me, clientGravatar);
        return { queue_id: queue.id, last_event_id: queue.lastEventId, ...state };
      } catch (err) {
        events.remove(queue);
        throw err;
      }
    });
  },
});

/** A requested lifespan as a queue keeps it: 0 (the server's default) or at most a week. */
function lifespan(secs: number): number {
  return Math.min(secs, MAX_LIFESPAN_SECS);
}

/** The user is still active, in an active realm, with the key the request was authenticated by (read from the store, not the cache). */
async function checkStillAuthorized(db: Queryable<ChatTables>, me: ChatUser): Promise<void> {
  const now = await db
    .selectFrom('chat_users')
    .innerJoin('realms', 'realms.id', 'chat_users.realm_id')
    .select(['chat_users.is_active', 'chat_users.api_key_hash', 'realms.deactivated'])
    .where('chat_users.id', '=', me.id)
    .executeTakeFirst();
  if (!now || now.api_key_hash !== me.api_key_hash) throw invalidApiKey();
  if (now.deactivated === 1) throw realmDeactivated();
  if (now.is_active !== 1) throw userDeactivated();
}

/** The client capabilities a queue registered by GET /events may carry (Zulip's get_events_backend takes each as its own parameter). */
const ON_THE_FLY_CAPABILITIES = [
  'bulk_message_deletion',
  'stream_typing_notifications',
  'user_settings_object',
  'linkifier_url_template',
  'user_list_incomplete',
  'include_deactivated_groups',
  'archived_channels',
  'empty_topic_name',
] as const;

/**
 * GET /events. With queue_id: the queue's events after last_event_id (which it requires), at once
 * or when one comes. Without queue_id but with dont_block, as Zulip does: a new queue (no initial
 * state) from the register parameters sent here, answered with its queue_id and no events.
 */
export const getEvents = defineEndpoint({
  method: 'GET',
  path: '/events',
  summary: 'Get events from an event queue',
  auth: 'user',
  params: Type.Object({
    queue_id: Type.Optional(Type.String()),
    last_event_id: Type.Optional(Type.Integer()),
    dont_block: Type.Boolean({ default: false }),
    // Read only when registering on the fly (no queue_id); all_public_streams is refused to guests either way.
    apply_markdown: Type.Boolean({ default: false }),
    client_gravatar: Type.Boolean({ default: false }),
    all_public_streams: Type.Boolean({ default: false }),
    event_types: Type.Optional(Type.Array(Type.String())),
    narrow: Type.Array(NarrowParam, { default: [] }),
    lifespan_secs: Type.Integer({ minimum: 0, default: 0 }),
    ...(Object.fromEntries(ON_THE_FLY_CAPABILITIES.map((c) => [c, Type.Boolean({ default: false })])) as Record<(typeof ON_THE_FLY_CAPABILITIES)[number], ReturnType<typeof Type.Boolean>>),
  }),
  async handler(call, p) {
    const { events } = call.services;
    const me = requireUser(call);
    // Zulip's order: the guest check, then the missing arguments, then the queue.
    if (p.all_public_streams && isGuest(me.role)) throw notAuthorizedForQuery();
    if (p.queue_id === undefined) {
      if (!p.dont_block) throw eventsMissingQueueId();
      const capabilities: Record<string, boolean> = {};
      for (const c of ON_THE_FLY_CAPABILITIES) if (p[c]) capabilities[c] = true;
      const options: QueueOptions = {
        userId: me.id,
        realmId: call.realm.id,
        eventTypes: p.event_types === undefined ? null : new Set(p.event_types),
        narrow: checkQueueNarrow(readNarrow(p.narrow as RawNarrow)),
        allPublicStreams: p.all_public_streams,
        applyMarkdown: p.apply_markdown,
        clientGravatar: p.client_gravatar,
        capabilities,
        lifespanSecs: lifespan(p.lifespan_secs),
      };
      // As register does: no queue for credentials revoked since this request was authenticated.
      const queue = await events.gate.snapshot(async () => {
        await checkStillAuthorized(call.services.db.kysely, me);
        return events.create(options);
      });
      const waiter = new PollWaiter(queue.id);
      waiter.answer = call.later(() => events.abandon(queue, waiter));
      events.poll(queue, undefined, true, waiter);
      return LATER;
    }
    if (p.last_event_id === undefined) throw eventsMissingLastEventId();
    const queue = events.queueOf(p.queue_id, me.id, call.realm.id);
    queue.checkAcknowledgement(p.last_event_id);
    const waiter = new PollWaiter(queue.id);
    waiter.answer = call.later(() => events.abandon(queue, waiter));
    // As Zulip: an answer given at once from an existing queue does not name it; one given later
    // (a parked poll woken or ended) does.
    waiter.namesQueue = false;
    events.poll(queue, p.last_event_id, p.dont_block, waiter);
    waiter.namesQueue = true;
    return LATER;
  },
});

/**
 * A poll, answered from the queue's shared, pre-serialized events; while parked it holds only the
 * late answer (a class, not an object literal per poll: a thousand re-polls follow every message).
 */
class PollWaiter implements Waiter {
  answer: LateAnswer | undefined;
  /** Whether the answer carries queue_id (false while poll() may answer at once: see getEvents). */
  namesQueue = true;
  private readonly queueId: string;

  constructor(queueId: string) {
    this.queueId = queueId;
  }

  deliver(events: readonly QueuedEvent[]): void {
    const fields: (string | Buffer)[] = ['"events":'];
    eventsJsonPieces(events, fields);
    if (this.namesQueue) fields.push(`,"queue_id":${JSON.stringify(this.queueId)}`);
    this.answer!.send(fields);
  }

  fail(error: ChatError): void {
    this.answer!.fail(error);
  }
}

export const deleteQueue = defineEndpoint({
  method: 'DELETE',
  path: '/events',
  summary: 'Delete an event queue',
  auth: 'user',
  params: Type.Object({ queue_id: Type.String() }),
  async handler(call, p) {
    const { events } = call.services;
    events.remove(events.queueOf(p.queue_id, requireUser(call).id, call.realm.id));
    return {};
  },
});

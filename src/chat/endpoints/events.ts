// Real-time events: POST /register (an event queue plus the initial state, read so that no event is
// lost or doubled), GET /events (long-polling), DELETE /events.
import Type from 'typebox';
import { defineEndpoint, LATER, requireUser, type LateAnswer } from '../endpoint.js';
import { badRequest } from '../errors.js';
import { readNarrow, type NarrowTerm, type RawNarrow } from '../domain/narrow.js';
import { isGuest } from '../domain/roles.js';
import { NarrowTerm as NarrowParam } from './messages.js';
import { eventsJsonPieces, QUEUE_NARROW_IS, QUEUE_NARROW_OPERATORS, type QueuedEvent, type Waiter } from '../events/queue.js';
import { initialState, SUPPORTED_STATE } from '../events/state.js';

function checkQueueNarrow(terms: NarrowTerm[]): NarrowTerm[] {
  for (const t of terms) {
    if (!QUEUE_NARROW_OPERATORS.has(t.operator)) throw badRequest(`Operator ${t.operator} not supported.`);
    if (t.operator === 'is' && !QUEUE_NARROW_IS.has(String(t.operand).toLowerCase())) throw badRequest(`Operand ${String(t.operand)} not supported.`);
  }
  return terms;
}

export const registerQueue = defineEndpoint({
  method: 'POST',
  path: '/register',
  summary: 'Register an event queue',
  auth: 'user',
  params: Type.Object({
    apply_markdown: Type.Boolean({ default: false }),
    client_gravatar: Type.Boolean({ default: true }),
    include_subscribers: Type.Boolean({ default: false }),
    slim_presence: Type.Boolean({ default: false }),
    presence_history_limit_days: Type.Optional(Type.Integer()),
    event_types: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    all_public_streams: Type.Boolean({ default: false }),
    client_capabilities: Type.Record(Type.String(), Type.Boolean(), { default: {} }),
    fetch_event_types: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    narrow: Type.Array(NarrowParam, { default: [] }),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, clock } = call.services;
    if (p.all_public_streams && isGuest(me.role)) throw badRequest('User not authorized for this query');
    const narrow = checkQueueNarrow(readNarrow(p.narrow as RawNarrow));
    const eventTypes = p.event_types ?? null;
    // fetch_event_types defaults to event_types, and both to everything.
    const fetchTypes = p.fetch_event_types ?? eventTypes;
    const fetch = new Set<string>(fetchTypes === null ? SUPPORTED_STATE : fetchTypes);
    const capabilities = p.client_capabilities;
    return events.gate.snapshot(async () => {
      const queue = events.create({
        userId: me.id,
        realmId: call.realm.id,
        eventTypes: eventTypes === null ? null : new Set(eventTypes),
        narrow,
        allPublicStreams: p.all_public_streams,
        applyMarkdown: p.apply_markdown,
        clientGravatar: p.client_gravatar,
        capabilities,
      });
      try {
        const state = await initialState(db.kysely, {
          realm: call.realm, realmUrl: call.services.realmUrl(call.realm), me, fetch, clientGravatar: p.client_gravatar, includeSubscribers: p.include_subscribers,
          emptyTopicName: capabilities.empty_topic_name === true, capabilities, nowMs: clock.now(),
          presence: call.services.presence, slimPresence: p.slim_presence, presenceHistoryLimitDays: p.presence_history_limit_days,
          userSettingsObject: capabilities.user_settings_object === true,
        });
        return { queue_id: queue.id, last_event_id: queue.lastEventId, ...state };
      } catch (err) {
        events.remove(queue);
        throw err;
      }
    });
  },
});

export const getEvents = defineEndpoint({
  method: 'GET',
  path: '/events',
  summary: 'Get events from an event queue',
  auth: 'user',
  params: Type.Object({
    queue_id: Type.String(),
    last_event_id: Type.Optional(Type.Integer()),
    dont_block: Type.Boolean({ default: false }),
  }),
  async handler(call, p) {
    const { events } = call.services;
    const queue = events.queueOf(p.queue_id, requireUser(call).id, call.realm.id);
    const waiter = new PollWaiter(queue.id);
    waiter.answer = call.later(() => events.abandon(queue, waiter));
    events.poll(queue, p.last_event_id, p.dont_block, waiter);
    return LATER;
  },
});

/**
 * A poll, answered from the queue's shared, pre-serialized events; while parked it holds only the
 * late answer (a class, not an object literal per poll: a thousand re-polls follow every message).
 */
class PollWaiter implements Waiter {
  answer: LateAnswer | undefined;
  private readonly queueId: string;

  constructor(queueId: string) {
    this.queueId = queueId;
  }

  deliver(events: readonly QueuedEvent[]): void {
    const fields: (string | Buffer)[] = ['"events":'];
    eventsJsonPieces(events, fields);
    fields.push(`,"queue_id":${JSON.stringify(this.queueId)}`);
    this.answer!.send(fields);
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

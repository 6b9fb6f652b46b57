// One event queue: what a registration asked for (event types, narrow, all_public_streams, client
// capabilities, presentation), the events waiting for the client, and at most one parked poll.
import type { NarrowTerm } from '../domain/narrow.js';
import { eventAlreadyPruned, eventNotInQueue, type ChatError } from '../errors.js';

/** An event as a client receives it. */
export type WireEvent = Record<string, unknown> & { id: number; type: string };
/** An event as published: everything but the id, which each queue gives it. */
export type EventBody = Record<string, unknown> & { type: string };

/**
 * One rendering of an event, shared by every queue that receives exactly it (a message to a channel
 * reaches a thousand queues as a handful of renderings) and serialized once: a queue holds it with
 * its own id, spliced in front of the JSON when an answer is written. Never changed once made.
 */
export class SharedEvent {
  readonly body: EventBody;
  private tail: string | undefined;
  private tailUtf8: Buffer | undefined;

  /** `tail`, when the caller has it already: jsonTail() of this body. */
  constructor(body: EventBody, tail?: string) {
    this.body = body;
    this.tail = tail;
  }

  /** The body's JSON after its opening brace (a body always has `type`, so it is never `}` alone). */
  jsonTail(): string {
    return (this.tail ??= JSON.stringify(this.body).slice(1));
  }

  /** jsonTail() in UTF-8, encoded once for every answer that carries it (answers are written as bytes). */
  jsonTailBytes(): Buffer {
    return (this.tailUtf8 ??= Buffer.from(this.jsonTail()));
  }
}

/** An event waiting in one queue: its id there and the shared rendering. */
export class QueuedEvent {
  readonly id: number;
  readonly shared: SharedEvent;

  constructor(id: number, shared: SharedEvent) {
    this.id = id;
    this.shared = shared;
  }

  get type(): string {
    return this.shared.body.type;
  }

  /** The event's JSON as the client receives it, `id` first. */
  json(): string {
    return `{"id":${this.id},${this.shared.jsonTail()}`;
  }

  wire(): WireEvent {
    return { ...this.shared.body, id: this.id };
  }
}

/** The JSON array of events, as a saved queue carries them. */
export function eventsJson(events: readonly QueuedEvent[]): string {
  let out = '[';
  for (let i = 0; i < events.length; i++) out += (i ? ',' : '') + events[i].json();
  return out + ']';
}

/**
 * eventsJson() as pieces to write one after another, each event's shared part as its UTF-8 bytes:
 * the thousand answers that carry one message copy those bytes instead of each building, and
 * encoding, a string of it.
 */
export function eventsJsonPieces(events: readonly QueuedEvent[], pieces: (string | Buffer)[]): void {
  for (let i = 0; i < events.length; i++) pieces.push(`${i ? ',' : '['}{"id":${events[i].id},`, events[i].shared.jsonTailBytes());
  pieces.push(events.length ? ']' : '[]');
}

/** What a message event's filter looks at, known without a database read. */
export interface MessageFacts {
  streamId: number | null;
  /** The channel's name (lower case), for channel/stream narrows. */
  streamName: string | null;
  topic: string;
  senderId: number;
  senderEmail: string;
  /** Everyone in a direct conversation. */
  directUserIds: number[] | null;
}

export interface QueueOptions {
  userId: number;
  /** Saved with the queue across a restart (persist.ts). */
  realmId: number;
  eventTypes: Set<string> | null;
  narrow: NarrowTerm[];
  allPublicStreams: boolean;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  capabilities: Record<string, boolean>;
  /**
   * How long the queue may go unpolled before it is discarded, in seconds, as the client asked
   * (register's queue_lifespan_secs, GET /events' lifespan_secs, at most MAX_LIFESPAN_SECS); absent
   * or 0: the server's idle expiry (hub.ts HubTimings.idleMs).
   */
  lifespanSecs?: number;
}

/** Zulip's MAX_QUEUE_TIMEOUT_SECS: a client may ask a queue to live a week unpolled, no longer. */
export const MAX_LIFESPAN_SECS = 7 * 24 * 60 * 60;

/** Whoever waits for a queue's events: a parked long-poll. */
export interface Waiter {
  /**
   * Called once, with the events to answer with (none: the poll ends empty). The list is the queue's
   * own: read it at once, it changes with the next event.
   */
  deliver(events: readonly QueuedEvent[]): void;
  /** Called instead of deliver when the queue ended under the poll (BAD_EVENT_QUEUE_ID): answers with the error. */
  fail(error: ChatError): void;
}

const NO_EVENTS: readonly QueuedEvent[] = [];

export class EventQueue {
  readonly id: string;
  readonly options: QueueOptions;
  /** Events not yet acknowledged, in id order. */
  events: QueuedEvent[] = [];
  nextId = 0;
  /** The highest id the client acknowledged (-1: none); kept so a restored queue is the same queue. */
  acknowledgedId = -1;
  /** Clock milliseconds of the registration or the last poll: expiry counts from here. */
  lastActivity: number;
  /** The parked poll, if any, and when its heartbeat is due (clock milliseconds). */
  parked: Waiter | null = null;
  heartbeatAt = 0;
  /** The heartbeat slot (hub.ts) this queue was last filed under, so a re-park in the same slot files it once. */
  heartbeatSlot = -1;

  constructor(id: string, options: QueueOptions, now: number) {
    this.id = id;
    this.options = options;
    this.lastActivity = now;
  }

  get lastEventId(): number {
    return this.nextId - 1;
  }

  /** Adds an event, numbered by this queue, and hands everything pending to a parked poll. */
  push(event: EventBody | SharedEvent): void {
    this.add(event instanceof SharedEvent ? event : new SharedEvent(event));
    this.wake();
  }

  /** Adds an event without waking the poll: the hub wakes each queue once a whole publish is in. */
  add(event: SharedEvent): void {
    this.events.push(new QueuedEvent(this.nextId++, event));
  }

  /**
   * Zulip's refusals of an acknowledgement (fetch_events): below what the queue already forgot, or
   * an id it never gave out. Ids are consecutive here, so every id between the two is one the client
   * was sent. Checked before anything is forgotten.
   */
  checkAcknowledgement(lastEventId: number): void {
    if (lastEventId < this.acknowledgedId) throw eventAlreadyPruned({ event_id: lastEventId });
    if (lastEventId > this.lastEventId) throw eventNotInQueue({ event_id: lastEventId });
  }

  /** Forgets the events the client acknowledged (ids up to lastEventId). */
  acknowledge(lastEventId: number): void {
    if (lastEventId > this.acknowledgedId) this.acknowledgedId = Math.min(lastEventId, this.lastEventId);
    // In place, and usually all of them: the events are in id order.
    let done = 0;
    while (done < this.events.length && this.events[done].id <= lastEventId) done++;
    if (done) this.events.splice(0, done);
  }

  wake(): void {
    const poll = this.parked;
    if (!poll || !this.events.length) return;
    this.parked = null;
    // The events stay queued until the next poll acknowledges them: an answer lost on the way
    // to a client that went away is sent again.
    poll.deliver(this.events);
  }

  /** Ends the parked poll, if any, with no events. */
  release(): void {
    const poll = this.parked;
    this.parked = null;
    poll?.deliver(NO_EVENTS);
  }

  /** Ends the parked poll, if any, with an error: the queue is gone (hub.ts discard). */
  fail(error: ChatError): void {
    const poll = this.parked;
    this.parked = null;
    poll?.fail(error);
  }

  wantsType(type: string): boolean {
    // A heartbeat reaches every queue: it is what keeps a parked poll from timing out.
    if (type === 'heartbeat') return true;
    const gate = CAPABILITY_GATED[type];
    if (gate && !gate(this.options.capabilities)) return false;
    return this.options.eventTypes === null || this.options.eventTypes.has(type);
  }

  /** Whether a message event (with this user's flags) passes the queue's narrow. */
  acceptsMessage(m: MessageFacts, flags: string[]): boolean {
    return this.options.narrow.every((t) => matchesTerm(t, m, flags) !== t.negated);
  }
}

/**
 * Event types a client capability turns on or off, whoever produces them: realm_linkifiers only for
 * clients that declared linkifier_url_template; the legacy settings events only for clients that did
 * not declare user_settings_object (the others get user_settings alone).
 */
const CAPABILITY_GATED: Record<string, (caps: Record<string, boolean>) => boolean> = {
  realm_linkifiers: (caps) => caps.linkifier_url_template === true,
  update_display_settings: (caps) => caps.user_settings_object !== true,
  update_global_notifications: (caps) => caps.user_settings_object !== true,
};

function matchesTerm(t: NarrowTerm, m: MessageFacts, flags: string[]): boolean {
  const operand = typeof t.operand === 'string' ? t.operand.trim().toLowerCase() : t.operand;
  switch (t.operator) {
    case 'stream':
    case 'channel':
      return typeof operand === 'number' ? m.streamId === operand : m.streamName !== null && m.streamName === operand;
    case 'topic':
    case 'subject':
      return m.streamId !== null && m.topic.toLowerCase() === operand;
    case 'sender':
      return typeof operand === 'number' ? m.senderId === operand : m.senderEmail.toLowerCase() === operand || String(m.senderId) === operand;
    case 'is':
      switch (operand) {
        case 'private':
        case 'dm':
          return m.directUserIds !== null;
        case 'mentioned':
          return flags.includes('mentioned') || flags.includes('wildcard_mentioned');
        case 'starred':
          return flags.includes('starred');
        case 'alerted':
          return flags.includes('has_alert_word');
        case 'unread':
          return !flags.includes('read');
        default:
          return false;
      }
    default:
      // Checked at registration: only the operators above reach a queue.
      return false;
  }
}

/** The narrow operators an event queue can filter on, checked when the queue is registered. */
export const QUEUE_NARROW_OPERATORS = new Set(['stream', 'channel', 'topic', 'subject', 'sender', 'is']);
export const QUEUE_NARROW_IS = new Set(['private', 'dm', 'mentioned', 'starred', 'alerted', 'unread']);

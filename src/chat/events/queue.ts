// One event queue: what a registration asked for (event types, narrow, all_public_streams, client
// capabilities, presentation), the events waiting for the client, and at most one parked poll.
import type { NarrowTerm } from '../domain/narrow.js';

export type WireEvent = Record<string, unknown> & { id: number; type: string };

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
}

export interface ParkedPoll {
  /** When the heartbeat is due (clock milliseconds). */
  deadline: number;
  resolve(events: WireEvent[]): void;
}

export class EventQueue {
  readonly id: string;
  readonly options: QueueOptions;
  /** Events not yet acknowledged, in id order. */
  events: WireEvent[] = [];
  nextId = 0;
  /** The highest id the client acknowledged (-1: none); kept so a restored queue is the same queue. */
  acknowledgedId = -1;
  /** Clock milliseconds of the registration or the last poll: expiry counts from here. */
  lastActivity: number;
  parked: ParkedPoll | null = null;

  constructor(id: string, options: QueueOptions, now: number) {
    this.id = id;
    this.options = options;
    this.lastActivity = now;
  }

  get lastEventId(): number {
    return this.nextId - 1;
  }

  /** Adds an event, numbered by this queue, and hands everything pending to a parked poll. */
  push(event: Record<string, unknown> & { type: string }): void {
    this.events.push({ ...event, id: this.nextId++ });
    this.wake();
  }

  /** Forgets the events the client acknowledged (ids up to lastEventId). */
  acknowledge(lastEventId: number): void {
    if (lastEventId > this.acknowledgedId) this.acknowledgedId = Math.min(lastEventId, this.lastEventId);
    if (this.events.length && this.events[0].id <= lastEventId) this.events = this.events.filter((e) => e.id > lastEventId);
  }

  wake(): void {
    const poll = this.parked;
    if (!poll || !this.events.length) return;
    this.parked = null;
    // The events stay queued until the next poll acknowledges them: an answer lost on the way
    // to a client that went away is sent again.
    poll.resolve([...this.events]);
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

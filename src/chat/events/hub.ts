// The in-process event bus and the registry of event queues: writes publish notices after their
// commit, each queue takes what its filters accept, parked long-polls wake; a sweep on the
// injectable clock sends heartbeats to polls parked too long and drops queues nobody polls.
// A publish renders each notice once per distinct rendering (render() returning the same object
// for several queues shares it, and its JSON, among them), so a message to a busy channel costs
// one serialization, not one per receiving queue. Parked polls are filed by heartbeat second, so
// the sweep looks only at the polls that are due.
// Queues are bounded (HubLimits): per user, per queue and in all; a queue past a bound is discarded
// and its client, told BAD_EVENT_QUEUE_ID, registers again (what Zulip's clients do on that error).
// A write that revokes credentials (deactivation, a new API key, a realm's deactivation) ends its
// users' (or realm's) queues as soon as it commits, before any later publish can reach them.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/log.js';
import { badEventQueueId } from '../errors.js';
import { EventQueue, MAX_LIFESPAN_SECS, SharedEvent, type EventBody, type MessageFacts, type QueueOptions, type Waiter } from './queue.js';
import { SnapshotGate } from './gate.js';

/** Something that happened, published once after its commit and rendered per receiving queue. */
export interface Notice {
  type: string;
  /** The users whose queues may receive it. */
  userIds: readonly number[];
  /**
   * The event as one queue receives it (without id); null leaves that queue out. Returning the same
   * object for queues that see the event alike shares it (and its serialization); it is never changed.
   */
  render(queue: EventQueue): EventBody | null;
  /**
   * Message events: what narrows filter on, the receivers' flags, and the public channel if any
   * (with its realm: all_public_streams queues of that realm only receive it).
   */
  message?: { facts: MessageFacts; flagsFor(userId: number): string[]; publicStreamId: number | null; realmId: number };
}

export interface HubTimings {
  /** A parked poll gets a heartbeat after this long (Zulip: under a minute). */
  heartbeatMs: number;
  /** A queue nobody polled for this long is discarded (Zulip: 10 minutes). */
  idleMs: number;
  /** How often the sweep runs on a real timer; 0 leaves it to whoever calls sweep() (tests). */
  sweepEveryMs: number;
}

export const DEFAULT_TIMINGS: HubTimings = { heartbeatMs: 50_000, idleMs: 10 * 60_000, sweepEveryMs: 1_000 };

/**
 * Bounds on what clients can make the hub hold. Zulip has none of these (only the 10-minute idle
 * expiry, kept above); without them one user could register queues, and let events pile up in
 * them, until the server ran out of memory.
 */
export interface HubLimits {
  /** Live queues per user; registering one more discards that user's least recently used queue. */
  maxQueuesPerUser: number;
  /** Unacknowledged events per queue; one more discards the queue. */
  maxEventsPerQueue: number;
  /** Live queues on this server; registering one more discards the least recently used queue. */
  maxQueues: number;
  /**
   * Unacknowledged events in all the queues of this server (a member's bots are users of their own,
   * each with its own queues); past it, the queue holding the most is discarded until under.
   */
  maxQueuedEvents: number;
}

export const DEFAULT_LIMITS: HubLimits = { maxQueuesPerUser: 50, maxEventsPerQueue: 2_000, maxQueues: 20_000, maxQueuedEvents: 250_000 };

/** Parked polls are filed by the second their heartbeat is due in. */
const HEARTBEAT_SLOT_MS = 1_000;
/** Idle queues are looked for this often (expiry is 10 minutes: seconds late do not matter). */
const IDLE_SCAN_EVERY_MS = 10_000;

const NO_FLAGS: string[] = [];

/** Whose credentials a write took away: users by id, or every user of a realm. */
export type Revoked = Iterable<number> | { realmId: number };

export class EventHub {
  readonly timings: HubTimings;
  readonly limits: HubLimits;
  readonly gate = new SnapshotGate();
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly queues = new Map<string, EventQueue>();
  private readonly byUser = new Map<number, Set<EventQueue>>();
  private readonly allPublic = new Set<EventQueue>();
  /** Heartbeat slot -> queues parked with a heartbeat due in it (some since re-parked or answered: checked when due). */
  private readonly heartbeats = new Map<number, EventQueue[]>();
  private lastIdleScan: number;
  /** Unacknowledged events in all the queues (counted where the hub adds and drops them). */
  private queuedEvents = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly synced: (() => Promise<void>) | undefined;

  /**
   * `synced` is the store's Database.synced, started as soon as a write commits: the flush that the
   * write's answers (and the polls it wakes) wait for then runs while its notices are read and
   * rendered, not after.
   */
  constructor(clock: Clock, log: Logger, options: Partial<HubTimings & HubLimits> = {}, synced?: () => Promise<void>) {
    this.clock = clock;
    this.log = log;
    this.synced = synced;
    const { heartbeatMs, idleMs, sweepEveryMs, maxQueuesPerUser, maxEventsPerQueue, maxQueues, maxQueuedEvents } = { ...DEFAULT_TIMINGS, ...DEFAULT_LIMITS, ...options };
    this.timings = { heartbeatMs, idleMs, sweepEveryMs };
    this.limits = { maxQueuesPerUser, maxEventsPerQueue, maxQueues, maxQueuedEvents };
    this.lastIdleScan = clock.now();
    if (this.timings.sweepEveryMs > 0) {
      this.timer = setInterval(() => this.sweep(), this.timings.sweepEveryMs);
      // The sweep alone must not keep a process alive.
      this.timer.unref();
    }
  }

  get size(): number {
    return this.queues.size;
  }

  /** Creates a queue; call it inside gate.snapshot() together with the state read. */
  create(options: QueueOptions): EventQueue {
    return this.adopt(new EventQueue(randomUUID(), options, this.clock.now()));
  }

  /**
   * Takes in a queue made elsewhere: one saved by the previous run (persist.ts). Past a bound on
   * queues, the least recently used one (the user's own first) is discarded to make room.
   */
  adopt(queue: EventQueue): EventQueue {
    let mine = this.byUser.get(queue.options.userId);
    if (mine && mine.size >= this.limits.maxQueuesPerUser) this.discard(leastRecentlyUsed(mine)!);
    if (this.queues.size >= this.limits.maxQueues) {
      const oldest = leastRecentlyUsed(this.queues.values());
      if (oldest) this.discard(oldest);
    }
    this.queues.set(queue.id, queue);
    mine = this.byUser.get(queue.options.userId);
    if (!mine) this.byUser.set(queue.options.userId, (mine = new Set()));
    mine.add(queue);
    if (queue.options.allPublicStreams) this.allPublic.add(queue);
    this.queuedEvents += queue.events.length;
    this.trimToTotal();
    return queue;
  }

  /** Every live queue, for saving at shutdown. */
  list(): EventQueue[] {
    return [...this.queues.values()];
  }

  /**
   * The caller's queue, or BAD_EVENT_QUEUE_ID (unknown, expired, another user's, or another realm's:
   * realms know nothing of each other). Endpoints always pass the realm; tests reaching into the hub
   * may leave it out.
   */
  queueOf(queueId: string, userId: number, realmId?: number): EventQueue {
    const queue = this.queues.get(queueId);
    // Another user's queue is answered as an unknown one, as Zulip 10 does (access_client_descriptor).
    if (!queue || queue.options.userId !== userId || (realmId !== undefined && queue.options.realmId !== realmId)) throw badEventQueueId({ queue_id: queueId });
    return queue;
  }

  /** Forgets a queue (DELETE /events, expiry); its parked poll, if any, ends empty. */
  remove(queue: EventQueue): void {
    this.forget(queue);
    queue.release();
  }

  /** Forgets a queue the client did not ask to end: its parked poll, if any, is answered BAD_EVENT_QUEUE_ID. */
  discard(queue: EventQueue): void {
    this.forget(queue);
    queue.fail(badEventQueueId({ queue_id: queue.id }));
  }

  private forget(queue: EventQueue): void {
    if (this.queues.delete(queue.id)) this.queuedEvents -= queue.events.length;
    this.byUser.get(queue.options.userId)?.delete(queue);
    if (this.byUser.get(queue.options.userId)?.size === 0) this.byUser.delete(queue.options.userId);
    this.allPublic.delete(queue);
  }

  /**
   * Ends every queue of these users at once (their credentials were revoked): parked polls are
   * answered BAD_EVENT_QUEUE_ID and nothing published from now on reaches them.
   */
  endQueuesOf(userIds: Iterable<number>): void {
    for (const userId of userIds) {
      for (const queue of [...(this.byUser.get(userId) ?? [])]) this.discard(queue);
    }
  }

  /** endQueuesOf for every user of a realm (for a realm's deactivation). */
  endRealmQueues(realmId: number): void {
    for (const queue of this.queues.values()) if (queue.options.realmId === realmId) this.discard(queue);
  }

  /**
   * Answers at once when events are pending or dont_block is set; otherwise parks the waiter until
   * an event or the heartbeat. A client that goes away calls abandon(), which keeps the events.
   */
  poll(queue: EventQueue, lastEventId: number | undefined, dontBlock: boolean, waiter: Waiter): void {
    const now = this.clock.now();
    queue.lastActivity = now;
    if (lastEventId !== undefined) {
      const before = queue.events.length;
      queue.acknowledge(lastEventId);
      this.queuedEvents -= before - queue.events.length;
    }
    // After close() nothing would wake a parked poll (the sweep is stopped) and the shutdown waits
    // for every request: a poll that got this far during it answers at once.
    if (queue.events.length || dontBlock || this.closed) {
      waiter.deliver(queue.events);
      return;
    }
    // One poll per queue: a newer one (a client that retried) replaces the older, which ends empty.
    queue.release();
    queue.parked = waiter;
    queue.heartbeatAt = now + this.timings.heartbeatMs;
    const slot = Math.floor(queue.heartbeatAt / HEARTBEAT_SLOT_MS);
    if (queue.heartbeatSlot !== slot) {
      queue.heartbeatSlot = slot;
      const due = this.heartbeats.get(slot);
      if (due) due.push(queue);
      else this.heartbeats.set(slot, [queue]);
    }
  }

  /** The client of a parked poll went away: the poll is freed, the events stay for the next one. */
  abandon(queue: EventQueue, waiter: Waiter): void {
    if (queue.parked !== waiter) return;
    queue.parked = null;
    // Idle time starts now, not at the poll's start.
    queue.lastActivity = this.clock.now();
  }

  /**
   * Runs a write and publishes its notices after it committed; see SnapshotGate for why both hold
   * the gate. `revokes` names the users whose credentials the write took away (deactivated, key
   * changed), or their realm (deactivated): their queues end right at the commit, before this or
   * any later publish.
   */
  write<T>(work: () => Promise<T>, notices: (result: T) => Promise<Notice[]> | Notice[], revokes?: (result: T) => Revoked): Promise<T> {
    return this.gate.write(async () => {
      const result = await work();
      if (revokes) {
        const revoked = revokes(result);
        if ('realmId' in revoked) this.endRealmQueues(revoked.realmId);
        else this.endQueuesOf(revoked);
      }
      // A failed flush is reported to every answer that waits for it.
      this.synced?.().catch(() => {});
      try {
        this.publish(await notices(result));
      } catch (err) {
        // The write is committed and its answer stands; clients resynchronise on their next register.
        this.log.error('chat events could not be published', { error: (err as Error).stack });
      }
      return result;
    });
  }

  publish(notices: Notice[]): void {
    // Each queue is woken once, with everything this publish gave it.
    const touched = new Set<EventQueue>();
    for (const n of notices) {
      const renderings = new Map<EventBody, SharedEvent>();
      const offer = (queue: EventQueue, flags: string[]) => {
        if (!queue.wantsType(n.type)) return;
        if (n.message && !queue.acceptsMessage(n.message.facts, flags)) return;
        const body = n.render(queue);
        if (!body) return;
        let shared = renderings.get(body);
        if (!shared) renderings.set(body, (shared = new SharedEvent(body)));
        queue.add(shared);
        this.queuedEvents++;
        touched.add(queue);
      };
      const receivers = new Set<number>(n.userIds);
      for (const userId of receivers) {
        const mine = this.byUser.get(userId);
        if (!mine) continue;
        const flags = n.message?.flagsFor(userId) ?? NO_FLAGS;
        for (const queue of mine) offer(queue, flags);
      }
      if (n.message?.publicStreamId != null) {
        for (const queue of this.allPublic) {
          if (queue.options.realmId === n.message.realmId && !receivers.has(queue.options.userId)) offer(queue, NO_FLAGS);
        }
      }
    }
    for (const queue of touched) {
      queue.wake();
      // Woken, a live client has what it missed; one that lets events pile up past the bound
      // re-registers instead of holding them here.
      if (queue.events.length > this.limits.maxEventsPerQueue) this.discard(queue);
    }
    this.trimToTotal();
  }

  /** Discards the queues holding the most events until the server's total is within maxQueuedEvents. */
  private trimToTotal(): void {
    while (this.queuedEvents > this.limits.maxQueuedEvents) {
      let fullest: EventQueue | undefined;
      for (const q of this.queues.values()) if (!fullest || q.events.length > fullest.events.length) fullest = q;
      // Nothing left to drop (the count can only run ahead of the queues through a bug): stop.
      if (!fullest || fullest.events.length === 0) return;
      this.discard(fullest);
    }
  }

  /** Heartbeats for polls parked past their deadline; discards queues idle past idleMs (looked for every 10 s). */
  sweep(): void {
    const now = this.clock.now();
    const current = Math.floor(now / HEARTBEAT_SLOT_MS);
    let beat: SharedEvent | undefined;
    const dueSlots = [...this.heartbeats.keys()].filter((slot) => slot <= current);
    for (const slot of dueSlots) {
      const queues = this.heartbeats.get(slot)!;
      this.heartbeats.delete(slot);
      for (const queue of queues) {
        if (queue.heartbeatSlot !== slot) continue; // filed again later, under that slot
        if (!queue.parked) {
          queue.heartbeatSlot = -1;
        } else if (now >= queue.heartbeatAt) {
          queue.heartbeatSlot = -1;
          queue.push((beat ??= new SharedEvent({ type: 'heartbeat' })));
          this.queuedEvents++;
        } else {
          // Due later within this second: filed again, for the next sweep.
          const due = this.heartbeats.get(current);
          queue.heartbeatSlot = current;
          if (due) due.push(queue);
          else this.heartbeats.set(current, [queue]);
        }
      }
    }
    if (now - this.lastIdleScan < IDLE_SCAN_EVERY_MS) return;
    this.lastIdleScan = now;
    // Deleting the entry being visited is safe while iterating a Map.
    for (const queue of this.queues.values()) {
      if (!queue.parked && now - queue.lastActivity >= this.lifespanMs(queue)) this.remove(queue);
    }
  }

  /** How long this queue may go unpolled: what its client asked for, else the server's idle expiry. */
  lifespanMs(queue: EventQueue): number {
    const asked = queue.options.lifespanSecs;
    return asked ? Math.min(asked, MAX_LIFESPAN_SECS) * 1000 : this.timings.idleMs;
  }

  /**
   * Ends every parked poll (so a shutdown does not wait for them) and stops the sweep. The queues
   * and their events stay, for persist.ts to save once the listener has stopped.
   */
  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const queue of this.queues.values()) queue.release();
    this.heartbeats.clear();
  }
}

/** The queue polled (or registered) longest ago. */
function leastRecentlyUsed(queues: Iterable<EventQueue>): EventQueue | undefined {
  let oldest: EventQueue | undefined;
  for (const q of queues) if (!oldest || q.lastActivity < oldest.lastActivity) oldest = q;
  return oldest;
}

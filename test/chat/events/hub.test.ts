// The event hub on its own (no server): one rendering shared among queues, each queue numbering
// it; one wake per publish; a newer poll ending the older; heartbeats filed by the second they
// are due in, moved by a re-park; ended polls and removed queues never beaten; the flush a write
// waits for started at its commit; answers written as pieces.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ChatError } from '../../../src/chat/errors.js';
import { EventHub, type Notice } from '../../../src/chat/events/hub.js';
import { eventsJson, eventsJsonPieces, type EventQueue, type QueuedEvent, type QueueOptions, type Waiter } from '../../../src/chat/events/queue.js';
import { ManualClock } from '../../../src/platform/clock.js';
import { createLogger } from '../../../src/platform/log.js';

const options = (userId: number, o: Partial<QueueOptions> = {}): QueueOptions => ({
  userId,
  realmId: 1,
  eventTypes: null,
  narrow: [],
  allPublicStreams: false,
  applyMarkdown: false,
  clientGravatar: true,
  capabilities: {},
  ...o,
});

function setup() {
  const clock = new ManualClock(Date.UTC(2025, 0, 1, 12, 0, 0, 250));
  const hub = new EventHub(clock, createLogger('error'), { sweepEveryMs: 0 });
  return { clock, hub };
}

/** A waiter that records what it was answered with (as the JSON a client would get). */
function waiter(): Waiter & { answers: string[] } {
  const answers: string[] = [];
  return {
    answers,
    deliver: (events: readonly QueuedEvent[]) => answers.push(eventsJson(events)),
    // Recorded as the error code, so a test tells an ended poll from an empty one.
    fail: (error) => answers.push(`error ${error.code}`),
  };
}

const notice = (userIds: number[], render: Notice['render'], type = 'custom'): Notice => ({ type, userIds, render });

it('shares one rendering (and its JSON) among the queues it reaches, each with its own id', () => {
  const { hub } = setup();
  const [q1, q2, q3] = [hub.create(options(1)), hub.create(options(2)), hub.create(options(2, { eventTypes: new Set(['other']) }))];
  q1.push({ type: 'heartbeat' }); // q1's numbering is one ahead
  const body = { type: 'custom', n: 1, nested: { s: 'é"\\' } };
  hub.publish([notice([1, 2], () => body)]);
  assert.equal(q1.events[1].shared, q2.events[0].shared, 'one shared event');
  assert.equal(q3.events.length, 0, 'event_types still filter');
  assert.deepEqual(JSON.parse(eventsJson(q1.events)), [
    { id: 0, type: 'heartbeat' },
    { id: 1, ...body },
  ]);
  assert.deepEqual(JSON.parse(eventsJson(q2.events)), [{ id: 0, ...body }]);
  // A render that makes a new object per queue is serialized per queue, as before.
  hub.publish([notice([1, 2], () => ({ type: 'custom', n: 2 }))]);
  assert.notEqual(q1.events[2].shared, q2.events[1].shared);
  assert.deepEqual(q2.events[1].wire(), { id: 1, type: 'custom', n: 2 });
});

it('wakes a parked poll once per publish, with all of it; a newer poll ends the older empty; abandon keeps the events', () => {
  const { hub } = setup();
  const q = hub.create(options(1));
  const first = waiter();
  hub.poll(q, -1, false, first);
  const second = waiter();
  hub.poll(q, -1, false, second);
  assert.deepEqual(first.answers, ['[]'], 'replaced by the newer poll');
  hub.publish([notice([1], () => ({ type: 'a' })), notice([1], () => ({ type: 'b' }))]);
  assert.deepEqual(
    second.answers.map((a) => JSON.parse(a)),
    [
      [
        { id: 0, type: 'a' },
        { id: 1, type: 'b' },
      ],
    ],
  );

  const gone = waiter();
  hub.poll(q, 1, false, gone);
  hub.abandon(q, gone);
  assert.equal(q.parked, null);
  hub.publish([notice([1], () => ({ type: 'c' }))]);
  assert.deepEqual(gone.answers, [], 'nothing is written to a poll whose client went away');
  const next = waiter();
  hub.poll(q, 1, false, next);
  assert.deepEqual(
    next.answers.map((a) => JSON.parse(a)),
    [[{ id: 2, type: 'c' }]],
    'the event waited for the next poll',
  );
});

it('sends the heartbeat heartbeatMs after the poll parked, counted from its latest park', () => {
  const { clock, hub } = setup();
  const q = hub.create(options(1));
  const other = hub.create(options(2));
  const w1 = waiter();
  hub.poll(q, -1, false, w1);
  hub.poll(other, -1, false, waiter());
  clock.advance(30_000);
  hub.publish([notice([1], () => ({ type: 'x' }))]);
  const w2 = waiter();
  hub.poll(q, 0, false, w2); // parked again 30 s later
  clock.advance(20_000);
  hub.sweep();
  assert.deepEqual(w2.answers, [], '50 s after the first park, 20 s after the latest: no heartbeat');
  assert.deepEqual(
    other.events.map((e) => e.type),
    ['heartbeat'],
    'the other poll, parked 50 s ago, got its heartbeat',
  );
  clock.advance(29_999);
  hub.sweep();
  assert.deepEqual(w2.answers, []);
  clock.advance(1);
  hub.sweep();
  assert.deepEqual(
    w2.answers.map((a) => JSON.parse(a)),
    [[{ id: 1, type: 'heartbeat' }]],
  );
  clock.advance(60_000);
  hub.sweep();
  assert.equal(q.events.length, 1, 'no heartbeat to a queue without a parked poll');
});

it('never beats a removed queue, and drops idle ones on the clock', () => {
  const { clock, hub } = setup();
  const removed: EventQueue = hub.create(options(1));
  const w = waiter();
  hub.poll(removed, -1, false, w);
  hub.remove(removed);
  assert.deepEqual(w.answers, ['[]'], 'its poll ended empty');
  const idle = hub.create(options(1));
  clock.advance(hub.timings.heartbeatMs);
  hub.sweep();
  assert.deepEqual(removed.events, []);
  clock.advance(hub.timings.idleMs - hub.timings.heartbeatMs);
  hub.sweep();
  assert.equal(hub.size, 0);
  assert.throws(
    () => hub.queueOf(idle.id, 1),
    (e: Error & { code?: string }) => e.code === 'BAD_EVENT_QUEUE_ID',
  );
});

it('starts making a write durable as soon as it commits, before its notices are built', async () => {
  const order: string[] = [];
  const hub = new EventHub(new ManualClock(0), createLogger('error'), { sweepEveryMs: 0 }, async () => {
    order.push('flush');
  });
  await hub.write(
    async () => order.push('commit'),
    () => {
      order.push('notices');
      return [];
    },
  );
  assert.deepEqual(order, ['commit', 'flush', 'notices']);
  // A write that fails is not flushed for.
  await assert.rejects(
    hub.write(
      async () => Promise.reject(new Error('no')),
      () => [],
    ),
  );
  assert.deepEqual(order, ['commit', 'flush', 'notices']);
});

it('writes an answer as pieces: each shared rendering encoded once, the same JSON as a whole string', () => {
  const { hub } = setup();
  const q = hub.create(options(1));
  q.push({ type: 'heartbeat' });
  hub.publish([notice([1], () => ({ type: 'custom', s: 'é"\\\u2028' }))]);
  const pieces: (string | Buffer)[] = [];
  eventsJsonPieces(q.events, pieces);
  assert.equal(Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p))).toString(), eventsJson(q.events));
  assert.equal(q.events[1].shared.jsonTailBytes(), q.events[1].shared.jsonTailBytes(), 'encoded once');
  const none: (string | Buffer)[] = [];
  eventsJsonPieces([], none);
  assert.equal(none.join(''), '[]');
});

const isBadQueue = (e: Error & { code?: string }) => e.code === 'BAD_EVENT_QUEUE_ID';

it("answers another user's queue as an unknown one, as Zulip 10 does", () => {
  const { hub } = setup();
  const mine = hub.create(options(1));
  assert.throws(
    () => hub.queueOf(mine.id, 2),
    (e: ChatError) => isBadQueue(e) && e.message === `Bad event queue ID: ${mine.id}` && e.extra.queue_id === mine.id,
  );
  assert.equal(hub.queueOf(mine.id, 1), mine);
});

it("ends a revoked user's queues at the commit: the parked poll gets BAD_EVENT_QUEUE_ID, a later publish reaches nothing", async () => {
  const { hub } = setup();
  const [mine, idle, other] = [hub.create(options(1)), hub.create(options(1)), hub.create(options(2))];
  const w = waiter();
  hub.poll(mine, -1, false, w);
  // A write that started earlier and commits later publishes after the revocation: it must not reach the queues.
  let commitEarlier!: () => void;
  const earlier = hub.write(
    () => new Promise<void>((resolve) => (commitEarlier = resolve)),
    () => [notice([1, 2], () => ({ type: 'late' }))],
  );
  const order: string[] = [];
  await hub.write(
    async () => order.push('commit'),
    () => {
      order.push(`notices, queues of user 1: ${hub.list().filter((q) => q.options.userId === 1).length}`);
      return [notice([1, 2], () => ({ type: 'own' }))];
    },
    () => [1],
  );
  assert.deepEqual(order, ['commit', 'notices, queues of user 1: 0'], 'ended before its own notices were even built');
  assert.deepEqual(w.answers, ['error BAD_EVENT_QUEUE_ID']);
  commitEarlier();
  await earlier;
  assert.deepEqual([mine.events, idle.events], [[], []]);
  assert.deepEqual(
    other.events.map((e) => e.type),
    ['own', 'late'],
    "another user's queue is untouched",
  );
  for (const q of [mine, idle]) assert.throws(() => hub.queueOf(q.id, 1), isBadQueue);
  // A write that fails revokes nothing.
  await assert.rejects(
    hub.write(
      async () => Promise.reject(new Error('no')),
      () => [],
      () => [2],
    ),
  );
  assert.equal(hub.queueOf(other.id, 2), other);
});

it("ends every queue of a realm (endRealmQueues), and only that realm's", () => {
  const { hub } = setup();
  const [a, b] = [hub.create(options(1, { realmId: 1 })), hub.create(options(2, { realmId: 2 }))];
  const w = waiter();
  hub.poll(a, -1, false, w);
  hub.endRealmQueues(1);
  assert.deepEqual(w.answers, ['error BAD_EVENT_QUEUE_ID']);
  assert.deepEqual(hub.list(), [b]);
});

it("keeps at most maxQueuesPerUser queues per user: one more discards that user's least recently used", () => {
  const clock = new ManualClock(0);
  const hub = new EventHub(clock, createLogger('error'), { sweepEveryMs: 0, maxQueuesPerUser: 3 });
  const made: EventQueue[] = [];
  // Parked since it was made: in use, but the least recently; its poll is told the queue is gone.
  const parked = waiter();
  for (let i = 0; i < 3; i++) {
    made.push(hub.create(options(1)));
    if (i === 0) hub.poll(made[0], -1, false, parked);
    clock.advance(1000);
  }
  const others = hub.create(options(2));
  const fourth = hub.create(options(1));
  assert.deepEqual(parked.answers, ['error BAD_EVENT_QUEUE_ID']);
  assert.throws(() => hub.queueOf(made[0].id, 1), isBadQueue);
  // A poll is use: the queue polled now outlives the one made after it.
  clock.advance(1000);
  hub.poll(made[1], -1, true, waiter());
  const fifth = hub.create(options(1));
  assert.deepEqual(new Set(hub.list()), new Set([made[1], fourth, fifth, others]));
});

it('keeps at most maxQueues queues on the server: one more discards the least recently used of anyone', () => {
  const clock = new ManualClock(0);
  const hub = new EventHub(clock, createLogger('error'), { sweepEveryMs: 0, maxQueues: 3 });
  const made: EventQueue[] = [];
  for (let user = 1; user <= 3; user++) {
    made.push(hub.create(options(user)));
    clock.advance(1000);
  }
  hub.poll(made[0], -1, true, waiter());
  clock.advance(1000);
  const fourth = hub.create(options(4));
  assert.equal(hub.size, 3);
  assert.deepEqual(new Set(hub.list()), new Set([made[0], made[2], fourth]));
});

it('discards a queue holding more than maxEventsPerQueue unacknowledged events; one whose client keeps up lives on', () => {
  const clock = new ManualClock(0);
  const hub = new EventHub(clock, createLogger('error'), { sweepEveryMs: 0, maxEventsPerQueue: 3 });
  const [abandoned, live] = [hub.create(options(1)), hub.create(options(1))];
  let acked = -1;
  const keepUp = () => {
    const w: Waiter = {
      deliver: (events) => {
        if (events.length) acked = events[events.length - 1].id;
      },
      fail: () => assert.fail('the live queue was discarded'),
    };
    hub.poll(live, acked, false, w);
  };
  keepUp();
  for (let i = 0; i < 3; i++) {
    hub.publish([notice([1], () => ({ type: 'custom', i }))]);
    keepUp();
  }
  assert.equal(hub.queueOf(abandoned.id, 1), abandoned, 'three events are within the bound');
  hub.publish([notice([1], () => ({ type: 'custom', i: 3 }))]);
  assert.throws(() => hub.queueOf(abandoned.id, 1), isBadQueue);
  keepUp();
  for (let i = 4; i < 20; i++) {
    hub.publish([notice([1], () => ({ type: 'custom', i }))]);
    keepUp();
  }
  assert.equal(hub.queueOf(live.id, 1), live);
  assert.equal(acked, 19);
});

it('keeps at most maxQueuedEvents unacknowledged events on the server: past it, the fullest queues are discarded', () => {
  const clock = new ManualClock(0);
  const hub = new EventHub(clock, createLogger('error'), { sweepEveryMs: 0, maxQueuedEvents: 5 });
  // Different users (a member's bots are users too): no per-user bound is involved.
  const [idle, quiet, live] = [hub.create(options(1)), hub.create(options(2)), hub.create(options(3))];
  let acked = -1;
  const keepUp = () =>
    hub.poll(live, acked, false, {
      deliver: (events) => {
        if (events.length) acked = events[events.length - 1].id;
      },
      fail: () => assert.fail('the live queue was discarded'),
    });
  keepUp();
  hub.publish([notice([1], () => ({ type: 'a' })), notice([1], () => ({ type: 'b' })), notice([1], () => ({ type: 'c' }))]);
  hub.publish([notice([2], () => ({ type: 'a' }))]);
  for (let i = 0; i < 5; i++) {
    hub.publish([notice([3], () => ({ type: 'custom', i }))]);
    keepUp();
  }
  assert.deepEqual(new Set(hub.list()), new Set([idle, quiet, live]), 'acknowledged events no longer count: 3 + 1 + 0 in all');
  hub.publish([notice([2], () => ({ type: 'b' }))]);
  assert.equal(hub.queueOf(idle.id, 1), idle, 'five in all is within the bound');
  hub.publish([notice([2], () => ({ type: 'c' }))]);
  assert.throws(() => hub.queueOf(idle.id, 1), isBadQueue);
  assert.deepEqual(new Set(hub.list()), new Set([quiet, live]), 'the fullest queue went, the others stay');
  // Discarded and removed queues no longer count either: room for more.
  hub.remove(quiet);
  hub.publish([notice([3], () => ({ type: 'x' })), notice([3], () => ({ type: 'y' }))]);
  assert.equal(hub.queueOf(live.id, 3), live);
});

it("refuses an acknowledgement below what the queue forgot or above what it gave out (Zulip's fetch_events), changing nothing", () => {
  const { hub } = setup();
  const q = hub.create(options(1));
  const refusal = (id: number) => {
    try {
      q.checkAcknowledgement(id);
      return 'accepted';
    } catch (err) {
      return (err as ChatError).message;
    }
  };
  assert.deepEqual([refusal(-2), refusal(-1), refusal(0)], ['An event newer than -2 has already been pruned!', 'accepted', 'Event 0 was not in this queue']);
  for (const n of [1, 2, 3]) q.push({ type: 'n', n });
  assert.deepEqual([refusal(2), refusal(3)], ['accepted', 'Event 3 was not in this queue']);
  assert.equal(q.events.length, 3, 'checking forgets nothing');
  hub.poll(q, 1, true, waiter());
  assert.deepEqual([refusal(0), refusal(1), refusal(2)], ['An event newer than 0 has already been pruned!', 'accepted', 'accepted']);
});

it("expires a queue after the lifespan its client asked for, at most a week, else the hub's idle time", () => {
  const { clock, hub } = setup();
  const plain = hub.create(options(1));
  const hour = hub.create(options(1, { lifespanSecs: 3600 }));
  const huge = hub.create(options(1, { lifespanSecs: 10 ** 9 }));
  assert.deepEqual([hub.lifespanMs(plain), hub.lifespanMs(hour), hub.lifespanMs(huge)], [hub.timings.idleMs, 3_600_000, 7 * 24 * 3_600_000]);
  clock.advance(hub.timings.idleMs + 10_000);
  hub.sweep();
  assert.deepEqual(
    hub.list().map((q) => q.id),
    [hour.id, huge.id],
  );
  clock.advance(3_600_000);
  hub.sweep();
  assert.deepEqual(
    hub.list().map((q) => q.id),
    [huge.id],
  );
  clock.advance(7 * 24 * 3_600_000);
  hub.sweep();
  assert.equal(hub.size, 0);
});

// The event hub on its own (no server): one rendering shared among queues, each queue numbering
// it; one wake per publish; a newer poll ending the older; heartbeats filed by the second they
// are due in, moved by a re-park; ended polls and removed queues never beaten; the flush a write
// waits for started at its commit; answers written as pieces.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EventHub, type Notice } from '../../src/chat/events/hub.js';
import { eventsJson, eventsJsonPieces, type EventQueue, type QueuedEvent, type QueueOptions, type Waiter } from '../../src/chat/events/queue.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';

const options = (userId: number, o: Partial<QueueOptions> = {}): QueueOptions => ({
  userId, realmId: 1, eventTypes: null, narrow: [], allPublicStreams: false, applyMarkdown: false, clientGravatar: true, capabilities: {}, ...o,
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
  assert.deepEqual(JSON.parse(eventsJson(q1.events)), [{ id: 0, type: 'heartbeat' }, { id: 1, ...body }]);
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
  assert.deepEqual(second.answers.map((a) => JSON.parse(a)), [[{ id: 0, type: 'a' }, { id: 1, type: 'b' }]]);

  const gone = waiter();
  hub.poll(q, 1, false, gone);
  hub.abandon(q, gone);
  assert.equal(q.parked, null);
  hub.publish([notice([1], () => ({ type: 'c' }))]);
  assert.deepEqual(gone.answers, [], 'nothing is written to a poll whose client went away');
  const next = waiter();
  hub.poll(q, 1, false, next);
  assert.deepEqual(next.answers.map((a) => JSON.parse(a)), [[{ id: 2, type: 'c' }]], 'the event waited for the next poll');
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
  assert.deepEqual(w2.answers, [], "50 s after the first park, 20 s after the latest: no heartbeat");
  assert.deepEqual(other.events.map((e) => e.type), ['heartbeat'], 'the other poll, parked 50 s ago, got its heartbeat');
  clock.advance(29_999);
  hub.sweep();
  assert.deepEqual(w2.answers, []);
  clock.advance(1);
  hub.sweep();
  assert.deepEqual(w2.answers.map((a) => JSON.parse(a)), [[{ id: 1, type: 'heartbeat' }]]);
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
  assert.throws(() => hub.queueOf(idle.id, 1), (e: Error & { code?: string }) => e.code === 'BAD_EVENT_QUEUE_ID');
});

it('starts making a write durable as soon as it commits, before its notices are built', async () => {
  const order: string[] = [];
  const hub = new EventHub(new ManualClock(0), createLogger('error'), { sweepEveryMs: 0 }, async () => {
    order.push('flush');
  });
  await hub.write(async () => order.push('commit'), () => {
    order.push('notices');
    return [];
  });
  assert.deepEqual(order, ['commit', 'flush', 'notices']);
  // A write that fails is not flushed for.
  await assert.rejects(hub.write(async () => Promise.reject(new Error('no')), () => []));
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

// Event queues across a graceful restart (issue 5): the shutdown saves every live queue with its
// unacknowledged events to the store in one transaction; the next start takes them back, drops the
// ones that expired meanwhile, and appends a `restart` event, so a client polling its old queue_id
// gets what it missed and then `restart` instead of BAD_EVENT_QUEUE_ID. A crash saves nothing.
//
// Why the store and not a file in the data dir: a PostgreSQL deployment may run with a data dir that
// is not kept (a container's), while the database is what it keeps; one transaction makes the save
// all-or-nothing on both engines without a write-rename dance; and the same tests cover both engines.
import type { Database } from '../../platform/db/database.js';
import type { Logger } from '../../platform/log.js';
import type { ChatTables, SavedQueueRow } from '../tables.js';
import type { NarrowTerm } from '../domain/narrow.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from '../version.js';
import type { EventHub } from './hub.js';
import { EventQueue, QueuedEvent, SharedEvent, eventsJson, type EventBody, type WireEvent } from './queue.js';

/** Rows per INSERT: 14 columns each stays far below SQLite's bound on variables per statement. */
const BATCH = 200;

export function queueRow(queue: EventQueue, savedAt: number): SavedQueueRow {
  const o = queue.options;
  return {
    queue_id: queue.id,
    user_id: o.userId,
    realm_id: o.realmId,
    event_types: o.eventTypes === null ? null : JSON.stringify([...o.eventTypes]),
    narrow: JSON.stringify(o.narrow),
    all_public_streams: o.allPublicStreams ? 1 : 0,
    apply_markdown: o.applyMarkdown ? 1 : 0,
    client_gravatar: o.clientGravatar ? 1 : 0,
    client_capabilities: JSON.stringify(o.capabilities),
    acknowledged_id: queue.acknowledgedId,
    next_event_id: queue.nextId,
    events: eventsJson(queue.events),
    last_activity: queue.lastActivity,
    saved_at: savedAt,
  };
}

/**
 * A queue from its saved row. Events are saved per queue, so one message a thousand queues held is
 * a thousand copies in the rows: `shared` (one map for all the rows of a restore) makes equal events
 * one SharedEvent again, as they were before the restart, instead of a thousand objects.
 */
export function queueFromRow(row: SavedQueueRow, shared: Map<string, SharedEvent> = new Map()): EventQueue {
  const eventTypes = row.event_types === null ? null : new Set(JSON.parse(row.event_types) as string[]);
  const queue = new EventQueue(
    row.queue_id,
    {
      userId: Number(row.user_id),
      realmId: Number(row.realm_id),
      eventTypes,
      narrow: JSON.parse(row.narrow) as NarrowTerm[],
      allPublicStreams: Number(row.all_public_streams) === 1,
      applyMarkdown: Number(row.apply_markdown) === 1,
      clientGravatar: Number(row.client_gravatar) === 1,
      capabilities: JSON.parse(row.client_capabilities) as Record<string, boolean>,
      // A lifespan the client asked for is not saved (no column for it): a restored queue expires
      // after the server's idle time, and its client, told BAD_EVENT_QUEUE_ID, registers again.
    },
    Number(row.last_activity),
  );
  queue.events = (JSON.parse(row.events) as WireEvent[]).map(({ id, ...body }) => {
    // The key is the event's JSON after its id: what jsonTail() would make of it anyway.
    const tail = JSON.stringify(body).slice(1);
    let event = shared.get(tail);
    if (!event) shared.set(tail, (event = new SharedEvent(body as EventBody, tail)));
    return new QueuedEvent(id, event);
  });
  // Ids go on from where they were: the client's next last_event_id refers to the old numbering.
  queue.nextId = Number(row.next_event_id);
  queue.acknowledgedId = Number(row.acknowledged_id);
  return queue;
}

/**
 * Saves every queue of the hub in one transaction. Call it after the listener has closed (so no
 * request can add events or queues any more) and before the store closes. Returns how many.
 */
export async function saveQueues(hub: EventHub, db: Database<ChatTables>, nowMs: number): Promise<number> {
  const rows = hub.list().map((q) => queueRow(q, nowMs));
  if (!rows.length) return 0;
  await db.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      // A row with the same id can only be a leftover the last start did not take: this one is newer.
      await trx
        .deleteFrom('chat_event_queues')
        .where(
          'queue_id',
          'in',
          batch.map((r) => r.queue_id),
        )
        .execute();
      await trx.insertInto('chat_event_queues').values(batch).execute();
    }
  });
  return rows.length;
}

/** What a restored queue receives last (Zulip sends it to every queue its restarted server kept). */
export function restartEvent(serverGeneration: number): EventBody {
  return {
    type: 'restart',
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: '',
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    server_generation: serverGeneration,
  };
}

/**
 * Takes the saved queues out of the store (the rows are deleted in the same statement that reads
 * them, so two nodes starting together cannot both take one), drops those idle past the hub's
 * expiry by `nowMs`, and gives the others to the hub with a `restart` event appended when their
 * event_types accept it. Call it before the listener opens.
 */
export async function restoreQueues(hub: EventHub, db: Database<ChatTables>, nowMs: number, log: Logger): Promise<{ restored: number; expired: number }> {
  const rows = await db.kysely.deleteFrom('chat_event_queues').returningAll().execute();
  const restart = new SharedEvent(restartEvent(Math.floor(nowMs / 1000)));
  const shared = new Map<string, SharedEvent>();
  let restored = 0;
  let expired = 0;
  for (const row of rows) {
    if (nowMs - Number(row.last_activity) >= hub.timings.idleMs) {
      expired++;
      continue;
    }
    let queue: EventQueue;
    try {
      queue = queueFromRow(row, shared);
    } catch (err) {
      // One unreadable row must not stop the server from starting; that client re-registers.
      log.error('a saved event queue could not be read', { queue_id: row.queue_id, error: (err as Error).message });
      continue;
    }
    if (queue.wantsType('restart')) queue.push(restart);
    hub.adopt(queue);
    restored++;
  }
  if (rows.length) log.info('event queues restored', { restored, expired });
  return { restored, expired };
}

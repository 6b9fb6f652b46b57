// The scheduler that sends scheduled messages when they come due. Durable: what is due is read from
// the store (scheduled_messages), so a restart resumes it and a message due while the server was
// down goes out at the next start. Each delivery is one transaction that claims the row (on
// PostgreSQL with SELECT ... FOR UPDATE SKIP LOCKED, so two nodes never take the same one), writes
// the message through the normal send path and marks the row delivered: the message exists exactly
// when the mark does, so a crash anywhere sends it once or not yet. A delivery that cannot happen
// (the channel went away, the sender lost access, more than 10 minutes late) is recorded as Zulip
// records it: failed, with the error's text, an update event, and a Notification Bot message.
//
// It wakes at the next due time by the injectable clock (read again whenever a scheduled message is
// added or moved: wake()), and at least every maxSleepMs for rows another node wrote. Tests with a
// ManualClock do not start it: they move the clock and call runDue().
import type { Database, Queryable } from '../../platform/db/database.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/log.js';
import type { EventHub, Notice } from '../events/hub.js';
import type { ApiKeySeal } from './api-keys.js';
import type { ChatTables, ChatUser, Realm, ScheduledMessage } from '../tables.js';
import { ChatError, realmDeactivated, scheduledTooLate, userDeactivated } from '../errors.js';
import { checkChannelAddressee, checkDirectAddressee, composeOutgoing, sendTo, type Addressee } from './addressee.js';
import { LATE_CUTOFF_SECONDS, nextDue, scheduledObject, toIds } from './scheduled-messages.js';
import { messageNotice, realmUserAddNotice } from '../events/notices.js';
import { scheduledMessagesNotice } from '../events/scheduled-notices.js';
import { ensureNotificationBot } from './move-notices.js';
import { sendDirect } from './messages.js';
import { normaliseBody } from './topics.js';
import { claimNotices } from './uploads.js';

export interface DeliveryServices {
  db: Database<ChatTables>;
  clock: Clock;
  log: Logger;
  events: EventHub;
  realmUrl(realm: Realm): string;
  apiKeySeal: ApiKeySeal;
}

export interface DeliveryOptions {
  /** The longest sleep between looks at the store (rows another node scheduled, clock changes). */
  maxSleepMs: number;
  /** Rows read per look. */
  batch: number;
  /** Deliveries in flight at once (each its own transaction; PostgreSQL's row locks keep them apart). */
  concurrency: number;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = { maxSleepMs: 30_000, batch: 200, concurrency: 4 };

/** How soon to look again at a row that was due but held by another transaction. */
const RETRY_HELD_MS = 1000;

/** Another node (or an edit or delete holding the row) has it: not ours to send now. */
class NotClaimed extends Error {}

export class ScheduledDelivery {
  private readonly s: DeliveryServices;
  private readonly options: DeliveryOptions;
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  /** The wake-up under way: a run, then the read of the next due time. */
  private cycling?: Promise<void>;
  private again = false;
  private started = false;
  private stopped = false;
  /**
   * When this server came up (Unix seconds). A message that came due before it came due while the
   * server was down: it is sent now, however late (the rule for outages). Zulip's 10-minute
   * late cutoff applies only to what came due while this scheduler ran (a stalled delivery).
   */
  private readonly upSince: number;

  constructor(services: DeliveryServices, options: Partial<DeliveryOptions> = {}) {
    this.s = services;
    this.options = { ...DEFAULT_DELIVERY_OPTIONS, ...options };
    this.upSince = Math.floor(services.clock.now() / 1000);
  }

  /** Delivers what is due now (what came due while the server was down), then sleeps until the next. */
  start(): void {
    this.started = true;
    this.wake();
  }

  /** Stops waking and waits for the delivery under way (each delivery commits whole or not at all). */
  async stop(): Promise<void> {
    this.started = false;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
    await this.cycling;
  }

  /** A scheduled message was added or moved: look again now (it may be due before the current sleep ends). */
  wake(): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) {
      this.again = true;
      return;
    }
    this.cycling = this.cycle();
  }

  private async cycle(): Promise<void> {
    try {
      await this.runDue();
    } catch (err) {
      this.s.log.error('scheduled message delivery failed', { error: (err as Error).stack });
    }
    if (!this.started) return;
    let delay = this.options.maxSleepMs;
    if (this.again) {
      this.again = false;
      delay = 0;
    } else {
      try {
        const next = await nextDue(this.s.db.kysely);
        // Still due after a run: another node (or an edit) holds it; look again shortly, without spinning.
        if (next !== null) {
          const until = next * 1000 - this.s.clock.now();
          delay = Math.min(delay, until > 0 ? until : RETRY_HELD_MS);
        }
      } catch (err) {
        this.s.log.error('scheduled message delivery could not read the next due time', { error: (err as Error).stack });
      }
    }
    if (!this.started) return;
    // One timer at most, whichever wake-up set it last.
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.cycling = this.cycle();
    }, delay);
    this.timer.unref();
  }

  /** Delivers every message due by the clock now; returns how many it attempted. One run at a time. */
  runDue(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = this.deliverDue().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async deliverDue(): Promise<number> {
    const db = this.s.db.kysely;
    let attempted = 0;
    // Keyset over (scheduled_timestamp, id): a row another node holds is passed over, not re-read.
    let after: { ts: number; id: number } | null = null;
    for (;;) {
      const nowSeconds = Math.floor(this.s.clock.now() / 1000);
      let q = db.selectFrom('scheduled_messages').selectAll().where('delivered', '=', 0).where('failed', '=', 0).where('scheduled_timestamp', '<=', nowSeconds);
      if (after) {
        const { ts, id } = after;
        q = q.where((eb) => eb.or([eb('scheduled_timestamp', '>', ts), eb.and([eb('scheduled_timestamp', '=', ts), eb('id', '>', id)])]));
      }
      const rows = await q.orderBy('scheduled_timestamp').orderBy('id').limit(this.options.batch).execute();
      // A few deliveries at once, in due order: each waits mostly for its commit.
      const waiting = [...rows];
      const worker = async (): Promise<void> => {
        for (let row = waiting.shift(); row; row = waiting.shift()) {
          // A stop waits for the deliveries under way, not for the rest: they stay due for the next start.
          if (this.stopped) return;
          attempted++;
          await this.deliverOne(row);
          // Requests waiting behind a burst of due messages are served between two deliveries.
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      await Promise.all(Array.from({ length: Math.min(this.options.concurrency, rows.length) }, worker));
      if (this.stopped) return attempted;
      if (rows.length < this.options.batch) return attempted;
      const last = rows[rows.length - 1]!;
      after = { ts: Number(last.scheduled_timestamp), id: Number(last.id) };
    }
  }

  /** The row lock of a due row, or NotClaimed: it is gone, done, or held by another transaction. */
  private async claim(trx: Queryable<ChatTables>, id: number): Promise<void> {
    let q = trx.selectFrom('scheduled_messages').select('id').where('id', '=', id).where('delivered', '=', 0).where('failed', '=', 0);
    if (this.s.db.engine === 'postgres') q = q.forUpdate().skipLocked();
    if (!(await q.executeTakeFirst())) throw new NotClaimed();
  }

  private async deliverOne(row: ScheduledMessage): Promise<void> {
    const { db, events, clock } = this.s;
    const id = Number(row.id);
    const realm = await db.kysely.selectFrom('realms').selectAll().where('id', '=', row.realm_id).executeTakeFirst();
    const sender = await db.kysely.selectFrom('chat_users').selectAll().where('id', '=', row.sender_id).executeTakeFirst();
    if (!realm || !sender) return;
    const nowSeconds = Math.floor(clock.now() / 1000);
    let quiet = false;
    try {
      // Zulip checks again what authenticating would (the realm, the account), then lateness, then
      // everything a send checks, as of now: permissions may have changed since it was scheduled.
      if (realm.deactivated === 1) {
        quiet = true;
        throw realmDeactivated();
      }
      if (sender.is_active !== 1) {
        quiet = true;
        throw userDeactivated();
      }
      const due = Number(row.scheduled_timestamp);
      if (due >= this.upSince && nowSeconds > due + LATE_CUTOFF_SECONDS) throw scheduledTooLate();
      const to: Addressee =
        row.kind === 'stream' ? await checkChannelAddressee(db.kysely, realm, sender, Number(row.stream_id), row.topic) : await checkDirectAddressee(db.kysely, realm, sender, toIds(row));
      const o = await composeOutgoing(db.kysely, realm, sender, row.content, {
        client: row.client,
        readBySender: Number(row.read_by_sender) === 1,
        nowSeconds,
        realmUrl: this.s.realmUrl(realm),
      });
      o.sameTransaction = {
        before: (trx) => this.claim(trx, id),
        after: async (trx, messageId) => {
          await trx.updateTable('scheduled_messages').set({ delivered: 1, delivered_message_id: messageId }).where('id', '=', id).execute();
        },
      };
      await events.write(
        () => sendTo(db, realm, sender, to, o),
        // The uploads the message claimed tell their owner (an `attachment` update), as a direct send does.
        async (stored) => [
          ...(await messageNotice(db.kysely, realm, stored, null)),
          ...(await claimNotices(db.kysely, realm.id, sender.id, stored.claimed)),
          scheduledMessagesNotice(sender.id, { op: 'remove', scheduled_message_id: id }),
        ],
      );
    } catch (err) {
      if (err instanceof NotClaimed) return;
      let reason: string;
      if (err instanceof ChatError) {
        reason = err.message;
      } else {
        reason = 'Internal server error';
        this.s.log.error('scheduled message could not be sent', { scheduled_message_id: id, error: (err as Error).stack });
      }
      await this.recordFailure(realm, sender, id, reason, quiet);
    }
  }

  /** Marks the row failed (if still ours to settle), tells the sender's clients, and has the Notification Bot tell the sender. */
  private async recordFailure(realm: Realm, sender: ChatUser, id: number, reason: string, quiet: boolean): Promise<void> {
    const { db, events, clock } = this.s;
    let failed: ScheduledMessage | undefined;
    try {
      failed = await events.write(
        () =>
          db.transaction(async (trx) => {
            await this.claim(trx, id);
            return trx.updateTable('scheduled_messages').set({ failed: 1, failure_message: reason }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
          }),
        (row) => (quiet ? [] : [scheduledMessagesNotice(sender.id, { op: 'update', scheduled_message: scheduledObject(row) })]),
      );
    } catch (err) {
      if (err instanceof NotClaimed) return;
      throw err;
    }
    this.s.log.info('scheduled message failed', { scheduled_message_id: id, reason });
    // A deactivated realm or account has nobody to tell (Zulip sends no notification then).
    if (quiet) return;
    const bot = await ensureNotificationBot(db, realm, clock.now(), this.s.apiKeySeal);
    const content = failureNotification(Number(failed.scheduled_timestamp), reason);
    const o = await composeOutgoing(db.kysely, realm, bot.bot, normaliseBody(content), {
      client: 'Internal',
      readBySender: true,
      nowSeconds: Math.floor(clock.now() / 1000),
      realmUrl: this.s.realmUrl(realm),
    });
    await events.write(
      () => sendDirect(db, realm, bot.bot, [sender], o),
      async (stored): Promise<Notice[]> => [...(bot.made ? await realmUserAddNotice(db.kysely, realm.id, bot.bot) : []), ...(await messageNotice(db.kysely, realm, stored, null))],
    );
  }
}

/**
 * The Notification Bot's message about a failed delivery, as Zulip words it: the time as Python
 * prints an aware UTC datetime, inside a <time:...> mark followed by a space.
 */
export function failureNotification(timestamp: number, reason: string): string {
  const at = new Date(timestamp * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, '+00:00');
  return `The message you scheduled for <time:${at}>  was not sent because of the following error:\n\n> ${reason}\n\n[View scheduled messages](#scheduled)\n\n`;
}

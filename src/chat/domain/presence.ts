// Presence, kept in memory (one map per realm) because a ping every minute from every client is the
// most frequent request of all: a ping changes the map and, at most, publishes an event; the changed
// entries reach the store in one batched transaction every few seconds (flushEveryMs).
// Durability: a crash loses at most the last few seconds of pings. That is harmless: presence is a
// hint that goes stale in 140 s anyway, and the next ping from each client (within 60 s) restores it.
// One node only: a second node would keep its own map (README, issue 5).
import type { Database } from '../../platform/db/database.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/log.js';
import type { ChatTables, ChatUser } from '../tables.js';

/** Zulip's timings (settings.py): clients ping every 60 s; 140 s without one is offline. */
export const PRESENCE_PING_INTERVAL_SECONDS = 60;
export const OFFLINE_THRESHOLD_SECONDS = 140;
/** A ping this soon after the last recorded one changes nothing (several windows of one user). */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
/** Legacy format: "active" while the last active time is within this of the last connection. */
export const LEGACY_ACTIVITY_OFFSET_SECONDS = 70;
export const DEFAULT_HISTORY_LIMIT_DAYS = 14;

export type PresenceStatus = 'active' | 'idle';

export interface PresenceRecord {
  userId: number;
  /** Unix seconds of the last ping reporting the user active; null if only idle pings so far. */
  active: number | null;
  /** Unix seconds of the last ping of any kind. */
  connected: number;
  /** The realm's update counter when this record last changed (last_update_id protocol). */
  updateId: number;
}

interface RealmPresence {
  byUser: Map<number, PresenceRecord>;
  lastUpdateId: number;
  /** Users whose record changed since the last flush. */
  dirty: Set<number>;
}

/** What the realm's users look like to presence: read from the store, cached until it is written. */
export interface Member {
  id: number;
  email: string;
  isActive: boolean;
  presenceEnabled: boolean;
  isBot: boolean;
}

/** A boolean user setting from the settings JSON; Zulip's default where the user never set it. */
export function booleanSetting(user: Pick<ChatUser, 'settings'>, name: string, fallback: boolean): boolean {
  const v = (JSON.parse(user.settings) as Record<string, unknown>)[name];
  return typeof v === 'boolean' ? v : fallback;
}

export interface PingOutcome {
  record: PresenceRecord;
  /** Whether others should hear of it now: the user came online, or became active after being idle. */
  notify: boolean;
}

export interface PresenceOptions {
  /** How often changed entries are written; 0 leaves it to whoever calls flush() (tests). */
  flushEveryMs: number;
}

export class PresenceStore {
  private readonly db: Database<ChatTables>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly realms = new Map<number, Promise<RealmPresence>>();
  private readonly members = new Map<number, { generation: number; list: Member[] }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(db: Database<ChatTables>, clock: Clock, log: Logger, options: Partial<PresenceOptions> = {}) {
    this.db = db;
    this.clock = clock;
    this.log = log;
    const every = options.flushEveryMs ?? 5_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.flush(), every);
      this.timer.unref();
    }
  }

  /** The realm's map, loaded from the store on first use. */
  private realm(realmId: number): Promise<RealmPresence> {
    let p = this.realms.get(realmId);
    if (!p) {
      p = this.load(realmId);
      this.realms.set(realmId, p);
      // A failed load is retried by the next request rather than remembered.
      p.catch(() => this.realms.delete(realmId));
    }
    return p;
  }

  private async load(realmId: number): Promise<RealmPresence> {
    const rows = await this.db.kysely.selectFrom('user_presence').selectAll().where('realm_id', '=', realmId).execute();
    const byUser = new Map<number, PresenceRecord>();
    let lastUpdateId = 0;
    for (const r of rows) {
      const rec = {
        userId: Number(r.user_id),
        active: r.last_active_time === null ? null : Number(r.last_active_time),
        connected: Number(r.last_connected_time),
        updateId: Number(r.last_update_id),
      };
      byUser.set(rec.userId, rec);
      lastUpdateId = Math.max(lastUpdateId, rec.updateId);
    }
    return { byUser, lastUpdateId, dirty: new Set() };
  }

  /**
   * Records a ping (Zulip's do_update_user_presence): times move only when the last recorded one is
   * older than PRESENCE_UPDATE_MIN_FREQ_SECONDS, so several open windows cost one update a minute.
   */
  async ping(realmId: number, userId: number, status: PresenceStatus): Promise<PingOutcome> {
    const realm = await this.realm(realmId);
    const now = Math.floor(this.clock.now() / 1000);
    const old = realm.byUser.get(userId);
    if (!old) {
      const record = { userId, active: status === 'active' ? now : null, connected: now, updateId: ++realm.lastUpdateId };
      realm.byUser.set(userId, record);
      realm.dirty.add(userId);
      return { record: { ...record }, notify: true };
    }
    const wasOnline = now - old.connected <= OFFLINE_THRESHOLD_SECONDS;
    const wasActive = old.active !== null && now - old.active <= OFFLINE_THRESHOLD_SECONDS;
    let changed = false;
    if (now - old.connected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
      old.connected = now;
      changed = true;
    }
    if (status === 'active' && (old.active === null || now - old.active > PRESENCE_UPDATE_MIN_FREQ_SECONDS)) {
      old.active = now;
      // Active implies connected.
      if (old.connected < now) old.connected = now;
      changed = true;
    }
    if (changed) {
      old.updateId = ++realm.lastUpdateId;
      realm.dirty.add(userId);
    }
    // Events only for what clients cannot work out from timestamps they already have: the user was
    // offline (or only idle) to them and is back. Going idle or offline they compute themselves.
    const notify = changed && (!wasOnline || (status === 'active' && !wasActive));
    return { record: { ...old }, notify };
  }

  /** Every record, with the realm's latest update id (for register and the presence answers). */
  async records(realmId: number): Promise<{ records: PresenceRecord[]; lastUpdateId: number }> {
    const realm = await this.realm(realmId);
    return { records: [...realm.byUser.values()].map((r) => ({ ...r })), lastUpdateId: realm.lastUpdateId };
  }

  async record(realmId: number, userId: number): Promise<PresenceRecord | undefined> {
    const r = (await this.realm(realmId)).byUser.get(userId);
    return r && { ...r };
  }

  /**
   * The realm's users as presence needs them. Re-read only after a write to the store (the
   * database's write generation moved), so a steady stream of pings reads no users.
   */
  async realmMembers(realmId: number): Promise<Member[]> {
    const generation = this.db.writeGeneration();
    const cached = this.members.get(realmId);
    if (cached && cached.generation === generation) return cached.list;
    const rows = await this.db.kysely.selectFrom('chat_users').select(['id', 'email', 'is_active', 'is_bot', 'settings']).where('realm_id', '=', realmId).execute();
    const list = rows.map((u) => ({
      id: Number(u.id),
      email: u.email,
      isActive: u.is_active === 1,
      isBot: u.is_bot === 1,
      presenceEnabled: booleanSetting(u, 'presence_enabled', true),
    }));
    this.members.set(realmId, { generation, list });
    return list;
  }

  /** Writes every changed record in one transaction; one flush at a time. */
  flush(): Promise<void> {
    this.flushing = this.flushing
      .then(() => this.writeDirty())
      .catch((err: unknown) => {
        this.log.error('presence could not be written', { error: (err as Error).stack });
      });
    return this.flushing;
  }

  private async writeDirty(): Promise<void> {
    const batch: { realmId: number; rec: PresenceRecord }[] = [];
    for (const [realmId, p] of this.realms) {
      const realm = await p.catch(() => undefined);
      if (!realm || !realm.dirty.size) continue;
      for (const userId of realm.dirty) {
        const rec = realm.byUser.get(userId);
        if (rec) batch.push({ realmId, rec: { ...rec } });
      }
      realm.dirty.clear();
    }
    if (!batch.length) return;
    try {
      await this.db.transaction(async (trx) => {
        // Chunks keep each statement under SQLite's and PostgreSQL's bound-parameter limits.
        for (let i = 0; i < batch.length; i += 500) {
          await trx
            .insertInto('user_presence')
            .values(
              batch.slice(i, i + 500).map(({ realmId, rec }) => ({
                user_id: rec.userId,
                realm_id: realmId,
                last_active_time: rec.active,
                last_connected_time: rec.connected,
                last_update_id: rec.updateId,
              })),
            )
            .onConflict((oc) =>
              oc.column('user_id').doUpdateSet((eb) => ({
                last_active_time: eb.ref('excluded.last_active_time'),
                last_connected_time: eb.ref('excluded.last_connected_time'),
                last_update_id: eb.ref('excluded.last_update_id'),
              })),
            )
            .execute();
        }
      });
    } catch (err) {
      // Written next time: the entries are dirty again (the map holds their latest values).
      for (const { realmId, rec } of batch) (await this.realms.get(realmId)?.catch(() => undefined))?.dirty.add(rec.userId);
      throw err;
    }
  }

  /** Stops the timer and writes what is left (at shutdown). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

// ---- the wire formats ---------------------------------------------------------------------------

/** Zulip's legacy status: active while the last active ping is close to the last connection. */
export function legacyInfo(r: PresenceRecord): { status: PresenceStatus; timestamp: number } {
  if (r.active !== null && r.active + LEGACY_ACTIVITY_OFFSET_SECONDS >= r.connected) return { status: 'active', timestamp: r.active };
  return { status: 'idle', timestamp: r.connected };
}

/** {website: {...}, aggregated: {...}}: since Zulip 7.0 the client is always "website". */
export function legacyPresence(r: PresenceRecord): Record<string, Record<string, unknown>> {
  const { status, timestamp } = legacyInfo(r);
  return {
    website: { client: 'website', status, timestamp, pushable: false },
    aggregated: { client: 'website', status, timestamp },
  };
}

/** {active_timestamp, idle_timestamp}; a user never reported active has no active_timestamp. */
export function modernPresence(r: PresenceRecord): Record<string, number> {
  return r.active === null ? { idle_timestamp: r.connected } : { active_timestamp: r.active, idle_timestamp: r.connected };
}

export interface PresenceQuery {
  slim: boolean;
  /** Set: only records changed after it, in the modern format. */
  lastUpdateId?: number;
  historyLimitDays?: number;
}

/**
 * The `presences`, `server_timestamp` and `presence_last_update_id` of register and POST
 * /users/me/presence: users sharing their presence (not invisible), active, not bots, connected
 * within the history limit; keyed by email (legacy) or user id (modern).
 */
export async function presenceAnswer(store: PresenceStore, realmId: number, nowMs: number, q: PresenceQuery): Promise<Record<string, unknown>> {
  const [{ records }, members] = await Promise.all([store.records(realmId), store.realmMembers(realmId)]);
  const byId = new Map(members.map((m) => [m.id, m]));
  const modern = q.slim || q.lastUpdateId !== undefined;
  // The limit is for the first fetch; a client that already holds data asks by update id instead.
  const useLimit = q.lastUpdateId === undefined || q.lastUpdateId <= 0;
  const since = Math.floor(nowMs / 1000) - (q.historyLimitDays ?? DEFAULT_HISTORY_LIMIT_DAYS) * 86_400;
  const presences: Record<string, unknown> = {};
  let maxId = -1;
  for (const r of records) {
    const m = byId.get(r.userId);
    if (!m || !m.isActive || m.isBot || !m.presenceEnabled) continue;
    if (useLimit && r.connected < since) continue;
    if (q.lastUpdateId !== undefined && r.updateId <= q.lastUpdateId) continue;
    presences[modern ? String(r.userId) : m.email] = modern ? modernPresence(r) : legacyPresence(r);
    maxId = Math.max(maxId, r.updateId);
  }
  // Never below what the client passed: the same value tells it nothing changed.
  const last = q.lastUpdateId === undefined ? maxId : Math.max(q.lastUpdateId, maxId);
  return { presences, server_timestamp: nowMs / 1000, presence_last_update_id: last };
}

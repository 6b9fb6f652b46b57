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
import { READ_CACHE_TTL_MS } from '../../platform/db/fast/read-cache.js';
import { legacyStatus, RealmPresenceText, type MemberIndex, type PresenceFormat } from './presence-answers.js';

/** Zulip's timings (settings.py): clients ping every 60 s; 140 s without one is offline. */
export const PRESENCE_PING_INTERVAL_SECONDS = 60;
export const OFFLINE_THRESHOLD_SECONDS = 140;
/** A ping this soon after the last recorded one changes nothing (several windows of one user). */
export const PRESENCE_UPDATE_MIN_FREQ_SECONDS = 55;
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
  /** The answers' `presences`, kept per realm version (presence-answers.ts). */
  text: Record<PresenceFormat, RealmPresenceText>;
}

/** What the realm's users look like to presence: read from the store, kept as realmMembers says. */
export interface Member {
  id: number;
  email: string;
  isActive: boolean;
  presenceEnabled: boolean;
  isBot: boolean;
  /** Unix seconds: shown as the last active time of a user never reported active (as Zulip does). */
  dateJoined: number;
}

/** The members of one realm, as kept: `index` keeps its identity while the members are the same. */
interface KeptMembers {
  index: MemberIndex;
  /** chat_users' write generation when read, and when the read goes stale (other processes' writes). */
  generation: number;
  expires: number;
  /** A read under way, shared by the requests that find the entry stale meanwhile. */
  reading?: Promise<MemberIndex>;
}

function sameMember(a: Member, b: Member): boolean {
  return a.id === b.id && a.email === b.email && a.isActive === b.isActive && a.presenceEnabled === b.presenceEnabled && a.isBot === b.isBot && a.dateJoined === b.dateJoined;
}

/** A boolean user setting from the settings JSON; Zulip's default where the user never set it. */
export function booleanSetting(user: Pick<ChatUser, 'settings'>, name: string, fallback: boolean): boolean {
  const v = parsedSettings(user)[name];
  return typeof v === 'boolean' ? v : fallback;
}

// A memo of a pure function (design rule 7): a user object's settings text parsed, checked against
// the text it was parsed from (so a changed text is parsed again), in a WeakMap keyed by the object
// (the credential cache's user, shared by every request of its entry's life), so it dies with it.
// Every presence ping asks for presence_enabled, and parsing the whole settings text was 2-3% of a ping.
const settingsMemo = new WeakMap<object, { text: string; parsed: Readonly<Record<string, unknown>> }>();

function parsedSettings(user: Pick<ChatUser, 'settings'>): Readonly<Record<string, unknown>> {
  const hit = settingsMemo.get(user);
  if (hit && hit.text === user.settings) return hit.parsed;
  const parsed = Object.freeze(JSON.parse(user.settings) as Record<string, unknown>);
  settingsMemo.set(user, { text: user.settings, parsed });
  return parsed;
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
  private readonly members = new Map<number, KeptMembers>();
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
    return { byUser, lastUpdateId, dirty: new Set(), text: { legacy: new RealmPresenceText('legacy'), modern: new RealmPresenceText('modern') } };
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
   * The realm's users as presence needs them. Read again after a write to chat_users through this
   * store (its write generation moved) and after READ_CACHE_TTL_MS (writes by other processes, such
   * as `keel admin`); the index keeps its identity while what presence reads of them is the same, so
   * the answers made from it stay valid.
   */
  async realmMembers(realmId: number): Promise<MemberIndex> {
    const kept = this.members.get(realmId);
    const generation = this.db.writeGeneration('chat_users');
    const now = this.clock.now();
    if (kept && kept.generation === generation && kept.expires > now) return kept.index;
    if (kept?.reading) return kept.reading;
    const reading = this.readMembers(realmId, kept?.index, generation, now);
    if (kept) kept.reading = reading;
    try {
      return await reading;
    } finally {
      if (kept) kept.reading = undefined;
    }
  }

  private async readMembers(realmId: number, before: MemberIndex | undefined, generation: number, now: number): Promise<MemberIndex> {
    const rows = await this.db.kysely.selectFrom('chat_users').select(['id', 'email', 'is_active', 'is_bot', 'settings', 'date_joined']).where('realm_id', '=', realmId).orderBy('id').execute();
    const list = rows.map((u) => ({
      id: Number(u.id),
      email: u.email,
      isActive: u.is_active === 1,
      isBot: u.is_bot === 1,
      presenceEnabled: booleanSetting(u, 'presence_enabled', true),
      dateJoined: Math.floor(Number(u.date_joined) / 1000),
    }));
    const same = before !== undefined && before.list.length === list.length && list.every((m, i) => sameMember(m, before.list[i]));
    const index: MemberIndex = same ? before : { list, byId: new Map(list.map((m) => [m.id, m])) };
    // Kept with the generation and time taken before the read: a write that landed meanwhile makes it stale at once.
    this.members.set(realmId, { index, generation, expires: now + READ_CACHE_TTL_MS });
    return index;
  }

  /** The realm's map and members, for the answers. */
  async answerState(realmId: number): Promise<{ realm: RealmPresence; members: MemberIndex }> {
    const [realm, members] = await Promise.all([this.realm(realmId), this.realmMembers(realmId)]);
    return { realm, members };
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

// ---- the answers ------------------------------------------------------------------------------

/** Zulip's legacy {status, timestamp} of one user (GET /users/{user}/presence, presence events). */
export function legacyInfo(r: PresenceRecord, dateJoined?: number): { status: PresenceStatus; timestamp: number } {
  // Without the date joined (events), a user never reported active counts as long inactive.
  return legacyStatus(r, dateJoined ?? Number.NEGATIVE_INFINITY);
}

export interface PresenceQuery {
  slim: boolean;
  /** Set: only records changed after it, in the modern format. */
  lastUpdateId?: number;
  historyLimitDays?: number;
}

/**
 * The `presences`, `server_timestamp` and `presence_last_update_id` of register and POST
 * /users/me/presence (Zulip's get_presence_response): active human users sharing their presence
 * (not invisible), keyed by email (legacy) or user id (modern, also whenever last_update_id is
 * passed). A first fetch (no last_update_id, or one <= 0) has only users connected within the
 * history limit (14 days unless asked; 0 asks for nobody); a later one has every user whose record
 * changed after last_update_id. `presences` is JSON text shared by the answers of one realm version.
 */
export async function presenceAnswer(store: PresenceStore, realmId: number, nowMs: number, q: PresenceQuery): Promise<Record<string, unknown>> {
  const { realm, members } = await store.answerState(realmId);
  const modern = q.slim || q.lastUpdateId !== undefined;
  const text = realm.text[modern ? 'modern' : 'legacy'];
  const after = q.lastUpdateId;
  const days = q.historyLimitDays ?? DEFAULT_HISTORY_LIMIT_DAYS;
  let found: { presences: unknown; maxId: number };
  // history_limit_days=0 asks for no presence data at all, whatever last_update_id says (as Zulip).
  if (days === 0) found = { presences: {}, maxId: -1 };
  else if (after !== undefined && after > 0) found = text.since(realm.byUser, realm.lastUpdateId, members, after);
  else found = text.whole(realm.byUser, realm.lastUpdateId, members, Math.floor(nowMs / 1000), days * 86_400, after);
  // With nothing newer, the client's own value back: it tells the client nothing changed.
  const last = found.maxId >= 0 ? found.maxId : (after ?? -1);
  return { presences: found.presences, server_timestamp: nowMs / 1000, presence_last_update_id: last };
}

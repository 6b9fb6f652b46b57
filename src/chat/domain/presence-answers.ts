// The `presences` member of POST /users/me/presence, GET /realm/presence and register, as JSON text
// made once per realm version and shared by every answer (fast path "JSON splicing",
// platform/db/fast/README.md): the ping every client sends each minute is answered with the whole
// realm's presence, and building and serializing 200 users' objects for each ping cost five times
// the rest of the request (`npm run bench -- presence`, docs/decisions).
//
// Staleness: none. An answer made from the cache is byte for byte the one made afresh at that moment,
// because everything it depends on is part of the cache's key or bounds its life:
// - the records: every change to one moves the realm's update counter (PresenceStore.ping), which
//   is the version the cache is kept for;
// - the users (email, active, bot, invisible mode, date joined): the member list object, which
//   PresenceStore keeps the same only while its content is (re-read after a write to chat_users and
//   at least every READ_CACHE_TTL_MS, the bound for writes by other processes it has for any read);
// - the time: the only time-dependent rule is the history limit (users last connected before it are
//   left out of a first fetch), so a kept answer for a limit is used only until the oldest user in it
//   falls out of the window, and never when the clock has gone back past when it was made.
// Bounds: one entry per user and format, and MAX_LIMITS kept answers per format (by history limit).
import { JsonText } from '../../platform/db/fast/json-text.js';
import type { Member, PresenceRecord } from './presence.js';

/** Distinct history limits whose whole answer is kept per realm and format (clients use one or two). */
const MAX_LIMITS = 4;

export type PresenceFormat = 'legacy' | 'modern';

/** The realm's users as presence needs them, with the same identity while their content is unchanged. */
export interface MemberIndex {
  readonly list: readonly Member[];
  readonly byId: ReadonlyMap<number, Member>;
}

/** One user's member of `presences`, `"key":{...}`, for one record version. */
interface Fragment {
  updateId: number;
  member: Member;
  connected: number;
  json: string;
}

/** The whole `presences` for one history limit. */
interface WholeAnswer {
  text: JsonText;
  /** The largest and smallest update ids in it (-1 and +Infinity when it is empty). */
  maxId: number;
  minId: number;
  /** Unix seconds: made at, and right until (the oldest user in it is still within the limit). */
  madeAt: number;
  validUntil: number;
}

/** What one realm version looks like in one format. */
interface Version {
  lastUpdateId: number;
  members: MemberIndex;
  /** Every shown user's fragment (active humans sharing their presence), in no particular order. */
  shown: Fragment[];
  /** `shown` by update id, made when a client first asks for changes since an update id. */
  byUpdate?: Fragment[];
  whole: Map<number, WholeAnswer>;
}

export interface PresencesText {
  presences: JsonText;
  /** The largest update id in `presences`, -1 when it is empty. */
  maxId: number;
}

/** Zulip's legacy status: active while the last active time is close to the last connection. */
export const LEGACY_ACTIVITY_OFFSET_SECONDS = 70;

/**
 * A user's last active time as Zulip shows it: a user who never reported being active has their
 * date joined in its place (Zulip's user_presence_datetime_with_date_joined_default).
 */
export function shownActive(r: PresenceRecord, dateJoined: number): number {
  return r.active ?? dateJoined;
}

/** Zulip's legacy {status, timestamp}. */
export function legacyStatus(r: PresenceRecord, dateJoined: number): { status: 'active' | 'idle'; timestamp: number } {
  const active = shownActive(r, dateJoined);
  if (active + LEGACY_ACTIVITY_OFFSET_SECONDS >= r.connected) return { status: 'active', timestamp: active };
  return { status: 'idle', timestamp: r.connected };
}

/** {website: {...}, aggregated: {...}}: since Zulip 7.0 the client is always "website". */
export function legacyPresence(r: PresenceRecord, dateJoined: number): Record<string, Record<string, unknown>> {
  const { status, timestamp } = legacyStatus(r, dateJoined);
  return {
    website: { client: 'website', status, timestamp, pushable: false },
    aggregated: { client: 'website', status, timestamp },
  };
}

/** {active_timestamp, idle_timestamp}. */
export function modernPresence(r: PresenceRecord, dateJoined: number): Record<string, number> {
  return { active_timestamp: shownActive(r, dateJoined), idle_timestamp: r.connected };
}

function fragmentJson(format: PresenceFormat, r: PresenceRecord, m: Member): string {
  return format === 'legacy' ? `${JSON.stringify(m.email)}:${JSON.stringify(legacyPresence(r, m.dateJoined))}` : `"${r.userId}":${JSON.stringify(modernPresence(r, m.dateJoined))}`;
}

/** `shared`: a whole answer, kept and answered to every ping until the realm changes (gzipped once). */
function joined(fragments: readonly Fragment[], shared = false): JsonText {
  let text = '{';
  for (let i = 0; i < fragments.length; i++) text += i === 0 ? fragments[i].json : `,${fragments[i].json}`;
  return new JsonText(`${text}}`, { shared });
}

/** Who is shown at all: Zulip leaves out deactivated users and bots; Keel also users in invisible mode. */
function shown(m: Member | undefined): m is Member {
  return m !== undefined && m.isActive && !m.isBot && m.presenceEnabled;
}

/** One realm's presences in one format, kept per realm version. */
export class RealmPresenceText {
  private readonly format: PresenceFormat;
  /** Each user's latest fragment, reused while their record and member are the same. */
  private fragments = new Map<number, Fragment>();
  private version: Version | undefined;

  constructor(format: PresenceFormat) {
    this.format = format;
  }

  /** The realm's version, made from the records when the update counter or the members moved. */
  private current(records: ReadonlyMap<number, PresenceRecord>, lastUpdateId: number, members: MemberIndex): Version {
    const v = this.version;
    if (v && v.lastUpdateId === lastUpdateId && v.members === members) return v;
    const fragments = new Map<number, Fragment>();
    const list: Fragment[] = [];
    for (const r of records.values()) {
      const m = members.byId.get(r.userId);
      if (!shown(m)) continue;
      let f = this.fragments.get(r.userId);
      if (!f || f.updateId !== r.updateId || (f.member !== m && (f.member.email !== m.email || f.member.dateJoined !== m.dateJoined))) {
        f = { updateId: r.updateId, member: m, connected: r.connected, json: fragmentJson(this.format, r, m) };
      }
      fragments.set(r.userId, f);
      list.push(f);
    }
    // Users no longer shown (or gone) drop their fragment here: the map holds shown users only.
    this.fragments = fragments;
    this.version = { lastUpdateId, members, shown: list, whole: new Map() };
    return this.version;
  }

  /**
   * `presences` for a first fetch: users connected within `limitSeconds` of `nowS`, with an update
   * id above `after` (Zulip filters by both when a client passes last_update_id <= 0).
   */
  whole(records: ReadonlyMap<number, PresenceRecord>, lastUpdateId: number, members: MemberIndex, nowS: number, limitSeconds: number, after?: number): PresencesText {
    const v = this.current(records, lastUpdateId, members);
    let w = v.whole.get(limitSeconds);
    if (!w || nowS > w.validUntil || nowS < w.madeAt) {
      const since = nowS - limitSeconds;
      const within = v.shown.filter((f) => f.connected >= since);
      let maxId = -1;
      let minId = Number.POSITIVE_INFINITY;
      let oldest = Number.POSITIVE_INFINITY;
      for (const f of within) {
        if (f.updateId > maxId) maxId = f.updateId;
        if (f.updateId < minId) minId = f.updateId;
        if (f.connected < oldest) oldest = f.connected;
      }
      w = { text: joined(within, true), maxId, minId, madeAt: nowS, validUntil: oldest + limitSeconds };
      if (!v.whole.has(limitSeconds) && v.whole.size >= MAX_LIMITS) v.whole.delete(v.whole.keys().next().value!);
      v.whole.set(limitSeconds, w);
    }
    // Update ids start at 1, so `after` <= 0 leaves everyone in; anything else is filtered here.
    if (after === undefined || after < w.minId) return { presences: w.text, maxId: w.maxId };
    const since = nowS - limitSeconds;
    const picked = v.shown.filter((f) => f.connected >= since && f.updateId > after);
    return { presences: joined(picked), maxId: picked.reduce((n, f) => Math.max(n, f.updateId), -1) };
  }

  /** `presences` of the users whose record changed after update id `after` (no history limit). */
  since(records: ReadonlyMap<number, PresenceRecord>, lastUpdateId: number, members: MemberIndex, after: number): PresencesText {
    const v = this.current(records, lastUpdateId, members);
    if (!v.byUpdate) v.byUpdate = [...v.shown].sort((a, b) => a.updateId - b.updateId);
    const list = v.byUpdate;
    // The first fragment with an update id above `after`.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid].updateId > after) hi = mid;
      else lo = mid + 1;
    }
    const picked = list.slice(lo);
    return { presences: joined(picked), maxId: picked.length ? picked[picked.length - 1].updateId : -1 };
  }
}

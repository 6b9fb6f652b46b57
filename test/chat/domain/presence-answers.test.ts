// The rules of the cached `presences` (src/chat/domain/presence-answers.ts): one JSON text per realm
// version, shared while nothing it depends on moved, and made again the moment something did (a
// record's update id, the member list, the history window, the clock going back); the answer from
// the cache equals the one made afresh, and the kept texts are bounded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RealmPresenceText, type MemberIndex } from '../../../src/chat/domain/presence-answers.js';
import type { Member, PresenceRecord } from '../../../src/chat/domain/presence.js';

const DAY = 86_400;
const NOW = 1_800_000_000;

function member(id: number, over: Partial<Member> = {}): Member {
  return { id, email: `u${id}@example.com`, isActive: true, presenceEnabled: true, isBot: false, dateJoined: NOW - 30 * DAY, ...over };
}
function index(list: Member[]): MemberIndex {
  return { list, byId: new Map(list.map((m) => [m.id, m])) };
}

/** A realm's presence map as PresenceStore keeps it: records changed in place, each change a new update id. */
class Realm {
  byUser = new Map<number, PresenceRecord>();
  lastUpdateId = 0;
  set(userId: number, active: number | null, connected: number): void {
    this.byUser.set(userId, { userId, active, connected, updateId: ++this.lastUpdateId });
  }
}

const parse = (r: { presences: unknown }) => JSON.parse(JSON.stringify(r.presences));

describe('cached presences', () => {
  it('shares one text while nothing moved, and makes it again when a record changes', () => {
    const realm = new Realm();
    const members = index([member(1), member(2)]);
    realm.set(1, NOW, NOW);
    const text = new RealmPresenceText('legacy');
    const a = text.whole(realm.byUser, realm.lastUpdateId, members, NOW, 14 * DAY);
    const b = text.whole(realm.byUser, realm.lastUpdateId, members, NOW + 30, 14 * DAY);
    assert.equal(a.presences, b.presences, 'the same text object, not a copy');
    assert.deepEqual(parse(a), {
      'u1@example.com': { website: { client: 'website', status: 'active', timestamp: NOW, pushable: false }, aggregated: { client: 'website', status: 'active', timestamp: NOW } },
    });
    // A record changed in place (as a ping does): a new update id, so a new text.
    const r1 = realm.byUser.get(1)!;
    Object.assign(r1, { connected: NOW + 200, updateId: ++realm.lastUpdateId });
    const c = text.whole(realm.byUser, realm.lastUpdateId, members, NOW + 200, 14 * DAY);
    assert.notEqual(c.presences, a.presences);
    assert.deepEqual(parse(c)['u1@example.com'].aggregated, { client: 'website', status: 'idle', timestamp: NOW + 200 });
    assert.equal(c.maxId, realm.lastUpdateId);
    realm.set(2, null, NOW + 201);
    const d = text.whole(realm.byUser, realm.lastUpdateId, members, NOW + 201, 14 * DAY);
    assert.deepEqual(Object.keys(parse(d)).sort(), ['u1@example.com', 'u2@example.com']);
  });

  it('follows the members: deactivated, bots and invisible users are left out, a new email is the new key', () => {
    const realm = new Realm();
    realm.set(1, NOW, NOW);
    realm.set(2, NOW, NOW);
    realm.set(3, NOW, NOW);
    const text = new RealmPresenceText('legacy');
    const keys = (members: MemberIndex) => Object.keys(parse(text.whole(realm.byUser, realm.lastUpdateId, members, NOW, 14 * DAY))).sort();
    assert.deepEqual(keys(index([member(1), member(2), member(3)])), ['u1@example.com', 'u2@example.com', 'u3@example.com']);
    assert.deepEqual(keys(index([member(1), member(2, { isActive: false }), member(3)])), ['u1@example.com', 'u3@example.com']);
    assert.deepEqual(keys(index([member(1), member(2), member(3, { presenceEnabled: false })])), ['u1@example.com', 'u2@example.com']);
    assert.deepEqual(keys(index([member(1, { isBot: true }), member(2), member(3)])), ['u2@example.com', 'u3@example.com']);
    assert.deepEqual(keys(index([member(1, { email: 'user1@example.com' }), member(2), member(3)])), ['u2@example.com', 'u3@example.com', 'user1@example.com']);
    assert.deepEqual(keys(index([member(2)])), ['u2@example.com'], 'a user gone from the realm');
  });

  it('lets a user fall out of the history window as time passes, and never serves a text made in the future', () => {
    const realm = new Realm();
    const members = index([member(1), member(2)]);
    realm.set(1, NOW - 10 * DAY, NOW - 10 * DAY);
    realm.set(2, NOW, NOW);
    const text = new RealmPresenceText('modern');
    const ids = (nowS: number) => Object.keys(parse(text.whole(realm.byUser, realm.lastUpdateId, members, nowS, 14 * DAY))).sort();
    assert.deepEqual(ids(NOW), ['1', '2']);
    assert.deepEqual(ids(NOW + 4 * DAY), ['1', '2'], 'exactly 14 days: still in');
    assert.deepEqual(ids(NOW + 4 * DAY + 1), ['2'], 'one second more: out');
    // The clock set back: the text made later is not used.
    assert.deepEqual(ids(NOW), ['1', '2']);
    // Another limit is another text.
    assert.deepEqual(Object.keys(parse(text.whole(realm.byUser, realm.lastUpdateId, members, NOW + 4 * DAY + 1, 30 * DAY))).sort(), ['1', '2']);
  });

  it('gives the modern form with date joined for a user never active, and changes since an update id', () => {
    const realm = new Realm();
    const m2 = member(2);
    const members = index([member(1), m2]);
    realm.set(1, NOW, NOW);
    realm.set(2, null, NOW + 5);
    const text = new RealmPresenceText('modern');
    assert.deepEqual(parse(text.whole(realm.byUser, realm.lastUpdateId, members, NOW + 5, 14 * DAY)), {
      1: { active_timestamp: NOW, idle_timestamp: NOW },
      2: { active_timestamp: m2.dateJoined, idle_timestamp: NOW + 5 },
    });
    const first = realm.lastUpdateId;
    realm.set(1, NOW + 100, NOW + 100);
    const since = text.since(realm.byUser, realm.lastUpdateId, members, first);
    assert.deepEqual(parse(since), { 1: { active_timestamp: NOW + 100, idle_timestamp: NOW + 100 } });
    assert.equal(since.maxId, realm.lastUpdateId);
    const nothing = text.since(realm.byUser, realm.lastUpdateId, members, realm.lastUpdateId);
    assert.deepEqual([parse(nothing), nothing.maxId], [{}, -1]);
    // last_update_id <= 0 with the window: everyone within it (update ids start at 1).
    assert.deepEqual(Object.keys(parse(text.whole(realm.byUser, realm.lastUpdateId, members, NOW + 100, 14 * DAY, 0))).sort(), ['1', '2']);
  });

  it('equals the answer made afresh, after any sequence of changes', () => {
    const realm = new Realm();
    let members = index([1, 2, 3, 4, 5].map((id) => member(id)));
    const cached = new RealmPresenceText('legacy');
    let now = NOW;
    // A fixed pseudo-random walk: pings, members changing, time passing.
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let step = 0; step < 300; step++) {
      const what = rand(4);
      const id = 1 + rand(5);
      if (what === 0) realm.set(id, rand(2) ? now : null, now);
      else if (what === 1) members = index(members.list.map((m) => (m.id === id ? { ...m, isActive: !m.isActive } : m)));
      else now += rand(3) * DAY;
      const fromCache = parse(cached.whole(realm.byUser, realm.lastUpdateId, members, now, 14 * DAY));
      const fresh = parse(new RealmPresenceText('legacy').whole(realm.byUser, realm.lastUpdateId, members, now, 14 * DAY));
      assert.deepEqual(fromCache, fresh, `step ${step}`);
    }
  });

  it('keeps at most four history limits per version', () => {
    const realm = new Realm();
    const members = index([member(1)]);
    realm.set(1, NOW, NOW);
    const text = new RealmPresenceText('modern');
    const first = text.whole(realm.byUser, realm.lastUpdateId, members, NOW, 1 * DAY).presences;
    for (const days of [2, 3, 4, 5]) text.whole(realm.byUser, realm.lastUpdateId, members, NOW, days * DAY);
    assert.notEqual(text.whole(realm.byUser, realm.lastUpdateId, members, NOW, 1 * DAY).presences, first, 'the oldest limit was dropped');
    assert.equal(text.whole(realm.byUser, realm.lastUpdateId, members, NOW, 5 * DAY).presences, text.whole(realm.byUser, realm.lastUpdateId, members, NOW, 5 * DAY).presences);
  });
});

// Presence and status in process, on a manual clock: POST /users/me/presence (legacy, slim and
// last_update_id answers, ping_only, the minimum update interval, events only when a user comes
// back or becomes active), batched writes to the store, GET /realm/presence and one user's
// presence, invisible mode through `away`, POST/GET status and user_status events, register state.
// Every 2xx answer (and every event) is checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { PresenceStore } from '../../../src/chat/domain/presence.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;
type Ev = Record<string, any>;

await forEachEngine('chat presence and status', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient, bobId: number;
  let carol: InProcessClient, carolId: number;
  let bobQueue: string;
  let bobSeen = -1;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob', 'carol'] });
    ({ storage, chat } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
    ({ client: carol, id: carolId } = realm.members.carol);
    const q = await bob.call('POST', '/register', { event_types: ['presence', 'user_status'] });
    bobQueue = q.body.queue_id;
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const ping = (c: InProcessClient, params: Record<string, unknown>) => ok(c, 'POST', '/users/me/presence', { new_user_input: true, ...params });
  /** Bob's new events since the last call. */
  async function bobEvents(): Promise<Ev[]> {
    const events = (await ok(bob, 'GET', '/events', { queue_id: bobQueue, last_event_id: bobSeen, dont_block: true })).events as Ev[];
    if (events.length) bobSeen = events.at(-1)!.id;
    return events;
  }
  const seconds = () => Math.floor(chat.clock.now() / 1000);
  const realmId = async () => Number((await chat.ctx.chatDb.kysely.selectFrom('realms').select('id').executeTakeFirstOrThrow()).id);
  const presenceRows = async () => (await chat.ctx.chatDb.kysely.selectFrom('user_presence').selectAll().execute()).length;

  it('answers a ping with everyone in the legacy email-keyed form, and tells the others once', async () => {
    const t0 = seconds();
    const first = await ping(alice, { status: 'active' });
    assert.equal(first.zephyr_mirror_active, false);
    assert.deepEqual(first.presences, {
      'alice@example.com': {
        website: { client: 'website', status: 'active', timestamp: t0, pushable: false },
        aggregated: { client: 'website', status: 'active', timestamp: t0 },
      },
    });
    assert.equal(first.server_timestamp, chat.clock.now() / 1000);
    assert.equal(typeof first.presence_last_update_id, 'number');
    const [ev, ...rest] = await bobEvents();
    assert.deepEqual(rest, []);
    assert.deepEqual(
      { ...ev, id: 0 },
      {
        id: 0,
        type: 'presence',
        user_id: aliceId,
        email: 'alice@example.com',
        server_timestamp: chat.clock.now() / 1000,
        presence: { website: { client: 'website', status: 'active', timestamp: t0, pushable: false } },
      },
    );
    // Every minute, as clients ping: no event while she stays online and active.
    for (let i = 0; i < 3; i++) {
      chat.clock.advance(60_000);
      await ping(alice, { status: 'active' });
    }
    assert.deepEqual(await bobEvents(), []);
  });

  it('keeps pings in memory and writes them in one batch', async () => {
    await ping(bob, { status: 'idle', ping_only: true });
    const before = await presenceRows();
    assert.equal(before, 0, 'no ping wrote to the store');
    await chat.presence.flush();
    assert.equal(await presenceRows(), 2);
    // A restarted server reads them back.
    const fresh = new PresenceStore(chat.ctx.chatDb, chat.clock, chat.ctx.log, { flushEveryMs: 0 });
    const again = await fresh.records(await realmId());
    const mine = await chat.presence.records(await realmId());
    assert.deepEqual(
      again.records.sort((a, b) => a.userId - b.userId),
      mine.records.sort((a, b) => a.userId - b.userId),
    );
    assert.equal(again.lastUpdateId, mine.lastUpdateId);
    await fresh.close();
  });

  it('answers slim_presence and last_update_id in the modern form, ping_only with nothing', async () => {
    const only = await ping(alice, { status: 'active', ping_only: true });
    assert.deepEqual(only, { result: 'success', msg: '', zephyr_mirror_active: false });
    const slim = await ping(alice, { status: 'active', slim_presence: true });
    assert.deepEqual(Object.keys(slim.presences).sort(), [String(aliceId), String(bobId)].sort());
    assert.deepEqual(Object.keys(slim.presences[String(aliceId)]).sort(), ['active_timestamp', 'idle_timestamp']);
    // Bob never reported active: Zulip shows his date joined as his last active time.
    const bobJoined = (await chat.ctx.chatDb.kysely.selectFrom('chat_users').select('date_joined').where('id', '=', bobId).executeTakeFirstOrThrow()).date_joined;
    assert.deepEqual(
      slim.presences[String(bobId)],
      { active_timestamp: Math.floor(Number(bobJoined) / 1000), idle_timestamp: slim.presences[String(bobId)].idle_timestamp },
      'bob never reported active',
    );
    const all = await ping(alice, { status: 'active', last_update_id: -1 });
    const last = all.presence_last_update_id as number;
    assert.ok(last >= 2);
    const same = await ping(alice, { status: 'active', last_update_id: last });
    assert.deepEqual(same.presences, {}, 'nothing changed since');
    assert.equal(same.presence_last_update_id, last);
    chat.clock.advance(60_000);
    await ping(bob, { status: 'idle', ping_only: true });
    const newer = await ping(alice, { status: 'active', last_update_id: last });
    // Alice's own ping came first in this request, then bob's is older: both changed after `last`.
    assert.deepEqual(Object.keys(newer.presences).sort(), [String(aliceId), String(bobId)].sort());
    assert.ok(newer.presence_last_update_id > last);
    const bad = await alice.call('POST', '/users/me/presence', { status: 'busy' });
    assert.deepEqual([bad.status, bad.body.msg], [400, 'Invalid status: busy']);
  });

  it('turns idle after activity stops, offline after the threshold, and says so only when she is back', async () => {
    await bobEvents();
    // Idle pings for three minutes: connected moves, active stays.
    for (let i = 0; i < 3; i++) {
      chat.clock.advance(60_000);
      await ping(alice, { status: 'idle', ping_only: true });
    }
    const r = await ok(bob, 'GET', '/realm/presence');
    assert.equal(r.presences['alice@example.com'].aggregated.status, 'idle');
    assert.equal(r.presences['alice@example.com'].website.timestamp, seconds());
    assert.deepEqual(await bobEvents(), [], 'going idle is worked out by clients from the timestamps');
    // Active again after more than the threshold of idleness: an event.
    chat.clock.advance(60_000);
    await ping(alice, { status: 'active', ping_only: true });
    const [back] = await bobEvents();
    assert.equal(back.presence.website.status, 'active');
    // Gone for longer than 140 s, then back (even idle): an event.
    chat.clock.advance(150_000);
    const one = await ok(bob, 'GET', `/users/${aliceId}/presence`);
    assert.deepEqual(one.presence.aggregated.status, 'offline');
    assert.deepEqual(one.presence.website.status, 'active');
    await ping(alice, { status: 'idle', ping_only: true });
    const [online] = await bobEvents();
    assert.equal(online.user_id, aliceId);
    const byEmail = await ok(bob, 'GET', '/users/alice@example.com/presence');
    assert.deepEqual(Object.keys(byEmail.presence).sort(), ['aggregated', 'website']);
    assert.deepEqual(Object.keys(byEmail.presence.website).sort(), ['status', 'timestamp']);
  });

  it('refuses presence of bots, of unknown users and of users without any', async () => {
    const bot = await ok(chat.owner, 'POST', '/bots', { full_name: 'Robo', short_name: 'robo' });
    const r1 = await bob.call('GET', `/users/${bot.user_id}/presence`);
    assert.deepEqual([r1.status, r1.body.msg], [400, 'Presence is not supported for bot users.']);
    const r2 = await bob.call('GET', '/users/999999/presence');
    assert.deepEqual([r2.status, r2.body.msg], [400, 'No such user']);
    const r3 = await bob.call('GET', `/users/${carolId}/presence`);
    assert.deepEqual([r3.status, r3.body.msg], [400, `No presence data for ${carolId}`]);
  });

  it('limits the first fetch to history_limit_days', async () => {
    chat.clock.advance(15 * 86_400_000);
    await ping(carol, { status: 'active', ping_only: true });
    const recent = await ping(carol, { status: 'active', slim_presence: true });
    assert.deepEqual(Object.keys(recent.presences), [String(carolId)], 'the default 14 days leave out alice and bob');
    const longer = await ping(carol, { status: 'active', slim_presence: true, history_limit_days: 30 });
    assert.deepEqual(Object.keys(longer.presences).sort(), [String(aliceId), String(bobId), String(carolId)].sort());
    const reg = await ok(carol, 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true, presence_history_limit_days: 30 });
    assert.deepEqual(Object.keys(reg.presences).sort(), [String(aliceId), String(bobId), String(carolId)].sort());
    assert.equal(typeof reg.presence_last_update_id, 'number');
    const legacy = await ok(carol, 'POST', '/register', { fetch_event_types: ['presence'] });
    assert.deepEqual(Object.keys(legacy.presences), ['carol@example.com']);
    assert.equal(legacy.server_presence_ping_interval_seconds, undefined, 'realm fields only with realm');
    const realm = await ok(carol, 'POST', '/register', { fetch_event_types: ['realm'] });
    assert.equal(realm.server_presence_ping_interval_seconds, 60);
    assert.equal(realm.server_presence_offline_threshold_seconds, 140);
    assert.equal(realm.server_typing_started_expiry_period_milliseconds, 45_000);
  });

  it('sets, reports and clears a status, with user_status events', async () => {
    await bobEvents();
    await ok(alice, 'POST', '/users/me/status', { status_text: '  on vacation ', emoji_name: 'car' });
    const [ev] = await bobEvents();
    assert.deepEqual({ ...ev, id: 0 }, { id: 0, type: 'user_status', user_id: aliceId, status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });
    assert.deepEqual((await ok(bob, 'GET', `/users/${aliceId}/status`)).status, { status_text: 'on vacation', emoji_name: 'car', emoji_code: '1f697', reaction_type: 'unicode_emoji' });
    // Only what was passed changes.
    await ok(alice, 'POST', '/users/me/status', { status_text: 'back soon' });
    assert.deepEqual(
      (await bobEvents()).map((e) => Object.keys(e).sort()),
      [['id', 'status_text', 'type', 'user_id']],
    );
    assert.equal((await ok(bob, 'GET', `/users/${aliceId}/status`)).status.emoji_code, '1f697');
    await ok(alice, 'POST', '/users/me/status', { emoji_name: 'zulip', reaction_type: 'zulip_extra_emoji' });
    const reg = await ok(bob, 'POST', '/register', { fetch_event_types: ['user_status'] });
    assert.deepEqual(reg.user_status, { [String(aliceId)]: { status_text: 'back soon', emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' } });
    await ok(alice, 'POST', '/users/me/status', { status_text: '', emoji_name: '' });
    assert.deepEqual((await ok(bob, 'GET', `/users/${aliceId}/status`)).status, {});
    assert.deepEqual((await ok(bob, 'POST', '/register', { fetch_event_types: ['user_status'] })).user_status, {});
    const cleared = (await bobEvents()).at(-1)!;
    assert.deepEqual([cleared.status_text, cleared.emoji_name, cleared.emoji_code, cleared.reaction_type], ['', '', '', 'unicode_emoji']);
  });

  it('refuses bad statuses and changes nothing', async () => {
    await bobEvents();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'Client did not pass any new values.'],
      [{ status_text: 'x'.repeat(61) }, 'status_text is too long (limit: 60 characters)'],
      [{ status_text: 'hi', emoji_code: '1f697' }, 'Client must pass emoji_name if they pass either emoji_code or reaction_type.'],
      [{ emoji_name: 'no_such_emoji_here' }, "Emoji 'no_such_emoji_here' does not exist"],
      [{ emoji_name: 'car', emoji_code: '1f600' }, 'Invalid emoji name.'],
      [{ emoji_name: 'car', emoji_code: 'zzzz' }, 'Invalid emoji code.'],
      [{ emoji_name: 'party', emoji_code: '1', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
      [{ emoji_name: 'car', reaction_type: 'sticker' }, 'Invalid emoji type.'],
    ];
    for (const [params, msg] of cases) {
      const r = await alice.call('POST', '/users/me/status', params);
      assert.deepEqual([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', msg], JSON.stringify(params));
    }
    assert.deepEqual((await ok(bob, 'GET', `/users/${aliceId}/status`)).status, {});
    assert.deepEqual(await bobEvents(), []);
    const r = await bob.call('GET', '/users/999999/status');
    assert.deepEqual([r.status, r.body.msg], [400, 'No such user']);
  });

  it('away is invisible mode: pings are not recorded or shown until it is turned off', async () => {
    await ping(alice, { status: 'active', ping_only: true });
    await bobEvents();
    await ok(alice, 'POST', '/users/me/status', { away: true });
    const [ev] = await bobEvents();
    assert.deepEqual([ev.type, ev.away], ['user_status', true]);
    assert.deepEqual((await ok(bob, 'GET', `/users/${aliceId}/status`)).status, { away: true });
    assert.deepEqual((await ok(bob, 'POST', '/register', { fetch_event_types: ['user_status'] })).user_status, { [String(aliceId)]: { away: true } });
    const seen = await ok(bob, 'GET', '/realm/presence');
    assert.equal('alice@example.com' in seen.presences, false);
    const before = (await chat.presence.records(await realmId())).records.find((r) => r.userId === aliceId)!;
    chat.clock.advance(200_000);
    await ping(alice, { status: 'active' });
    const after = (await chat.presence.records(await realmId())).records.find((r) => r.userId === aliceId)!;
    assert.deepEqual(after, before, 'an invisible user’s ping is not recorded');
    assert.deepEqual(
      (await bobEvents()).filter((e) => e.type === 'presence'),
      [],
    );
    const r = await alice.call('GET', `/users/${aliceId}/presence`);
    assert.equal(r.body.msg, `No presence data for ${aliceId}`);
    await ok(alice, 'POST', '/users/me/status', { away: false });
    await ping(alice, { status: 'active', ping_only: true });
    assert.deepEqual(
      (await bobEvents()).map((e) => e.type),
      ['user_status', 'presence'],
    );
  });
});

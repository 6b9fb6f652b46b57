// Black-box: credentials taken away end at once. A poll parked before its user was deactivated (or
// got a new key) is answered BAD_EVENT_QUEUE_ID and receives nothing sent after; the old key is
// refused on the next request. The bot management endpoints (GET/PATCH/DELETE /bots, key
// regeneration) and POST /users/me/api_key/regenerate, with Zulip's answers, permission rules and
// events; the per-user bound on live queues. Every 2xx answer is checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm } from '../../helpers/chat-realm.js';
import type { RunningServer, Storage } from '../../helpers/server.js';
import { ChatClient, type ChatReply } from '../../helpers/chat-client.js';
import { drain, makeUser, refused, register } from '../../helpers/chat-users.js';
import { DEFAULT_LIMITS } from '../../../src/chat/events/hub.js';

type Ev = Record<string, any>;

await forEachEngine('chat credentials revoked', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;

  before(async () => {
    ({ storage, server, owner } = await servedRealm(engine, { channel: { name: 'general', subscribers: ['owner'] } }));
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  const user = (name: string, role?: number) => makeUser(owner, server.chatUrl, name, role);

  /**
   * A poll parked on an empty queue: started, then given time to park (a poll that came later than
   * the revocation would be refused at authentication instead, never answered with events).
   */
  async function parkedPoll(c: ChatClient, queueId: string, lastEventId: number): Promise<{ reply: Promise<ChatReply> }> {
    const reply = c.get('/events', { queue_id: queueId, last_event_id: lastEventId });
    await sleep(400);
    // Wrapped: an async function returning the promise itself would wait for the answer.
    return { reply };
  }

  /** A queue with nothing pending, and the id to poll from. */
  async function quietQueue(c: ChatClient, params: Record<string, unknown> = {}): Promise<{ id: string; last: number }> {
    const q = await register(c, { fetch_event_types: [], ...params });
    return { id: q.queue_id, last: q.last_event_id };
  }

  async function sendToGeneral(content: string) {
    const r = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'revocation', content });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }

  function endedQueue(r: ChatReply, queueId: string): void {
    refused(r, 'BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`);
    assert.equal(r.body.queue_id, queueId);
  }

  async function botOf(c: ChatClient, shortName: string): Promise<{ bot: ChatClient; id: number; email: string; apiKey: string }> {
    const r = await c.post('/bots', { full_name: `${shortName} bot`, short_name: shortName });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const email = `${shortName}-bot@${new URL(server.chatUrl).hostname}`;
    return { bot: new ChatClient(server.chatUrl, email, r.body.api_key), id: r.body.user_id, email, apiKey: r.body.api_key };
  }

  it('ends a poll parked before its user was deactivated, and sends it nothing produced after', async () => {
    const { client: alice, id } = await user('alice');
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [id] })).status, 200);
    const q = await quietQueue(alice);
    assert.deepEqual(await drain(alice, q.id, q.last), []);
    const poll = await parkedPoll(alice, q.id, q.last);
    assert.equal((await owner.call('DELETE', `/users/${id}`)).status, 200);
    await sendToGeneral('after the deactivation');
    endedQueue(await poll.reply, q.id);
    const after = await alice.get('/users/me');
    assert.deepEqual([after.status, after.body.code], [401, 'USER_DEACTIVATED']);
  });

  it('ends the queues of a user who deactivates their own account, and of the bots they own', async () => {
    const { client: dora } = await user('dora');
    const { bot, apiKey } = await botOf(dora, 'dora');
    const mine = await quietQueue(dora);
    const bots = await quietQueue(bot);
    const polls = [await parkedPoll(dora, mine.id, mine.last), await parkedPoll(bot, bots.id, bots.last)];
    assert.equal((await dora.call('DELETE', '/users/me')).status, 200);
    await sendToGeneral('after the self-deactivation');
    endedQueue(await polls[0].reply, mine.id);
    endedQueue(await polls[1].reply, bots.id);
    const refusedBot = await new ChatClient(server.chatUrl, bot.email, apiKey).get('/users/me');
    assert.deepEqual([refusedBot.status, refusedBot.body.code], [401, 'USER_DEACTIVATED']);
  });

  it("regenerates one's own key: the old key and its queues stop at once, the new key works", async () => {
    const { client: carol } = await user('carol');
    // The old key is in the credential cache: the next request must not be served from it.
    for (let i = 0; i < 3; i++) assert.equal((await carol.get('/users/me')).status, 200);
    const q = await quietQueue(carol);
    const poll = await parkedPoll(carol, q.id, q.last);
    const r = await carol.post('/users/me/api_key/regenerate');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['api_key', 'msg', 'result']);
    assert.match(r.body.api_key, /^[A-Za-z0-9]{32}$/);
    assert.notEqual(r.body.api_key, carol.apiKey);
    await sendToGeneral('after the new key');
    endedQueue(await poll.reply, q.id);
    const old = await carol.get('/users/me');
    assert.deepEqual([old.status, old.body.code], [401, 'INVALID_API_KEY']);
    const renewed = new ChatClient(server.chatUrl, carol.email, r.body.api_key);
    assert.equal((await renewed.get('/users/me')).status, 200);
    // fetch_api_key shows the new key.
    const shown = await owner.call('POST', '/fetch_api_key', { username: carol.email, password: 'pass-word-1' }, null);
    assert.equal(shown.body.api_key, r.body.api_key);
  });

  it('refuses POST /users/me/api_key/regenerate to bots', async () => {
    const { client: erin } = await user('erin');
    const { bot } = await botOf(erin, 'erin');
    refused(await bot.post('/users/me/api_key/regenerate'), 'BAD_REQUEST', 'This endpoint does not accept bot requests.');
    assert.equal((await bot.get('/users/me')).status, 200, 'the key is unchanged');
  });

  it("regenerates a bot's key for its owner or an administrator: realm_bot update to them, the bot's queues end", async () => {
    const { client: fay, id: fayId } = await user('fay');
    const { client: gus } = await user('gus');
    const { client: admin } = await user('hal', 200);
    const { client: guest } = await user('ivy', 600);
    const { bot, id: botId, email } = await botOf(fay, 'fay');
    const fayQ = await quietQueue(fay, { event_types: ['realm_bot'] });
    const adminQ = await quietQueue(admin, { event_types: ['realm_bot'] });
    const gusQ = await quietQueue(gus, { event_types: ['realm_bot'] });

    refused(await gus.post(`/bots/${botId}/api_key/regenerate`), 'BAD_REQUEST', 'Insufficient permission');
    refused(await guest.post(`/bots/${botId}/api_key/regenerate`), 'BAD_REQUEST', 'Not allowed for guest users');
    refused(await fay.post(`/bots/${fayId}/api_key/regenerate`), 'BAD_REQUEST', 'No such bot');
    refused(await fay.post('/bots/999999/api_key/regenerate'), 'BAD_REQUEST', 'No such bot');
    assert.equal((await bot.get('/users/me')).status, 200, 'refusals change nothing');

    const botQ = await quietQueue(bot);
    const poll = await parkedPoll(bot, botQ.id, botQ.last);
    const r = await fay.post(`/bots/${botId}/api_key/regenerate`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['api_key', 'msg', 'result']);
    endedQueue(await poll.reply, botQ.id);
    assert.deepEqual([(await bot.get('/users/me')).body.code], ['INVALID_API_KEY']);
    assert.equal((await new ChatClient(server.chatUrl, email, r.body.api_key).get('/users/me')).status, 200);
    const update = { type: 'realm_bot', op: 'update', bot: { user_id: botId, api_key: r.body.api_key } };
    assert.deepEqual(
      (await drain(fay, fayQ.id, fayQ.last)).map(({ id: _, ...e }) => e),
      [update],
    );
    assert.deepEqual(
      (await drain(admin, adminQ.id, adminQ.last)).map(({ id: _, ...e }) => e),
      [update],
    );
    assert.deepEqual(await drain(gus, gusQ.id, gusQ.last), [], 'not to a member who does not own the bot');

    // An administrator may too.
    const byAdmin = await admin.post(`/bots/${botId}/api_key/regenerate`);
    assert.equal(byAdmin.status, 200);
    assert.notEqual(byAdmin.body.api_key, r.body.api_key);
  });

  it("lists one's own active bots (GET /bots) as Zulip does", async () => {
    const { client: jon } = await user('jon');
    const { client: admin } = await user('kim', 200);
    const { client: guest } = await user('lea', 600);
    assert.deepEqual((await jon.get('/bots')).body.bots, []);
    const first = await botOf(jon, 'jon1');
    const second = await botOf(jon, 'jon2');
    const host = new URL(server.chatUrl).hostname;
    const listed = await jon.get('/bots');
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.bots.map((b: Ev) => [b.username, b.full_name, b.api_key]),
      [
        [`jon1-bot@${host}`, 'jon1 bot', first.apiKey],
        [`jon2-bot@${host}`, 'jon2 bot', second.apiKey],
      ],
    );
    assert.deepEqual(Object.keys(listed.body.bots[0]).sort(), [
      'api_key',
      'avatar_url',
      'default_all_public_streams',
      'default_events_register_stream',
      'default_sending_stream',
      'full_name',
      'username',
    ]);
    assert.match(listed.body.bots[0].avatar_url, /^https:\/\//);
    assert.deepEqual((await admin.get('/bots')).body.bots, [], "an administrator's list is their own bots");
    refused(await guest.get('/bots'), 'BAD_REQUEST', 'Not allowed for guest users');
    assert.equal((await jon.call('DELETE', `/bots/${first.id}`)).status, 200);
    assert.deepEqual(
      (await jon.get('/bots')).body.bots.map((b: Ev) => b.username),
      [`jon2-bot@${host}`],
      'deactivated bots are not listed',
    );
  });

  it('deactivates a bot (DELETE /bots/{bot_id}): its key and queues stop, is_active updates go out, again is a no-op', async () => {
    const { client: max } = await user('max');
    const { client: ned } = await user('ned');
    const { bot, id: botId } = await botOf(max, 'max');
    const maxQ = await quietQueue(max, { event_types: ['realm_bot', 'realm_user'] });
    refused(await ned.call('DELETE', `/bots/${botId}`), 'BAD_REQUEST', 'Insufficient permission');
    const botQ = await quietQueue(bot);
    const poll = await parkedPoll(bot, botQ.id, botQ.last);
    const r = await max.call('DELETE', `/bots/${botId}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await sendToGeneral('after the bot was deactivated');
    endedQueue(await poll.reply, botQ.id);
    assert.equal((await bot.get('/users/me')).body.code, 'USER_DEACTIVATED');
    const events = (await drain(max, maxQ.id, maxQ.last)).map(({ id: _, ...e }) => e);
    assert.deepEqual(events, [
      { type: 'realm_user', op: 'update', person: { user_id: botId, is_active: false } },
      { type: 'realm_bot', op: 'update', bot: { user_id: botId, is_active: false } },
    ]);
    assert.equal((await max.call('DELETE', `/bots/${botId}`)).status, 200, 'already deactivated: nothing to do');
    assert.deepEqual(await drain(max, maxQ.id, maxQ.last + events.length), []);
    const { id: humanId } = await user('oli');
    refused(await owner.call('DELETE', `/bots/${humanId}`), 'BAD_REQUEST', 'No such bot');
  });

  it('renames a bot and hands it to another owner (PATCH /bots/{bot_id}) with the events Zulip sends', async () => {
    const { client: pam } = await user('pam');
    const { client: quin, id: quinId } = await user('quin');
    const { client: admin } = await user('rey', 200);
    const { id: goneId } = await user('sol');
    assert.equal((await owner.call('DELETE', `/users/${goneId}`)).status, 200);
    const { id: botId, apiKey } = await botOf(pam, 'pam');
    const other = await botOf(pam, 'pam2');
    const types = { event_types: ['realm_bot', 'realm_user'] };
    const [pamQ, quinQ, adminQ] = [await quietQueue(pam, types), await quietQueue(quin, types), await quietQueue(admin, types)];
    const strip = (evs: Ev[]) => evs.map(({ id: _, ...e }) => e);

    const renamed = await pam.call('PATCH', `/bots/${botId}`, { full_name: '  Renamed bot ' });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.deepEqual(
      { ...renamed.body, avatar_url: typeof renamed.body.avatar_url },
      {
        result: 'success',
        msg: '',
        full_name: 'Renamed bot',
        avatar_url: 'string',
        service_interface: 1,
        service_payload_url: null,
        config_data: null,
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
        bot_owner: pam.email,
      },
    );
    const nameUser = { type: 'realm_user', op: 'update', person: { user_id: botId, full_name: 'Renamed bot' } };
    const nameBot = { type: 'realm_bot', op: 'update', bot: { user_id: botId, full_name: 'Renamed bot' } };
    assert.deepEqual(strip(await drain(pam, pamQ.id, pamQ.last)), [nameUser, nameBot]);
    assert.deepEqual(strip(await drain(quin, quinQ.id, quinQ.last)), [nameUser]);

    // Every refusal changes nothing.
    refused(await pam.call('PATCH', `/bots/${other.id}`, { full_name: 'Renamed bot' }), 'BAD_REQUEST', 'Name is already in use!');
    refused(await pam.call('PATCH', `/bots/${botId}`, { full_name: 'x', bot_owner_id: 999999 }), 'BAD_REQUEST', 'Failed to change owner, no such user');
    refused(await pam.call('PATCH', `/bots/${botId}`, { bot_owner_id: goneId }), 'BAD_REQUEST', 'Failed to change owner, user is deactivated');
    refused(await pam.call('PATCH', `/bots/${botId}`, { bot_owner_id: other.id }), 'BAD_REQUEST', "Failed to change owner, bots can't own other bots");
    refused(await quin.call('PATCH', `/bots/${botId}`, { full_name: 'Mine now' }), 'BAD_REQUEST', 'Insufficient permission');
    refused(await pam.call('PATCH', `/bots/${botId}`, { full_name: '' }), 'BAD_REQUEST', 'Name too short!');
    assert.equal((await owner.get(`/users/${botId}`)).body.user.full_name, 'Renamed bot');

    const handed = await pam.call('PATCH', `/bots/${botId}`, { bot_owner_id: quinId });
    assert.equal(handed.status, 200, JSON.stringify(handed.body));
    assert.equal(handed.body.bot_owner, quin.email);
    const ownerUser = { type: 'realm_user', op: 'update', person: { user_id: botId, bot_owner_id: quinId } };
    const pamEvents = strip(await drain(pam, pamQ.id, pamQ.last + 2));
    assert.deepEqual(pamEvents, [{ type: 'realm_bot', op: 'delete', bot: { user_id: botId } }, ownerUser]);
    const quinEvents = strip(await drain(quin, quinQ.id, quinQ.last + 1));
    assert.equal(quinEvents.length, 2, JSON.stringify(quinEvents));
    assert.deepEqual([quinEvents[0].op, quinEvents[0].bot.user_id, quinEvents[0].bot.owner_id, quinEvents[0].bot.api_key], ['add', botId, quinId, apiKey]);
    assert.deepEqual(quinEvents[1], ownerUser);
    const adminEvents = strip(await drain(admin, adminQ.id, adminQ.last)).filter((e) => e.type === 'realm_bot' && 'owner_id' in e.bot);
    assert.deepEqual(adminEvents, [{ type: 'realm_bot', op: 'update', bot: { user_id: botId, owner_id: quinId } }]);
    assert.deepEqual(
      (await pam.get('/bots')).body.bots.map((b: Ev) => b.api_key),
      [other.apiKey],
    );
    assert.deepEqual(
      (await quin.get('/bots')).body.bots.map((b: Ev) => b.api_key),
      [apiKey],
    );
    refused(await pam.post(`/bots/${botId}/api_key/regenerate`), 'BAD_REQUEST', 'Insufficient permission');
  });

  it(`keeps at most ${DEFAULT_LIMITS.maxQueuesPerUser} live queues per user: one more ends the least recently used`, async () => {
    const { client: uma } = await user('uma');
    const ids: string[] = [];
    for (let i = 0; i <= DEFAULT_LIMITS.maxQueuesPerUser; i++) ids.push((await quietQueue(uma, { event_types: ['message'] })).id);
    endedQueue(await uma.get('/events', { queue_id: ids[0], last_event_id: -1, dont_block: true }), ids[0]);
    for (const id of ids.slice(1)) assert.equal((await uma.get('/events', { queue_id: id, last_event_id: -1, dont_block: true })).status, 200);
    // A poll counts as use: the queue polled just now outlives the one registered after it.
    await uma.get('/events', { queue_id: ids[1], last_event_id: -1, dont_block: true });
    ids.push((await quietQueue(uma, { event_types: ['message'] })).id);
    assert.equal((await uma.get('/events', { queue_id: ids[1], last_event_id: -1, dont_block: true })).status, 200);
    endedQueue(await uma.get('/events', { queue_id: ids[2], last_event_id: -1, dont_block: true }), ids[2]);
  });
});

// Black-box: the edges of Zulip's event-queue protocol (zerver/tornado/event_queue.py fetch_events,
// get_events_backend, events_register_backend) over raw HTTP as the Python client sends it: the
// missing arguments, a queue registered on the fly by GET /events with dont_block, acknowledgements
// older than what the queue forgot or newer than what it gave out, register's client_capabilities
// with notification_settings_null, and a queue's own lifespan (issue 14 item 7).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, servedRealm, type InProcessRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import type { ChatClient } from '../../helpers/chat-client.js';
import { refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

await forEachEngine('chat event queue edges', (engine) => {
  let realm: ServedRealm;
  let owner: ChatClient;
  let ann: ChatClient, annId: number;
  let gus: ChatClient;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', ['gus', 600]], channel: { name: 'general', subscribers: ['owner', 'ann', 'gus'] } });
    owner = realm.owner;
    ({ client: ann, id: annId } = realm.members.ann);
    ({ client: gus } = realm.members.gus);
  });
  after(async () => {
    await realm?.stop();
  });

  const poll = (c: ChatClient, params: Record<string, unknown>) => c.get('/events', { dont_block: true, ...params });
  const send = async (params: Record<string, unknown>): Promise<number> => {
    const r = await owner.post('/messages', params);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id;
  };

  it("refuses a poll without queue_id (unless dont_block) or a queue_id without last_event_id, with Zulip's messages", async () => {
    const q = await register(ann, { event_types: ['message'] });
    // Plain BAD_REQUEST errors, not REQUEST_VARIABLE_MISSING: Zulip checks these two by hand.
    const noLast = await ann.get('/events', { queue_id: q.queue_id, dont_block: true });
    refused(noLast, 'BAD_REQUEST', "Missing 'last_event_id' argument");
    assert.equal(noLast.body.var_name, undefined);
    // Checked before the queue is looked up.
    refused(await ann.get('/events', { queue_id: 'no-such-queue', dont_block: true }), 'BAD_REQUEST', "Missing 'last_event_id' argument");
    refused(await ann.get('/events', {}), 'BAD_REQUEST', "Missing 'queue_id' argument");
    refused(await ann.get('/events', { last_event_id: -1, dont_block: false }), 'BAD_REQUEST', "Missing 'queue_id' argument");
    // An unknown queue: BAD_EVENT_QUEUE_ID carrying the queue_id, exactly Zulip's shape.
    const unknown = await ann.get('/events', { queue_id: 'no-such-queue', last_event_id: -1, dont_block: true });
    assert.deepEqual([unknown.status, unknown.body], [400, { result: 'error', code: 'BAD_EVENT_QUEUE_ID', msg: 'Bad event queue ID: no-such-queue', queue_id: 'no-such-queue' }]);
  });

  it('registers a queue on the fly for dont_block without queue_id, with the register parameters sent', async () => {
    const made = await poll(ann, { event_types: ['message'], narrow: [['is', 'dm']], apply_markdown: true });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.deepEqual(made.body.events, []);
    assert.match(made.body.queue_id, /^[0-9a-f-]{36}$/);
    const queueId = made.body.queue_id;
    await send({ type: 'stream', to: 'general', topic: 'on the fly', content: 'not for the dm narrow' });
    const dm = await send({ type: 'direct', to: [annId], content: '**bold**' });
    await owner.post('/users/me/status', { status_text: 'away' });
    const got = await poll(ann, { queue_id: queueId, last_event_id: -1 });
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.equal(got.body.queue_id, undefined, 'an answer given at once from an existing queue does not name it, as in Zulip');
    assert.deepEqual(
      got.body.events.map((e: Ev) => [e.type, e.message?.id]),
      [['message', dm]],
      'event_types and narrow apply',
    );
    assert.equal(got.body.events[0].message.content, '<p><strong>bold</strong></p>', 'apply_markdown applies');
    // Without apply_markdown (false by default, as in Zulip) the source is sent.
    const raw = (await poll(ann, { event_types: ['message'] })).body.queue_id;
    await send({ type: 'direct', to: [annId], content: '**raw**' });
    assert.equal((await poll(ann, { queue_id: raw, last_event_id: -1 })).body.events[0].message.content, '**raw**');
    // The queue is an ordinary one: deleted like any other.
    assert.equal((await ann.call('DELETE', '/events', { queue_id: queueId })).status, 200);
    assert.equal((await poll(ann, { queue_id: queueId, last_event_id: 0 })).body.code, 'BAD_EVENT_QUEUE_ID');
  });

  it('checks what registers on the fly as register checks it: the narrow, all_public_streams for guests', async () => {
    refused(await poll(ann, { narrow: [['search', 'x']] }), 'BAD_REQUEST', 'Operator search not supported.');
    refused(await poll(ann, { event_types: 'message' }), 'BAD_REQUEST', 'event_types is not valid JSON');
    refused(await poll(ann, { event_types: { message: true } }), 'BAD_REQUEST', 'event_types is not a list');
    refused(await poll(gus, { all_public_streams: true }), 'BAD_REQUEST', 'User not authorized for this query');
    // Zulip refuses all_public_streams to a guest on every poll, an existing queue's too.
    const q = await register(gus, { event_types: ['message'] });
    refused(await poll(gus, { queue_id: q.queue_id, last_event_id: -1, all_public_streams: true }), 'BAD_REQUEST', 'User not authorized for this query');
    const all = await poll(ann, { all_public_streams: true, event_types: ['message'] });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    const other = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'elsewhere' }] });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const id = await send({ type: 'stream', to: 'elsewhere', topic: 't', content: 'a public channel ann is not in' });
    assert.deepEqual(
      (await poll(ann, { queue_id: all.body.queue_id, last_event_id: -1 })).body.events.map((e: Ev) => e.message.id),
      [id],
    );
  });

  it("names the queue in the answer to a parked poll, as Zulip's finish_handler does", async () => {
    const q = await register(ann, { event_types: ['message'] });
    const parked = ann.get('/events', { queue_id: q.queue_id, last_event_id: -1 });
    // Let the poll park before the message is sent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const id = await send({ type: 'direct', to: [annId], content: 'wake up' });
    const woke = await parked;
    assert.equal(woke.status, 200, JSON.stringify(woke.body));
    assert.deepEqual([woke.body.queue_id, woke.body.events.map((e: Ev) => e.message.id)], [q.queue_id, [id]]);
  });

  it("refuses an acknowledgement of an event already dropped or never given out, as Zulip's queue does, dropping nothing", async () => {
    const q = await register(ann, { event_types: ['message'] });
    refused(await poll(ann, { queue_id: q.queue_id, last_event_id: -2 }), 'BAD_REQUEST', 'An event newer than -2 has already been pruned!');
    refused(await poll(ann, { queue_id: q.queue_id, last_event_id: 0 }), 'BAD_REQUEST', 'Event 0 was not in this queue');
    for (const n of [1, 2, 3]) await send({ type: 'stream', to: 'general', topic: 'acks', content: `m${n}` });
    refused(await poll(ann, { queue_id: q.queue_id, last_event_id: 3 }), 'BAD_REQUEST', 'Event 3 was not in this queue');
    const all = await poll(ann, { queue_id: q.queue_id, last_event_id: -1 });
    assert.deepEqual(
      all.body.events.map((e: Ev) => e.id),
      [0, 1, 2],
      'the refused acknowledgement dropped nothing',
    );
    const rest = await poll(ann, { queue_id: q.queue_id, last_event_id: 1 });
    assert.deepEqual(
      rest.body.events.map((e: Ev) => e.id),
      [2],
    );
    refused(await poll(ann, { queue_id: q.queue_id, last_event_id: 0 }), 'BAD_REQUEST', 'An event newer than 0 has already been pruned!');
    // The same acknowledgement again is fine (a retried poll), and so is the last id.
    assert.deepEqual((await poll(ann, { queue_id: q.queue_id, last_event_id: 1 })).body.events.length, 1);
    assert.deepEqual((await poll(ann, { queue_id: q.queue_id, last_event_id: 2 })).body.events, []);
  });

  it('refuses client_capabilities without notification_settings_null, as Zulip has since 2.1', async () => {
    refused(await ann.post('/register', { client_capabilities: { bulk_message_deletion: true } }), 'BAD_REQUEST', 'client_capabilities["notification_settings_null"] field is missing');
    refused(await ann.post('/register', { client_capabilities: {} }), 'BAD_REQUEST', 'client_capabilities["notification_settings_null"] field is missing');
    refused(
      await ann.post('/register', { client_capabilities: { notification_settings_null: true, bulk_message_deletion: 'yes' } }),
      'BAD_REQUEST',
      'client_capabilities["bulk_message_deletion"] is not a boolean',
    );
    refused(await ann.post('/register', { client_capabilities: [] }), 'BAD_REQUEST', 'client_capabilities is not a dict');
    // Left out entirely it is Zulip's default (notification_settings_null false).
    const plain = await register(ann, { fetch_event_types: ['subscription'] });
    const nulls = await register(ann, { fetch_event_types: ['subscription'], client_capabilities: { notification_settings_null: true, user_settings_object: true } });
    const general = (s: Ev) => s.subscriptions.find((x: Ev) => x.name === 'general');
    assert.deepEqual([typeof general(plain).desktop_notifications, general(nulls).desktop_notifications], ['boolean', null]);
  });

  it('takes queue_lifespan_secs as a non-negative integer', async () => {
    // Keel's message for any integer parameter below its minimum.
    refused(await ann.post('/register', { queue_lifespan_secs: -1 }), 'BAD_REQUEST', 'queue_lifespan_secs is not an integer');
    refused(await ann.post('/register', { queue_lifespan_secs: 1.5 }), 'BAD_REQUEST', 'queue_lifespan_secs is not an integer');
    refused(await poll(ann, { lifespan_secs: -5 }), 'BAD_REQUEST', 'lifespan_secs is not an integer');
    assert.equal((await ann.post('/register', { queue_lifespan_secs: 3600, event_types: ['message'] })).status, 200);
  });
});

await forEachEngine('chat event queue lifespans', (engine) => {
  let realm: InProcessRealm;

  before(async () => {
    realm = await inProcessRealm(engine, { members: ['alice'] });
  });
  after(async () => {
    await realm?.close();
  });

  const alive = async (queueId: string) => (await realm.members.alice.client.call('GET', '/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).status === 200;

  it("keeps a queue unpolled for the lifespan its client asked for (at most a week), else the server's 10 minutes", async () => {
    const { chat } = realm;
    const alice = realm.members.alice.client;
    const reg = async (params: Record<string, unknown>) => {
      const r = await alice.call('POST', '/register', { event_types: ['message'], ...params });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.queue_id as string;
    };
    const plain = await reg({});
    const zero = await reg({ queue_lifespan_secs: 0 });
    const hour = await reg({ queue_lifespan_secs: 3600 });
    const forever = await reg({ queue_lifespan_secs: 10 ** 9 });
    const fly = await alice.call('GET', '/events', { dont_block: true, lifespan_secs: 3600 });
    assert.equal(fly.status, 200, JSON.stringify(fly.body));
    chat.clock.advance(11 * 60_000);
    chat.events.sweep();
    assert.deepEqual([await alive(plain), await alive(zero), await alive(hour), await alive(fly.body.queue_id)], [false, false, true, true]);
    // Polled just now; an hour and a minute later both hour-long queues are gone.
    chat.clock.advance(61 * 60_000);
    chat.events.sweep();
    assert.deepEqual([await alive(hour), await alive(fly.body.queue_id), await alive(forever)], [false, false, true]);
    // Asked for far more than a week: a week is what it gets (Zulip's MAX_QUEUE_TIMEOUT_SECS).
    chat.clock.advance(7 * 24 * 3600_000 - 60_000);
    chat.events.sweep();
    assert.equal(await alive(forever), true);
    chat.clock.advance(7 * 24 * 3600_000);
    chat.events.sweep();
    assert.equal(await alive(forever), false);
  });
});

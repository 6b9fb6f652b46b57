// Black-box: rendering on send (mention flags), POST /messages/render, GET /messages/{id}, personal
// flags by ids and by narrow, and the deprecated mark-as-read endpoints, over raw HTTP.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

await forEachEngine('chat messages: rendering and flags', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let alice: ChatClient;
  let aliceId: number;
  let bob: ChatClient;
  let bobId: number;
  let streamId: number;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    const made: [ChatClient, number][] = [];
    for (const [email, name] of [
      ['alice@example.com', 'Alice Liddell'],
      ['bob@example.com', 'Bob'],
    ]) {
      const c = await owner.post('/users', { email, password: 'pass-word-1', full_name: name });
      assert.equal(c.body.result, 'success', JSON.stringify(c.body));
      const k = await owner.call('POST', '/fetch_api_key', { username: email, password: 'pass-word-1' }, null);
      made.push([new ChatClient(server.chatUrl, k.body.email, k.body.api_key), c.body.user_id]);
    }
    [[alice, aliceId], [bob, bobId]] = made;
    const sub = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [aliceId, bobId] });
    assert.equal(sub.body.result, 'success', JSON.stringify(sub.body));
    streamId = (await owner.get('/get_stream_id', { stream: 'general' })).body.stream_id;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  async function flagsOf(client: ChatClient, id: number): Promise<string[]> {
    const r = await client.get(`/messages/${id}`);
    assert.equal(r.body.result, 'success', JSON.stringify(r.body));
    return r.body.message.flags.sort();
  }

  it('renders mentions on send and sets mention flags for the right recipients', async () => {
    const direct = await owner.post('/messages', { type: 'stream', to: 'general', topic: 't1', content: 'hi @**Alice Liddell** and @_**Bob**' });
    assert.equal(direct.body.result, 'success');
    assert.deepEqual(await flagsOf(alice, direct.body.id), ['mentioned']);
    assert.deepEqual(await flagsOf(bob, direct.body.id), [], 'a silent mention does not notify');
    const one = await alice.get(`/messages/${direct.body.id}`);
    assert.equal(
      one.body.message.content,
      `<p>hi <span class="user-mention" data-user-id="${aliceId}">@Alice Liddell</span> and <span class="user-mention silent" data-user-id="${bobId}">Bob</span></p>`,
    );
    assert.equal(one.body.raw_content, 'hi @**Alice Liddell** and @_**Bob**');
    const all = await owner.post('/messages', { type: 'stream', to: 'general', topic: 't1', content: '@**all** look' });
    assert.deepEqual(await flagsOf(bob, all.body.id), ['stream_wildcard_mentioned', 'wildcard_mentioned']);
    // Only alice has posted in t2 besides the sender: @**topic** reaches her, not bob.
    await alice.post('/messages', { type: 'stream', to: 'general', topic: 't2', content: 'first' });
    const topic = await owner.post('/messages', { type: 'stream', to: 'general', topic: 't2', content: '@**topic** ping' });
    assert.deepEqual(await flagsOf(alice, topic.body.id), ['topic_wildcard_mentioned', 'wildcard_mentioned']);
    assert.deepEqual(await flagsOf(bob, topic.body.id), []);
    const mentioned = await alice.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [['is', 'mentioned']] });
    assert.deepEqual(
      mentioned.body.messages.map((m: any) => m.id),
      [direct.body.id, all.body.id, topic.body.id],
    );
    const me = await alice.post('/messages', { type: 'stream', to: 'general', topic: 't1', content: '/me waves' });
    assert.equal((await alice.get(`/messages/${me.body.id}`)).body.message.is_me_message, true);
  });

  it('renders through POST /messages/render with channel links', async () => {
    const r = await alice.post('/messages/render', { content: '**foo** #**general>t1** :smile:' });
    assert.equal(
      r.body.rendered,
      `<p><strong>foo</strong> <a class="stream-topic" data-stream-id="${streamId}" href="/#narrow/channel/${streamId}-general/topic/t1">#general &gt; t1</a> ` +
        '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>',
    );
    const missing = await alice.post('/messages/render', {});
    assert.deepEqual([missing.body.code, missing.body.var_name], ['REQUEST_VARIABLE_MISSING', 'content']);
  });

  it('refuses GET /messages/{id} for messages the user may not read', async () => {
    const dm = await alice.post('/messages', { type: 'direct', to: [bobId], content: 'secret' });
    const r = await owner.get(`/messages/${dm.body.id}`);
    assert.deepEqual([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', 'Invalid message(s)']);
    assert.equal((await owner.get('/messages/999999')).body.msg, 'Invalid message(s)');
    const raw = await bob.get(`/messages/${dm.body.id}`, { apply_markdown: false });
    assert.deepEqual([raw.body.message.content, raw.body.message.content_type], ['secret', 'text/x-markdown']);
  });

  it('adds and removes flags by message ids, refusing flags a user cannot set', async () => {
    const m = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'flags', content: 'star me' });
    const add = await bob.post('/messages/flags', { messages: [m.body.id], op: 'add', flag: 'starred' });
    assert.deepEqual([add.body.result, add.body.messages], ['success', [m.body.id]]);
    assert.deepEqual(await flagsOf(bob, m.body.id), ['starred']);
    await bob.post('/messages/flags', { messages: [m.body.id], op: 'add', flag: 'read' });
    assert.deepEqual(await flagsOf(bob, m.body.id), ['read', 'starred']);
    const unread = await bob.post('/messages/flags', { messages: [m.body.id], op: 'remove', flag: 'read' });
    assert.deepEqual(unread.body.ignored_because_not_subscribed_channels, []);
    assert.deepEqual(await flagsOf(bob, m.body.id), ['starred']);
    for (const [flag, msg] of [
      ['mentioned', "Flag not editable: 'mentioned'"],
      ['historical', "Flag not editable: 'historical'"],
      ['bogus', "Invalid flag: 'bogus'"],
    ]) {
      const r = await bob.post('/messages/flags', { messages: [m.body.id], op: 'add', flag });
      assert.deepEqual([r.body.code, r.body.msg], ['BAD_REQUEST', msg]);
    }
    const badOp = await bob.post('/messages/flags', { messages: [m.body.id], op: 'toggle', flag: 'starred' });
    assert.equal(badOp.body.code, 'BAD_REQUEST');
    const invalid = await bob.post('/messages/flags', { messages: [m.body.id, 999999], op: 'remove', flag: 'starred' });
    assert.equal(invalid.body.msg, 'Invalid message(s)');
    assert.deepEqual(await flagsOf(bob, m.body.id), ['starred'], 'a refused request changes nothing');
  });

  it('updates flags over a narrow range and reports the range', async () => {
    const ids: number[] = [];
    for (const n of [1, 2, 3]) ids.push((await owner.post('/messages', { type: 'stream', to: 'general', topic: 'range', content: `r${n}` })).body.id);
    const r = await bob.post('/messages/flags/narrow', {
      anchor: String(ids[0]),
      num_before: 0,
      num_after: 1,
      narrow: [
        ['stream', 'general'],
        ['topic', 'range'],
      ],
      op: 'add',
      flag: 'read',
    });
    assert.deepEqual(
      [r.body.processed_count, r.body.updated_count, r.body.first_processed_id, r.body.last_processed_id, r.body.found_oldest, r.body.found_newest],
      [2, 2, ids[0], ids[1], true, false],
    );
    const rest = await bob.post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: [{ operator: 'topic', operand: 'range' }], op: 'add', flag: 'read' });
    assert.deepEqual([rest.body.processed_count, rest.body.updated_count, rest.body.found_newest], [3, 1, true]);
    const missing = await bob.post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 1, op: 'add', flag: 'read' });
    assert.deepEqual([missing.body.code, missing.body.var_name], ['REQUEST_VARIABLE_MISSING', 'narrow']);
  });

  it('refuses an anchor excluded from the middle of the range, as Zulip does, and changes nothing (issue 14 item 5)', async () => {
    const ids: number[] = [];
    for (const n of [1, 2, 3]) ids.push((await owner.post('/messages', { type: 'stream', to: 'general', topic: 'mid', content: `m${n}` })).body.id);
    const narrow = [{ operator: 'topic', operand: 'mid' }];
    // The Python client sends booleans and integers JSON-encoded in the form.
    const mid = await bob.post('/messages/flags/narrow', { anchor: String(ids[1]), include_anchor: false, num_before: 1, num_after: 1, narrow, op: 'add', flag: 'starred' });
    assert.equal(mid.status, 400, JSON.stringify(mid.body));
    assert.deepEqual([mid.body.code, mid.body.msg], ['BAD_REQUEST', 'The anchor can only be excluded at an end of the range']);
    for (const id of ids) assert.deepEqual(await flagsOf(bob, id), [], 'a refused request changes nothing');
    // GET /messages refuses the same range.
    const get = await bob.get('/messages', { anchor: String(ids[1]), include_anchor: false, num_before: 1, num_after: 1, narrow });
    assert.deepEqual([get.status, get.body.code, get.body.msg], [400, 'BAD_REQUEST', 'The anchor can only be excluded at an end of the range']);
    // At an end of the range the anchor may be left out.
    const end = await bob.post('/messages/flags/narrow', { anchor: String(ids[1]), include_anchor: false, num_before: 0, num_after: 5, narrow, op: 'add', flag: 'starred' });
    assert.deepEqual([end.body.processed_count, end.body.first_processed_id], [1, ids[2]]);
    const before = await bob.post('/messages/flags/narrow', { anchor: String(ids[1]), include_anchor: false, num_before: 5, num_after: 0, narrow, op: 'add', flag: 'starred' });
    assert.deepEqual([before.body.processed_count, before.body.last_processed_id], [1, ids[0]]);
    assert.deepEqual(await flagsOf(bob, ids[1]), []);
  });

  it('marks channels, topics and everything as read (deprecated endpoints)', async () => {
    const t = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'old way', content: 'x' });
    const u = await owner.post('/messages', { type: 'stream', to: 'general', topic: 'other', content: 'y' });
    const dm = await owner.post('/messages', { type: 'direct', to: [aliceId], content: 'z' });
    assert.equal((await alice.post('/mark_topic_as_read', { stream_id: streamId, topic_name: 'old way' })).body.result, 'success');
    assert.deepEqual([await flagsOf(alice, t.body.id), await flagsOf(alice, u.body.id)], [['read'], []]);
    const noTopic = await alice.post('/mark_topic_as_read', { stream_id: streamId, topic_name: 'never' });
    assert.deepEqual([noTopic.body.code, noTopic.body.msg], ['BAD_REQUEST', "No such topic 'never'"]);
    const badStream = await alice.post('/mark_stream_as_read', { stream_id: 999999 });
    assert.deepEqual([badStream.body.code, badStream.body.msg], ['BAD_REQUEST', 'Invalid channel ID']);
    await alice.post('/mark_stream_as_read', { stream_id: streamId });
    assert.deepEqual([await flagsOf(alice, u.body.id), await flagsOf(alice, dm.body.id)], [['read'], []]);
    const all = await alice.post('/mark_all_as_read');
    assert.deepEqual([all.body.result, all.body.complete], ['success', true]);
    assert.deepEqual(await flagsOf(alice, dm.body.id), ['read']);
    const left = await alice.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [['is', 'unread']] });
    assert.equal(left.body.messages.length, 0);
  });

  it('narrows by has:link, is:resolved, with, dm-including, group-pm-with, near and in:', async () => {
    const link = await owner.post('/messages', { type: 'stream', to: 'general', topic: '✔ done', content: 'see https://x.org' });
    const group = await alice.post('/messages', { type: 'direct', to: [bobId, 1], content: 'group chat' });
    const pair = await alice.post('/messages', { type: 'direct', to: [bobId], content: 'pair chat' });
    const get = async (narrow: unknown) => {
      const r = await alice.get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow });
      assert.equal(r.body.result, 'success', JSON.stringify(r.body));
      return r.body.messages.map((m: any) => m.id);
    };
    assert.ok((await get([['has', 'link']])).includes(link.body.id));
    assert.ok(!(await get([{ operator: 'has', operand: 'link', negated: true }])).includes(link.body.id));
    assert.deepEqual(await get([['is', 'resolved']]), [link.body.id]);
    assert.deepEqual(await get([{ operator: 'with', operand: link.body.id }]), [link.body.id]);
    const including = await get([{ operator: 'dm-including', operand: bobId }]);
    assert.ok(including.includes(group.body.id) && including.includes(pair.body.id));
    assert.deepEqual(await get([['group-pm-with', 'bob@example.com']]), [group.body.id]);
    assert.deepEqual(
      await get([
        ['dm-including', 'bob@example.com'],
        ['near', String(pair.body.id)],
        ['in', 'home'],
      ]),
      including,
    );
    assert.deepEqual(await get([['is', 'followed']]), []);
    for (const bad of [[['has', 'nothing']], [['in', 'nowhere']], [['with', '999999']], [['is', 'bogus']]]) {
      const r = await alice.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: bad });
      assert.equal(r.body.code, 'BAD_NARROW', JSON.stringify(bad));
    }
  });

  it('receives channel messages only while subscribed, each unread, across leaving and coming back', async () => {
    const made = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'spans' }], invite_only: true, history_public_to_subscribers: false, principals: [owner.email, alice.email] });
    assert.equal(made.body.result, 'success', JSON.stringify(made.body));
    const send = async (content: string) => (await owner.post('/messages', { type: 'stream', to: 'spans', topic: 't', content })).body.id as number;
    const leave = async () => assert.equal((await owner.call('DELETE', '/users/me/subscriptions', { subscriptions: ['spans'], principals: [aliceId] })).body.result, 'success');
    const join = async () => assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'spans' }], principals: [aliceId] })).body.result, 'success');
    const m1 = await send('while subscribed');
    await leave();
    const m2 = await send('while away');
    await join();
    // Out and back in with no message in between: still one continuous subscription.
    await leave();
    await join();
    const m3 = await send('after coming back');
    const seen = await alice.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [['stream', 'spans']] });
    assert.deepEqual(
      seen.body.messages.map((m: { id: number; flags: string[] }) => [m.id, m.flags]),
      [
        [m1, []],
        [m3, []],
      ],
    );
    assert.equal((await alice.get(`/messages/${m2}`)).body.msg, 'Invalid message(s)');
    const unread = await alice.get('/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [
        ['stream', 'spans'],
        ['is', 'unread'],
      ],
    });
    assert.deepEqual(
      unread.body.messages.map((m: { id: number }) => m.id),
      [m1, m3],
    );
    const first = await alice.get('/messages', { anchor: 'first_unread', num_before: 0, num_after: 0, narrow: [['stream', 'spans']] });
    assert.equal(first.body.anchor, m1);
    const star = await alice.post('/messages/flags', { messages: [m1, m3], op: 'add', flag: 'starred' });
    assert.equal(star.body.result, 'success');
    assert.deepEqual([await flagsOf(alice, m1), await flagsOf(alice, m3)], [['starred'], ['starred']]);
    assert.equal((await alice.post('/messages/flags', { messages: [m2], op: 'add', flag: 'read' })).body.msg, 'Invalid message(s)');
    await alice.post('/mark_stream_as_read', { stream_id: (await owner.get('/get_stream_id', { stream: 'spans' })).body.stream_id });
    assert.deepEqual(
      [await flagsOf(alice, m1), await flagsOf(alice, m3)],
      [
        ['read', 'starred'],
        ['read', 'starred'],
      ],
    );
    assert.equal((await alice.get('/users/me')).body.max_message_id >= m3, true);
    const topics = await alice.get(`/users/me/${(await owner.get('/get_stream_id', { stream: 'spans' })).body.stream_id}/topics`);
    assert.deepEqual(
      topics.body.topics.map((t: { max_id: number }) => t.max_id),
      [m3],
    );
  });
});

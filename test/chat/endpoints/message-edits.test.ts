// Editing, moving, deleting and reacting to messages, in process on a manual clock (for the realm's
// time limits), on both engines: the answers, what GET /messages then shows, and the events each
// user's queue receives (update_message, delete_message, reaction). Every 2xx answer is checked
// against Zulip's OpenAPI description.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../../helpers/in-process-chat.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;
type Ev = Record<string, any>;

const DAY_MS = 86_400_000;
/** Moves without the Notification Bot's notes, where a test counts the messages in a topic. */
const quiet = { send_notification_to_new_thread: false };

await forEachEngine('chat message edits, deletions and reactions', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let owner: InProcessClient, ownerId: number;
  let alice: InProcessClient, aliceId: number;
  let bob: InProcessClient, bobId: number;
  let carol: InProcessClient, carolId: number;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob', 'carol'], channel: { name: 'general', subscribers: ['owner', 'alice', 'bob'] } });
    ({ storage, chat, owner, ownerId } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
    ({ client: carol, id: carolId } = realm.members.carol);
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'other' }], principals: [ownerId, aliceId, carolId] });
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], principals: [ownerId, aliceId], invite_only: true });
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  async function refused(c: InProcessClient, method: string, path: string, params: Record<string, unknown>, code: string, msg?: string): Promise<Ev> {
    const r = await c.call(method, path, params);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.code, code, JSON.stringify(r.body));
    if (msg !== undefined) assert.equal(r.body.msg, msg);
    return r.body;
  }

  const send = async (c: InProcessClient, to: string, topic: string, content: string) => (await ok(c, 'POST', '/messages', { type: 'stream', to, topic, content })).id as number;

  async function queue(c: InProcessClient, params: Record<string, unknown> = {}): Promise<string> {
    return (await ok(c, 'POST', '/register', { event_types: ['update_message', 'delete_message', 'reaction', 'update_message_flags'], ...params })).queue_id;
  }

  const seen = new Map<string, number>();
  /** The events queued since the last drain of this queue (which acknowledges them). */
  async function drain(c: InProcessClient, queueId: string): Promise<Ev[]> {
    const events = (await ok(c, 'GET', '/events', { queue_id: queueId, last_event_id: seen.get(queueId) ?? -1, dont_block: true })).events as Ev[];
    if (events.length) seen.set(queueId, events.at(-1)!.id);
    return events;
  }

  async function message(c: InProcessClient, id: number): Promise<Ev | undefined> {
    return (await ok(c, 'GET', '/messages', { message_ids: [id], apply_markdown: true })).messages[0];
  }

  async function ids(c: InProcessClient, narrow: unknown[]): Promise<number[]> {
    return (await ok(c, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow })).messages.map((m: Ev) => m.id);
  }

  const setRealm = (values: Record<string, unknown>) => chat.ctx.chatDb.kysely.updateTable('realms').set(values).execute();

  it('register answers the realm settings for editing, moving and deleting, with Zulip defaults', async () => {
    const state = await ok(alice, 'POST', '/register', { fetch_event_types: ['realm', 'user_groups'] });
    const group = (name: string) => state.realm_user_groups.find((g: Ev) => g.name === name).id;
    assert.equal(state.realm_allow_message_editing, true);
    assert.equal(state.realm_message_content_edit_limit_seconds, 600);
    assert.equal(state.realm_move_messages_within_stream_limit_seconds, 604800);
    assert.equal(state.realm_move_messages_between_streams_limit_seconds, 604800);
    assert.equal(state.realm_message_content_delete_limit_seconds, 600);
    assert.equal(state.realm_message_edit_history_visibility_policy, 'all');
    assert.equal(state.realm_allow_edit_history, true);
    assert.equal(state.realm_can_move_messages_between_topics_group, group('role:everyone'));
    assert.equal(state.realm_can_move_messages_between_channels_group, group('role:members'));
    assert.equal(state.realm_can_resolve_topics_group, group('role:everyone'));
    assert.equal(state.realm_can_delete_any_message_group, group('role:administrators'));
    assert.equal(state.realm_can_delete_own_message_group, group('role:everyone'));
  });

  it('edits content: re-rendered, mention flags follow, update_message to the holders only', async () => {
    const [qa, qb, qc] = [await queue(alice), await queue(bob), await queue(carol)];
    const id = await send(alice, 'general', 'edits', 'hello');
    const before = chat.clock.now();
    chat.clock.advance(30_000);
    const answer = await ok(alice, 'PATCH', `/messages/${id}`, { content: 'hello @**Bob**' });
    assert.deepEqual(answer.detached_uploads, []);
    const [eb] = await drain(bob, qb);
    assert.deepEqual(Object.keys(eb).sort(), [
      'content',
      'edit_timestamp',
      'flags',
      'id',
      'is_me_message',
      'message_id',
      'message_ids',
      'orig_content',
      'orig_rendered_content',
      'rendered_content',
      'rendering_only',
      'stream_id',
      'stream_name',
      'type',
      'user_id',
    ]);
    assert.equal(eb.type, 'update_message');
    assert.equal(eb.user_id, aliceId);
    assert.equal(eb.edit_timestamp, Math.floor(before / 1000) + 30);
    assert.deepEqual([eb.message_id, eb.message_ids], [id, [id]]);
    assert.deepEqual([eb.orig_content, eb.content], ['hello', 'hello @**Bob**']);
    assert.equal(eb.orig_rendered_content, '<p>hello</p>');
    assert.match(eb.rendered_content, /class="user-mention" data-user-id="\d+">@Bob<\/span>/);
    assert.equal(eb.is_me_message, false);
    assert.equal(eb.rendering_only, false);
    assert.equal(eb.stream_name, 'general');
    assert.deepEqual(eb.flags, ['mentioned'], 'bob is now mentioned (and the message is still unread)');
    assert.deepEqual((await drain(alice, qa))[0].flags, ['read']);
    assert.deepEqual(await drain(carol, qc), [], 'carol does not hold the message');

    const m = (await message(bob, id))!;
    assert.equal(m.content, eb.rendered_content);
    assert.deepEqual(m.flags, ['mentioned']);
    assert.equal(m.last_edit_timestamp, eb.edit_timestamp);
    assert.equal('last_moved_timestamp' in m, false);
    assert.deepEqual(m.edit_history, [{ user_id: aliceId, timestamp: eb.edit_timestamp, prev_content: 'hello', prev_rendered_content: '<p>hello</p>' }]);
    assert.ok((await ids(bob, [['is', 'mentioned']])).includes(id));

    // Edited again without the mention: the flag goes; /me makes a me-message.
    await ok(alice, 'PATCH', `/messages/${id}`, { content: '/me waves' });
    const [again] = await drain(bob, qb);
    assert.deepEqual(again.flags, []);
    assert.equal(again.is_me_message, true);
    assert.equal((await message(bob, id))!.edit_history.length, 2);
    assert.equal((await ids(bob, [['is', 'mentioned']])).includes(id), false);
    // Alert words follow the content too.
    await ok(bob, 'POST', '/users/me/alert_words', { alert_words: ['pineapple'] });
    await ok(alice, 'PATCH', `/messages/${id}`, { content: 'who likes pineapple?' });
    assert.deepEqual((await drain(bob, qb)).at(-1)!.flags, ['has_alert_word']);
    assert.ok((await ids(bob, [['is', 'alerted']])).includes(id));
    await ok(alice, 'PATCH', `/messages/${id}`, { content: 'who likes pears?' });
    assert.deepEqual((await drain(bob, qb)).at(-1)!.flags, []);
    // Emptied content is kept as Zulip's placeholder.
    await ok(alice, 'PATCH', `/messages/${id}`, { content: '   ' });
    assert.equal((await ok(alice, 'GET', `/messages/${id}`)).raw_content, '(deleted)');
  });

  it('refuses edits it may not make, and changes nothing', async () => {
    const id = await send(alice, 'general', 'refusals', 'original');
    const dm = (await ok(alice, 'POST', '/messages', { type: 'direct', to: [bobId], content: 'a dm' })).id;
    await refused(bob, 'PATCH', `/messages/${id}`, { content: 'hijacked' }, 'BAD_REQUEST', "You don't have permission to edit this message");
    await refused(owner, 'PATCH', `/messages/${id}`, { content: 'admins neither' }, 'BAD_REQUEST', "You don't have permission to edit this message");
    await refused(alice, 'PATCH', `/messages/${id}`, {}, 'BAD_REQUEST', 'Nothing to change');
    await refused(alice, 'PATCH', `/messages/${id}`, { topic: 'refusals' }, 'BAD_REQUEST', 'Nothing to change');
    await refused(alice, 'PATCH', `/messages/${id}`, { content: 'x', propagate_mode: 'change_all' }, 'BAD_REQUEST', 'Invalid propagate_mode without topic edit');
    await refused(alice, 'PATCH', `/messages/${id}`, { propagate_mode: 'change_some', topic: 'x' }, 'BAD_REQUEST');
    const streams = (await ok(alice, 'GET', '/streams')).streams as Ev[];
    const other = streams.find((s) => s.name === 'other')!.stream_id;
    await refused(alice, 'PATCH', `/messages/${id}`, { content: 'x', stream_id: other }, 'BAD_REQUEST', 'Cannot change message content while changing channel');
    await refused(alice, 'PATCH', `/messages/${dm}`, { topic: 'x' }, 'BAD_REQUEST');
    await refused(alice, 'PATCH', `/messages/${dm}`, { stream_id: other }, 'BAD_REQUEST');
    await refused(alice, 'PATCH', '/messages/999999', { content: 'x' }, 'BAD_REQUEST', 'Invalid message(s)');
    // carol cannot read general's history? She can (public): but she never received the DM.
    await refused(carol, 'PATCH', `/messages/${dm}`, { content: 'x' }, 'BAD_REQUEST', 'Invalid message(s)');
    // Past the 600 s limit (and Zulip's 20 s grace) even the sender may not.
    chat.clock.advance(621_000);
    await refused(alice, 'PATCH', `/messages/${id}`, { content: 'too late' }, 'BAD_REQUEST', 'The time limit for editing this message has passed');
    await setRealm({ message_content_edit_limit_seconds: null });
    await ok(alice, 'PATCH', `/messages/${id}`, { content: 'no limit now' });
    await setRealm({ allow_message_editing: 0 });
    await refused(alice, 'PATCH', `/messages/${id}`, { content: 'off' }, 'BAD_REQUEST', 'Your organization has turned off message editing');
    await setRealm({ allow_message_editing: 1, message_content_edit_limit_seconds: 600 });
    assert.equal((await ok(alice, 'GET', `/messages/${id}`)).raw_content, 'no limit now');
    assert.equal((await ok(alice, 'GET', `/messages/${dm}`)).raw_content, 'a dm');
  });

  it('moves a topic with change_one, change_later and change_all; update_message names the move', async () => {
    const m1 = await send(alice, 'general', 'journey', 'one');
    const m2 = await send(bob, 'general', 'journey', 'two');
    const m3 = await send(alice, 'general', 'journey', 'three');
    const m4 = await send(bob, 'general', 'Journey', 'four (same topic, other case)');
    const qb = await queue(bob);
    const qe = await queue(bob, { client_capabilities: { notification_settings_null: false, empty_topic_name: true } });
    await ok(bob, 'PATCH', `/messages/${m1}`, { topic: 'solo', ...quiet });
    assert.deepEqual(
      await ids(bob, [
        ['stream', 'general'],
        ['topic', 'solo'],
      ]),
      [m1],
    );
    await ok(bob, 'PATCH', `/messages/${m3}`, { topic: 'later', propagate_mode: 'change_later', ...quiet });
    assert.deepEqual(
      await ids(bob, [
        ['stream', 'general'],
        ['topic', 'later'],
      ]),
      [m3, m4],
    );
    await ok(alice, 'PATCH', `/messages/${m3}`, { topic: '', propagate_mode: 'change_all', ...quiet });
    const events = await drain(bob, qb);
    assert.deepEqual(
      events.map((e) => [e.message_ids, e.propagate_mode, e.orig_subject, e.subject]),
      [
        [[m1], 'change_one', 'journey', 'solo'],
        [[m3, m4], 'change_later', 'journey', 'later'],
        [[m3, m4], 'change_all', 'later', 'general chat'],
      ],
    );
    const last = events[2];
    assert.deepEqual(last.topic_links, []);
    assert.equal('content' in last || 'orig_content' in last || 'new_stream_id' in last, false);
    assert.equal((await drain(bob, qe)).at(-1)!.subject, '', 'a client that handles the empty topic sees it');
    assert.deepEqual(
      await ids(bob, [
        ['stream', 'general'],
        ['topic', 'journey'],
      ]),
      [m2],
    );
    const moved = (await message(bob, m4))!;
    assert.equal(moved.subject, 'general chat');
    assert.equal(typeof moved.last_moved_timestamp, 'number');
    assert.equal('last_edit_timestamp' in moved, false, 'a move is not a content edit');
    assert.deepEqual(
      moved.edit_history.map((h: Ev) => [h.prev_topic, h.topic, h.user_id]),
      [
        ['later', 'general chat', aliceId],
        ['Journey', 'later', bobId],
      ],
    );
    const history = (await ok(bob, 'GET', `/messages/${m4}/history`, { allow_empty_topic_name: true })).message_history as Ev[];
    assert.deepEqual(
      history.map((h) => [h.topic, h.prev_topic]),
      [
        ['Journey', undefined],
        ['later', 'Journey'],
        ['', 'later'],
      ],
    );
    assert.equal(history[0].user_id, bobId);
    assert.equal(history[0].content, 'four (same topic, other case)');
  });

  it('resolves a topic (is:resolved), and refuses resolving the empty topic', async () => {
    const a = await send(alice, 'general', 'bug 7', 'broken');
    const b = await send(bob, 'general', 'bug 7', 'fixed');
    const qa = await queue(alice, { event_types: ['realm_user', 'message'] });
    await ok(bob, 'PATCH', `/messages/${a}`, { topic: '✔ bug 7', propagate_mode: 'change_all' });
    // The first note makes the Notification Bot: clients hear of it before its message.
    const [made, note] = await drain(alice, qa);
    assert.deepEqual([made.type, made.op, made.person.full_name, made.person.is_bot], ['realm_user', 'add', 'Notification Bot', true]);
    assert.deepEqual(
      [note.type, note.message.sender_id, note.message.subject, note.message.content],
      ['message', made.person.user_id, '✔ bug 7', `@_**Bob|${bobId}** has marked this topic as resolved.`],
    );
    assert.deepEqual(
      (await ids(alice, [['is', 'resolved']])).filter((id) => id === a || id === b),
      [a, b],
    );
    await ok(bob, 'PATCH', `/messages/${b}`, { topic: 'bug 7', propagate_mode: 'change_all' });
    assert.equal((await ids(alice, [['is', 'resolved']])).includes(a), false);
    const e = await send(alice, 'general', '', 'no topic');
    await refused(alice, 'PATCH', `/messages/${e}`, { topic: '✔ ', propagate_mode: 'change_all' }, 'BAD_REQUEST');
  });

  it('applies the move permissions and time limits; administrators and moderators are exempt', async () => {
    const old1 = await send(alice, 'general', 'aging', 'old one');
    const old2 = await send(bob, 'general', 'aging', 'old two');
    chat.clock.advance(8 * DAY_MS);
    const new1 = await send(alice, 'general', 'aging', 'new one');
    const new2 = await send(bob, 'general', 'aging', 'new two');
    const body = await refused(bob, 'PATCH', `/messages/${new1}`, { topic: 'aged', propagate_mode: 'change_all' }, 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED');
    assert.deepEqual([body.first_message_id_allowed_to_move, body.total_messages_in_topic, body.total_messages_allowed_to_move], [new1, 4, 2]);
    assert.equal(body.msg, 'You only have permission to move the 2/4 most recent messages in this topic.');
    assert.deepEqual(
      await ids(bob, [
        ['stream', 'general'],
        ['topic', 'aged'],
      ]),
      [],
      'nothing moved',
    );
    await refused(bob, 'PATCH', `/messages/${old1}`, { topic: 'aged' }, 'BAD_REQUEST', "The time limit for editing this message's topic has passed.");
    const fromOld = await refused(bob, 'PATCH', `/messages/${old1}`, { topic: 'aged', propagate_mode: 'change_all' }, 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED');
    assert.equal(fromOld.first_message_id_allowed_to_move, new1);
    // The repeat the error suggests moves the allowed part.
    await ok(bob, 'PATCH', `/messages/${body.first_message_id_allowed_to_move}`, { topic: 'aged', propagate_mode: 'change_later', ...quiet });
    assert.deepEqual(
      await ids(bob, [
        ['stream', 'general'],
        ['topic', 'aged'],
      ]),
      [new1, new2],
    );
    // A moderator moves the rest regardless of age.
    const { client: mod, id: modId } = await chat.member('mod@example.com', 'Mod');
    await ok(owner, 'PATCH', `/users/${modId}`, { role: 300 });
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'general' }], principals: [modId] });
    await ok(mod, 'PATCH', `/messages/${old1}`, { topic: 'aged', propagate_mode: 'change_all', ...quiet });
    assert.deepEqual(
      await ids(bob, [
        ['stream', 'general'],
        ['topic', 'aged'],
      ]),
      [old1, old2, new1, new2],
    );
    // Topic moves only for administrators: members are refused, resolving stays open to everyone.
    const admins = (await ok(owner, 'POST', '/register', { fetch_event_types: ['user_groups'] })).realm_user_groups.find((g: Ev) => g.name === 'role:administrators').id;
    await setRealm({ can_move_messages_between_topics_group: String(admins) });
    await refused(bob, 'PATCH', `/messages/${new2}`, { topic: 'elsewhere' }, 'BAD_REQUEST', "You don't have permission to edit this message");
    await ok(bob, 'PATCH', `/messages/${new2}`, { topic: '✔ aged', propagate_mode: 'change_all' });
    await setRealm({ can_resolve_topics_group: String(admins) });
    await refused(bob, 'PATCH', `/messages/${new2}`, { topic: 'aged', propagate_mode: 'change_all' }, 'BAD_REQUEST');
    await ok(owner, 'PATCH', `/messages/${new2}`, { topic: 'aged', propagate_mode: 'change_all' });
    await setRealm({ can_move_messages_between_topics_group: null, can_resolve_topics_group: null });
    void old2;
  });

  it('moves messages to another channel: holders keep, gain or lose them, with the events to match', async () => {
    const streams = (await ok(owner, 'GET', '/streams')).streams as Ev[];
    const other = streams.find((s) => s.name === 'other')!.stream_id;
    const vault = streams.find((s) => s.name === 'vault')!.stream_id;
    const general = streams.find((s) => s.name === 'general')!.stream_id;
    const id = await send(alice, 'general', 'travel', 'going places');
    const [qa, qb, qc] = [await queue(alice, { client_capabilities: { notification_settings_null: false, bulk_message_deletion: true } }), await queue(bob), await queue(carol)];
    await refused(bob, 'PATCH', `/messages/${id}`, { stream_id: vault }, 'BAD_REQUEST', 'Invalid channel ID');
    await ok(bob, 'PATCH', `/messages/${id}`, { stream_id: other, topic: 'arrived' });
    const [eb] = await drain(bob, qb);
    assert.deepEqual([eb.stream_id, eb.new_stream_id, eb.orig_subject, eb.subject, eb.propagate_mode], [general, other, 'travel', 'arrived', 'change_one']);
    assert.deepEqual(eb.flags, ['read', 'historical'], 'bob is not in other: his copy goes, he still may read it there');
    const [ec] = await drain(carol, qc);
    assert.equal(ec.message_id, id);
    assert.deepEqual(ec.flags, ['read'], 'moved into her channel, it arrives read');
    assert.equal((await message(carol, id))!.display_recipient, 'other');
    assert.ok(
      (
        await ids(carol, [
          ['stream', 'other'],
          ['topic', 'arrived'],
        ])
      ).includes(id),
    );
    assert.equal((await message(bob, id))!.stream_id, other);
    await drain(alice, qa);
    // Into a private channel carol is not in: she loses it (delete_message); bob, no longer holding it, hears nothing.
    await ok(owner, 'PATCH', `/messages/${id}`, { stream_id: vault });
    const ec2 = await drain(carol, qc);
    assert.deepEqual(
      ec2.map((e) => e.type),
      ['delete_message'],
    );
    assert.deepEqual([ec2[0].message_id, ec2[0].message_type, ec2[0].stream_id, ec2[0].topic], [id, 'stream', other, 'arrived']);
    assert.equal(await message(carol, id), undefined);
    assert.deepEqual(await drain(bob, qb), []);
    assert.equal(await message(bob, id), undefined);
    assert.deepEqual(
      (await drain(alice, qa)).map((e) => [e.type, e.new_stream_id]),
      [['update_message', vault]],
    );
    assert.equal((await message(alice, id))!.display_recipient, 'vault');
    const hist = (await message(alice, id))!.edit_history as Ev[];
    assert.deepEqual(
      hist.map((h) => [h.prev_stream, h.stream]),
      [
        [other, vault],
        [general, other],
      ],
    );
    // Members may move between channels by default; not once the realm says administrators only.
    const admins = (await ok(owner, 'POST', '/register', { fetch_event_types: ['user_groups'] })).realm_user_groups.find((g: Ev) => g.name === 'role:administrators').id;
    await setRealm({ can_move_messages_between_channels_group: String(admins) });
    const id2 = await send(alice, 'general', 'travel', 'stay');
    await refused(alice, 'PATCH', `/messages/${id2}`, { stream_id: other }, 'BAD_REQUEST', "You don't have permission to move this message");
    await setRealm({ can_move_messages_between_channels_group: null });
  });

  it('deletes messages by the realm rules; delete_message in both forms', async () => {
    const qa = await queue(alice, { client_capabilities: { notification_settings_null: false, bulk_message_deletion: true } });
    const qb = await queue(bob);
    const qc = await queue(carol);
    const id = await send(alice, 'general', 'doomed', 'delete me');
    await refused(bob, 'DELETE', `/messages/${id}`, {}, 'BAD_REQUEST', "You don't have permission to delete this message");
    await ok(alice, 'DELETE', `/messages/${id}`);
    assert.deepEqual(
      (await drain(alice, qa)).map((e) => [e.type, e.message_ids, e.message_type, e.topic, 'message_id' in e]),
      [['delete_message', [id], 'stream', 'doomed', false]],
    );
    assert.deepEqual(
      (await drain(bob, qb)).map((e) => [e.type, e.message_id, 'message_ids' in e]),
      [['delete_message', id, false]],
    );
    assert.deepEqual(await drain(carol, qc), []);
    assert.equal(await message(bob, id), undefined);
    await refused(alice, 'DELETE', `/messages/${id}`, {}, 'BAD_REQUEST', 'Invalid message(s)');
    // Past the delete limit the sender may not; an administrator may delete anything.
    const dm = (await ok(bob, 'POST', '/messages', { type: 'direct', to: [aliceId], content: 'private words' })).id;
    chat.clock.advance(700_000);
    await refused(bob, 'DELETE', `/messages/${dm}`, {}, 'BAD_REQUEST', 'The time limit for deleting this message has passed');
    await refused(owner, 'DELETE', `/messages/${dm}`, {}, 'BAD_REQUEST', 'Invalid message(s)');
    const old = await send(bob, 'general', 'doomed', 'admin deletes');
    await ok(owner, 'DELETE', `/messages/${old}`);
    const [e] = (await drain(alice, qa)).slice(-1);
    assert.deepEqual([e.type, e.message_ids], ['delete_message', [old]]);
    await ok(bob, 'POST', `/messages/${dm}/reactions`, { emoji_name: 'wave' });
    await setRealm({ message_content_delete_limit_seconds: null });
    await ok(bob, 'DELETE', `/messages/${dm}`);
    await setRealm({ message_content_delete_limit_seconds: 600 });
    assert.deepEqual(
      (await drain(alice, qa)).filter((x) => x.type === 'delete_message').map((x) => [x.message_ids, x.message_type, 'stream_id' in x]),
      [[[dm], 'private', false]],
    );
  });

  it("announces a channel's new first_message_id when its oldest message is deleted or moved away", async () => {
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'fresh' }], principals: [aliceId, bobId] });
    const x = await send(alice, 'fresh', 'start', 'first ever');
    const y = await send(alice, 'fresh', 'start', 'second');
    const z = await send(alice, 'fresh', 'start', 'third');
    const qc = await queue(carol, { event_types: ['stream'] });
    await ok(alice, 'DELETE', `/messages/${x}`);
    const [e] = await drain(carol, qc);
    assert.deepEqual([e.type, e.op, e.property, e.value, e.name], ['stream', 'update', 'first_message_id', y, 'fresh'], 'carol may see the public channel');
    await ok(alice, 'DELETE', `/messages/${z}`);
    assert.deepEqual(await drain(carol, qc), [], 'not the oldest: nothing to announce');
    const other = ((await ok(owner, 'GET', '/streams')).streams as Ev[]).find((s) => s.name === 'other')!.stream_id;
    await ok(alice, 'PATCH', `/messages/${y}`, { stream_id: other, ...quiet });
    assert.deepEqual(await drain(carol, qc), [], 'fresh is empty now (no value to send), and y is not the oldest of other');
    assert.equal(((await ok(owner, 'GET', '/streams')).streams as Ev[]).find((s) => s.name === 'fresh')!.first_message_id, null);
  });

  it('adds and removes reactions; messages and has:reaction show them; reaction events', async () => {
    const id = await send(alice, 'general', 'reactions', 'react to me');
    const plain = await send(alice, 'general', 'reactions', 'nobody reacts');
    const [qa, qc] = [await queue(alice), await queue(carol)];
    await ok(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus' });
    const [ea] = await drain(alice, qa);
    assert.deepEqual(ea, {
      id: ea.id,
      type: 'reaction',
      op: 'add',
      user_id: bobId,
      user: { user_id: bobId, email: 'bob@example.com', full_name: 'Bob' },
      message_id: id,
      emoji_name: 'octopus',
      emoji_code: '1f419',
      reaction_type: 'unicode_emoji',
    });
    assert.deepEqual(await drain(carol, qc), []);
    await refused(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus' }, 'REACTION_ALREADY_EXISTS', 'Reaction already exists.');
    await refused(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'no_such_emoji_here' }, 'BAD_REQUEST');
    await refused(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: 'fffff' }, 'BAD_REQUEST', 'Invalid emoji code.');
    await refused(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: '1f600' }, 'BAD_REQUEST', 'Invalid emoji name.');
    await refused(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'realm_emoji' }, 'BAD_REQUEST');
    await refused(bob, 'POST', `/messages/${id}/reactions`, { emoji_name: 'octopus', reaction_type: 'bogus_emoji' }, 'BAD_REQUEST');
    await refused(bob, 'POST', `/messages/${id}/reactions`, {}, 'REQUEST_VARIABLE_MISSING');
    await ok(alice, 'POST', `/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
    // A vote by code for an existing reaction, under another name, joins it.
    await ok(carol, 'POST', `/messages/${id}/reactions`, { emoji_name: 'squid-ish', emoji_code: '1f419', reaction_type: 'unicode_emoji' });
    const m = (await message(alice, id))!;
    assert.deepEqual(m.reactions, [
      { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: bobId },
      { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji', user_id: aliceId },
      { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: carolId },
    ]);
    const reacted = await ids(alice, [
      ['stream', 'general'],
      ['topic', 'reactions'],
      ['has', 'reaction'],
    ]);
    assert.deepEqual(reacted, [id]);
    assert.ok((await ids(alice, [['stream', 'general'], ['topic', 'reactions'], { operator: 'has', operand: 'reaction', negated: true }])).includes(plain));
    await drain(alice, qa);
    await ok(bob, 'DELETE', `/messages/${id}/reactions`, { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' });
    const [removed] = (await drain(alice, qa)).slice(-1);
    assert.deepEqual([removed.op, removed.user_id, removed.emoji_name, removed.message_id], ['remove', bobId, 'octopus', id]);
    await refused(bob, 'DELETE', `/messages/${id}/reactions`, { emoji_name: 'octopus' }, 'REACTION_DOES_NOT_EXIST', "Reaction doesn't exist.");
    // Removing by code alone; the event names the stored emoji.
    await ok(carol, 'DELETE', `/messages/${id}/reactions`, { emoji_code: '1f419' });
    assert.equal((await drain(alice, qa)).at(-1)!.emoji_name, 'octopus');
    await refused(carol, 'DELETE', `/messages/${id}/reactions`, {}, 'BAD_REQUEST');
    assert.deepEqual(
      (await message(alice, id))!.reactions.map((r: Ev) => r.user_id),
      [aliceId],
    );
    await refused(bob, 'POST', '/messages/999999/reactions', { emoji_name: 'octopus' }, 'BAD_REQUEST', 'Invalid message(s)');
  });

  it("posts the Notification Bot's notes about moves and resolved topics", async () => {
    const streams = (await ok(owner, 'GET', '/streams')).streams as Ev[];
    const other = streams.find((s) => s.name === 'other')!.stream_id;
    const qa = await queue(alice, { event_types: ['message'] });
    const a = await send(alice, 'general', 'noted', 'one');
    const b = await send(alice, 'general', 'noted', 'two');
    await send(alice, 'general', 'noted', 'three');
    const texts = async (stream: string, topic: string) =>
      (
        await ok(alice, 'GET', '/messages', {
          anchor: 'newest',
          num_before: 20,
          num_after: 0,
          apply_markdown: false,
          narrow: [
            ['stream', stream],
            ['topic', topic],
          ],
        })
      ).messages
        .filter((m: Ev) => m.sender_full_name === 'Notification Bot')
        .map((m: Ev) => m.content);
    await ok(alice, 'PATCH', `/messages/${a}`, { topic: 'noted elsewhere', send_notification_to_old_thread: true });
    assert.deepEqual(await texts('general', 'noted elsewhere'), [`A message was moved here from #**general>noted** by @_**Alice|${aliceId}**.`]);
    assert.deepEqual(await texts('general', 'noted'), [`A message was moved from this topic to #**general>noted elsewhere** by @_**Alice|${aliceId}**.`]);
    await ok(alice, 'PATCH', `/messages/${b}`, { topic: 'noted elsewhere', propagate_mode: 'change_later' });
    // b, three and the bot's earlier note leave nothing behind: the note says the topic moved.
    assert.equal((await texts('general', 'noted elsewhere')).at(-1), `This topic was moved here from #**general>noted** by @_**Alice|${aliceId}**.`);
    assert.deepEqual(await texts('general', 'noted'), []);
    await ok(alice, 'PATCH', `/messages/${b}`, { stream_id: other, propagate_mode: 'change_all', send_notification_to_old_thread: true, send_notification_to_new_thread: false });
    assert.deepEqual(await texts('general', 'noted elsewhere'), [`This topic was moved to #**other>noted elsewhere** by @_**Alice|${aliceId}**.`]);
    await ok(alice, 'PATCH', `/messages/${b}`, { topic: '✔ noted elsewhere', propagate_mode: 'change_all', send_notification_to_new_thread: false });
    assert.equal((await texts('other', '✔ noted elsewhere')).at(-1), `@_**Alice|${aliceId}** has marked this topic as resolved.`);
    const events = await drain(alice, qa);
    const botId = (await ok(alice, 'GET', '/users')).members.find((u: Ev) => u.full_name === 'Notification Bot').user_id;
    const notes = events.filter((e) => e.type === 'message' && e.message.sender_id === botId);
    assert.equal(notes.length, 5);
    assert.match(notes[0].message.content, /^A message was moved here/);
  });

  it('edit history follows the realm policy', async () => {
    const id = await send(alice, 'general', 'policy', 'v1');
    await ok(alice, 'PATCH', `/messages/${id}`, { content: 'v2', topic: 'policy moved' });
    const full = (await ok(bob, 'GET', `/messages/${id}/history`)).message_history as Ev[];
    assert.deepEqual(
      full.map((h) => [h.content, h.topic, h.prev_content, h.prev_topic]),
      [
        ['v1', 'policy', undefined, undefined],
        ['v2', 'policy moved', 'v1', 'policy'],
      ],
    );
    assert.equal(full[1].prev_rendered_content, '<p>v1</p>');
    await setRealm({ message_edit_history_visibility_policy: 'moves' });
    assert.deepEqual(
      (await message(bob, id))!.edit_history.map((h: Ev) => Object.keys(h).sort()),
      [['prev_topic', 'timestamp', 'topic', 'user_id']],
    );
    await setRealm({ message_edit_history_visibility_policy: 'none' });
    assert.equal('edit_history' in (await message(bob, id))!, false);
    await refused(bob, 'GET', `/messages/${id}/history`, {}, 'BAD_REQUEST');
    await setRealm({ message_edit_history_visibility_policy: 'all' });
  });
});

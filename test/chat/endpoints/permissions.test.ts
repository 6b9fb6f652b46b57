// Black-box: what a guest, a member and a non-subscriber must not read or post (private channels,
// history not shared with later subscribers, archived channels, can_send_message_group,
// administrator-only endpoints). Every refusal sits beside an allowed twin, so a rule that refused
// everyone would fail here too. Users are made through the API, as an administrator would.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient, type ChatReply } from '../../helpers/chat-client.js';

const window = (narrow: unknown[]) => ({ anchor: 'newest', num_before: 50, num_after: 0, narrow });
const contents = (r: ChatReply) => r.body.messages.map((m: { content: string }) => m.content);
const refused = (r: ChatReply) => [r.status, r.body.result, r.body.code];

await forEachEngine('chat permissions', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let ownerId: number;
  let member: ChatClient;
  let memberId: number;
  let guest: ChatClient;
  let guestId: number;
  let outsider: ChatClient;
  const ids: Record<string, number> = {};
  let vaultMessage: number;
  let earlyClubMessage: number;

  async function makeUser(name: string, role?: number): Promise<[ChatClient, number]> {
    const email = `${name}@example.com`;
    const made = await owner.post('/users', { email, password: `${name}-pass-1`, full_name: name });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    if (role !== undefined) {
      const r = await owner.call('PATCH', `/users/${made.body.user_id}`, { role });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const key = await owner.call('POST', '/fetch_api_key', { username: email, password: `${name}-pass-1` }, null);
    assert.equal(key.status, 200, JSON.stringify(key.body));
    return [new ChatClient(server.chatUrl, email, key.body.api_key), made.body.user_id];
  }

  async function channel(name: string, params: Record<string, unknown>, principals: number[]): Promise<void> {
    const r = await owner.post('/users/me/subscriptions', { subscriptions: [{ name }], principals: [ownerId, ...principals], ...params });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    ids[name] = (await owner.get('/get_stream_id', { stream: name })).body.stream_id;
  }

  async function send(who: ChatClient, to: string, content: string): Promise<ChatReply> {
    return who.post('/messages', { type: 'stream', to, topic: 't', content });
  }

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    ownerId = (await owner.get('/users/me')).body.user_id;
    [member, memberId] = await makeUser('member');
    [guest, guestId] = await makeUser('guest', 600);
    [outsider] = await makeUser('outsider');
    // lobby: public, with member and guest in it. plaza: public, nobody but the owner in it.
    await channel('lobby', {}, [memberId, guestId]);
    await channel('plaza', {}, []);
    await channel('vault', { invite_only: true }, []);
    vaultMessage = (await send(owner, 'vault', 'vault secret')).body.id;
    // club: private, history not shared: member joins after the first message.
    await channel('club', { invite_only: true, history_public_to_subscribers: false }, []);
    earlyClubMessage = (await send(owner, 'club', 'before member')).body.id;
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'club' }], principals: [memberId] })).status, 200);
    await send(owner, 'club', 'after member');
    // announcements: only the owner may post.
    await channel('announcements', { can_send_message_group: { direct_members: [ownerId], direct_subgroups: [] } }, [memberId, guestId]);
    await send(owner, 'plaza', 'plaza news');
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('made the roles it tests with', async () => {
    assert.deepEqual([(await guest.get('/users/me')).body.role, (await member.get('/users/me')).body.role], [600, 400]);
  });

  it('keeps a private channel from a member who is not subscribed, on every path', async () => {
    const vault = ids.vault;
    assert.ok(!(await outsider.get('/streams')).body.streams.some((s: { name: string }) => s.name === 'vault'));
    assert.ok((await owner.get('/streams')).body.streams.some((s: { name: string }) => s.name === 'vault'));
    assert.deepEqual(refused(await outsider.get(`/streams/${vault}`)), [400, 'error', 'BAD_REQUEST']);
    assert.deepEqual(refused(await outsider.get(`/streams/${vault}/members`)), [400, 'error', 'BAD_REQUEST']);
    assert.deepEqual(refused(await outsider.get(`/users/me/${vault}/topics`)), [400, 'error', 'BAD_REQUEST']);
    assert.equal((await outsider.get('/get_stream_id', { stream: 'vault' })).body.code, 'BAD_REQUEST');
    assert.deepEqual(refused(await outsider.get('/messages', window([['stream', 'vault']]))), [400, 'error', 'BAD_NARROW']);
    assert.deepEqual(refused(await outsider.get(`/messages/${vaultMessage}`)), [400, 'error', 'BAD_REQUEST']);
    const ids2 = await outsider.get('/messages', { message_ids: [vaultMessage] });
    assert.deepEqual(ids2.body.messages, [], 'fetching by id does not leak it');
    assert.ok(!contents(await outsider.get('/messages', window([]))).includes('<p>vault secret</p>'));
    const letMeIn = await send(outsider, 'vault', 'let me in');
    assert.deepEqual([...refused(letMeIn), letMeIn.body.msg], [400, 'error', 'BAD_REQUEST', "Not authorized to send to channel 'vault'"]);
    assert.deepEqual(refused(await outsider.post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }] })), [400, 'error', 'BAD_REQUEST']);
    assert.deepEqual(refused(await outsider.post('/mark_stream_as_read', { stream_id: vault })), [400, 'error', 'BAD_REQUEST']);
    // The allowed twin: the owner, subscribed, reads it.
    assert.deepEqual(contents(await owner.get('/messages', window([['stream', 'vault']]))), ['<p>vault secret</p>']);
    assert.equal((await owner.get(`/messages/${vaultMessage}`)).status, 200);
  });

  it('lets a member read a public channel without subscribing, and a guest not', async () => {
    assert.deepEqual(contents(await member.get('/messages', window([['stream', 'plaza']]))), ['<p>plaza news</p>']);
    assert.equal((await member.get(`/streams/${ids.plaza}`)).status, 200);
    assert.deepEqual(refused(await guest.get('/messages', window([['stream', 'plaza']]))), [400, 'error', 'BAD_NARROW']);
    assert.deepEqual(refused(await guest.get(`/streams/${ids.plaza}`)), [400, 'error', 'BAD_REQUEST']);
    assert.ok(!(await guest.get('/streams')).body.streams.some((s: { name: string }) => s.name === 'plaza'));
    assert.deepEqual(refused(await guest.get('/messages', window([['channels', 'public']]))), [400, 'error', 'BAD_NARROW']);
    const guestPost = await send(guest, 'plaza', 'guest post');
    assert.deepEqual([...refused(guestPost), guestPost.body.msg], [400, 'error', 'BAD_REQUEST', "Not authorized to send to channel 'plaza'"]);
    assert.deepEqual(refused(await guest.post('/users/me/subscriptions', { subscriptions: [{ name: 'plaza' }] })), [400, 'error', 'BAD_REQUEST']);
    // What a guest is subscribed to, it reads and posts to.
    assert.equal((await send(guest, 'lobby', 'guest hello')).status, 200);
    assert.deepEqual(contents(await guest.get('/messages', window([['stream', 'lobby']]))), ['<p>guest hello</p>']);
  });

  it('keeps a guest from creating channels, subscribing others and making bots', async () => {
    assert.deepEqual(refused(await guest.post('/users/me/subscriptions', { subscriptions: [{ name: 'guest-made' }] })), [400, 'error', 'BAD_REQUEST']);
    assert.equal((await owner.get('/get_stream_id', { stream: 'guest-made' })).body.code, 'BAD_REQUEST', 'nothing was created');
    assert.deepEqual(refused(await guest.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], principals: [memberId] })), [400, 'error', 'BAD_REQUEST']);
    assert.deepEqual(refused(await guest.post('/bots', { full_name: 'G bot', short_name: 'gbot', bot_type: 1 })), [400, 'error', 'BAD_REQUEST']);
    assert.equal((await member.post('/bots', { full_name: 'M bot', short_name: 'mbot', bot_type: 1 })).status, 200);
  });

  it('shows a later subscriber only the history shared with them', async () => {
    assert.deepEqual(contents(await member.get('/messages', window([['stream', 'club']]))), ['<p>after member</p>']);
    assert.deepEqual(contents(await owner.get('/messages', window([['stream', 'club']]))), ['<p>before member</p>', '<p>after member</p>']);
    assert.deepEqual(refused(await member.get(`/messages/${earlyClubMessage}`)), [400, 'error', 'BAD_REQUEST']);
    assert.deepEqual((await member.get('/messages', { message_ids: [earlyClubMessage] })).body.messages, []);
    // Starring is one of the ways Zulip gives a user a copy of history; not of history never shared.
    const star = await member.post('/messages/flags', { messages: [earlyClubMessage], op: 'add', flag: 'starred' });
    assert.deepEqual(star.body.messages ?? [], []);
    assert.deepEqual(contents(await member.get('/messages', window([['stream', 'club']]))), ['<p>after member</p>']);
  });

  it('lets only can_send_message_group post, and checks the value it is given', async () => {
    assert.deepEqual(
      [...refused(await send(member, 'announcements', 'me too')), (await send(member, 'announcements', 'x')).body.msg],
      [400, 'error', 'BAD_REQUEST', 'You do not have permission to post in this channel.'],
    );
    assert.deepEqual(refused(await send(guest, 'announcements', 'me too')), [400, 'error', 'BAD_REQUEST']);
    assert.equal((await send(owner, 'announcements', 'hear ye')).status, 200);
    assert.deepEqual(contents(await member.get('/messages', window([['stream', 'announcements']]))), ['<p>hear ye</p>'], 'members still read it');
    const setting = (await member.get(`/streams/${ids.announcements}`)).body.stream.can_send_message_group;
    assert.deepEqual(setting, { direct_members: [ownerId], direct_subgroups: [] });
    const badGroup = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'bad-group' }], can_send_message_group: 999999 });
    assert.deepEqual([badGroup.status, badGroup.body.msg], [400, 'Invalid user group ID: 999999']);
    const badUser = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'bad-user' }], can_send_message_group: { direct_members: [999999], direct_subgroups: [] } });
    assert.deepEqual([badUser.status, badUser.body.msg], [400, 'Invalid user ID: 999999']);
    assert.equal((await owner.get('/get_stream_id', { stream: 'bad-group' })).body.code, 'BAD_REQUEST', 'a refused value creates nothing');
  });

  it('lets no one post to an archived channel, administrators included', async () => {
    await channel('attic', {}, [memberId]);
    assert.equal((await send(member, 'attic', 'before archiving')).status, 200);
    assert.deepEqual(refused(await member.call('DELETE', `/streams/${ids.attic}`)), [400, 'error', 'BAD_REQUEST']);
    assert.equal((await owner.call('DELETE', `/streams/${ids.attic}`)).status, 200);
    for (const who of [owner, member]) {
      const r = await send(who, 'attic', 'after archiving');
      assert.deepEqual([r.status, r.body.code], [400, 'BAD_REQUEST']);
    }
    assert.ok(!contents(await owner.get('/messages', window([['stream', 'attic']]))).includes('<p>after archiving</p>'));
  });

  it('keeps administrator-only endpoints from members and guests', async () => {
    for (const who of [member, guest]) {
      assert.deepEqual(refused(await who.post('/users', { email: 'x@example.com', password: 'x-pass-1', full_name: 'X' })), [400, 'error', 'UNAUTHORIZED_PRINCIPAL']);
      assert.deepEqual(refused(await who.call('PATCH', `/users/${memberId}`, { role: 200 })), [400, 'error', 'UNAUTHORIZED_PRINCIPAL']);
      assert.deepEqual(refused(await who.call('DELETE', `/users/${ownerId}`)), [400, 'error', 'UNAUTHORIZED_PRINCIPAL']);
      assert.deepEqual(refused(await who.post('/default_streams', { stream_id: ids.lobby })), [400, 'error', 'UNAUTHORIZED_PRINCIPAL']);
    }
    assert.equal((await member.get('/users/me')).body.role, 400, 'the refused role change did nothing');
    assert.equal((await owner.post('/default_streams', { stream_id: ids.lobby })).status, 200);
  });
});

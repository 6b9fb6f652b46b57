// Black-box: managing users and bots over the API (roles, deactivation, lookup by email) and with
// `keel admin create-user|create-bot`.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

await forEachEngine('chat users and bots', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let ownerId: number;
  let host: string;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    ownerId = (await owner.get('/users/me')).body.user_id;
    host = new URL(server.chatUrl).hostname;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  async function admin(args: string[]) {
    return runKeel(['admin', ...args, ...storageArgs(storage)]);
  }

  async function makeUser(email: string, role = 'member'): Promise<{ client: ChatClient; id: number }> {
    const r = await admin(['create-user', '--email', email, '--full-name', email.split('@')[0], '--role', role, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    return { client: new ChatClient(server.chatUrl, made.email, made.apiKey), id: made.userId };
  }

  it('creates users and bots from the command line, once, with clear errors', async () => {
    const r = await admin(['create-user', '--email', 'cli@example.com', '--full-name', 'Cli User', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(made).sort(), ['apiKey', 'email', 'password', 'userId']);
    const me = await new ChatClient(server.chatUrl, made.email, made.apiKey).get('/users/me');
    assert.deepEqual([me.body.user_id, me.body.role, me.body.full_name], [made.userId, 400, 'Cli User']);
    const login = await owner.call('POST', '/fetch_api_key', { username: 'cli@example.com', password: made.password }, null);
    assert.equal(login.body.api_key, made.apiKey);

    const text = await admin(['create-user', '--email', 'mod@example.com', '--full-name', 'Mod', '--role', 'moderator', '--password', 'pw-123456']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /API key: +[A-Za-z0-9]{32}/);
    assert.doesNotMatch(text.stdout, /password:/, 'a given password is not printed back');

    const again = await admin(['create-user', '--email', 'cli@example.com', '--full-name', 'Again']);
    assert.deepEqual([again.code, again.stderr.trim()], [2, 'keel: Email is already in use.']);
    const badRole = await admin(['create-user', '--email', 'x@example.com', '--full-name', 'X', '--role', 'king']);
    assert.equal(badRole.code, 2);
    assert.equal(badRole.stderr.trim().split('\n').length, 1);
    const noName = await admin(['create-user', '--email', 'x@example.com']);
    assert.deepEqual([noName.code, noName.stderr.trim()], [2, 'keel: --full-name is required']);
    const all = await owner.get('/users');
    assert.ok(!all.body.members.some((u: { email: string }) => u.email === 'x@example.com'), 'bad input created nobody');

    const bot = await admin(['create-bot', '--owner-email', 'cli@example.com', '--full-name', 'Deployer', '--short-name', 'deploy', '--json']);
    assert.equal(bot.code, 0, bot.stderr);
    const b = JSON.parse(bot.stdout);
    assert.equal(b.email, `deploy-bot@${host}`);
    const botMe = await new ChatClient(server.chatUrl, b.email, b.apiKey).get('/users/me');
    assert.deepEqual([botMe.status, botMe.body.is_bot, botMe.body.user_id], [200, true, b.userId]);
    const noOwner = await admin(['create-bot', '--owner-email', 'nobody@example.com', '--full-name', 'N', '--short-name', 'n']);
    assert.equal(noOwner.code, 2);
  });

  it('creates generic bots for users; bots authenticate and show their owner', async () => {
    const { client: carol, id: carolId } = await makeUser('carol@example.com');
    const r = await carol.post('/bots', { full_name: 'Carol Bot', short_name: 'carol' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.api_key, /^[A-Za-z0-9]{32}$/);
    assert.equal(r.body.default_sending_stream, null);
    const bot = new ChatClient(server.chatUrl, `carol-bot@${host}`, r.body.api_key);
    const me = await bot.get('/users/me');
    assert.deepEqual([me.body.email, me.body.is_bot, me.body.user_id], [`carol-bot@${host}`, true, r.body.user_id]);
    const seen = await owner.get(`/users/${r.body.user_id}`);
    assert.deepEqual([seen.body.user.is_bot, seen.body.user.bot_type, seen.body.user.bot_owner_id], [true, 1, carolId]);
    assert.equal(seen.body.user.delivery_email, `carol-bot@${host}`);
    assert.ok(!('profile_data' in seen.body.user));
    const human = await owner.get(`/users/${carolId}`);
    assert.deepEqual([human.body.user.bot_type, 'bot_owner_id' in human.body.user], [null, false]);
    const dup = await carol.post('/bots', { full_name: 'Other', short_name: 'carol' });
    assert.deepEqual([dup.status, dup.body.code, dup.body.msg], [400, 'BAD_REQUEST', 'Username already in use']);
    const bad = await carol.post('/bots', { full_name: 'Other', short_name: 'has space' });
    assert.equal(bad.body.msg, 'Bad name or username');
    const missing = await carol.post('/bots', { full_name: 'Other' });
    assert.deepEqual([missing.body.code, missing.body.var_name], ['REQUEST_VARIABLE_MISSING', 'short_name']);
    const { client: gus } = await makeUser('gus@example.com', 'guest');
    const byGuest = await gus.post('/bots', { full_name: 'Gus Bot', short_name: 'gus' });
    assert.equal(byGuest.body.msg, 'Not allowed for guest users');
  });

  it('finds users by real or placeholder email', async () => {
    const { id } = await makeUser('dora@example.com');
    const real = await owner.get('/users/dora@example.com');
    assert.equal(real.status, 200, JSON.stringify(real.body));
    assert.deepEqual([real.body.user.user_id, real.body.user.email, real.body.user.delivery_email], [id, 'dora@example.com', 'dora@example.com']);
    const upper = await owner.get('/users/DORA@example.com');
    assert.equal(upper.body.user.user_id, id);
    const placeholder = await owner.get(`/users/user${id}@${host}`);
    assert.equal(placeholder.body.user.user_id, id);
    const none = await owner.get('/users/nobody@example.com');
    assert.deepEqual([none.status, none.body.code, none.body.msg], [400, 'BAD_REQUEST', 'No such user']);
    const byId = await owner.get(`/users/${id}`);
    assert.equal(byId.body.user.full_name, 'dora');
  });

  it('changes names and roles by the role rules, and changes nothing on bad input', async () => {
    const { client: adminClient, id: adminId } = await makeUser('ada@example.com', 'admin');
    const { id: eveId } = await makeUser('eve@example.com');
    const { client: memberClient } = await makeUser('max@example.com');
    const rename = await adminClient.call('PATCH', `/users/${eveId}`, { full_name: 'Eve Renamed', role: 300 });
    assert.equal(rename.status, 200, JSON.stringify(rename.body));
    let eve = (await owner.get(`/users/${eveId}`)).body.user;
    assert.deepEqual([eve.full_name, eve.role, eve.is_admin], ['Eve Renamed', 300, false]);

    const byEmail = await adminClient.call('PATCH', '/users/eve@example.com', { role: 200 });
    assert.equal(byEmail.status, 200, JSON.stringify(byEmail.body));
    eve = (await owner.get(`/users/${eveId}`)).body.user;
    assert.deepEqual([eve.role, eve.is_admin, eve.is_owner], [200, true, false]);

    const makeOwner = await adminClient.call('PATCH', `/users/${eveId}`, { role: 100 });
    assert.deepEqual([makeOwner.status, makeOwner.body.code, makeOwner.body.msg], [400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner']);
    const demoteOwner = await adminClient.call('PATCH', `/users/${ownerId}`, { role: 400 });
    assert.equal(demoteOwner.body.code, 'UNAUTHORIZED_PRINCIPAL');
    const lastOwner = await owner.call('PATCH', `/users/${ownerId}`, { role: 200 });
    assert.deepEqual([lastOwner.body.code, lastOwner.body.msg], ['BAD_REQUEST', 'The owner permission cannot be removed from the only organization owner.']);
    const byMember = await memberClient.call('PATCH', `/users/${eveId}`, { full_name: 'Nope' });
    assert.deepEqual([byMember.body.code, byMember.body.msg], ['UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator']);
    const badRole = await adminClient.call('PATCH', `/users/${eveId}`, { full_name: 'Half Applied', role: 250 });
    assert.deepEqual([badRole.body.code, badRole.body.msg], ['BAD_REQUEST', 'Invalid role']);
    const profile = await adminClient.call('PATCH', `/users/${eveId}`, { full_name: 'Half Applied', profile_data: [{ id: 9, value: 'x' }] });
    assert.equal(profile.body.msg, 'Field id 9 not found.');
    assert.equal((await owner.get(`/users/${eveId}`)).body.user.full_name, 'Eve Renamed', 'a refused update changes nothing');

    const { id: guestId } = await makeUser('gwen@example.com', 'guest');
    const guestToAdmin = await adminClient.call('PATCH', `/users/${guestId}`, { role: 200 });
    assert.equal(guestToAdmin.body.msg, 'Guests cannot be organization administrators');
    assert.equal((await adminClient.call('PATCH', `/users/${guestId}`, { role: 400 })).status, 200);

    // A second owner makes the first one demotable, by an owner only.
    assert.equal((await owner.call('PATCH', `/users/${adminId}`, { role: 100 })).status, 200);
    assert.equal((await owner.get(`/users/${adminId}`)).body.user.is_owner, true);
    assert.equal((await adminClient.call('PATCH', `/users/${adminId}`, { role: 200 })).status, 200);
  });

  it('deactivates and reactivates users; a deactivated key stops working; the last owner stays', async () => {
    const { client: fay, id: fayId } = await makeUser('fay@example.com');
    const botMade = await fay.post('/bots', { full_name: 'Fay Bot', short_name: 'fay' });
    const bot = new ChatClient(server.chatUrl, `fay-bot@${host}`, botMade.body.api_key);
    const byMember = await fay.call('DELETE', `/users/${ownerId}`);
    assert.equal(byMember.body.code, 'UNAUTHORIZED_PRINCIPAL');
    const last = await owner.call('DELETE', `/users/${ownerId}`);
    assert.deepEqual([last.status, last.body.code, last.body.msg], [400, 'BAD_REQUEST', 'Cannot deactivate the only organization owner']);
    const off = await owner.call('DELETE', `/users/${fayId}`);
    assert.equal(off.status, 200, JSON.stringify(off.body));
    const denied = await fay.get('/users/me');
    assert.deepEqual([denied.status, denied.body.code], [401, 'USER_DEACTIVATED']);
    assert.equal((await bot.get('/users/me')).body.code, 'USER_DEACTIVATED', "the owner's bots go with them");
    assert.equal((await owner.get(`/users/${fayId}`)).body.user.is_active, false);
    assert.equal((await owner.call('DELETE', `/users/${fayId}`)).body.msg, 'No such user');
    const back = await owner.post(`/users/${fayId}/reactivate`);
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.equal((await fay.get('/users/me')).status, 200);
    // Zulip's reactivate_user_backend does not check is_active: again is a success that changes nothing.
    const again = await owner.post(`/users/${fayId}/reactivate`);
    assert.deepEqual([again.status, again.body.result], [200, 'success']);
    assert.equal((await fay.post(`/users/${fayId}/reactivate`)).body.code, 'UNAUTHORIZED_PRINCIPAL');

    const leave = await fay.call('DELETE', '/users/me');
    assert.equal(leave.status, 200, JSON.stringify(leave.body));
    assert.equal((await fay.get('/users/me')).body.code, 'USER_DEACTIVATED');
  });

  it('refuses DELETE /users/me to the only owner', async () => {
    // Earlier tests made a second owner; demote them so the realm owner is the only one again.
    const owners = (await owner.get('/users')).body.members.filter((u: { role: number; is_active: boolean; user_id: number }) => u.role === 100 && u.is_active && u.user_id !== ownerId);
    for (const o of owners) assert.equal((await owner.call('PATCH', `/users/${o.user_id}`, { role: 200 })).status, 200);
    const r = await owner.call('DELETE', '/users/me');
    assert.deepEqual(
      [r.status, r.body.code, r.body.msg, r.body.entity, r.body.is_last_owner],
      [400, 'CANNOT_DEACTIVATE_LAST_USER', 'Cannot deactivate the only organization owner', 'organization owner', true],
    );
    assert.equal((await owner.get('/users/me')).status, 200);
  });
});

// The cache of the realm and of authenticated users (chat/auth.ts RequestCache): a change written
// through this node's store handle (deactivation, a new API key, a new role) counts on the very next
// request; one written through another handle (another node, `keel admin`) once READ_CACHE_TTL_MS
// has passed. Also: a request target is split as `new URL` would split it.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessChat, type InProcessClient } from '../helpers/in-process-chat.js';
import { openDatabase } from '../../src/platform/db/open.js';
import { MIGRATIONS } from '../../src/app.js';
import { READ_CACHE_TTL_MS } from '../../src/platform/db/fast/read-cache.js';
import { apiKeyHash, newApiKey } from '../../src/chat/domain/api-keys.js';
import { ROLE } from '../../src/chat/domain/roles.js';
import type { ChatTables } from '../../src/chat/tables.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;

await forEachEngine('chat authentication cache', (engine) => {
  let storage: Storage;
  let chat: Chat;

  before(async () => {
    storage = await createStorage(engine);
    chat = await inProcessChat(storage);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const me = (c: InProcessClient) => c.call('GET', '/users/me');

  it('refuses a deactivated user on the very next request, and accepts them once reactivated', async () => {
    const { client: alice, id } = await chat.member('alice@example.com', 'Alice');
    assert.equal((await me(alice)).status, 200);
    assert.equal((await me(alice)).status, 200, 'served from the cache');
    assert.equal((await chat.owner.call('DELETE', `/users/${id}`)).status, 200);
    const refused = await me(alice);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'USER_DEACTIVATED');
    assert.equal((await chat.owner.call('POST', `/users/${id}/reactivate`)).status, 200);
    assert.equal((await me(alice)).status, 200);
  });

  it('refuses an API key replaced through this node on the very next request', async () => {
    const { client: bob, id } = await chat.member('bob@example.com', 'Bob');
    assert.equal((await me(bob)).status, 200);
    const fresh = newApiKey();
    await chat.ctx.chatDb.transaction((trx) =>
      trx
        .updateTable('chat_users')
        .set({ api_key_hash: apiKeyHash(fresh) })
        .where('id', '=', id)
        .execute(),
    );
    const refused = await me(bob);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'INVALID_API_KEY');
    assert.equal((await me(chat.client(bob.email, fresh))).body.user_id, id);
  });

  it('uses a changed role on the very next request', async () => {
    const { client: carol, id } = await chat.member('carol@example.com', 'Carol');
    assert.equal((await me(carol)).body.role, ROLE.member);
    assert.equal((await carol.call('PATCH', `/users/${id}`, { full_name: 'Carol C' })).status, 400, 'a member may not');
    assert.equal((await chat.owner.call('PATCH', `/users/${id}`, { role: ROLE.administrator })).status, 200);
    assert.equal((await me(carol)).body.role, ROLE.administrator);
    assert.equal((await carol.call('PATCH', `/users/${id}`, { full_name: 'Carol C' })).status, 200, 'an administrator may');
    assert.equal((await chat.owner.call('PATCH', `/users/${id}`, { role: ROLE.member })).status, 200);
    assert.equal((await carol.call('PATCH', `/users/${id}`, { full_name: 'Carol D' })).status, 400, 'a member again');
  });

  it('sees a change made through another handle (another node) once the TTL has passed', async () => {
    const { client: dave, id } = await chat.member('dave@example.com', 'Dave');
    const other = await openDatabase<ChatTables>({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, migrations: MIGRATIONS });
    try {
      assert.equal((await me(dave)).status, 200);
      await other.kysely.updateTable('chat_users').set({ is_active: 0 }).where('id', '=', id).execute();
      chat.clock.advance(READ_CACHE_TTL_MS - 1);
      assert.equal((await me(dave)).status, 200, 'still cached within the TTL');
      chat.clock.advance(1);
      assert.equal((await me(dave)).body.code, 'USER_DEACTIVATED');
    } finally {
      await other.close();
    }
  });

  it('makes no queue for a registration that authenticated before a deactivation and waited for the gate behind it', async () => {
    const { client: fern, id } = await chat.member('fern@example.com', 'Fern');
    assert.equal((await me(fern)).status, 200);
    const queues = chat.events.size;
    let commit!: () => void;
    // A write holds the gate: the registration authenticates, then waits for the write to publish.
    const write = chat.events.write(
      async () => {
        await new Promise<void>((resolve) => (commit = resolve));
        await chat.ctx.chatDb.kysely.updateTable('chat_users').set({ is_active: 0 }).where('id', '=', id).execute();
      },
      () => [],
      () => [id],
    );
    const registration = fern.call('POST', '/register', { fetch_event_types: [] });
    await new Promise((resolve) => setTimeout(resolve, 100));
    commit();
    await write;
    const r = await registration;
    assert.deepEqual([r.status, r.body.code], [401, 'USER_DEACTIVATED']);
    assert.equal(chat.events.size, queues, 'no queue was made');
  });

  it("refuses a wrong key or another user's email even while the right ones are cached", async () => {
    const { client: erin } = await chat.member('erin@example.com', 'Erin');
    assert.equal((await me(erin)).status, 200);
    assert.equal((await me(chat.client(erin.email, newApiKey()))).body.code, 'INVALID_API_KEY');
    assert.equal((await me(chat.client(chat.owner.email, erin.apiKey))).body.code, 'INVALID_API_KEY');
    assert.equal((await me(erin)).status, 200);
  });
});

// JWT expiry on a manual clock, and the walls between customers.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessInfra } from '../helpers/in-process.js';
import { ManualClock } from '../../src/platform/clock.js';
import { newApiKey } from '../../src/infra/accounts.js';

await forEachEngine('infra in-process', (engine) => {
  let storage: Storage;
  let infra: Awaited<ReturnType<typeof inProcessInfra>>;
  const clock = new ManualClock(Date.UTC(2026, 10, 21));

  before(async () => {
    storage = await createStorage(engine);
    infra = await inProcessInfra(storage, { clock, args: ['--jwt-lifetime', '600'] });
  });
  after(async () => {
    await infra?.close();
    await storage?.dispose();
  });

  it('expires JWTs after the configured lifetime', async () => {
    const issued = await infra.cmd('customer.jsonwebtoken');
    assert.equal(issued.code, 'OK');
    assert.equal(issued.expires - Math.floor(clock.now() / 1000), 600);
    const bearer = { authorization: `Bearer ${issued.token}` };
    clock.advance(599_000);
    assert.equal((await infra.cmd('customer.get', {}, bearer)).code, 'OK');
    clock.advance(2_000);
    assert.deepEqual(await infra.cmd('customer.get', {}, bearer), { code: 'ACCESS_DENIED', message: 'Access Denied' });
  });

  it("stops a login's JWT when the login is disabled", async () => {
    const login = await infra.cmd('session.login', { username: infra.ctx.created!.username, password: infra.ctx.created!.password, jwt: 1 }, {});
    const bearer = { authorization: `Bearer ${login.token}` };
    assert.equal((await infra.cmd('apiuser.getall', {}, bearer)).code, 'OK');
    await infra.ctx.db.kysely.updateTable('logins').set({ status: 'DISABLED' }).execute();
    try {
      assert.equal((await infra.cmd('apiuser.getall', {}, bearer)).code, 'ACCESS_DENIED');
      assert.equal((await infra.cmd('session.login', { username: infra.ctx.created!.username, password: infra.ctx.created!.password }, {})).code, 'ACCESS_DENIED');
    } finally {
      await infra.ctx.db.kysely.updateTable('logins').set({ status: 'ACTIVE' }).execute();
    }
  });

  it('shows a customer only its own API users and account', async () => {
    const db = infra.ctx.db.kysely;
    const now = Math.floor(clock.now() / 1000);
    const other = await db
      .insertInto('customers')
      .values({
        company_name: 'Other',
        std_name: 'OTHER',
        first_name: '',
        last_name: '',
        email: '',
        status: 'ACTIVE',
        parent_id: null,
        currency: 'AUD',
        date_created: now,
        date_modified: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const key = newApiKey();
    const row = await db
      .insertInto('api_users')
      .values({
        customer_id: other.id,
        uuid: key.uuid,
        secret_hash: key.secretHash,
        name: 'other key',
        permissions: '["*"]',
        status: 'ACTIVE',
        date_created: now,
        date_modified: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const otherAuth = { authorization: 'Basic ' + Buffer.from(`${key.uuid}:${key.secret}`).toString('base64') };

    const theirs = await infra.cmd('apiuser.getall', {}, otherAuth);
    assert.deepEqual(
      theirs.apiusers.map((u: { name: string }) => u.name),
      ['other key'],
    );
    const mine = await infra.cmd('apiuser.getall');
    assert.ok(!mine.apiusers.some((u: { id: number }) => u.id === row.id));
    assert.equal((await infra.cmd('apiuser.get', { id: row.id })).message, 'Could not find API user');
    assert.equal((await infra.cmd('apiuser.get', { id: key.uuid })).message, 'Could not find API user');
    assert.equal((await infra.cmd('apiuser.update', { id: row.id, name: 'hijacked' })).message, 'Could not find API user');
    assert.equal((await infra.cmd('customer.get', { id: other.id })).message, 'Could not find customer');
    assert.equal((await infra.cmd('customer.get', {}, otherAuth)).customer.companyName, 'Other');
    const still = await db.selectFrom('api_users').select('name').where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.equal(still.name, 'other key');
  });
});

// The authentication cache: a change made through this node's store handle counts on the very next
// request; one made by another node (another handle) counts once the short TTL has passed.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { openDatabase } from '../../src/platform/db/open.js';
import { MIGRATIONS } from '../../src/app.js';
import type { Database } from '../../src/platform/db/database.js';
import { ManualClock } from '../../src/platform/clock.js';
import { JwtSigner } from '../../src/platform/auth/jwt.js';
import { initialise, newApiKey, type InitResult } from '../../src/infra/accounts.js';
import { PRINCIPAL_TTL_MS, PrincipalCache } from '../../src/infra/principal-cache.js';
import type { InfraTables } from '../../src/infra/tables.js';

await forEachEngine('infra principal cache', (engine) => {
  let storage: Storage;
  let db: Database<InfraTables>;
  let other: Database<InfraTables>;
  let init: InitResult;
  let jwt: JwtSigner;
  const clock = new ManualClock(Date.UTC(2026, 10, 21));
  const open = () => openDatabase<InfraTables>({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, migrations: MIGRATIONS });

  before(async () => {
    storage = await createStorage(engine);
    db = await open();
    other = await open();
    init = (await initialise(db, Math.floor(clock.now() / 1000)))!;
    jwt = new JwtSigner(randomBytes(32), 600, clock);
  });
  after(async () => {
    await other?.close();
    await db?.close();
    await storage?.dispose();
  });

  it('refuses a disabled API user, and an old secret, on the very next lookup', async () => {
    const cache = new PrincipalCache(db, clock);
    const key = newApiKey();
    const row = await db.kysely
      .insertInto('api_users')
      .values({
        customer_id: init.customerId,
        uuid: key.uuid,
        secret_hash: key.secretHash,
        name: 'k',
        permissions: '["*"]',
        status: 'ACTIVE',
        date_created: 0,
        date_modified: 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    assert.equal((await cache.forApiKey(key.uuid, key.secret))?.id, row.id);
    assert.equal((await cache.forApiKey(key.uuid, key.secret))?.id, row.id, 'served from the cache');

    await db.kysely.updateTable('api_users').set({ status: 'DISABLED' }).where('id', '=', row.id).execute();
    assert.equal(await cache.forApiKey(key.uuid, key.secret), null);

    await db.kysely.updateTable('api_users').set({ status: 'ACTIVE' }).where('id', '=', row.id).execute();
    assert.equal((await cache.forApiKey(key.uuid, key.secret))?.id, row.id);
    const fresh = newApiKey();
    await db.transaction((trx) => trx.updateTable('api_users').set({ secret_hash: fresh.secretHash }).where('id', '=', row.id).execute());
    assert.equal(await cache.forApiKey(key.uuid, key.secret), null, 'the old secret is refused');
    assert.equal((await cache.forApiKey(key.uuid, fresh.secret))?.id, row.id);

    await db.kysely.updateTable('customers').set({ status: 'SUSPENDED' }).where('id', '=', init.customerId).execute();
    try {
      assert.equal(await cache.forApiKey(key.uuid, fresh.secret), null, "a suspended customer's keys are refused");
    } finally {
      await db.kysely.updateTable('customers').set({ status: 'ACTIVE' }).where('id', '=', init.customerId).execute();
    }
  });

  it("refuses a disabled login's JWT on the very next lookup", async () => {
    const cache = new PrincipalCache(db, clock);
    const login = await db.kysely.selectFrom('logins').select('id').where('username', '=', init.username).executeTakeFirstOrThrow();
    const { token } = await jwt.sign({ sub: `login:${login.id}`, cid: init.customerId });
    assert.equal((await cache.forJwt(jwt, token))?.kind, 'login');
    assert.equal((await cache.forJwt(jwt, token))?.kind, 'login');
    await db.kysely.updateTable('logins').set({ status: 'DISABLED' }).where('id', '=', login.id).execute();
    try {
      assert.equal(await cache.forJwt(jwt, token), null);
    } finally {
      await db.kysely.updateTable('logins').set({ status: 'ACTIVE' }).where('id', '=', login.id).execute();
    }
  });

  it('sees a change made through another handle (another node) once the TTL has passed', async () => {
    const cache = new PrincipalCache(db, clock);
    const key = newApiKey();
    const row = await other.kysely
      .insertInto('api_users')
      .values({
        customer_id: init.customerId,
        uuid: key.uuid,
        secret_hash: key.secretHash,
        name: 'remote',
        permissions: '[]',
        status: 'ACTIVE',
        date_created: 0,
        date_modified: 0,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    assert.equal((await cache.forApiKey(key.uuid, key.secret))?.id, row.id);
    await other.kysely.updateTable('api_users').set({ status: 'DISABLED' }).where('id', '=', row.id).execute();
    clock.advance(PRINCIPAL_TTL_MS - 1);
    assert.equal((await cache.forApiKey(key.uuid, key.secret))?.id, row.id, 'still cached within the TTL');
    clock.advance(1);
    assert.equal(await cache.forApiKey(key.uuid, key.secret), null);
  });
});

// The Database interface on both engines: migrations, refusal of newer schemas, transactions.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { migrate, schemaVersion, type Migration } from '../../../src/platform/db/migrate.js';
import { MIGRATIONS } from '../../../src/platform/db/migrations/index.js';
import type { Database } from '../../../src/platform/db/database.js';

interface T { things: { id: number; name: string } }

const extra: Migration = {
  version: MIGRATIONS.length + 1,
  name: 'test things',
  up: (t) => [`CREATE TABLE things (id ${t.id}, name ${t.text} NOT NULL UNIQUE)`],
};

await forEachEngine('store', (engine) => {
  let storage: Storage;
  let db: Database<T>;

  before(async () => {
    storage = await createStorage(engine);
    db = await openDatabase<T>({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, migrations: [...MIGRATIONS, extra] });
  });
  after(async () => {
    await db?.close();
    await storage?.dispose();
  });

  it('applies every migration once, in order', async () => {
    assert.equal(await schemaVersion(db.kysely), MIGRATIONS.length + 1);
    assert.equal(await migrate(db, [...MIGRATIONS, extra]), MIGRATIONS.length + 1, 'running again changes nothing');
  });

  it('refuses a database newer than the code', async () => {
    await assert.rejects(migrate(db, MIGRATIONS), /newer than this Keel knows/);
  });

  it('refuses migrations with gaps', async () => {
    await assert.rejects(migrate(db, [{ ...extra, version: 9 }]), /gap or duplicate/);
  });

  it('commits a transaction whole or not at all', async () => {
    await db.transaction(async (trx) => {
      await trx.insertInto('things').values({ name: 'a' } as never).execute();
      await trx.insertInto('things').values({ name: 'b' } as never).execute();
    });
    await assert.rejects(
      db.transaction(async (trx) => {
        await trx.insertInto('things').values({ name: 'c' } as never).execute();
        await trx.insertInto('things').values({ name: 'a' } as never).execute(); // unique violation
      }),
    );
    const names = (await db.kysely.selectFrom('things').select('name').orderBy('name').execute()).map((r) => r.name);
    assert.deepEqual(names, ['a', 'b']);
  });

  it('returns integer ids and counts as numbers on both engines', async () => {
    const row = await db.kysely.insertInto('things').values({ name: 'n' } as never).returning('id').executeTakeFirstOrThrow();
    assert.equal(typeof row.id, 'number');
    const count = await sql<{ n: number }>`select count(*) as n from things`.execute(db.kysely);
    assert.equal(Number(count.rows[0].n), 3);
  });
});

// TableCache keeps its entries on each store (Database.caches), timed by the clock the store was
// opened with: a manual clock decides when an entry dies, and two stores never share an entry.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createStorage, type Storage } from '../../../helpers/server.js';
import { openDatabase } from '../../../../src/platform/db/open.js';
import { TableCache } from '../../../../src/platform/db/fast/table-cache.js';
import { READ_CACHE_TTL_MS } from '../../../../src/platform/db/fast/read-cache.js';
import { ManualClock } from '../../../../src/platform/clock.js';
import { MIGRATIONS } from '../../../../src/app.js';
import type { Database } from '../../../../src/platform/db/database.js';
import type { InfraTables } from '../../../../src/infra/tables.js';

const storages: Storage[] = [];
const stores: Database<InfraTables>[] = [];
const clock = new ManualClock(Date.UTC(2025, 0, 1));

async function open(): Promise<Database<InfraTables>> {
  const storage = await createStorage('sqlite');
  storages.push(storage);
  const db = await openDatabase<InfraTables>({ dataDir: storage.dataDir, migrations: MIGRATIONS, clock });
  stores.push(db);
  return db;
}

let first: Database<InfraTables>;
let second: Database<InfraTables>;
before(async () => {
  first = await open();
  second = await open();
});
after(async () => {
  for (const db of stores) await db.close();
  for (const s of storages) await s.dispose();
});

it('keeps a value until the store clock passes the TTL or the table is written, per store', async () => {
  const cache = new TableCache<string>('server_secrets');
  let loads = 0;
  const load = (value: string) => async () => {
    loads++;
    return value;
  };
  assert.equal(await cache.get(first.kysely, 'k', load('a')), 'a');
  assert.equal(await cache.get(first.kysely, 'k', load('b')), 'a', 'kept');
  assert.equal(await cache.get(second.kysely, 'k', load('c')), 'c', 'another store has entries of its own');
  assert.equal(loads, 2);
  await first.kysely.insertInto('server_secrets').values({ name: 'x', value: '1' }).execute();
  assert.equal(await cache.get(first.kysely, 'k', load('d')), 'd', 'a write to the table ends the entry');
  assert.equal(await cache.get(second.kysely, 'k', load('e')), 'c', "the other store's entry stays");
  clock.advance(READ_CACHE_TTL_MS - 1);
  assert.equal(await cache.get(first.kysely, 'k', load('f')), 'd', 'the manual clock has not passed the TTL');
  clock.advance(1);
  assert.equal(await cache.get(first.kysely, 'k', load('g')), 'g', 'past the TTL by the store clock');
  await first.transaction(async (trx) => {
    assert.equal(await cache.get(trx, 'k', load('h')), 'h', 'a transaction reads afresh');
  });
});

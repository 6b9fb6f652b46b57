// SQLite group commit: synced() waits for an fsync that began after every write made before it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, it, mock } from 'node:test';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { MIGRATIONS } from '../../../src/app.js';
import type { Database } from '../../../src/platform/db/database.js';
import type { InfraTables } from '../../../src/infra/tables.js';

let storage: Storage;
let db: Database<InfraTables>;

before(async () => {
  storage = await createStorage('sqlite');
  db = await openDatabase<InfraTables>({ dataDir: storage.dataDir, migrations: MIGRATIONS });
});
after(async () => {
  mock.restoreAll();
  await db?.close();
  await storage?.dispose();
});

it('flushes after a write, shares one flush among concurrent waiters, and skips it when nothing changed', async () => {
  const fsync = mock.method(fs, 'fsync');
  await db.kysely.insertInto('server_secrets').values({ name: 'a', value: '1' }).execute();
  assert.equal(db.durable(), false, 'a write waits for its flush');
  const flushing = Promise.all([db.synced(), db.synced(), db.synced()]);
  assert.equal(db.durable(), false, 'an answer waits for a running flush, whose writes it may show');
  await flushing;
  assert.equal(fsync.mock.callCount(), 1, 'one fsync for three waiters');
  assert.equal(db.durable(), true);
  await db.synced();
  await db.kysely.selectFrom('server_secrets').selectAll().execute();
  assert.equal(db.durable(), true, 'a read leaves nothing to flush');
  await db.synced();
  assert.equal(fsync.mock.callCount(), 1, 'no fsync when nothing was written');
  await db.transaction(async (trx) => {
    await trx.insertInto('server_secrets').values({ name: 'b', value: '2' }).execute();
  });
  await db.synced();
  assert.equal(fsync.mock.callCount(), 2);
});

it('makes a write that lands during a flush wait for the next flush', async () => {
  const calls: string[] = [];
  const real = fs.fsync;
  mock.method(fs, 'fsync', (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
    calls.push('start');
    setTimeout(
      () =>
        real(fd, (err) => {
          calls.push('end');
          cb(err);
        }),
      20,
    );
  });
  await db.kysely.insertInto('server_secrets').values({ name: 'c', value: '3' }).execute();
  const first = db.synced();
  await db.kysely.insertInto('server_secrets').values({ name: 'd', value: '4' }).execute();
  const second = db.synced();
  await first;
  await second;
  assert.deepEqual(calls, ['start', 'end', 'start', 'end'], 'the second write waited for a flush that began after the first ended');
});

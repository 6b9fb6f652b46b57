// The Database interface on both engines: migrations, refusal of newer schemas, transactions.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { migrate, schemaVersion, type Migration } from '../../../src/platform/db/migrate.js';
import { MIGRATIONS } from '../../../src/app.js';
import type { Database } from '../../../src/platform/db/database.js';
import { preparedQuery } from '../../../src/platform/db/fast/prepared.js';

interface T {
  things: { id: number; name: string };
}

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
      await trx
        .insertInto('things')
        .values({ name: 'a' } as never)
        .execute();
      await trx
        .insertInto('things')
        .values({ name: 'b' } as never)
        .execute();
    });
    await assert.rejects(
      db.transaction(async (trx) => {
        await trx
          .insertInto('things')
          .values({ name: 'c' } as never)
          .execute();
        await trx
          .insertInto('things')
          .values({ name: 'a' } as never)
          .execute(); // unique violation
      }),
    );
    const names = (await db.kysely.selectFrom('things').select('name').orderBy('name').execute()).map((r) => r.name);
    assert.deepEqual(names, ['a', 'b']);
  });

  it('returns integer ids and counts as numbers on both engines', async () => {
    const row = await db.kysely
      .insertInto('things')
      .values({ name: 'n' } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    assert.equal(typeof row.id, 'number');
    const count = await sql<{ n: number }>`select count(*) as n from things`.execute(db.kysely);
    assert.equal(Number(count.rows[0].n), 3);
  });

  it("runs a prepared query with each call's own values", async () => {
    const byName = preparedQuery((k: Kysely<T>, name: string, above: number) => k.selectFrom('things').select(['id', 'name']).where('name', '=', name).where('id', '>', above).limit(5));
    assert.deepEqual(
      (await byName(db.kysely, 'a', 0)).map((r) => r.name),
      ['a'],
    );
    assert.deepEqual(
      (await byName(db.kysely, 'b', 0)).map((r) => r.name),
      ['b'],
    );
    assert.deepEqual(await byName(db.kysely, 'b', 1_000_000), []);
    assert.deepEqual(await byName(db.kysely, 'nothing', 0), []);
  });

  it("never lets a prepared read see another caller's uncommitted transaction", async () => {
    // SQLite runs prepared selects straight on its one connection when no transaction is open; while
    // one is, the read must wait its turn like any other query and see only committed rows.
    const byName = preparedQuery((k: Kysely<T>, name: string) => k.selectFrom('things').select('name').where('name', '=', name));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const insertedYet = new Promise<void>((r) => (inserted = r));
    const trx = db.transaction(async (t) => {
      await t
        .insertInto('things')
        .values({ name: 'uncommitted' } as never)
        .execute();
      inserted();
      await held;
      throw new Error('rolled back on purpose');
    });
    await insertedYet;
    const during = byName(db.kysely, 'uncommitted');
    release();
    await assert.rejects(trx, /rolled back on purpose/);
    assert.deepEqual(await during, [], 'the read saw a row that was never committed');
    assert.deepEqual(await byName(db.kysely, 'a'), [{ name: 'a' }]);
  });

  it('lets reads inside a transaction see its own writes, prepared ones too, and nobody else see them', async () => {
    // SQLite runs a transaction's prepared selects straight on the connection the transaction holds.
    const byName = preparedQuery((k: Kysely<T>, name: string) => k.selectFrom('things').select(['id', 'name']).where('name', '=', name));
    let outside: Promise<unknown[]> | undefined;
    await assert.rejects(
      db.transaction(async (t) => {
        const made = await t
          .insertInto('things')
          .values({ name: 'own' } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        assert.deepEqual(await byName(t, 'own'), [{ id: made.id, name: 'own' }]);
        assert.deepEqual(await byName(t, 'own'), await t.selectFrom('things').select(['id', 'name']).where('name', '=', 'own').execute());
        outside = byName(db.kysely, 'own');
        throw new Error('rolled back on purpose');
      }),
      /rolled back on purpose/,
    );
    assert.deepEqual(await outside, [], "a read outside saw the transaction's uncommitted row");
    assert.deepEqual(await byName(db.kysely, 'own'), [], 'the row was rolled back');
  });

  it('refuses to prepare a query that is not a select', async () => {
    // Prepared queries pass the write counter (and so the caches) only when compiled.
    const insert = preparedQuery((k: Kysely<T>, name: string) => k.insertInto('things').values({ name } as never) as never);
    await assert.rejects(insert(db.kysely, 'never'), /must be a select/);
    assert.deepEqual(await db.kysely.selectFrom('things').select('name').where('name', '=', 'never').execute(), []);
  });

  it('reads the same rows through Kysely and directly, LIMIT and OFFSET included', async () => {
    const q = db.kysely
      .selectFrom('things')
      .select(['id', 'name', sql<null>`null`.as('nothing')])
      .orderBy('id')
      .limit(2)
      .offset(1);
    // SQLite prepares a statement with a bound LIMIT again on every run: the numbers are written in.
    if (engine === 'sqlite') assert.match(q.compile().sql, /limit 2 offset 1$/);
    const page = preparedQuery((k: Kysely<T>) =>
      k
        .selectFrom('things')
        .select(['id', 'name', sql<null>`null`.as('nothing')])
        .orderBy('id')
        .limit(2)
        .offset(1),
    );
    const viaKysely = await q.execute();
    assert.equal(viaKysely.length, 2);
    assert.deepEqual(await page(db.kysely), viaKysely);
    const ids = preparedQuery((k: Kysely<T>) => k.selectFrom('things').select('id').orderBy('id'));
    assert.deepEqual(await ids(db.kysely), await db.kysely.selectFrom('things').select('id').orderBy('id').execute());
  });

  it('reads columns of any name directly as Kysely does: quotes, "__proto__", a repeated name', async () => {
    // The direct reader makes its row objects with code generated from the column names.
    const odd = preparedQuery((k: Kysely<T>) =>
      k
        .selectFrom('things')
        .select(['id', sql<string>`name`.as('a"b\\c\n'), sql<number>`1`.as('__proto__'), sql<number>`2`.as('constructor'), sql<number>`3`.as('id')])
        .orderBy('things.id')
        .limit(1),
    );
    const [row] = (await odd(db.kysely)) as Record<string, unknown>[];
    assert.equal(Object.getPrototypeOf(row), Object.prototype);
    assert.deepEqual(Object.keys(row), ['id', 'a"b\\c\n', '__proto__', 'constructor']);
    assert.equal(row.id, 3, 'a repeated name keeps its last value');
    assert.equal(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, 1);
    assert.equal(row.constructor, 2);
    const one = preparedQuery((k: Kysely<T>) => k.selectFrom('things').select(sql<number>`7`.as('__proto__')).limit(1));
    const [single] = (await one(db.kysely)) as Record<string, unknown>[];
    assert.equal(Object.getOwnPropertyDescriptor(single, '__proto__')?.value, 7);
  });
  it("sees its own writes at once and other handles' writes from the next turn, and never holds a write back", async () => {
    // SQLite's direct reads of one event-loop turn share a read transaction (TurnSnapshot): a write
    // through Kysely must end it first, commit on its own, and be seen by the next read.
    const byName = preparedQuery((k: Kysely<T>, name: string) => k.selectFrom('things').select('name').where('name', '=', name));
    const other = await openDatabase<T>({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, migrations: [...MIGRATIONS, extra] });
    try {
      assert.deepEqual(await byName(db.kysely, 'turn-own'), []);
      await db.kysely
        .insertInto('things')
        .values({ name: 'turn-own' } as never)
        .execute();
      assert.deepEqual(await byName(db.kysely, 'turn-own'), [{ name: 'turn-own' }], 'a read after its own write, same turn');
      // Committed on its own, not inside the readers' snapshot: another handle sees it now.
      assert.deepEqual(await byName(other.kysely, 'turn-own'), [{ name: 'turn-own' }], 'the write reached the store');

      assert.deepEqual(await byName(db.kysely, 'turn-other'), []);
      await other.kysely
        .insertInto('things')
        .values({ name: 'turn-other' } as never)
        .execute();
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(await byName(db.kysely, 'turn-other'), [{ name: 'turn-other' }], "another handle's write, next turn");

      // A transaction begun while a snapshot is open runs, commits and is seen.
      assert.deepEqual(await byName(db.kysely, 'turn-trx'), []);
      await db.transaction((t) =>
        t
          .insertInto('things')
          .values({ name: 'turn-trx' } as never)
          .execute(),
      );
      assert.deepEqual(await byName(db.kysely, 'turn-trx'), [{ name: 'turn-trx' }]);
      assert.deepEqual(await byName(other.kysely, 'turn-trx'), [{ name: 'turn-trx' }]);
    } finally {
      await other.close();
    }
  });

  it("waits for another process's write rather than refusing a transaction that read before it wrote", async () => {
    // Another process (`keel admin` beside `keel serve`) writes while this transaction is open. On
    // SQLite a deferred BEGIN would take a read snapshot at the first read, and the later write would
    // fail at once (SQLITE_BUSY_SNAPSHOT: "database is locked"); transactions take the write lock at
    // BEGIN (IMMEDIATE), so the other process waits its busy timeout instead, and both writes land.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `
      const dir = ${JSON.stringify(new URL('../../../src/platform/db/', import.meta.url).pathname)};
      const [dataDir, url] = process.argv.slice(1);
      const db = url
        ? await (await import(dir + 'postgres.ts')).openPostgres(url)
        : (await import(dir + 'sqlite.ts')).openSqlite(dataDir + '/keel.sqlite');
      console.log('open');
      process.stdin.once('data', async () => {
        await db.kysely.insertInto('things').values({ name: 'from-other-process' }).execute();
        console.log('written');
        await db.close();
        process.exit(0);
      });
    `,
        storage.dataDir,
        storage.databaseUrl ?? '',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (c) => (stderr += c));
    const opened = new Promise<void>((resolve) =>
      child.stdout!.on('data', (c) => {
        stdout += c;
        if (stdout.includes('open')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await Promise.race([opened, exited]);
    await db.transaction(async (trx) => {
      await trx.selectFrom('things').select('name').execute();
      // The other process writes now, while this transaction is open; long enough for its write to
      // be done (without the write lock taken at BEGIN) or to be waiting (with it).
      child.stdin!.write('go\n');
      await new Promise((r) => setTimeout(r, 500));
      await trx
        .insertInto('things')
        .values({ name: 'from-this-process' } as never)
        .execute();
    });
    assert.equal(await exited, 0, stderr);
    const names = (await db.kysely.selectFrom('things').select('name').where('name', 'like', 'from-%').orderBy('name').execute()).map((r) => r.name);
    assert.deepEqual(names, ['from-other-process', 'from-this-process']);
  });

  it('moves the write generation on writes and transactions, not on reads', async () => {
    const before = db.writeGeneration();
    await db.kysely.selectFrom('things').selectAll().execute();
    await sql`select 1`.execute(db.kysely);
    assert.equal(db.writeGeneration(), before);
    await db.kysely
      .updateTable('things')
      .set({ name: 'n2' } as never)
      .where('name', '=', 'n')
      .execute();
    const afterWrite = db.writeGeneration();
    assert.ok(afterWrite > before);
    await db.transaction(async (trx) => trx.selectFrom('things').selectAll().execute());
    assert.ok(db.writeGeneration() > afterWrite);
  });

  it("moves a table's write generation on writes that may touch that table only", async () => {
    const moved = async (what: string, write: () => Promise<unknown>, expect: { things: boolean; other: boolean }) => {
      const before = { things: db.writeGeneration('things'), other: db.writeGeneration('other_table') };
      await write();
      assert.equal(db.writeGeneration('things') !== before.things, expect.things, `${what}: things`);
      assert.equal(db.writeGeneration('other_table') !== before.other, expect.other, `${what}: another table`);
    };
    await moved('a read', () => db.kysely.selectFrom('things').selectAll().execute(), { things: false, other: false });
    await moved(
      'an insert',
      () =>
        db.kysely
          .insertInto('things')
          .values({ name: 'g1' } as never)
          .execute(),
      { things: true, other: false },
    );
    await moved(
      'an update through an alias',
      () =>
        db.kysely
          .updateTable('things as t')
          .set({ name: 'g2' } as never)
          .where('t.name', '=', 'g1')
          .execute(),
      { things: true, other: false },
    );
    await moved(
      'a transaction',
      () =>
        db.transaction((trx) =>
          trx
            .insertInto('things')
            .values({ name: 'g3' } as never)
            .execute(),
        ),
      { things: true, other: false },
    );
    await moved('a read-only transaction', () => db.transaction((trx) => trx.selectFrom('things').selectAll().execute()), { things: false, other: false });
    // Foreign keys may cascade a delete anywhere; raw SQL names its tables in text.
    await moved('a delete', () => db.kysely.deleteFrom('things').where('name', '=', 'g3').execute(), { things: true, other: true });
    await moved('raw SQL', () => sql`update things set name = 'g4' where name = 'g2'`.execute(db.kysely), { things: true, other: true });
    // Another table's cache read during a transaction that writes it sees the change once it ends.
    let during = 0;
    await db.transaction(async (trx) => {
      await trx
        .insertInto('things')
        .values({ name: 'g5' } as never)
        .execute();
      during = db.writeGeneration('things');
    });
    assert.notEqual(db.writeGeneration('things'), during, 'moved again at the commit');
  });
});

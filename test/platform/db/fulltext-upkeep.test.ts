// The full-text upkeep merges SQLite's index segments after messages were written one transaction
// each (what a server does), leaves search results as they were, runs by itself once started, and
// does nothing on PostgreSQL, whose GIN index needs no merging.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openPostgres } from '../../../src/platform/db/postgres.js';
import { openSqlite } from '../../../src/platform/db/sqlite.js';
import { migrate } from '../../../src/platform/db/migrate.js';
import { MIGRATIONS } from '../../../src/app.js';
import { searchCondition, searchText } from '../../../src/platform/db/fulltext.js';
import { FulltextUpkeep } from '../../../src/platform/db/fulltext-upkeep.js';
import { parseSearch } from '../../../src/chat/domain/search.js';
import type { Database } from '../../../src/platform/db/database.js';

await forEachEngine('full-text upkeep', (engine) => {
  let storage: Storage;
  let db: Database<any>;
  let insert: (content: string) => Promise<void>;

  before(async () => {
    storage = await createStorage(engine);
    db = engine === 'postgres' ? await openPostgres(storage.databaseUrl!) : openSqlite(`${storage.dataDir}/keel.sqlite`);
    await migrate(db, MIGRATIONS);
    const k = db.kysely;
    const realm = (await sql<{ id: number }>`insert into realms (string_id, name, email_host, date_created) values ('', 'K', 'x', 0) returning id`.execute(k)).rows[0].id;
    const user = (
      await sql<{ id: number }>`insert into chat_users (realm_id, email, email_lower, delivery_email, full_name, role, api_key_hash, api_key_sealed, date_joined)
      values (${realm}, 'a@x', 'a@x', 'a@x', 'A', 100, 'h', 's', 0) returning id`.execute(k)
    ).rows[0].id;
    const rcpt = (await sql<{ id: number }>`insert into recipients (kind, direct_key) values ('direct', ${String(user)}) returning id`.execute(k)).rows[0].id;
    // One statement, so one transaction and one new index segment, per message.
    insert = async (content) => {
      await sql`insert into messages (realm_id, sender_id, recipient_id, topic, content, rendered_content, client, date_sent, search_text)
        values (${realm}, ${user}, ${rcpt}, 't', ${content}, ${`<p>${content}</p>`}, 'test', 0, ${searchText('t', `<p>${content}</p>`)})`.execute(k);
    };
  });
  after(async () => {
    await db?.close();
    await storage?.dispose();
  });

  const find = async (k: Kysely<any>, q: string) =>
    (await sql<{ id: number }>`select m.id from messages m where ${searchCondition(engine, parseSearch(q))} order by m.id`.execute(k)).rows.map((r) => Number(r.id));

  it('merges the segments of messages written one at a time, and the same messages are found after', async () => {
    for (let i = 0; i < 300; i++) await insert(i % 7 === 0 ? `release number ${i}` : `other words ${i}`);
    const found = await find(db.kysely, 'releases');
    assert.equal(found.length, 43);
    const upkeep = new FulltextUpkeep(db, { everyMs: 0, pagesPerSlice: 1 });
    const first = await upkeep.run();
    if (engine === 'postgres') {
      assert.deepEqual({ slices: first.slices, merged: first.merged }, { slices: 0, merged: false });
    } else {
      // 300 segments merged into one, then a slice that finds nothing left.
      assert.equal(first.merged, true);
      assert.ok(first.slices >= 2, `slices ${first.slices}`);
      const second = await upkeep.run();
      assert.deepEqual({ slices: second.slices, merged: second.merged }, { slices: 1, merged: false });
    }
    assert.deepEqual(await find(db.kysely, 'releases'), found);
    await upkeep.stop();
  });

  // PostgreSQL has no segments to merge: the test above checks the upkeep does nothing there.
  if (engine === 'sqlite')
    it('once started, merges by itself after messages were written, and stops', async () => {
      const upkeep = new FulltextUpkeep(db, { everyMs: 20, pagesPerSlice: 4 });
      upkeep.start();
      for (let i = 0; i < 50; i++) await insert(`later release ${i}`);
      // Its own run comes within a few periods; a run of ours afterwards finds nothing to merge.
      let settled = false;
      for (let i = 0; i < 100 && !settled; i++) {
        await sleep(50);
        settled = !(await new FulltextUpkeep(db, { everyMs: 0, pagesPerSlice: 1 }).run()).merged;
        if (!settled) for (let j = 0; j < 5; j++) await insert(`still more ${j}`);
      }
      assert.ok(settled);
      await upkeep.stop();
      await insert('after the stop');
      await sleep(100);
      const check = await new FulltextUpkeep(db, { everyMs: 0, pagesPerSlice: 1 }).run();
      assert.equal(check.merged, true, 'a stopped upkeep merged a later write');
      assert.equal((await find(db.kysely, 'later release')).length, 50);
    });
});

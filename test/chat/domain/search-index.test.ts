// Migration 5 indexes messages stored before it, and the index follows updates and deletes of a
// message row (the path edits, topic moves and deletions will take), on both engines.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openPostgres } from '../../../src/platform/db/postgres.js';
import { openSqlite } from '../../../src/platform/db/sqlite.js';
import { migrate } from '../../../src/platform/db/migrate.js';
import { MIGRATIONS } from '../../../src/app.js';
import { searchCondition } from '../../../src/platform/db/fulltext.js';
import { parseSearch } from '../../../src/chat/domain/search.js';
import type { Database } from '../../../src/platform/db/database.js';

await forEachEngine('chat search index', (engine) => {
  let storage: Storage;
  let db: Database<any>;

  before(async () => {
    storage = await createStorage(engine);
    db = engine === 'postgres' ? await openPostgres(storage.databaseUrl!) : openSqlite(`${storage.dataDir}/keel.sqlite`);
  });
  after(async () => {
    await db?.close();
    await storage?.dispose();
  });

  const find = async (k: Kysely<any>, q: string) =>
    (await sql<{ id: number }>`select m.id from messages m where ${searchCondition(engine, parseSearch(q))} order by m.id`.execute(k)).rows.map((r) => Number(r.id));

  it('indexes old messages at migration and follows later changes', async () => {
    assert.equal(
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 5),
      ),
      4,
    );
    const k = db.kysely;
    const realm = (await sql<{ id: number }>`insert into realms (string_id, name, email_host, date_created) values ('', 'K', 'x', 0) returning id`.execute(k)).rows[0].id;
    const user = (
      await sql<{ id: number }>`insert into chat_users (realm_id, email, email_lower, delivery_email, full_name, role, api_key_hash, api_key_sealed, date_joined)
      values (${realm}, 'a@x', 'a@x', 'a@x', 'A', 100, 'h', 's', 0) returning id`.execute(k)
    ).rows[0].id;
    const rcpt = (await sql<{ id: number }>`insert into recipients (kind, direct_key) values ('direct', ${String(user)}) returning id`.execute(k)).rows[0].id;
    const insert = async (topic: string, content: string) =>
      Number(
        (
          await sql<{ id: number }>`insert into messages (realm_id, sender_id, recipient_id, topic, content, rendered_content, client, date_sent)
      values (${realm}, ${user}, ${rcpt}, ${topic}, ${content}, '', 'test', 0) returning id`.execute(k)
        ).rows[0].id,
      );
    const old = await insert('Ancient', 'written before the index');
    assert.equal(await migrate(db, MIGRATIONS), Math.max(...MIGRATIONS.map((m) => m.version)));
    assert.deepEqual(await find(k, 'ancient before'), [old]);
    const fresh = await insert('new', 'written after');
    assert.deepEqual(await find(k, 'written'), [old, fresh]);
    await sql`update messages set content = ${'edited words'}, topic = ${'moved'} where id = ${old}`.execute(k);
    assert.deepEqual(await find(k, 'ancient'), []);
    assert.deepEqual(await find(k, 'edited moved'), [old]);
    await sql`delete from messages where id = ${fresh}`.execute(k);
    assert.deepEqual(await find(k, 'written'), []);
  });
});

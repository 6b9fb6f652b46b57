// Migration 19 re-indexes messages stored before it by their stems, the index follows inserts,
// updates and deletes of a message row, and both engines find exactly the same messages for
// Zulip's search rules (stems, stop words, quoted phrases).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openPostgres } from '../../../src/platform/db/postgres.js';
import { openSqlite } from '../../../src/platform/db/sqlite.js';
import { migrate } from '../../../src/platform/db/migrate.js';
import { MIGRATIONS } from '../../../src/app.js';
import { searchCondition, searchText } from '../../../src/platform/db/fulltext.js';
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

  it('re-indexes old messages at migration 19, follows later changes, and applies the search rules', async () => {
    assert.equal(
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 19),
      ),
      18,
    );
    const k = db.kysely;
    const realm = (await sql<{ id: number }>`insert into realms (string_id, name, email_host, date_created) values ('', 'K', 'x', 0) returning id`.execute(k)).rows[0].id;
    const user = (
      await sql<{ id: number }>`insert into chat_users (realm_id, email, email_lower, delivery_email, full_name, role, api_key_hash, api_key_sealed, date_joined)
      values (${realm}, 'a@x', 'a@x', 'a@x', 'A', 100, 'h', 's', 0) returning id`.execute(k)
    ).rows[0].id;
    const rcpt = (await sql<{ id: number }>`insert into recipients (kind, direct_key) values ('direct', ${String(user)}) returning id`.execute(k)).rows[0].id;
    const insertOld = async (topic: string, content: string, rendered = `<p>${content}</p>`) =>
      Number(
        (
          await sql<{ id: number }>`insert into messages (realm_id, sender_id, recipient_id, topic, content, rendered_content, client, date_sent)
      values (${realm}, ${user}, ${rcpt}, ${topic}, ${content}, ${rendered}, 'test', 0) returning id`.execute(k)
        ).rows[0].id,
      );
    const deploys = await insertOld('Ancient', 'The team deploys the servers', '<p>The team deploys the servers</p>');
    const link = await insertOld('links', '[docs](https://hidden.example)', '<p><a href="https://hidden.example">docs</a></p>');
    assert.equal(await migrate(db, MIGRATIONS), Math.max(...MIGRATIONS.map((m) => m.version)));
    // Stems, from the rendered text and the topic, not from attributes.
    assert.deepEqual(await find(k, 'deploying'), [deploys]);
    assert.deepEqual(await find(k, 'ANCIENT deployed server'), [deploys]);
    assert.deepEqual(await find(k, 'doc'), [link]);
    assert.deepEqual(await find(k, 'hidden'), []);

    const insert = async (topic: string, content: string) => {
      const rendered = `<p>${content}</p>`;
      return Number(
        (
          await sql<{ id: number }>`insert into messages (realm_id, sender_id, recipient_id, topic, content, rendered_content, search_text, client, date_sent)
      values (${realm}, ${user}, ${rcpt}, ${topic}, ${content}, ${rendered}, ${searchText(topic, rendered)}, 'test', 0) returning id`.execute(k)
        ).rows[0].id,
      );
    };
    const deploying = await insert('ops', 'Deploying the new build; 100% done_now');
    const café = await insert('Café', 'Ünïcode Straße deploy');
    assert.deepEqual(await find(k, 'deploy'), [deploys, deploying, café]);
    // Stop words only, or no word at all: nothing, as in Zulip.
    assert.deepEqual(await find(k, 'the'), []);
    assert.deepEqual(await find(k, '...'), []);
    // A stop word beside a real one changes nothing.
    assert.deepEqual(await find(k, 'the build'), [deploying]);
    // Quoted: the stems must match and the phrase must occur as typed (ASCII case ignored).
    assert.deepEqual(await find(k, '"deploying the NEW"'), [deploying]);
    assert.deepEqual(await find(k, '"deploy the new"'), []);
    assert.deepEqual(await find(k, '"the servers" team'), [deploys]);
    assert.deepEqual(await find(k, '"100% done_now"'), [deploying]);
    assert.deepEqual(await find(k, '"100_ done"'), []);
    // Phrases also match the topic; non-ASCII words are indexed as written (lower case).
    assert.deepEqual(await find(k, '"Café" deploy'), [café]);
    assert.deepEqual(await find(k, 'straße ünïcode'), [café]);

    await sql`update messages set content = ${'edited'}, rendered_content = ${'<p>edited</p>'}, topic = ${'moved'}, search_text = ${searchText('moved', '<p>edited</p>')} where id = ${deploys}`.execute(
      k,
    );
    assert.deepEqual(await find(k, 'ancient'), []);
    assert.deepEqual(await find(k, 'edits moving'), [deploys]);
    await sql`delete from messages where id = ${deploying}`.execute(k);
    assert.deepEqual(await find(k, 'build'), []);
  });
});

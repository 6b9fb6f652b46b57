// The hidden-emails migration on both engines: users who hid their address before it get the
// placeholder as their API email (bots and public addresses keep theirs), and real addresses become
// unique per realm whatever their case.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, type Storage } from '../../helpers/server.js';
import { openPostgres } from '../../../src/platform/db/postgres.js';
import { openSqlite } from '../../../src/platform/db/sqlite.js';
import { migrate } from '../../../src/platform/db/migrate.js';
import { MIGRATIONS } from '../../../src/app.js';
import { chatHiddenEmails } from '../../../src/chat/migrations/020_chat_hidden_emails.js';
import type { Database } from '../../../src/platform/db/database.js';

await forEachEngine('chat hidden emails migration', (engine) => {
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

  const addUser = async (k: Kysely<any>, realm: number, email: string, settings: string, isBot = 0) =>
    Number(
      (
        await sql<{ id: number }>`insert into chat_users (realm_id, email, email_lower, delivery_email, full_name, role, is_bot, api_key_hash, api_key_sealed, settings, date_joined)
        values (${realm}, ${email}, ${email.toLowerCase()}, ${email}, 'X', 400, ${isBot}, ${`h-${email}`}, 's', ${settings}, 0) returning id`.execute(k)
      ).rows[0].id,
    );

  it('rewrites hidden addresses to the placeholder and makes real addresses unique', async () => {
    const before = MIGRATIONS.filter((m) => m.version < chatHiddenEmails.version);
    assert.equal(await migrate(db, before), chatHiddenEmails.version - 1);
    const k = db.kysely;
    const realm = (await sql<{ id: number }>`insert into realms (string_id, name, email_host, date_created) values ('', 'K', 'chat.example', 0) returning id`.execute(k)).rows[0].id;
    const hidden = await addUser(k, realm, 'Ann@Example.com', '{"email_address_visibility":3,"emojiset":"text"}');
    const nobody = await addUser(k, realm, 'nia@example.com', '{"email_address_visibility":4}');
    const open = await addUser(k, realm, 'bob@example.com', '{"email_address_visibility":1}');
    const unset = await addUser(k, realm, 'cy@example.com', '{}');
    const bot = await addUser(k, realm, 'deploy-bot@chat.example', '{"email_address_visibility":3}', 1);

    assert.equal(await migrate(db, MIGRATIONS), Math.max(...MIGRATIONS.map((m) => m.version)));
    const rows = await sql<{ id: number; email: string; email_lower: string; delivery_email: string }>`select id, email, email_lower, delivery_email from chat_users order by id`.execute(k);
    const byId = new Map(rows.rows.map((r) => [Number(r.id), [r.email, r.email_lower, r.delivery_email]]));
    assert.deepEqual(byId.get(hidden), [`user${hidden}@chat.example`, `user${hidden}@chat.example`, 'Ann@Example.com']);
    assert.deepEqual(byId.get(nobody), [`user${nobody}@chat.example`, `user${nobody}@chat.example`, 'nia@example.com']);
    assert.deepEqual(byId.get(open), ['bob@example.com', 'bob@example.com', 'bob@example.com']);
    assert.deepEqual(byId.get(unset), ['cy@example.com', 'cy@example.com', 'cy@example.com']);
    assert.deepEqual(byId.get(bot), ['deploy-bot@chat.example', 'deploy-bot@chat.example', 'deploy-bot@chat.example']);

    // Another account with the same real address, in another case, is refused by the store itself.
    await assert.rejects(addUser(k, realm, 'ANN@example.COM', '{}'));
    const other = (await sql<{ id: number }>`insert into realms (string_id, name, email_host, date_created) values ('b', 'B', 'b.chat.example', 0) returning id`.execute(k)).rows[0].id;
    assert.ok((await addUser(k, other, 'ann@example.com', '{}')) > 0, 'one per realm');
  });
});

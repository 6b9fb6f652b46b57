// The composition root against a database made before the migrations were split between the
// services (test/fixtures/keel-schema-17.sqlite.gz: `keel init` of 2026-11-24, schema version 17,
// gzipped): it opens without a migration, keeps its recorded versions, and its secrets still work.
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { MIGRATIONS, openCore } from '../src/app.js';
import { buildConfig } from '../src/config/config.js';
import { readOptions } from '../src/config/env.js';
import { schemaVersion } from '../src/platform/db/migrate.js';
import { createLogger } from '../src/platform/log.js';
import { InfraClient } from './helpers/infra-client.js';
import { createStorage, startServer, storageArgs, type Storage } from './helpers/server.js';

/** What `keel init` printed when the fixture was made, and the secret key it wrote beside it. */
const FIXTURE = {
  secretKey: '0c34dca5ac8aa8ef0df29e866fda3bf2f8f8253f53dfefcc2409d21b0f02f00d',
  infra: { apiUuid: '8e27f6c1-1a71-438a-bc6a-7e4083694c09', apiSecret: '18c03c1ea5ba103a65129ee0fe4c7f0f33bc86003f14e10b79d631cc5a52b5a5' },
  chat: { email: 'owner@127.0.0.1', apiKey: '7Dmfecy92mfcXR1UW9vot1XIaKSD1gfu' },
};

/** The versions and names that database recorded, one per migration, in the order they ran. */
const RECORDED = [
  [1, 'infra core'],
  [2, 'dns zones and records'],
  [3, 'chat core'],
  [4, 'chat default channels'],
  [5, 'chat message search'],
  [6, 'chat presence and status'],
  [7, 'chat topic index'],
  [8, 'chat subscription spans'],
  [9, 'chat event queues kept across a restart'],
  [10, 'chat alert words'],
  [11, 'chat user settings defaults, drafts, muted users and user topics'],
  [12, 'chat message edits and reactions'],
  [13, 'chat user group settings, linkifiers, custom emoji'],
  [14, 'chat realm settings'],
  [15, 'chat spectator access'],
  [16, 'chat channel creation settings'],
  [17, 'chat realm deactivation'],
];

async function oldDataDir(): Promise<Storage> {
  const storage = await createStorage('sqlite');
  writeFileSync(path.join(storage.dataDir, 'keel.sqlite'), gunzipSync(readFileSync(new URL('./fixtures/keel-schema-17.sqlite.gz', import.meta.url))), { mode: 0o600 });
  writeFileSync(path.join(storage.dataDir, 'secret.key'), FIXTURE.secretKey + '\n', { mode: 0o600 });
  chmodSync(storage.dataDir, 0o700);
  return storage;
}

describe('a database made before the schema was split between the services', () => {
  it('opens at its recorded version, migrated forward by any later migration, with nothing to set up', async () => {
    const storage = await oldDataDir();
    try {
      const core = await openCore(buildConfig(readOptions(storageArgs(storage), {}).options), { log: createLogger('error') });
      try {
        assert.equal(core.created, null);
        assert.equal(core.chatCreated, null);
        // Migrations added after the fixture (17) run on it at the open.
        assert.equal(await schemaVersion(core.db.kysely), Math.max(...MIGRATIONS.map((m) => m.version)));
        const rows = await sql<{ version: number; name: string }>`select version, name from keel_schema where version <= 17 order by version`.execute(core.db.kysely);
        const recorded = rows.rows.map((r) => [Number(r.version), r.name]);
        // The split kept every migration's number and name, so a version recorded means the same migration.
        assert.deepEqual(recorded.slice(0, RECORDED.length), RECORDED);
        assert.deepEqual(MIGRATIONS.map((m) => [m.version, m.name]).slice(0, RECORDED.length), RECORDED);
      } finally {
        await core.close();
      }
    } finally {
      await storage.dispose();
    }
  });

  it('serves it: the infra API key and the chat owner key it made work', async () => {
    const storage = await oldDataDir();
    try {
      const server = await startServer(storage);
      try {
        assert.equal(server.secrets, undefined, 'nothing was set up again');
        const api = new InfraClient(server.infraUrl, { basic: [FIXTURE.infra.apiUuid, FIXTURE.infra.apiSecret] });
        assert.equal((await api.cmd('apiuser.getall')).body.matches, 1);
        const me = await fetch(`${server.chatUrl}/api/v1/users/me`, { headers: { authorization: 'Basic ' + Buffer.from(`${FIXTURE.chat.email}:${FIXTURE.chat.apiKey}`).toString('base64') } });
        const body = (await me.json()) as Record<string, unknown>;
        assert.equal(me.status, 200, JSON.stringify(body));
        assert.equal(body.email, FIXTURE.chat.email);
      } finally {
        assert.equal(await server.stop(), 0);
      }
    } finally {
      await storage.dispose();
    }
  });
});

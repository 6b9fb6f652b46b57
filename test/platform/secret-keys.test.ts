// Secrets at rest: the data dir and files are the owner's alone, and the keys that sign JWTs and seal
// chat API keys derive from a secret key kept outside the store, so a copy of the database alone can
// neither forge tokens nor unseal keys. Covers the upgrade of a store that still holds its keys, the
// PostgreSQL ways of giving the key, and rotation.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../helpers/server.js';
import { InfraClient } from '../helpers/infra-client.js';
import { ChatClient } from '../helpers/chat-client.js';
import { buildConfig } from '../../src/config/config.js';
import { readOptions } from '../../src/config/env.js';
import { openStore } from '../../src/app.js';
import { bindServerKeys, KEY_CHECK_NAME, LEGACY_KEY_NAMES } from '../../src/server-keys.js';
import { ApiKeySeal, resealApiKeys } from '../../src/chat/domain/api-keys.js';
import { JwtSigner } from '../../src/platform/auth/jwt.js';
import { systemClock } from '../../src/platform/clock.js';
import type { Database } from '../../src/platform/db/database.js';
import type { ChatTables } from '../../src/chat/tables.js';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

const mode = (p: string) => statSync(p).mode & 0o777;
const newKeyHex = () => randomBytes(32).toString('hex');

async function withStore<T>(storage: Storage, work: (db: Database<ChatTables>) => Promise<T>, env: NodeJS.ProcessEnv = {}): Promise<T> {
  const config = buildConfig(readOptions(storageArgs(storage), env).options);
  const db = (await openStore(config)) as unknown as Database<ChatTables>;
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

const secretRows = (storage: Storage) => withStore(storage, (db) => db.kysely.selectFrom('server_secrets').selectAll().orderBy('name').execute());

/** The same store seen from another data dir: a copy of the SQLite file, or the same PostgreSQL database. */
function elsewhere(storage: Storage): Storage {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'keel-test-copy-'));
  if (!storage.databaseUrl) copyFileSync(path.join(storage.dataDir, 'keel.sqlite'), path.join(dataDir, 'keel.sqlite'));
  return {
    ...storage,
    dataDir,
    async dispose() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The chat owner's key (by password), and whether it authenticates. */
async function chatKeyWorks(server: RunningServer, email: string, password: string, apiKey: string): Promise<void> {
  const anon = new ChatClient(server.chatUrl, email, apiKey);
  const fetched = await anon.call('POST', '/fetch_api_key', { username: email, password }, null);
  assert.equal(fetched.status, 200, JSON.stringify(fetched.body));
  assert.equal(fetched.body.api_key, apiKey, 'fetch_api_key shows the same key');
  assert.equal((await anon.get('/users/me')).status, 200, 'the key authenticates');
}

async function jwtWorks(server: RunningServer, token: string): Promise<boolean> {
  const r = await new InfraClient(server.infraUrl).cmd('apiuser.getall', {}, { bearer: token });
  return r.body.code === 'OK';
}

async function loginJwt(server: RunningServer, username: string, password: string): Promise<string> {
  const r = await new InfraClient(server.infraUrl).cmd('session.login', { username, password, jwt: 1 }, null);
  assert.equal(r.body.code, 'OK', r.text);
  return r.body.token;
}

it('a fresh data dir is 0700, and the database, its -wal and -shm files and the key file are 0600', async () => {
  const storage = await createStorage('sqlite');
  const dataDir = path.join(storage.dataDir, 'new');
  try {
    const init = await runKeel(['init', '--json', '--data-dir', dataDir]);
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stderr, '', 'no warning on a fresh data dir');
    assert.equal(JSON.parse(init.stdout).secretKeyFile, path.join(dataDir, 'secret.key'), 'the first run names the key file');
    assert.equal(mode(dataDir), 0o700);
    assert.equal(mode(path.join(dataDir, 'keel.sqlite')), 0o600);
    assert.equal(mode(path.join(dataDir, 'secret.key')), 0o600);
    assert.match(readFileSync(path.join(dataDir, 'secret.key'), 'utf8'), /^[0-9a-f]{64}\n$/);
    const server = await startServer({ ...storage, dataDir });
    try {
      for (const f of ['keel.sqlite-wal', 'keel.sqlite-shm']) assert.equal(mode(path.join(dataDir, f)), 0o600, f);
    } finally {
      await server.stop();
    }
  } finally {
    await storage.dispose();
  }
});

it('warns at start, one line per path naming it and its mode, when the data dir or its files are wider', async () => {
  const storage = await createStorage('sqlite');
  try {
    assert.equal((await runKeel(['init', ...storageArgs(storage)])).code, 0);
    chmodSync(storage.dataDir, 0o755);
    chmodSync(path.join(storage.dataDir, 'keel.sqlite'), 0o644);
    chmodSync(path.join(storage.dataDir, 'secret.key'), 0o640);
    const r = await runKeel(['init', ...storageArgs(storage)]);
    assert.equal(r.code, 0, r.stderr);
    const warnings = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    assert.deepEqual(
      warnings.map((w) => w.level),
      ['warn', 'warn', 'warn', 'warn', 'warn'],
    );
    assert.match(warnings[0].msg, new RegExp(`^${storage.dataDir} has mode 0755: .*chmod 700 ${storage.dataDir}$`));
    assert.match(warnings[1].msg, new RegExp(`^${storage.dataDir}/keel.sqlite has mode 0644: .*chmod 600`));
    // SQLite gives them the database file's mode.
    assert.match(warnings[2].msg, new RegExp(`^${storage.dataDir}/keel.sqlite-wal has mode 0644: .*chmod 600`));
    assert.match(warnings[3].msg, new RegExp(`^${storage.dataDir}/keel.sqlite-shm has mode 0644: .*chmod 600`));
    assert.match(warnings[4].msg, new RegExp(`^${storage.dataDir}/secret.key has mode 0640: .*chmod 600`));
    assert.equal(mode(storage.dataDir), 0o755, "an existing mode is the operator's: warned of, not changed");
  } finally {
    await storage.dispose();
  }
});

it('refuses a malformed KEEL_SECRET_KEY, and a key given two ways, without echoing it', async () => {
  const storage = await createStorage('sqlite');
  try {
    const bad = await runKeel(['init', ...storageArgs(storage)], { KEEL_SECRET_KEY: 'not-a-key-at-all' });
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr, 'keel: the secret key in KEEL_SECRET_KEY must be 64 hexadecimal characters (make one with: openssl rand -hex 32)\n');
    const both = await runKeel(['init', ...storageArgs(storage), '--secret-key-file', '/nowhere'], { KEEL_SECRET_KEY: newKeyHex() });
    assert.deepEqual([both.code, both.stderr], [2, 'keel: give the secret key one way: --secret-key-file or KEEL_SECRET_KEY, not both\n']);
  } finally {
    await storage.dispose();
  }
});

/** An S3 credential made through storage.s3.credential.create (its secret is sealed with the server's key). */
async function s3Credential(server: RunningServer): Promise<{ accessKey: string; secretKey: string }> {
  const auth = `Basic ${Buffer.from(`${server.secrets!.apiUuid}:${server.secrets!.apiSecret}`).toString('base64')}`;
  const r = await fetch(`${server.infraUrl}/api/rest/v2.10/json.php`, {
    method: 'POST',
    headers: { authorization: auth },
    body: JSON.stringify({ cmd: 'storage.s3.credential.create', s3CredentialName: 'rotation' }),
  });
  return ((await r.json()) as { credential: { accessKey: string; secretKey: string } }).credential;
}

/** Whether a ListBuckets signed with the credential (AWS's SigV4 signer) is accepted. */
async function s3Works(server: RunningServer, cred: { accessKey: string; secretKey: string }): Promise<boolean> {
  const u = new URL(server.s3Url);
  const signer = new SignatureV4({
    credentials: { accessKeyId: cred.accessKey, secretAccessKey: cred.secretKey },
    region: 'us-east-1',
    service: 's3',
    sha256: Hash.bind(null, 'sha256') as unknown as new () => InstanceType<typeof Hash>,
  });
  const signed = await signer.sign({
    method: 'GET',
    protocol: 'http:',
    hostname: u.hostname,
    port: Number(u.port),
    path: '/',
    query: {},
    headers: { host: u.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
  });
  const headers = { ...(signed.headers as Record<string, string>) };
  delete headers.host;
  return (await fetch(`${server.s3Url}/`, { headers })).status === 200;
}

await forEachEngine('secret key', (engine) => {
  it('keeps no key in the store: a copy of the database with another key, or none, refuses to start; with the same key it works', async () => {
    const storage = await createStorage(engine);
    let copy: Storage | undefined;
    try {
      const first = await startServer(storage);
      const chat = first.chatSecrets!;
      const token = await loginJwt(first, first.secrets!.username, first.secrets!.password);
      await first.stop();
      copy = elsewhere(storage);
      const key = readFileSync(path.join(storage.dataDir, 'secret.key'), 'utf8');
      // What the store holds tells nothing of the key or the keys derived from it.
      const rows = await secretRows(storage);
      assert.deepEqual(
        rows.map((r) => r.name),
        [KEY_CHECK_NAME],
      );
      assert.ok(!rows[0].value.includes(key.trim()));

      const none = await runKeel(['serve', ...storageArgs(copy)]);
      assert.equal(none.code, 1);
      assert.equal(
        none.stderr,
        `keel: this database was set up with a secret key, and there is none at ${copy.dataDir}/secret.key: give Keel that key (restore the file, or use --secret-key-file FILE or KEEL_SECRET_KEY)` +
          (engine === 'postgres' ? '; every Keel node sharing a PostgreSQL database must be given the same key' : '') +
          '\n',
      );
      writeFileSync(path.join(copy.dataDir, 'secret.key'), newKeyHex() + '\n', { mode: 0o600 });
      const wrong = await runKeel(['serve', ...storageArgs(copy)]);
      assert.equal(wrong.code, 1);
      assert.match(wrong.stderr, new RegExp(`^keel: the secret key from ${copy.dataDir}/secret.key is not the one this database uses`));
      assert.equal(wrong.stderr.trim().split('\n').length, 1);
      const viaEnv = await runKeel(['serve', ...storageArgs(copy)], { KEEL_SECRET_KEY: newKeyHex() });
      assert.equal(viaEnv.code, 1);
      assert.match(viaEnv.stderr, /^keel: the secret key from KEEL_SECRET_KEY is not the one/);

      // The right key, from the environment: chat keys unseal and earlier tokens verify.
      const same = await startServer(copy, [], { KEEL_SECRET_KEY: key.trim() });
      try {
        await chatKeyWorks(same, chat.email, chat.password, chat.apiKey);
        assert.ok(await jwtWorks(same, token));
      } finally {
        await same.stop();
      }
    } finally {
      await copy?.dispose();
      await storage.dispose();
    }
  });

  it('moves the keys of a store that still holds them out of it: chat keys stay valid, old JWTs stop verifying', async () => {
    const storage = await createStorage(engine);
    try {
      const first = await startServer(storage);
      const chat = first.chatSecrets!;
      const infra = first.secrets!;
      const owner = new ChatClient(first.chatUrl, chat.email, chat.apiKey);
      const bot = await owner.post('/bots', { full_name: 'Old Bot', short_name: 'oldbot' });
      assert.equal(bot.status, 200, JSON.stringify(bot.body));
      await first.stop();
      // The store as Keel kept it before: both keys in server_secrets, chat keys sealed under the
      // stored seal key, no check value and no key file.
      const legacy = { seal: newKeyHex(), jwt: newKeyHex() };
      const sealed = await withStore(storage, async (db) => {
        const keys = await bindServerKeys(db, buildConfig(readOptions(storageArgs(storage), {}).options));
        await db.transaction(async (trx) => {
          await resealApiKeys(trx, keys.apiKeySeal, new ApiKeySeal(Buffer.from(legacy.seal, 'hex')));
          await trx.deleteFrom('server_secrets').execute();
          await trx
            .insertInto('server_secrets')
            .values([
              { name: LEGACY_KEY_NAMES.jwt, value: legacy.jwt },
              { name: LEGACY_KEY_NAMES.seal, value: legacy.seal },
            ])
            .execute();
        });
        return (await db.kysely.selectFrom('chat_users').select('id').execute()).length;
      });
      rmSync(path.join(storage.dataDir, 'secret.key'));
      const oldToken = (await new JwtSigner(Buffer.from(legacy.jwt, 'hex'), 3600, systemClock).sign({ sub: 'login:1' })).token;

      const upgraded = await runKeel(['init', '--json', ...storageArgs(storage)]);
      assert.equal(upgraded.code, 0, upgraded.stderr);
      assert.deepEqual(JSON.parse(upgraded.stdout), { alreadyInitialised: true });
      const warning = JSON.parse(upgraded.stderr.trim()) as { level: string; msg: string };
      assert.equal(warning.level, 'warn');
      assert.match(
        warning.msg,
        new RegExp(`^moved the JWT signing key and the chat API key seal key out of the database: .*; ${sealed} chat API keys sealed again .* JWTs issued before this start no longer verify`),
      );
      assert.equal(mode(path.join(storage.dataDir, 'secret.key')), 0o600);
      const rows = await secretRows(storage);
      assert.deepEqual(
        rows.map((r) => r.name),
        [KEY_CHECK_NAME],
        'no key is left in server_secrets',
      );
      assert.ok(!rows.some((r) => r.value === legacy.seal || r.value === legacy.jwt));

      const server = await startServer(storage);
      try {
        await chatKeyWorks(server, chat.email, chat.password, chat.apiKey);
        const bots = await new ChatClient(server.chatUrl, chat.email, chat.apiKey).call('POST', '/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
        const oldBot = bots.body.realm_bots.find((b: { user_id: number }) => b.user_id === bot.body.user_id);
        assert.equal(oldBot.api_key, bot.body.api_key, "a bot's key is shown as before");
        assert.equal(await jwtWorks(server, oldToken), false, 'a JWT signed with the old stored key no longer verifies');
        assert.ok(await jwtWorks(server, await loginJwt(server, infra.username, infra.password)), 'new logins get JWTs that work');
      } finally {
        await server.stop();
      }
    } finally {
      await storage.dispose();
    }
  });

  it('rotates the secret key: chat keys sealed again, the old key refused, JWTs re-issued', async () => {
    const storage = await createStorage(engine);
    try {
      const first = await startServer(storage);
      const chat = first.chatSecrets!;
      const infra = first.secrets!;
      const token = await loginJwt(first, infra.username, infra.password);
      const s3 = await s3Credential(first);
      assert.equal(await s3Works(first, s3), true);
      await first.stop();
      const keyFile = path.join(storage.dataDir, 'secret.key');
      const oldKey = readFileSync(keyFile, 'utf8');
      const newFile = path.join(storage.dataDir, 'next.key');

      const same = await runKeel(['admin', 'rotate-secret-key', '--new-key-file', keyFile, ...storageArgs(storage)]);
      assert.equal(same.code, 2);
      assert.match(same.stderr, /^keel: --new-key-file must not be the key file in use/);

      const r = await runKeel(['admin', 'rotate-secret-key', '--json', '--new-key-file', newFile, ...storageArgs(storage)]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { newKeyFile: newFile, createdKeyFile: true, resealedApiKeys: 1 });
      assert.equal(mode(newFile), 0o600);
      // The old key is refused now.
      const old = await runKeel(['serve', ...storageArgs(storage)]);
      assert.equal(old.code, 1);
      assert.match(old.stderr, /is not the one this database uses/);
      renameSync(newFile, keyFile);
      const server = await startServer(storage);
      try {
        await chatKeyWorks(server, chat.email, chat.password, chat.apiKey);
        assert.equal(await jwtWorks(server, token), false, 'JWTs issued under the old key stop verifying');
        assert.ok(await jwtWorks(server, await loginJwt(server, infra.username, infra.password)), 'new logins get JWTs that work');
        assert.equal(await s3Works(server, s3), true, 'S3 secrets were sealed again too');
      } finally {
        await server.stop();
      }
      assert.notEqual(readFileSync(keyFile, 'utf8'), oldKey);
    } finally {
      await storage.dispose();
    }
  });

  if (engine === 'postgres') {
    it('nodes sharing a PostgreSQL database take the key from --secret-key-file or KEEL_SECRET_KEY; a node without it refuses to start', async () => {
      const storage = await createStorage(engine);
      const nodeB = elsewhere(storage);
      const nodeC = elsewhere(storage);
      const keyDir = mkdtempSync(path.join(os.tmpdir(), 'keel-test-key-'));
      try {
        const key = newKeyHex();
        const keyFile = path.join(keyDir, 'keel.key');
        writeFileSync(keyFile, key + '\n', { mode: 0o600 });
        const a = await startServer(storage, ['--secret-key-file', keyFile]);
        const chat = a.chatSecrets!;
        const token = await loginJwt(a, a.secrets!.username, a.secrets!.password);
        const b = await startServer(nodeB, [], { KEEL_SECRET_KEY: key });
        try {
          await chatKeyWorks(b, chat.email, chat.password, chat.apiKey);
          assert.ok(await jwtWorks(b, token), 'a token one node issued verifies on the other');
          const bot = await new ChatClient(b.chatUrl, chat.email, chat.apiKey).post('/bots', { full_name: 'B Bot', short_name: 'bbot' });
          const seen = await new ChatClient(a.chatUrl, chat.email, chat.apiKey).call('POST', '/register', { fetch_event_types: JSON.stringify(['realm_bot']) });
          assert.equal(seen.body.realm_bots.find((x: { user_id: number }) => x.user_id === bot.body.user_id).api_key, bot.body.api_key);
        } finally {
          await b.stop();
          await a.stop();
        }
        assert.throws(() => statSync(path.join(storage.dataDir, 'secret.key')), 'no key file is made when the key is given');
        const c = await runKeel(['serve', ...storageArgs(nodeC)]);
        assert.equal(c.code, 1);
        assert.match(c.stderr, /^keel: this database was set up with a secret key, and there is none at .*; every Keel node sharing a PostgreSQL database must be given the same key\n$/);
        const missing = await runKeel(['serve', ...storageArgs(nodeC), '--secret-key-file', path.join(keyDir, 'nope')]);
        assert.equal(missing.code, 1);
        assert.match(missing.stderr, /there is none at .*nope/);
      } finally {
        await nodeB.dispose();
        await nodeC.dispose();
        rmSync(keyDir, { recursive: true, force: true });
        await storage.dispose();
      }
    });
  }
});

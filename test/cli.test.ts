// Black-box: the keel command line (init, serve, migrate, version, errors, shutdown).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { it } from 'node:test';
import { forEachEngine } from './helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, withFreePorts } from './helpers/server.js';
import { OPTIONS, readOptions } from '../src/config/env.js';
import { InfraClient } from './helpers/infra-client.js';

await forEachEngine('keel init', (engine) => {
  it('creates the first customer once and prints its secrets only the first time', async () => {
    const storage = await createStorage(engine);
    try {
      const first = await runKeel(['init', '--json', ...storageArgs(storage)]);
      assert.equal(first.code, 0, first.stderr);
      const out = JSON.parse(first.stdout);
      assert.deepEqual(Object.keys(out.infra).sort(), ['apiSecret', 'apiUuid', 'customerId', 'password', 'username']);
      const again = await runKeel(['init', '--json', ...storageArgs(storage)]);
      assert.equal(again.code, 0);
      assert.ok(!again.stdout.includes(out.infra.apiSecret) && !again.stdout.includes(out.infra.password));
      assert.deepEqual(JSON.parse(again.stdout), { alreadyInitialised: true });
      const text = await runKeel(['init', ...storageArgs(storage)]);
      assert.match(text.stdout, /already set up/);
      // serve after init prints no secrets, and the printed key works.
      const server = await startServer(storage);
      try {
        assert.equal(server.secrets, undefined);
        const api = new InfraClient(server.infraUrl, { basic: [out.infra.apiUuid, out.infra.apiSecret] });
        assert.equal((await api.cmd('apiuser.getall')).body.matches, 1);
        const login = await api.cmd('session.login', { username: out.infra.username, password: out.infra.password, jwt: 1 }, null);
        assert.equal(login.body.code, 'OK');
      } finally {
        assert.equal(await server.stop(), 0, 'SIGTERM shuts down cleanly with status 0');
      }
    } finally {
      await storage.dispose();
    }
  });

  it('keeps an acknowledged write through kill -9', async () => {
    const storage = await createStorage(engine);
    try {
      const server = await startServer(storage);
      const api = new InfraClient(server.infraUrl, { basic: [server.secrets!.apiUuid, server.secrets!.apiSecret] });
      const created = await api.cmd('apiuser.create', { name: 'durable', permissions: ['*'] });
      assert.equal(created.body.code, 'OK');
      await server.kill9();
      const again = await startServer(storage);
      try {
        const key = new InfraClient(again.infraUrl, { basic: [created.body.apiuser.uuid, created.body.apiuser.secret] });
        const r = await key.cmd('apiuser.get', { id: created.body.apiuser.id });
        assert.equal(r.body.apiuser.name, 'durable');
      } finally {
        await again.stop();
      }
    } finally {
      await storage.dispose();
    }
  });

  it('refuses a database whose schema is newer than the code', async () => {
    const storage = await createStorage(engine);
    try {
      assert.equal((await runKeel(['init', '--json', ...storageArgs(storage)])).code, 0);
      const { openStore } = await import('../src/app.js');
      const { buildConfig } = await import('../src/config/config.js');
      const { readOptions } = await import('../src/config/env.js');
      const { sql } = await import('kysely');
      const db = await openStore(buildConfig(readOptions(storageArgs(storage), {}).options));
      await sql`insert into keel_schema (version, name, applied_at) values (999, 'from the future', 0)`.execute(db.kysely);
      await db.close();
      const r = await runKeel(['serve', '--infra-listen', '127.0.0.1:0', ...storageArgs(storage)]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /schema version 999, newer than this Keel knows/);
      assert.equal(r.stderr.trim().split('\n').length, 1, 'one clear line');
    } finally {
      await storage.dispose();
    }
  });
});

it('gives one clear line and a non-zero status for bad flags', async () => {
  for (const args of [['serve', '--no-such-flag'], ['serve', '--infra-listen', 'nonsense'], ['serve', '--database-url', 'mysql://x'], ['frobnicate'], ['serve', '--jwt-lifetime', '0']]) {
    const r = await runKeel(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^keel: /);
  }
});

it('gives one clear line when PostgreSQL is unreachable', async () => {
  const r = await runKeel(['init', '--database-url', 'postgres://postgres@127.0.0.1:1/nowhere']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^keel: cannot reach PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

it("the tests' `keel serve` binds no default port (one `npm start` holds would fail the test)", () => {
  const { options } = readOptions(withFreePorts(['serve', '--infra-listen', '127.0.0.1:7']).slice(1), {});
  const listeners = Object.keys(OPTIONS).filter((name) => name.endsWith('-listen')) as (keyof typeof OPTIONS)[];
  assert.ok(listeners.length >= 3, listeners.join());
  for (const name of listeners) assert.equal(options[name], name === 'infra-listen' ? '127.0.0.1:7' : '127.0.0.1:0', name);
});

it('gives one clear line when the port is in use', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as net.AddressInfo).port;
  const storage = await createStorage('sqlite');
  try {
    const r = await runKeel(['serve', '--infra-listen', `127.0.0.1:${port}`, ...storageArgs(storage)]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /address already in use/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    blocker.close();
    await storage.dispose();
  }
});

it('prints usage for help and the schema version for migrate', async () => {
  const help = await runKeel(['help']);
  assert.equal(help.code, 0);
  for (const flag of ['--data-dir', '--database-url', '--infra-listen', '--chat-listen', '--dns-listen', 'KEEL_DATA_DIR']) assert.ok(help.stdout.includes(flag), flag);
  const storage = await createStorage('sqlite');
  try {
    const m = await runKeel(['migrate', ...storageArgs(storage)]);
    assert.equal(m.code, 0, m.stderr);
    assert.match(m.stdout, /^schema version \d+/);
  } finally {
    await storage.dispose();
  }
});

it('prints the version package.json states for --version and version', async () => {
  const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.match(version, /^\d+\.\d+\.\d+/);
  for (const args of [['--version'], ['version']]) {
    const r = await runKeel(args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`, args.join(' '));
    assert.equal(r.stderr, '');
  }
  const extra = await runKeel(['version', 'now']);
  assert.equal(extra.code, 2);
  assert.match(extra.stderr, /^keel: unexpected argument "now"/);
  const help = await runKeel(['help']);
  assert.match(help.stdout, /^ {2}version +print Keel's version \(also --version\)$/m);
});

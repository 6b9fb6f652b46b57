// Realm data exports, in process on both engines: POST/GET/DELETE /export/realm and GET
// /export/realm/consents as Zulip's Python client calls them (every 2xx answer and event checked
// against Zulip's OpenAPI), the background writer with its realm_export events, the tarball's
// layout and content, the administrators-only download at export_url, and the round trip through
// `keel admin import-realm` into a new realm whose data is then read through the API.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import * as tar from 'tar';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { storageArgs } from '../../helpers/server.js';
import { encodeParams } from '../../helpers/chat-client.js';
import { checkChatResponse } from '../../helpers/zulip-openapi.js';
import { LocalFileStore } from '../../../src/platform/files/local-store.js';
import { storeUpload } from '../../../src/chat/domain/uploads.js';
import { ExportWorker } from '../../../src/chat/exports/worker.js';
import { runAdmin } from '../../../src/chat/admin.js';
import { openStore } from '../../../src/app.js';
import { createLogger } from '../../../src/platform/log.js';
import { fromZulipFlags, toZulipFlags } from '../../../src/chat/exports/write.js';
import { FLAG } from '../../../src/chat/domain/flags.js';

it("translates Keel's flag bits to Zulip's UserMessage bit field and back", () => {
  assert.equal(toZulipFlags(FLAG.read | FLAG.starred), 3);
  assert.equal(toZulipFlags(FLAG.has_alert_word), 1024);
  assert.equal(toZulipFlags(FLAG.historical | FLAG.mentioned), 2048 | 8);
  for (let bits = 0; bits < 256; bits++) assert.equal(fromZulipFlags(toZulipFlags(bits)), bits);
});

/** The tarball's files: name (under its one top directory) -> content. */
async function unpackTarball(bytes: Buffer): Promise<{ top: string; files: Map<string, Buffer> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-export-test-'));
  try {
    const file = path.join(dir, 'x.tar.gz');
    writeFileSync(file, bytes);
    const files = new Map<string, Buffer>();
    const tops = new Set<string>();
    await tar.t({
      file,
      onReadEntry: (entry) => {
        const [top, ...rest] = entry.path.split('/');
        tops.add(top);
        if (entry.type !== 'File') {
          entry.resume();
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => files.set(rest.join('/'), Buffer.concat(chunks)));
      },
    });
    assert.equal(tops.size, 1, `one top directory, not ${[...tops].join(', ')}`);
    return { top: [...tops][0], files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

forEachEngine('realm exports', (engine) => {
  let r: InProcessRealm;
  let owner: InProcessClient;
  let alice: InProcessClient;
  let bob: InProcessClient;
  let files: LocalFileStore;

  before(async () => {
    r = await inProcessRealm(engine, { members: ['alice', 'bob', 'carol'], channel: { name: 'garden', subscribers: ['owner', 'alice', 'bob'] } });
    owner = r.owner;
    alice = r.members.alice.client;
    bob = r.members.bob.client;
    // The same directory the server's file store uses (app.ts: <data dir>/uploads).
    files = new LocalFileStore(path.join(r.chat.ctx.config.dataDir, 'uploads'));
  });
  after(() => r.close());

  /** A download of an export_url as an API client sends it (Basic auth), through the server. */
  async function download(url: string, who: InProcessClient | null) {
    const u = new URL(url);
    return r.chat.app.inject({
      method: 'GET',
      url: u.pathname,
      headers: { host: u.host, ...(who ? { authorization: 'Basic ' + Buffer.from(`${who.email}:${who.apiKey}`).toString('base64') } : {}) },
    });
  }

  /** The tarball behind an export_url, from the file store (inject() answers text, not bytes). */
  async function tarballOf(url: string): Promise<Buffer> {
    const key = decodeURIComponent(new URL(url).pathname.slice('/user_avatars/'.length));
    const found = await files.read(key);
    assert.ok(found, `no file ${key}`);
    const chunks: Buffer[] = [];
    for await (const c of found.stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  const poll = async (c: InProcessClient, queue: string) => (await ok(c, 'GET', '/events', { queue_id: queue, last_event_id: -1, dont_block: true })).events as Record<string, any>[];

  it('lets administrators alone ask, list, delete and see consents', async () => {
    for (const [method, p] of [
      ['POST', '/export/realm'],
      ['GET', '/export/realm'],
      ['DELETE', '/export/realm/1'],
      ['GET', '/export/realm/consents'],
    ] as const) {
      const res = await alice.call(method, p);
      assert.equal(res.status, 400, `${method} ${p}`);
      assert.equal(res.body.msg, 'Must be an organization administrator');
    }
    const bad = await owner.call('POST', '/export/realm', { export_type: 3 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.msg, 'Invalid export_type: Value error, Not in the list of possible values');
    assert.equal((await owner.call('DELETE', '/export/realm/999999')).body.msg, 'Invalid data export ID');
  });

  it('writes a public export in the background, announces it and serves it to administrators only', async () => {
    const ownerQueue = (await ok(owner, 'POST', '/register', { event_types: ['realm_export'] })).queue_id as string;
    const aliceQueue = (await ok(alice, 'POST', '/register', { event_types: ['realm_export'] })).queue_id as string;
    await ok(owner, 'POST', '/messages', { type: 'stream', to: 'garden', topic: 'plants', content: 'public hello' });
    await ok(alice, 'POST', '/messages', { type: 'direct', to: JSON.stringify([r.members.bob.id]), content: 'secret dm' });

    const { id } = await ok(owner, 'POST', '/export/realm', {});
    assert.equal(typeof id, 'number');
    let events = await poll(owner, ownerQueue);
    assert.equal(events.length, 1);
    assert.equal(events[0].type, 'realm_export');
    const pending = events[0].exports.find((e: any) => e.id === id);
    assert.deepEqual(
      { ...pending, export_time: 0 },
      { id, export_time: 0, acting_user_id: r.ownerId, export_url: null, deleted_timestamp: null, failed_timestamp: null, pending: true, export_type: 1 },
    );

    // Not in the request: the worker writes it.
    assert.equal(await r.chat.ctx.exports.runDue(), 1);
    events = await poll(owner, ownerQueue);
    const done = events.at(-1)!.exports.find((e: any) => e.id === id);
    assert.equal(done.pending, false);
    assert.match(done.export_url, /^http:\/\/chat\.keel\.test\/user_avatars\/exports\/\d+\/[a-z0-9]{24}\/zulip-export-[a-z0-9]{8}\.tar\.gz$/);
    assert.deepEqual(await poll(alice, aliceQueue), [], 'members hear nothing');
    const listed = (await ok(owner, 'GET', '/export/realm')).exports as any[];
    assert.deepEqual(
      listed.find((e) => e.id === id),
      done,
    );

    // Download: administrators only, authenticated.
    const refused = await download(done.export_url, alice);
    assert.equal(refused.statusCode, 400);
    assert.equal(JSON.parse(refused.body).msg, 'Must be an organization administrator');
    assert.equal((await download(done.export_url, null)).statusCode, 401);
    const res = await download(done.export_url, owner);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/gzip');
    const bytes = await tarballOf(done.export_url);
    assert.equal(Number(res.headers['content-length']), bytes.length);
    const { top, files: inside } = await unpackTarball(bytes);
    assert.match(top, /^zulip-export-[a-z0-9]{8}$/);
    for (const name of ['realm.json', 'attachment.json', 'messages-000001.json', 'uploads/records.json', 'emoji/records.json', 'avatars/records.json'])
      assert.ok(inside.has(name), `${name} in ${[...inside.keys()].join(', ')}`);
    const realm = JSON.parse(inside.get('realm.json')!.toString());
    assert.equal(realm.zerver_realm.length, 1);
    assert.equal(realm.zerver_userprofile.length, 4 + 0, 'owner and three members');
    for (const u of realm.zerver_userprofile) {
      assert.equal('password_hash' in u, false);
      assert.equal('api_key_hash' in u || 'api_key_sealed' in u, false);
    }
    const messages = JSON.parse(inside.get('messages-000001.json')!.toString());
    const contents = messages.zerver_message.map((m: any) => m.content);
    assert.ok(contents.includes('public hello'));
    assert.ok(!contents.includes('secret dm'), 'a public export holds no direct message');
    assert.ok(messages.zerver_usermessage.every((um: any) => typeof um.flags_mask === 'number' && typeof um.user_profile === 'number'));

    // DELETE: marked deleted, the file gone, the event sent; twice is an error.
    await ok(owner, 'DELETE', `/export/realm/${id}`);
    events = await poll(owner, ownerQueue);
    const deleted = events.at(-1)!.exports.find((e: any) => e.id === id);
    assert.equal(typeof deleted.deleted_timestamp, 'number');
    assert.equal(deleted.export_url, null);
    assert.equal((await download(done.export_url, owner)).statusCode, 404);
    const key = decodeURIComponent(new URL(done.export_url).pathname.slice('/user_avatars/'.length));
    assert.equal(await files.stat(key), undefined, 'the tarball is removed from the store');
    assert.equal((await owner.call('DELETE', `/export/realm/${id}`)).body.msg, 'Export already deleted');
  });

  it('refuses to delete an export still in progress, and records a failed one', async () => {
    const { id } = await ok(owner, 'POST', '/export/realm', { export_type: 1 });
    assert.equal((await owner.call('DELETE', `/export/realm/${id}`)).body.msg, 'Export still in progress');
    const queue = (await ok(owner, 'POST', '/register', { event_types: ['realm_export'] })).queue_id as string;
    const ctx = r.chat.ctx;
    // A writer that cannot stage its files: the export fails, and says so.
    const broken = new ExportWorker(
      { db: ctx.chatDb, clock: ctx.clock, log: createLogger('error'), events: ctx.events, files, realmUrl: () => 'http://chat.keel.test' },
      { tickMs: 0, tempDir: '/nonexistent/keel' },
    );
    assert.equal(await broken.runDue(), 1);
    const events = await poll(owner, queue);
    const failed = events.at(-1)!.exports.find((e: any) => e.id === id);
    assert.equal(failed.pending, false);
    assert.equal(typeof failed.failed_timestamp, 'number');
    assert.equal(failed.export_url, null);
    assert.equal((await owner.call('DELETE', `/export/realm/${id}`)).body.msg, 'Export failed, nothing to delete');
  });

  it('bounds exports to 5 per realm in 7 days', async () => {
    // Two were asked for above; three more pass, the sixth is refused; a week later there is room again.
    for (let i = 0; i < 3; i++) await ok(owner, 'POST', '/export/realm', {});
    const refused = await owner.call('POST', '/export/realm', {});
    assert.equal(refused.status, 400);
    assert.equal(refused.body.msg, 'Exceeded rate limit.');
    await r.chat.ctx.exports.runDue();
    r.chat.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    await ok(owner, 'POST', '/export/realm', {});
    await r.chat.ctx.exports.runDue();
  });

  it("lists every user's consent and tells administrators when it changes", async () => {
    const queue = (await ok(owner, 'POST', '/register', { event_types: ['realm_export_consent'] })).queue_id as string;
    let consents = (await ok(owner, 'GET', '/export/realm/consents')).export_consents as { user_id: number; consented: boolean }[];
    assert.deepEqual(
      consents.map((c) => c.user_id).sort((a, b) => a - b),
      [r.ownerId, r.members.alice.id, r.members.bob.id, r.members.carol.id].sort((a, b) => a - b),
    );
    assert.ok(consents.every((c) => c.consented === false));
    await ok(alice, 'PATCH', '/settings', { allow_private_data_export: true });
    consents = (await ok(owner, 'GET', '/export/realm/consents')).export_consents;
    assert.equal(consents.find((c) => c.user_id === r.members.alice.id)!.consented, true);
    assert.deepEqual(
      (await poll(owner, queue)).map(({ id: _id, ...e }) => e),
      [{ type: 'realm_export_consent', user_id: r.members.alice.id, consented: true }],
    );
  });

  it('adds the direct messages of consenting users to a full export', async () => {
    await ok(bob, 'POST', '/messages', { type: 'direct', to: JSON.stringify([r.members.carol.id]), content: 'bob to carol, nobody consents' });
    r.chat.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const { id } = await ok(owner, 'POST', '/export/realm', { export_type: 2 });
    await r.chat.ctx.exports.runDue();
    const row = ((await ok(owner, 'GET', '/export/realm')).exports as any[]).find((e) => e.id === id);
    assert.equal(row.export_type, 2);
    const { files: inside } = await unpackTarball(await tarballOf(row.export_url));
    const contents = JSON.parse(inside.get('messages-000001.json')!.toString()).zerver_message.map((m: any) => m.content);
    assert.ok(contents.includes('secret dm'), 'alice consented: her direct message is there');
    assert.ok(!contents.includes('bob to carol, nobody consents'));
    assert.ok(contents.includes('public hello'));
  });

  it('reads an export back into a new realm with keel admin import-realm', { timeout: 60_000 }, async () => {
    const ctx = r.chat.ctx;
    const realm = (await ctx.chatDb.kysely.selectFrom('realms').selectAll().orderBy('id').executeTakeFirstOrThrow())!;
    const ownerRow = await ctx.chatDb.kysely.selectFrom('chat_users').selectAll().where('id', '=', r.ownerId).executeTakeFirstOrThrow();
    // An upload, linked by a message: the send claims it (domain/uploads.ts).
    const upload = await storeUpload({ db: ctx.chatDb, files, clock: ctx.clock }, realm, ownerRow, {
      name: 'notes.txt',
      contentType: 'text/plain',
      body: Buffer.from('the bytes of the upload'),
      maxBytes: 1 << 20,
    });
    const sent = await ok(owner, 'POST', '/messages', { type: 'stream', to: 'garden', topic: 'files', content: `see [notes.txt](${upload.url})` });
    const claim = await ctx.chatDb.kysely.selectFrom('attachment_messages').selectAll().where('attachment_id', '=', upload.id).execute();
    assert.deepEqual(
      claim.map((c) => Number(c.message_id)),
      [sent.id],
      'the send claimed the upload',
    );
    await ok(bob, 'POST', `/messages/${sent.id}/reactions`, { emoji_name: 'smile' });
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'secret club', description: 'hush' }]), invite_only: true });
    r.chat.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const { id } = await ok(owner, 'POST', '/export/realm', {});
    await ctx.exports.runDue();
    const row = ((await ok(owner, 'GET', '/export/realm')).exports as any[]).find((e) => e.id === id);
    const tarball = await tarballOf(row.export_url);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-import-test-'));
    try {
      const file = path.join(dir, 'export.tar.gz');
      writeFileSync(file, tarball);
      const lines: string[] = [];
      const args = [...storageArgs(r.storage), '--chat-root-domain', 'chat.keel.test'];
      assert.equal(await runAdmin(['import-realm', file, '--subdomain', 'imported', '--json', ...args], (l) => lines.push(l), openStore), 0);
      const summary = JSON.parse(lines[0]);
      assert.equal(summary.subdomain, 'imported');
      assert.equal(summary.users, 4);
      assert.equal(summary.uploads, 1);
      // The same subdomain twice is refused, and changes nothing.
      await assert.rejects(
        runAdmin(['import-realm', file, '--subdomain', 'imported', ...args], () => {}, openStore),
        /in use/,
      );
      // No password or API key came along: an owner's credentials are made as for any realm.
      lines.length = 0;
      assert.equal(
        await runAdmin(['create-user', '--email', 'new-owner@example.com', '--full-name', 'New Owner', '--role', 'owner', '--realm', 'imported', '--json', ...args], (l) => lines.push(l), openStore),
        0,
      );
      const made = JSON.parse(lines[0]);
      const host = 'imported.chat.keel.test';
      const call = async (method: string, p: string, params: Record<string, unknown> = {}) => {
        const form = encodeParams(params).toString();
        const url = `/api/v1${p}${method === 'GET' && form ? `?${form}` : ''}`;
        const res = await r.chat.app.inject({ method: method as 'GET', url, headers: { host, authorization: 'Basic ' + Buffer.from(`${made.email}:${made.apiKey}`).toString('base64') } });
        const body = JSON.parse(res.body);
        checkChatResponse(method, url, res.statusCode, body);
        assert.equal(res.statusCode, 200, `${method} ${p}: ${res.body}`);
        return body;
      };
      const users = (await call('GET', '/users')).members as any[];
      const names = users.map((u) => u.full_name).sort();
      assert.deepEqual(names, ['Alice', 'Bob', 'Carol', 'New Owner', ownerRow.full_name].sort());
      const oldIds = new Set([r.ownerId, r.members.alice.id, r.members.bob.id, r.members.carol.id]);
      assert.ok(
        users.every((u) => !oldIds.has(u.user_id)),
        'every user has a new id',
      );
      // Their old API keys do not open the new realm.
      const old = await r.chat.app.inject({ method: 'GET', url: '/api/v1/users/me', headers: { host, authorization: 'Basic ' + Buffer.from(`${alice.email}:${alice.apiKey}`).toString('base64') } });
      assert.ok(old.statusCode === 400 || old.statusCode === 401, old.body);
      const streams = (await call('GET', '/streams', { include_all: true })).streams as any[];
      assert.deepEqual(streams.map((s) => s.name).sort(), ['garden', 'secret club']);
      const garden = streams.find((s) => s.name === 'garden');
      assert.notEqual(garden.stream_id, r.channelId);
      const members = (await call('GET', `/streams/${garden.stream_id}/members`)).subscribers as number[];
      const byName = new Map(users.map((u) => [u.full_name, u.user_id]));
      assert.deepEqual(
        [...members].sort((a, b) => a - b),
        [byName.get(ownerRow.full_name), byName.get('Alice'), byName.get('Bob')].sort((a, b) => a - b),
      );
      const msgs = (await call('GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: 'channel', operand: garden.stream_id }]) }))
        .messages as any[];
      const withFile = msgs.find((m) => m.content.includes('notes.txt'));
      assert.ok(withFile, 'the message with the upload came along');
      assert.deepEqual(
        withFile.reactions.map((x: any) => [x.emoji_name, x.user_id]),
        [['smile', byName.get('Bob')]],
      );
      const newRealmId = summary.realmId as number;
      assert.match(withFile.content, new RegExp(`/user_uploads/${newRealmId}/`), 'the link names the new path id');
      const pathId = /\/user_uploads\/([^)"]+)/.exec(withFile.content)![1];
      const stored = await files.read(decodeURIComponent(pathId));
      assert.ok(stored, 'the file is in the store under its new path id');
      const chunks: Buffer[] = [];
      for await (const c of stored.stream) chunks.push(c as Buffer);
      assert.equal(Buffer.concat(chunks).toString(), 'the bytes of the upload');
      assert.ok(msgs.some((m) => m.content === '<p>public hello</p>'));
      // Searches find imported messages (their search text is made anew).
      const found = (
        await call('GET', '/messages', {
          anchor: 'newest',
          num_before: 10,
          num_after: 0,
          narrow: JSON.stringify([
            { operator: 'channel', operand: garden.stream_id },
            { operator: 'search', operand: 'hello' },
          ]),
        })
      ).messages as any[];
      assert.ok(found.some((m) => m.id !== undefined && String(m.content).includes('hello')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

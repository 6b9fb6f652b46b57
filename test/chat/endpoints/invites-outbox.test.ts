// Invitation mail without --smtp-url: each message one file in <data dir>/outbox, which
// `keel admin outbox` lists and shows, and which `keel serve` names in one log line at start. With a
// manual clock (in process): an invitation's link stops working when it expires, and GET /invites
// drops it. The outbox's own rules (file names, header decoding) are checked directly too.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { createStorage, KEEL_BIN, runKeel, storageArgs, withFreePorts } from '../../helpers/server.js';
import { listOutbox, OutboxMailer, readOutboxFile } from '../../../src/platform/mail/outbox.js';
import { ManualClock } from '../../../src/platform/clock.js';
import { SmtpMailer } from '../../../src/platform/mail/smtp.js';
import { createLogger } from '../../../src/platform/log.js';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

describe('the outbox', () => {
  it('keeps each message as one .eml file and lists them oldest first, headers decoded', async () => {
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'keel-outbox-')), 'outbox');
    try {
      const clock = new ManualClock(Date.UTC(2026, 0, 2));
      const outbox = new OutboxMailer(dir, clock);
      await outbox.send({
        from: { name: 'Café, "Inc" <x>', address: 'noreply@example.org' },
        to: 'a@example.org',
        subject: 'Zoë has invited you to join Café\r\nBcc: evil@example.org',
        text: 'first',
      });
      clock.advance(1000);
      await outbox.send({ from: { name: '', address: 'noreply@example.org' }, to: 'b@example.org', subject: 'second', text: 'second' });
      const list = listOutbox(dir);
      assert.deepEqual(
        list.map((e) => [e.to, e.subject]),
        [
          ['a@example.org', 'Zoë has invited you to join Café Bcc: evil@example.org'],
          ['b@example.org', 'second'],
        ],
      );
      const parsed = await simpleParser((await readOutboxFile(dir, list[0].file))!);
      assert.equal(parsed.subject, 'Zoë has invited you to join Café Bcc: evil@example.org', 'one header line');
      assert.equal(parsed.bcc, undefined);
      assert.deepEqual((parsed.from as { value: { name: string; address: string }[] }).value, [{ name: 'Café, "Inc" <x>', address: 'noreply@example.org' }]);
      assert.equal(parsed.text?.trim(), 'first');
      assert.equal(await readOutboxFile(dir, '../secret.key'), undefined);
      assert.deepEqual(listOutbox(path.join(dir, 'none')), []);
    } finally {
      rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });
});

describe('SMTP that refuses', () => {
  it('keeps the message in the outbox and logs the failure', async () => {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(_address, _session, done) {
        done(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'keel-outbox-')), 'outbox');
    const logged: Record<string, unknown>[] = [];
    const clock = new ManualClock(Date.UTC(2026, 0, 2));
    const mailer = new SmtpMailer(
      `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
      new OutboxMailer(dir, clock),
      createLogger('error', (l) => logged.push(JSON.parse(l))),
      clock,
    );
    try {
      assert.match(mailer.description, /^mail is sent through smtp:\/\/127\.0\.0\.1:\d+ /);
      await mailer.send({ from: { name: 'R', address: 'noreply@example.org' }, to: 'gone@example.org', subject: 'kept', text: 'kept' });
      assert.deepEqual(
        listOutbox(dir).map((e) => [e.to, e.subject]),
        [['gone@example.org', 'kept']],
      );
      assert.equal(logged.length, 1);
      assert.match(JSON.stringify(logged[0]), /kept in the outbox/);
    } finally {
      await mailer.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(path.dirname(dir), { recursive: true, force: true });
    }
  });
});

await forEachEngine('chat invitations (outbox, expiry)', (engine) => {
  let realm: InProcessRealm;
  let alice: InProcessClient;

  before(async () => {
    realm = await inProcessRealm(engine, { members: ['alice'] });
    alice = realm.members.alice.client;
  });
  after(async () => {
    await realm?.close();
  });

  const page = async (url: string) => {
    const u = new URL(url);
    const res = await realm.chat.app.inject({ method: 'GET', url: u.pathname, headers: { host: u.host } });
    return { status: res.statusCode, html: res.body };
  };

  it('keeps the mail in the outbox, which keel admin outbox lists and shows', async () => {
    const outbox = path.join(realm.storage.dataDir, 'outbox');
    assert.deepEqual(listOutbox(outbox), []);
    await ok(alice, 'POST', '/invites', { invitee_emails: 'zed@example.org', stream_ids: [], invite_expires_in_minutes: 1 });
    const [entry] = listOutbox(outbox);
    assert.equal(entry.to, 'zed@example.org');
    assert.match(entry.subject, /^Alice has invited you to join /);
    const listed = await runKeel(['admin', 'outbox', ...storageArgs(realm.storage)]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /1 message in /);
    assert.ok(listed.stdout.includes(entry.file) && listed.stdout.includes('to zed@example.org'), listed.stdout);
    const json = await runKeel(['admin', 'outbox', '--json', ...storageArgs(realm.storage)]);
    assert.deepEqual(
      (JSON.parse(json.stdout) as { messages: { file: string }[] }).messages.map((m) => m.file),
      [entry.file],
    );
    const shown = await runKeel(['admin', 'outbox', '--show', entry.file, ...storageArgs(realm.storage)]);
    assert.equal(shown.code, 0, shown.stderr);
    const mail = await simpleParser(shown.stdout);
    assert.match(mail.text ?? '', /http:\/\/chat\.keel\.test\/accounts\/do_confirm\/[a-z2-7]{24}/);
    const missing = await runKeel(['admin', 'outbox', '--show', 'nope.eml', ...storageArgs(realm.storage)]);
    assert.equal(missing.code, 2);
    assert.equal(readFileSync(path.join(outbox, entry.file), 'utf8').includes('zed@example.org'), true);
  });

  it('stops the link when the invitation expires, and GET /invites drops it', async () => {
    const [entry] = listOutbox(path.join(realm.storage.dataDir, 'outbox'));
    const mail = await simpleParser((await readOutboxFile(path.join(realm.storage.dataDir, 'outbox'), entry.file))!);
    const link = /(http:\/\/\S+\/accounts\/do_confirm\/[a-z2-7]{24})/.exec(mail.text ?? '')![1];
    assert.equal((await page(link)).status, 200);
    assert.equal((await ok(alice, 'GET', '/invites')).invites.length, 1);
    realm.chat.clock.advance(61_000);
    const expired = await page(link);
    assert.equal(expired.status, 404);
    assert.match(expired.html, /has expired/);
    assert.deepEqual((await ok(alice, 'GET', '/invites')).invites, []);
  });

  it('bounds the invitation e-mails a realm sends in a day (Zulip: 100)', async () => {
    const emails = Array.from({ length: 100 }, (_, i) => `p${i}@example.org`).join(',');
    const r = await alice.call('POST', '/invites', { invitee_emails: emails, stream_ids: [] });
    assert.deepEqual([r.status, r.body.code, r.body.daily_limit_reached, r.body.sent_invitations], [400, 'INVITATION_FAILED', true, false]);
    assert.equal(listOutbox(path.join(realm.storage.dataDir, 'outbox')).length, 1, 'nothing sent');
    realm.chat.clock.advance(86_400_000);
    assert.equal((await alice.call('POST', '/invites', { invitee_emails: 'later@example.org', stream_ids: [] })).status, 200);
  });
});

await forEachEngine('keel serve and the outbox', (engine) => {
  it('says in one log line at start where mail goes', async () => {
    const storage = await createStorage(engine);
    try {
      const child = spawn(process.execPath, [KEEL_BIN, ...withFreePorts(['serve', '--json', ...storageArgs(storage)])], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KEEL_LOG_LEVEL: 'info' },
      });
      let stderr = '';
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no outbox line in 30 s: ${stderr}`)), 30_000);
        child.stderr!.on('data', (c) => {
          stderr += c;
          const found = stderr.split('\n').find((l) => l.includes('outbox'));
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        });
      });
      child.kill('SIGTERM');
      await exited;
      assert.ok(line.includes(path.join(storage.dataDir, 'outbox')) && line.includes('keel admin outbox'), line);
      assert.equal(stderr.split('\n').filter((l) => l.includes('keel admin outbox')).length, 1);
    } finally {
      await storage.dispose();
    }
  });
});

// Malformed client input over real sockets answers 400 in Zulip's error envelope and changes
// nothing: broken multipart bodies, broken %-escapes in paths (on every method, with a body or
// without), NUL bytes in text, integers beyond the safe integers. Client errors are logged at
// debug at most; a real server fault is still logged at error level with its stack.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import Type from 'typebox';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../helpers/in-process-chat.js';
import { createLogger } from '../../src/platform/log.js';
import { createChatServer } from '../../src/chat/http.js';
import { defineEndpoint } from '../../src/chat/endpoint.js';
import { ChatLimits } from '../../src/chat/domain/rate-limit.js';
import { parseRateLimits } from '../../src/config/rate-limits.js';
import { BAD_PATH_ESCAPE } from '../../src/chat/router.js';
import { EventHub } from '../../src/chat/events/hub.js';
import { PresenceStore } from '../../src/chat/domain/presence.js';
import { LocalFileStore } from '../../src/platform/files/local-store.js';
import { OutboxMailer } from '../../src/platform/mail/outbox.js';

interface Answer {
  status: number;
  body: Record<string, any>;
  headers?: http.IncomingHttpHeaders;
}

function raw(base: string, method: string, target: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${target}`, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

await forEachEngine('chat malformed input', (engine) => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;
  let base: string;
  let owner: InProcessClient;
  let auth: Record<string, string>;
  const logged: { level: string; msg: string; error?: string }[] = [];
  const errorsLogged = () => logged.filter((l) => l.level === 'error');

  before(async () => {
    storage = await createStorage(engine);
    chat = await inProcessChat(storage, { log: createLogger('debug', (line) => logged.push(JSON.parse(line))) });
    await chat.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(chat.app.server.address() as AddressInfo).port}`;
    owner = chat.owner;
    auth = { authorization: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString('base64')}` };
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'input' }] });
    await ok(owner, 'POST', '/messages', { type: 'stream', to: 'input', topic: 't', content: 'first' });
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const newest = async () => (await ok(owner, 'GET', '/messages', { anchor: 'newest', num_before: 1, num_after: 0 })).messages.at(-1).id as number;
  const refused = (a: Answer, msg: string | RegExp, status = 400) => {
    assert.equal(a.status, status, JSON.stringify(a.body));
    assert.equal(a.body.result, 'error');
    assert.equal(a.body.code, 'BAD_REQUEST');
    if (typeof msg === 'string') assert.equal(a.body.msg, msg);
    else assert.match(a.body.msg, msg);
  };

  it('answers a broken multipart body 400 in the envelope, logged at debug only', async () => {
    const before = await newest();
    logged.length = 0;
    const boundary = 'keel-boundary';
    const whole = `--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\nstream\r\n--${boundary}\r\nContent-Disposition: form-data; name="to"\r\n\r\ninput\r\n`;
    const truncated = await raw(base, 'POST', '/api/v1/messages', { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, whole.slice(0, 90));
    refused(truncated, /^Malformed request body: /);
    assert.equal(truncated.headers?.connection, 'close', 'the rest of a body given up on cannot carry a next request');
    refused(await raw(base, 'POST', '/api/v1/messages', { ...auth, 'content-type': 'multipart/form-data' }, whole), /^Malformed request body: /);
    assert.equal(await newest(), before, 'nothing was sent');
    assert.deepEqual(errorsLogged(), []);
    assert.ok(
      logged.some((l) => l.level === 'debug' && l.msg === 'chat request refused' && !String(l.error).includes('\n')),
      'at debug, without a stack',
    );
  });

  it('answers a broken %-escape in a path 400, whatever the method and the body', async () => {
    logged.length = 0;
    const boundary = 'keel-boundary';
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="x"\r\n\r\ny\r\n--${boundary}--\r\n`;
    for (const bad of ['%zz', '%', '%FF', '%C0%AF', '%E0%A4%A', 'a%E0%A4%A']) {
      refused(await raw(base, 'GET', `/api/v1/users/${bad}`, auth), BAD_PATH_ESCAPE);
      refused(await raw(base, 'GET', `/api/v1/users/${bad}/presence`, auth), BAD_PATH_ESCAPE);
      refused(await raw(base, 'PATCH', `/api/v1/users/${bad}`, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, 'full_name=x'), BAD_PATH_ESCAPE);
      refused(await raw(base, 'POST', `/api/v1/realm/emoji/${bad}`, { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, multipart), BAD_PATH_ESCAPE);
      refused(await raw(base, 'DELETE', `/api/v1/realm/emoji/${bad}`, auth), BAD_PATH_ESCAPE);
      refused(await raw(base, 'DELETE', `/api/v1/realm/emoji/${bad}`, { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, 'x=1'), BAD_PATH_ESCAPE);
    }
    // A bad escape in a query or a form is kept as written, as Django's QueryDict keeps it.
    assert.equal((await raw(base, 'GET', '/api/v1/users/me?%zz=%', auth)).status, 200);
    assert.deepEqual(errorsLogged(), []);
  });

  it('refuses NUL bytes in text, naming the parameter, and stores nothing', async () => {
    const before = await newest();
    const send = (content: string, topic = 't') => owner.call('POST', '/messages', { type: 'stream', to: 'input', topic, content });
    refused(await send('a\u0000b'), 'content must not contain null bytes');
    refused(await send('fine', 'to\u0000pic'), 'topic must not contain null bytes');
    refused(await owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'nul\u0000channel' }] }), 'subscriptions must not contain null bytes');
    refused(await raw(base, 'GET', '/api/v1/users/a%00b@example.com', auth), 'email must not contain null bytes');
    assert.equal(await newest(), before);
    assert.deepEqual(errorsLogged(), []);
  });

  it('refuses integers beyond the safe integers, naming the parameter', async () => {
    for (const big of ['99999999999999999999999', '9223372036854775808', '-9223372036854775809']) {
      refused(await owner.call('POST', '/default_streams', { stream_id: big }), `Bad value for 'stream_id': ${big}`);
      refused(await owner.call('GET', `/users/${big.replace('-', '')}`), `Bad value for 'user_id': ${big.replace('-', '')}`);
    }
    // A path segment that is a user id or an email: an id no column can hold is no user.
    refused(await owner.call('GET', '/users/99999999999999999999999/presence'), 'No such user');
    assert.deepEqual(errorsLogged(), []);
  });

  it('refuses an emoji code that is no code point (beyond U+10FFFF, or too long a sequence) as an invalid code', async () => {
    const message = await newest();
    for (const code of ['2147483648', '9223372036854775808', '110000', '1f600-ffffffffff', Array(5000).fill('1f600').join('-')]) {
      refused(await owner.call('POST', '/users/me/status', { emoji_name: 'smile', emoji_code: code }), 'Invalid emoji code.');
      refused(await owner.call('POST', `/messages/${message}/reactions`, { emoji_name: 'smile', emoji_code: code }), 'Invalid emoji code.');
    }
    assert.deepEqual(errorsLogged(), []);
  });

  it('still logs a real server fault at error level, with its stack, and answers 500', async () => {
    logged.length = 0;
    const boom = defineEndpoint({
      method: 'GET',
      path: '/boom',
      summary: 'fails',
      auth: 'none',
      params: Type.Object({}),
      handler: async () => {
        throw new Error('boom');
      },
    });
    const log = createLogger('debug', (line) => logged.push(JSON.parse(line)));
    const app = createChatServer(
      {
        db: chat.ctx.chatDb,
        clock: chat.clock,
        log,
        realmUrl: () => 'http://chat.keel.test',
        rootDomain: 'chat.keel.test',
        limits: new ChatLimits(chat.clock, parseRateLimits('off')),
        apiKeySeal: chat.ctx.apiKeySeal,
        files: new LocalFileStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'keel-files-')), 'uploads')),
        mailer: new OutboxMailer(path.join(mkdtempSync(path.join(os.tmpdir(), 'keel-mail-')), 'outbox'), chat.clock),
        maxFileUploadMib: 25,
        events: new EventHub(chat.clock, log, { sweepEveryMs: 0 }),
        presence: new PresenceStore(chat.ctx.chatDb, chat.clock, log, { flushEveryMs: 0 }),
        caches: chat.ctx.caches,
      },
      [boom],
    );
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1/boom' });
      assert.equal(res.statusCode, 500);
      assert.deepEqual(JSON.parse(res.body), { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });
      assert.equal(errorsLogged().length, 1);
      assert.match(String(errorsLogged()[0].error), /Error: boom\n\s+at /);
    } finally {
      await app.close();
    }
  });
});

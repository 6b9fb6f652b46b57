// Uploaded files on a real server, as Zulip's Python client sends them (a multipart body with one
// file part, HTTP Basic): POST /user_uploads and its refusals, the file paths outside /api/v1 (access
// rule, Range, Content-Type and Content-Disposition, caching), temporary URLs, thumbnails, GET and
// DELETE /attachments, `attachment` events, and claiming on send and edit (detached_uploads).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import type { ChatClient } from '../../helpers/chat-client.js';
import zulip from '../../helpers/zulip-js.js';
import { checkChatResponse } from '../../helpers/zulip-openapi.js';
import { contentDisposition, parseRange } from '../../../src/chat/uploads-http.js';
import { linkedPathIds, pathIdOfToken, sanitizeFileName, temporaryUrl } from '../../../src/chat/domain/uploads.js';
import { ApiKeySeal } from '../../../src/chat/domain/api-keys.js';
import { randomBytes } from 'node:crypto';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function basic(c: ChatClient): string {
  return 'Basic ' + Buffer.from(`${c.email}:${c.apiKey}`).toString('base64');
}

/** One raw request to the server (a fresh connection), the answer read whole. */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer }): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A multipart body as Python's requests builds it: one part per file, named after the file. */
function multipart(files: { name: string; type?: string; data: Buffer }[], fields: Record<string, string> = {}): { body: Buffer; type: string } {
  const boundary = 'keelboundary7d93a2';
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  for (const f of files) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.name}"\r\n${f.type ? `Content-Type: ${f.type}\r\n` : ''}\r\n`));
    parts.push(f.data, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

it("sanitizes file names as Zulip's sanitize_name does", () => {
  assert.equal(sanitizeFileName('zulip.txt'), 'zulip.txt');
  assert.equal(sanitizeFileName('my  file (1).txt'), 'my-file-1.txt');
  assert.equal(sanitizeFileName('a/b\\c.png'), 'abc.png');
  assert.equal(sanitizeFileName('über straße.pdf'), 'über-straße.pdf');
  assert.equal(sanitizeFileName('ｆｕｌｌ.txt'), 'full.txt', 'NFKC');
  assert.equal(sanitizeFileName('..'), 'uploaded-file');
  assert.equal(sanitizeFileName('!!!'), 'uploaded-file');
  assert.equal(sanitizeFileName('trail_-'), 'trail_-');
  const long = sanitizeFileName(`${'x'.repeat(300)}.png`);
  assert.ok(Buffer.byteLength(long) <= 200 && long.endsWith('.png'));
});

it('finds the uploads a rendered message links, relative or on the realm URL', () => {
  const html =
    '<p><a href="/user_uploads/2/AbC/f%20x.txt">f</a> <a href="https://r.example/user_uploads/2/Q/y.png">y</a> <img src="/user_uploads/thumbnail/2/Q/y.png/840x560.webp"> <a href="/user_uploads/temporary/AB/y.png">t</a> <a href="/other">o</a></p>';
  assert.deepEqual(linkedPathIds(html, 'https://r.example'), ['2/AbC/f x.txt', '2/Q/y.png']);
  assert.deepEqual(linkedPathIds('<p>no links</p>'), []);
});

it('writes Content-Disposition and reads Range as Django and nginx do', () => {
  assert.equal(contentDisposition(false, 'a.png'), 'inline; filename="a.png"');
  assert.equal(contentDisposition(true, 'say "hi".txt'), 'attachment; filename="say \\"hi\\".txt"');
  assert.equal(contentDisposition(true, 'ü.txt'), "attachment; filename*=utf-8''%C3%BC.txt");
  assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=95-200', 100), { start: 95, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), 'unsatisfiable');
  assert.equal(parseRange('bytes=0-1,5-6', 100), 'whole');
  assert.equal(parseRange(undefined, 100), 'whole');
});

it('signs temporary URLs for 60 seconds, for one path_id', () => {
  const seal = new ApiKeySeal(randomBytes(32));
  const t = Date.UTC(2026, 0, 1);
  const url = temporaryUrl(seal, '2/AbCdEfGhIjKlMnOpQrStUvWx/ü file.txt', t);
  const [, , , token, name] = url.split('/');
  assert.equal(name, encodeURIComponent('ü file.txt'));
  assert.equal(pathIdOfToken(seal, token, t + 60_000), '2/AbCdEfGhIjKlMnOpQrStUvWx/ü file.txt');
  assert.equal(pathIdOfToken(seal, token, t + 61_000), undefined, 'expired');
  assert.equal(pathIdOfToken(new ApiKeySeal(randomBytes(32)), token, t), undefined, 'another server key');
  const text = Buffer.from(token, 'hex').toString();
  const forged = Buffer.from(text.replace('2/', '3/')).toString('hex');
  assert.equal(pathIdOfToken(seal, forged, t), undefined, 'another path_id under the same signature');
  for (const bad of ['', 'zz', 'ABC', '00', Buffer.from('a:b').toString('hex')]) assert.equal(pathIdOfToken(seal, bad, t), undefined, bad);
});

forEachEngine('uploads', (engine) => {
  let realm: ServedRealm;
  let owner: ChatClient;
  let ann: ChatClient;
  let bob: ChatClient;
  let base: string;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'bob'], channel: { name: 'files', subscribers: ['owner', 'ann'] } });
    owner = realm.owner;
    ann = realm.members.ann.client;
    bob = realm.members.bob.client;
    base = realm.server.chatUrl;
  });
  after(() => realm.stop());

  const upload = async (c: ChatClient | null, files: { name: string; type?: string; data: Buffer }[], extra: Record<string, string> = {}) => {
    const { body, type } = multipart(files);
    const headers: Record<string, string> = { 'content-type': type, 'content-length': String(body.length), 'user-agent': 'ZulipPython/0.9.0', ...extra };
    if (c) headers.authorization = basic(c);
    const url = `${base}/api/v1/user_uploads`;
    const r = await raw(url, { method: 'POST', headers, body });
    const json = JSON.parse(r.body.toString('utf8')) as Record<string, any>;
    // Checked against Zulip's OpenAPI description, as the clients' answers are.
    checkChatResponse('POST', url, r.status, json);
    return { status: r.status, json };
  };
  const get = (path: string, c: ChatClient | null, headers: Record<string, string> = {}, method = 'GET') =>
    raw(`${base}${path}`, { method, headers: c ? { authorization: basic(c), ...headers } : headers });

  describe('upload and download', () => {
    let url: string;
    let id: number;
    const text = Buffer.from('Hello, uploads!\n'.repeat(100));

    it('stores a file and answers url, uri and filename', async () => {
      const r = await upload(owner, [{ name: 'hello world.txt', type: 'text/plain', data: text }]);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.result, 'success');
      assert.match(r.json.url, /^\/user_uploads\/\d+\/[A-Za-z0-9]{24}\/hello-world\.txt$/);
      assert.equal(r.json.uri, r.json.url);
      assert.equal(r.json.filename, 'hello world.txt');
      url = r.json.url;
      const list = await owner.get('/attachments');
      assert.equal(list.status, 200);
      const mine = list.body.attachments.find((a: { path_id: string }) => `/user_uploads/${a.path_id}` === url);
      assert.ok(mine, JSON.stringify(list.body));
      assert.equal(mine.name, 'hello world.txt');
      assert.equal(mine.size, text.length);
      assert.deepEqual(mine.messages, []);
      assert.ok(mine.create_time > 1_600_000_000_000, 'milliseconds');
      assert.ok(list.body.upload_space_used >= text.length);
      id = mine.id;
    });

    it('serves the file to its uploader with its type, inline, privately cached, and answers ranges', async () => {
      const r = await get(url, owner);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, text);
      assert.equal(r.headers['content-type'], 'text/plain; charset=ascii', 'as chardet tells a short ASCII file');
      assert.equal(r.headers['content-disposition'], 'inline; filename="hello world.txt"');
      assert.equal(r.headers['cache-control'], 'private, immutable');
      assert.equal(r.headers['accept-ranges'], 'bytes');
      const part = await get(url, owner, { range: 'bytes=7-13' });
      assert.equal(part.status, 206);
      assert.equal(part.body.toString(), 'uploads');
      assert.equal(part.headers['content-range'], `bytes 7-13/${text.length}`);
      assert.equal((await get(url, owner, { range: `bytes=${text.length}-` })).status, 416);
      const head = await get(url, owner, {}, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(text.length));
      assert.equal(head.body.length, 0);
      const download = await get(url.replace('/user_uploads/', '/user_uploads/download/'), owner);
      assert.equal(download.headers['content-disposition'], 'attachment; filename="hello world.txt"');
    });

    it('refuses others until a message they can read links the file', async () => {
      const denied = await get(url, ann);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.toString(), '<p>You are not authorized to view this file.</p>');
      assert.equal((await get(url, null)).status, 403, 'a spectator');
      const missing = await get(url.replace(/\/[^/]+$/, '/nothing.txt'), owner);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.toString(), '<p>This file does not exist or has been deleted.</p>');
      assert.equal((await get('/user_uploads/1/%zz/x', owner)).status, 404);
      const bad = await get(url, null, { authorization: 'Basic ' + Buffer.from('owner@example.com:wrongkeywrongkeywrongkeywrongkey1').toString('base64') });
      assert.equal(bad.status, 401);

      const sent = await owner.post('/messages', { type: 'stream', to: 'files', topic: 't', content: `See [hello world.txt](${url})` });
      assert.equal(sent.status, 200);
      assert.equal((await get(url, ann)).status, 200, 'a subscriber reads the message');
      assert.equal((await get(url, bob)).status, 200, 'the channel is public: its history is open to members');
      const list = await owner.get('/attachments');
      const mine = list.body.attachments.find((a: { id: number }) => a.id === id);
      assert.deepEqual(
        mine.messages.map((m: { id: number }) => m.id),
        [sent.body.id],
      );
      assert.equal((await get(url, null)).status, 403, 'not web-public');
    });

    it('answers a temporary URL that works without credentials', async () => {
      const path = url.slice('/user_uploads/'.length);
      const r = await get(`/api/v1/user_uploads/${path}`, ann);
      assert.equal(r.status, 200, r.body.toString());
      const json = JSON.parse(r.body.toString());
      // Zulip's {filename} is the rest of the path_id; its template names it as one segment.
      const [realmId, ...rest] = path.split('/');
      checkChatResponse('GET', `${base}/api/v1/user_uploads/${realmId}/${encodeURIComponent(rest.join('/'))}`, r.status, json);
      assert.match(json.url, /^\/user_uploads\/temporary\/[0-9A-F]+\/hello-world\.txt$/);
      const served = await get(json.url, null);
      assert.equal(served.status, 200);
      assert.deepEqual(served.body, text);
      const forged = await get(json.url.replace(/temporary\/[0-9A-F]{4}/, 'temporary/0000'), null);
      assert.equal(forged.status, 400);
      assert.equal(JSON.parse(forged.body.toString()).msg, 'Invalid token');
      const renamed = await get(json.url.replace(/hello-world\.txt$/, 'other.txt'), null);
      assert.equal(JSON.parse(renamed.body.toString()).msg, 'Invalid filename');
      const none = await get(`/api/v1/user_uploads/${path.replace(/[^/]+$/, 'none.txt')}`, ann);
      assert.equal(none.status, 404);
    });

    it('detaches an upload an edit unlinks, and deletes it', async () => {
      const second = await upload(owner, [{ name: 'two.txt', data: Buffer.from('two') }]);
      // A part without a Content-Type (as Python's requests sends it): the type comes from the name.
      assert.equal((await get(second.json.url, owner)).headers['content-type'], 'text/plain; charset=ascii');
      const utf8 = await upload(owner, [{ name: 'grüße.txt', data: Buffer.from('Grüße aus Köln\n') }]);
      assert.equal((await get(utf8.json.url, owner)).headers['content-type'], 'text/plain; charset=utf-8');
      const latin1 = await upload(owner, [{ name: 'latin.txt', data: Buffer.from([0x47, 0x72, 0xfc, 0xdf, 0x65]) }]);
      assert.equal((await get(latin1.json.url, owner)).headers['content-type'], 'text/plain');
      const sent = await owner.post('/messages', { type: 'stream', to: 'files', topic: 't2', content: `[two](${second.json.url})` });
      const edited = await owner.call('PATCH', `/messages/${sent.body.id}`, { content: 'no file now' });
      assert.equal(edited.status, 200, JSON.stringify(edited.body));
      assert.equal(edited.body.detached_uploads.length, 1);
      const d = edited.body.detached_uploads[0];
      assert.equal(`/user_uploads/${d.path_id}`, second.json.url);
      assert.equal(d.name, 'two.txt');
      assert.deepEqual(d.messages, []);
      const relinked = await owner.call('PATCH', `/messages/${sent.body.id}`, { content: `back: [two](${second.json.url})` });
      assert.deepEqual(relinked.body.detached_uploads, []);

      const removed = await owner.call('DELETE', `/attachments/${d.id}`);
      assert.equal(removed.status, 200);
      assert.equal((await get(second.json.url, owner)).status, 404);
      const again = await owner.call('DELETE', `/attachments/${d.id}`);
      assert.equal(again.status, 400);
      assert.equal(again.body.msg, 'Invalid attachment');
      const notMine = await ann.call('DELETE', `/attachments/${id}`);
      assert.equal(notMine.body.msg, 'Invalid attachment');
    });
  });

  describe('refusals', () => {
    it("answers Zulip's errors for no file, two files, a file too large, and no credentials", async () => {
      const none = await upload(owner, []);
      assert.equal(none.status, 400);
      assert.equal(none.json.msg, 'You must specify a file to upload');
      const two = await upload(owner, [
        { name: 'a.txt', data: Buffer.from('a') },
        { name: 'b.txt', data: Buffer.from('b') },
      ]);
      assert.equal(two.json.msg, 'You may only upload one file at a time');
      const before = (await owner.get('/attachments')).body.attachments.length;
      // Announced too large: refused before any byte is read.
      const { body, type } = multipart([{ name: 'big.bin', data: Buffer.from('x') }]);
      const big = await raw(`${base}/api/v1/user_uploads`, { method: 'POST', headers: { authorization: basic(owner), 'content-type': type, 'content-length': String(40 * 1024 * 1024) }, body });
      assert.equal(big.status, 400);
      assert.equal(JSON.parse(big.body.toString()).msg, "File is larger than this server's configured maximum upload size (25 MiB).");
      // Sent too large: refused once the file passes the limit, nothing kept.
      const huge = await upload(owner, [{ name: 'huge.bin', data: Buffer.alloc(25 * 1024 * 1024 + 1) }]);
      assert.equal(huge.status, 400);
      assert.equal(huge.json.msg, "File is larger than this server's configured maximum upload size (25 MiB).");
      assert.equal((await owner.get('/attachments')).body.attachments.length, before);
      const anon = await upload(null, [{ name: 'a.txt', data: Buffer.from('a') }]);
      assert.equal(anon.status, 401);
      const notMultipart = await raw(`${base}/api/v1/user_uploads`, { method: 'POST', headers: { authorization: basic(owner), 'content-type': 'text/plain' }, body: Buffer.from('x') });
      assert.equal(JSON.parse(notMultipart.body.toString()).msg, 'You must specify a file to upload');
      const broken = await raw(`${base}/api/v1/user_uploads`, {
        method: 'POST',
        headers: { authorization: basic(owner), 'content-type': 'multipart/form-data; boundary=zz' },
        body: Buffer.from('--zz\r\nContent-Disposition: form-data; name="f"; filename="f"\r\n\r\nabc'),
      });
      assert.ok(broken.status >= 400 && broken.status < 500, String(broken.status));
      // The connection still serves requests afterwards: the server is fine.
      assert.equal((await owner.get('/attachments')).status, 200);
    });
  });

  describe('thumbnails', () => {
    it('serves an image as WebP within 840x560, and no thumbnail of other files', async () => {
      const png = await sharp({ create: { width: 1200, height: 900, channels: 3, background: 'teal' } })
        .png()
        .toBuffer();
      const r = await upload(owner, [{ name: 'pic.png', type: 'image/png', data: png }]);
      assert.equal(r.status, 200);
      const path = r.json.url.slice('/user_uploads/'.length);
      // Sent without a Content-Type (as Python's requests sends a file): the name tells the type.
      const untyped = await upload(owner, [{ name: 'untyped.png', data: png }]);
      assert.equal((await get(untyped.json.url, owner)).headers['content-type'], 'image/png');
      const unknown = await upload(owner, [{ name: 'README', data: Buffer.from('x') }]);
      assert.equal((await get(unknown.json.url, owner)).headers['content-type'], 'application/octet-stream');
      const image = await get(r.json.url, owner);
      assert.equal(image.headers['content-type'], 'image/png');
      assert.match(String(image.headers['content-disposition']), /^inline/);
      const thumb = await get(`/user_uploads/thumbnail/${path}/840x560.webp`, owner);
      assert.equal(thumb.status, 200, thumb.body.toString());
      assert.equal(thumb.headers['content-type'], 'image/webp');
      const meta = await sharp(thumb.body).metadata();
      assert.equal(meta.format, 'webp');
      assert.equal(meta.width, 747);
      assert.equal(meta.height, 560);
      // A still image has no animated form: the still one is served.
      const anim = await get(`/user_uploads/thumbnail/${path}/840x560-anim.webp`, owner);
      assert.equal(anim.status, 200);
      assert.equal((await get(`/user_uploads/thumbnail/${path}/nonsense`, owner)).status, 404);
      // Another well-formed format: the closest one Keel makes.
      assert.equal((await get(`/user_uploads/thumbnail/${path}/300x200.jpg`, owner)).headers['content-type'], 'image/webp');
      // An animated GIF keeps its frames in the animated format, and gives its first in the still one.
      const frames = await Promise.all(
        ['red', 'blue'].map((background) =>
          sharp({ create: { width: 100, height: 80, channels: 3, background } })
            .png()
            .toBuffer(),
        ),
      );
      const gif = await sharp(frames, { join: { animated: true } })
        .gif()
        .toBuffer();
      const g = await upload(owner, [{ name: 'anim.gif', type: 'image/gif', data: gif }]);
      const gPath = g.json.url.slice('/user_uploads/'.length);
      const animated = await sharp((await get(`/user_uploads/thumbnail/${gPath}/840x560-anim.webp`, owner)).body).metadata();
      assert.equal(animated.pages, 2);
      assert.equal(animated.width, 100, 'never enlarged');
      const still = await sharp((await get(`/user_uploads/thumbnail/${gPath}/840x560.webp`, owner)).body).metadata();
      assert.equal(still.pages ?? 1, 1);
      assert.equal((await get(`/user_uploads/thumbnail/${path}/840x560.webp`, ann)).status, 403);
      const txt = await upload(owner, [{ name: 'x.html', type: 'text/html', data: Buffer.from('<script>1</script>') }]);
      const page = await get(txt.json.url, owner);
      assert.match(String(page.headers['content-disposition']), /^attachment/, 'never inline HTML');
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal((await get(`/user_uploads/thumbnail/${txt.json.url.slice(14)}/840x560.webp`, owner)).status, 404);
      // Bytes that are no image under an image type, and paths that try to leave the store: 404, never 5xx.
      const fake = await upload(owner, [{ name: 'fake.png', type: 'image/png', data: Buffer.from('not a png at all') }]);
      assert.equal((await get(`/user_uploads/thumbnail/${fake.json.url.slice(14)}/840x560.webp`, owner)).status, 404);
      for (const bad of ['/user_uploads/1/../../etc/passwd', '/user_uploads/%2e%2e/%2e%2e/x', '/user_uploads/thumbnail/x', '/user_uploads/temporary/zz/x', '/user_uploads/temporary/ABCD/x'])
        assert.ok([400, 404].includes((await get(bad, owner)).status), bad);
      const unicode = await upload(owner, [{ name: 'caf%C3%A9 menu.pdf', type: 'application/pdf', data: Buffer.from('%PDF-1.4') }]);
      assert.equal(unicode.json.filename, 'café menu.pdf');
      assert.match(unicode.json.url, /\/caf%C3%A9-menu\.pdf$/);
      const served = await get(unicode.json.url, owner);
      assert.equal(served.status, 200);
      assert.equal(served.headers['content-disposition'], "inline; filename*=utf-8''caf%C3%A9%20menu.pdf");
    });
  });

  describe('events and clients', () => {
    it('tells the owner of add, update and remove, and zulip-js lists attachments', async () => {
      const q = await owner.post('/register', { event_types: ['attachment'] });
      assert.equal(q.status, 200);
      assert.equal(q.body.max_file_upload_size_mib, 25);
      const r = await upload(owner, [{ name: 'ev.txt', data: Buffer.from('ev') }]);
      await owner.post('/messages', { type: 'stream', to: 'files', topic: 'ev', content: `[ev](${r.json.url})` });
      const js = await zulip({ realm: base, username: owner.email, apiKey: owner.apiKey });
      const listed = await js.callEndpoint('/attachments', 'GET', {});
      assert.equal(listed.result, 'success');
      const att = listed.attachments.find((a: { path_id: string }) => r.json.url.endsWith(a.path_id));
      assert.ok(att);
      assert.equal((await js.callEndpoint(`/attachments/${att.id}`, 'DELETE', {})).result, 'success');
      const events = await owner.get('/events', { queue_id: q.body.queue_id, last_event_id: -1, dont_block: true });
      assert.equal(events.status, 200, JSON.stringify(events.body));
      const ops = events.body.events.filter((e: { type: string }) => e.type === 'attachment').map((e: { op: string; attachment: { id: number } }) => [e.op, e.attachment.id]);
      assert.deepEqual(ops, [
        ['add', att.id],
        ['update', att.id],
        ['remove', att.id],
      ]);
      const update = events.body.events.find((e: { op: string }) => e.op === 'update');
      assert.equal(update.attachment.messages.length, 1);
      assert.equal(typeof update.upload_space_used, 'number');
    });
  });
});

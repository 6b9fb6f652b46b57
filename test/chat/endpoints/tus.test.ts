// The resumable upload endpoint /api/v1/tus on a real `keel serve`, spoken as tus clients (uppy,
// tus-js-client) speak it, request by request: discovery, creation (and creation with upload), HEAD
// offsets, PATCH resumption after an interrupted PATCH, termination, the 413 of an Upload-Length over
// max_file_upload_size_mib and the 411 of a deferred length (Zulip's tusd hook answers), the owner
// rule, the per-user bound, and the finished file as an ordinary attachment whose URL the last
// PATCH answers (Zulip's pre-finish hook body).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';

const TUS = { 'tus-resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function basic(email: string, apiKey: string): string {
  return `Basic ${b64(`${email}:${apiKey}`)}`;
}

async function tus(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer) {
  const res = await fetch(base + path, { method, headers: { ...TUS, ...headers }, body: body ? new Uint8Array(body) : undefined });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text };
}

/** A PATCH that sends `sent` bytes of a body announced longer, then drops the connection. */
function interruptedPatch(base: string, path: string, headers: Record<string, string>, announced: number, sent: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const url = new URL(base + path);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'PATCH', headers: { ...TUS, ...headers, 'content-length': String(announced) } });
    req.on('error', () => resolve());
    req.on('response', () => resolve());
    req.write(sent, () => {
      // Give the server the bytes, then cut the connection mid-body.
      setTimeout(() => {
        req.destroy();
        setTimeout(resolve, 300);
      }, 300);
    });
  });
}

void forEachEngine('resumable uploads (tus)', (engine) => {
  let realm: ServedRealm;
  let base: string;
  let auth: string;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann'], serverArgs: ['--chat-max-upload-mib', '2'] });
    base = realm.server.chatUrl;
    auth = basic(realm.owner.email, realm.owner.apiKey);
  });
  after(() => realm.stop());

  it('announces tus 1.0 and its extensions without credentials', async () => {
    const res = await fetch(`${base}/api/v1/tus`, { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('tus-version'), '1.0.0');
    assert.match(res.headers.get('tus-extension') ?? '', /creation/);
    assert.match(res.headers.get('tus-extension') ?? '', /termination/);
  });

  it('creates, resumes after an interrupted PATCH, and answers the attachment URL at the last byte', async () => {
    const data = Buffer.alloc(300_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) % 251;
    const made = await tus(base, 'POST', '/api/v1/tus', {
      authorization: auth,
      'upload-length': String(data.length),
      'upload-metadata': `filename ${b64('report (v2).pdf')},filetype ${b64('application/pdf')}`,
    });
    assert.equal(made.status, 201, made.text);
    const location = made.headers.get('location')!;
    assert.match(location, /^\/api\/v1\/tus\/[0-9a-f]{32}$/);
    assert.ok(made.headers.get('upload-expires'), 'an unfinished upload says when it expires');

    const head0 = await tus(base, 'HEAD', location, { authorization: auth });
    assert.equal(head0.status, 200);
    assert.equal(head0.headers.get('upload-offset'), '0');
    assert.equal(head0.headers.get('upload-length'), String(data.length));
    assert.equal(head0.headers.get('cache-control'), 'no-store');

    const patchHeaders = { authorization: auth, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' };
    await interruptedPatch(base, location, patchHeaders, data.length, data.subarray(0, 100_000));
    const head1 = await tus(base, 'HEAD', location, { authorization: auth });
    assert.equal(head1.status, 200);
    const offset = Number(head1.headers.get('upload-offset'));
    assert.ok(offset > 0 && offset <= 100_000, `offset after the interruption: ${offset}`);

    // A PATCH at the wrong offset is tus's 409, and changes nothing.
    const wrong = await tus(base, 'PATCH', location, { ...patchHeaders, 'upload-offset': '1' }, data.subarray(1, 10));
    assert.equal(wrong.status, 409);

    const mid = Math.min(offset + 50_000, data.length);
    const p1 = await tus(base, 'PATCH', location, { ...patchHeaders, 'upload-offset': String(offset) }, data.subarray(offset, mid));
    assert.equal(p1.status, 204, p1.text);
    assert.equal(p1.headers.get('upload-offset'), String(mid));

    const last = await tus(base, 'PATCH', location, { ...patchHeaders, 'upload-offset': String(mid) }, data.subarray(mid));
    assert.equal(last.status, 200, last.text);
    assert.match(last.headers.get('content-type') ?? '', /application\/json/);
    const answer = JSON.parse(last.text);
    assert.equal(answer.filename, 'report (v2).pdf');
    assert.match(answer.url, /^\/user_uploads\/\d+\/[A-Za-z0-9]{24}\/report-v2\.pdf$/);

    // The staging copy is gone: the upload is an attachment now.
    assert.equal((await tus(base, 'HEAD', location, { authorization: auth })).status, 404);
    const attachments = await fetch(`${base}/api/v1/attachments`, { headers: { authorization: auth } });
    if (attachments.status === 200) {
      const list = (await attachments.json()) as { attachments: { path_id: string; size: number; name: string }[] };
      const row = list.attachments.find((a) => answer.url.endsWith(a.path_id));
      assert.ok(row, 'GET /attachments lists the finished upload');
      assert.equal(row.size, data.length);
    }
    const download = await fetch(base + answer.url, { headers: { authorization: auth } });
    if (download.status === 200) assert.deepEqual(Buffer.from(await download.arrayBuffer()), data);
  });

  it('finishes a creation that carries the whole file (creation-with-upload)', async () => {
    const data = Buffer.from('hello, tus');
    const made = await tus(
      base,
      'POST',
      '/api/v1/tus',
      { authorization: auth, 'upload-length': String(data.length), 'upload-metadata': `filename ${b64('..')}`, 'content-type': 'application/offset+octet-stream' },
      data,
    );
    assert.equal(made.status, 200, made.text);
    const answer = JSON.parse(made.text);
    assert.equal(answer.filename, 'uploaded-file');
    assert.match(answer.url, /^\/user_uploads\/\d+\/[A-Za-z0-9]{24}\/uploaded-file$/);
  });

  it("refuses an Upload-Length over the realm's max_file_upload_size_mib, and a deferred length", async () => {
    const reg = await realm.owner.post('/register', { fetch_event_types: JSON.stringify(['realm']) });
    assert.equal(reg.body.max_file_upload_size_mib, 2);
    const big = await tus(base, 'POST', '/api/v1/tus', { authorization: auth, 'upload-length': String(2 * 1024 * 1024 + 1) });
    assert.equal(big.status, 413);
    assert.deepEqual(JSON.parse(big.text), { message: 'Uploaded file is larger than the allowed limit of 2 MiB' });
    const exact = await tus(base, 'POST', '/api/v1/tus', { authorization: auth, 'upload-length': String(2 * 1024 * 1024) });
    assert.equal(exact.status, 201);
    assert.equal((await tus(base, 'DELETE', exact.headers.get('location')!, { authorization: auth })).status, 204);
    const deferred = await tus(base, 'POST', '/api/v1/tus', { authorization: auth, 'upload-defer-length': '1' });
    assert.equal(deferred.status, 411);
    assert.deepEqual(JSON.parse(deferred.text), { message: 'SizeIsDeferred is not supported' });
  });

  it('authenticates every request, and shows an upload to its owner alone', async () => {
    const none = await tus(base, 'POST', '/api/v1/tus', { 'upload-length': '10' });
    assert.equal(none.status, 401);
    assert.deepEqual(JSON.parse(none.text), { message: 'Unauthenticated upload' });
    const badKey = await tus(base, 'POST', '/api/v1/tus', { authorization: basic(realm.owner.email, 'x'.repeat(32)), 'upload-length': '10' });
    assert.equal(badKey.status, 401);

    const made = await tus(base, 'POST', '/api/v1/tus', { authorization: auth, 'upload-length': '10' });
    const location = made.headers.get('location')!;
    const ann = realm.members.ann.client;
    const annAuth = basic(ann.email, ann.apiKey);
    assert.equal((await tus(base, 'HEAD', location, { authorization: annAuth })).status, 404);
    assert.equal((await tus(base, 'DELETE', location, { authorization: annAuth })).status, 404);
    const annPatch = await tus(base, 'PATCH', location, { authorization: annAuth, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, Buffer.alloc(10));
    assert.equal(annPatch.status, 404);
    assert.equal((await tus(base, 'HEAD', location, {})).status, 401);
    // Nor through a longer path whose last segment is the id, nor by GET (no downloads).
    const id = location.split('/').at(-1)!;
    const sideways = await tus(base, 'PATCH', `/api/v1/tus/x/${id}`, { authorization: annAuth, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, Buffer.alloc(10));
    assert.equal(sideways.status, 404);
    assert.equal((await tus(base, 'HEAD', location, { authorization: auth })).headers.get('upload-offset'), '0');
    assert.equal((await tus(base, 'GET', location, { authorization: auth })).status, 404);

    // Termination: the owner's DELETE removes it.
    assert.equal((await tus(base, 'DELETE', location, { authorization: auth })).status, 204);
    assert.equal((await tus(base, 'HEAD', location, { authorization: auth })).status, 404);
  });

  it("bounds a user's unfinished uploads", async () => {
    const ann = realm.members.ann.client;
    const annAuth = basic(ann.email, ann.apiKey);
    const made: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await tus(base, 'POST', '/api/v1/tus', { authorization: annAuth, 'upload-length': '1000' });
      assert.equal(r.status, 201, r.text);
      made.push(r.headers.get('location')!);
    }
    const over = await tus(base, 'POST', '/api/v1/tus', { authorization: annAuth, 'upload-length': '1000' });
    assert.equal(over.status, 429);
    assert.match(JSON.parse(over.text).message, /at most 20 unfinished uploads/);
    // Another user is not held by ann's bound.
    assert.equal((await tus(base, 'POST', '/api/v1/tus', { authorization: auth, 'upload-length': '0' })).status, 200);
    assert.equal((await tus(base, 'DELETE', made[0], { authorization: annAuth })).status, 204);
    assert.equal((await tus(base, 'POST', '/api/v1/tus', { authorization: annAuth, 'upload-length': '1000' })).status, 201);
  });

  it('requires Tus-Resumable, and other paths under /api/v1 stay Zulip API', async () => {
    const res = await fetch(`${base}/api/v1/tus`, { method: 'POST', headers: { authorization: auth, 'upload-length': '5' } });
    assert.equal(res.status, 412);
    const other = await realm.owner.get('/users/me');
    assert.equal(other.status, 200);
    const notTus = await fetch(`${base}/api/v1/tusx`, { headers: { authorization: auth } });
    assert.equal(notTus.status, 404);
  });
});

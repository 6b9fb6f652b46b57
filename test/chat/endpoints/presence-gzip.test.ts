// The presence answer gzipped, as real Zulip clients receive it (they all send Accept-Encoding: gzip):
// POST /users/me/presence and GET /realm/presence on a real `keel serve`, read as raw bytes, through
// Node's fetch (undici, which decompresses) and curl --compressed. The realm has enough users for
// the legacy presences to pass the 4 KB the shared text must reach to be compressed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { after, before, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import type { ChatClient } from '../../helpers/chat-client.js';

/** Long names, so fewer users (each made with a password hash) fill 4 KB of legacy presences. */
const NAMES = Array.from({ length: 25 }, (_, i) => `presence-gzip-member-number-${i}`);
/** Online from the start; the last of NAMES comes online during the tests. */
const ONLINE = NAMES.slice(0, -1);

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const curl = spawnSync('curl', ['--version']).status === 0;

await forEachEngine('the presence answer gzipped', (engine) => {
  let realm: ServedRealm;
  let first: ChatClient;
  let late: ChatClient;

  before(async () => {
    realm = await servedRealm(engine, { members: NAMES });
    first = realm.members[NAMES[0]].client;
    late = realm.members[NAMES.at(-1)!].client;
    // Online, so the legacy answer carries them.
    for (const name of ONLINE) assert.equal((await realm.members[name].client.post('/users/me/presence', { status: 'active', ping_only: true })).status, 200);
  });
  after(async () => {
    await realm?.stop();
  });

  const auth = (c: ChatClient) => 'Basic ' + Buffer.from(`${c.email}:${c.apiKey}`).toString('base64');

  /** One request over a raw socket: the bytes as sent, nothing decompressed. */
  function raw(method: string, path: string, form: string | undefined, headers: Record<string, string>, who = first): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${realm.server.chatUrl}/api/v1${path}`,
        { method, headers: { authorization: auth(who), ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(form);
    });
  }
  const ping = (headers: Record<string, string>, form = 'status=active&new_user_input=true', who = first) => raw('POST', '/users/me/presence', form, headers, who);

  /** A plain answer: no encoding said, and the body is the JSON itself. */
  function plain(r: Raw): Record<string, any> {
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(r.headers['content-encoding'], undefined);
    // The plain answer of an endpoint that may gzip says so to caches; any other says nothing.
    assert.ok(r.headers.vary === undefined || r.headers.vary === 'accept-encoding', String(r.headers.vary));
    assert.equal(Number(r.headers['content-length']), r.body.length);
    return JSON.parse(r.body.toString());
  }
  /** A gzipped answer: its headers, and its body gunzipped (zlib checks the CRC and the length). */
  function gunzipped(r: Raw): string {
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.equal(r.headers.vary, 'accept-encoding');
    assert.equal(Number(r.headers['content-length']), r.body.length);
    return gunzipSync(r.body).toString();
  }
  /** The text without its one value that moves with the clock, for answers made moments apart. */
  const timeless = (text: string) => text.replace(/"server_timestamp":[0-9.e+]+/, '"server_timestamp":0');

  it('answers a ping gzipped to a client that accepts gzip: the same JSON, in a fraction of the bytes', async () => {
    const before = await ping({});
    const gz = await ping({ 'accept-encoding': 'gzip, deflate' });
    const after = await ping({});
    const text = gunzipped(gz);
    const json = JSON.parse(text);
    assert.equal(Object.keys(json.presences).length, ONLINE.length);
    // The same bytes as the plain answer made at the same state, the clock's value aside.
    assert.equal(timeless(text), timeless(before.body.toString()));
    assert.equal(timeless(text), timeless(after.body.toString()));
    const expected = plain(before);
    assert.deepEqual({ ...json, server_timestamp: 0 }, { ...expected, server_timestamp: 0 });
    assert.equal(typeof json.server_timestamp, 'number');
    assert.ok(Buffer.byteLength(JSON.stringify(json.presences)) >= 4096, 'the shared text is long enough to be compressed');
    assert.ok(gz.body.length * 4 < before.body.length, `${gz.body.length} gzipped vs ${before.body.length} plain`);
    // The request's own values ride after the shared part uncompressed (a stored block).
    assert.ok(gz.body.includes(`"presence_last_update_id":${json.presence_last_update_id}}`));
  });

  it('reuses the compression while presence stays, and a changed presence gives a new, still correct answer', async () => {
    const one = await ping({ 'accept-encoding': 'gzip' });
    const two = await ping({ 'accept-encoding': 'gzip' });
    const a = JSON.parse(gunzipped(one));
    const b = JSON.parse(gunzipped(two));
    assert.deepEqual(a.presences, b.presences);
    // Everything but the stored tail is the same bytes.
    const tailAt = (r: Raw) => r.body.indexOf(',"server_timestamp"') - 5;
    assert.ok(one.body.subarray(0, tailAt(one)).equals(two.body.subarray(0, tailAt(two))));
    // Another user comes online: the next answer says so, and matches the plain one.
    assert.equal(a.presences[late.email], undefined);
    assert.equal((await ping({}, 'status=active&ping_only=true', late)).status, 200);
    const changed = await ping({ 'accept-encoding': 'gzip' });
    const c = JSON.parse(gunzipped(changed));
    assert.equal(c.presences[late.email].aggregated.status, 'active');
    assert.equal(Object.keys(c.presences).length, NAMES.length);
    assert.ok(c.presence_last_update_id > a.presence_last_update_id);
    const plainAnswer = await ping({});
    assert.equal(plainAnswer.headers.vary, 'accept-encoding', 'a plain answer that could have been gzipped tells caches it varies');
    const now = plain(plainAnswer);
    assert.deepEqual({ ...c, server_timestamp: 0 }, { ...now, server_timestamp: 0 });
    assert.ok(!changed.body.subarray(0, tailAt(changed)).equals(one.body.subarray(0, tailAt(one))));
  });

  it('answers uncompressed when gzip is refused or not named, and gzipped for * and any weight above 0', async () => {
    for (const refusing of ['gzip;q=0', 'identity', 'deflate, br', 'GZIP;Q=0, deflate', '*;q=0', 'gzip;q=0, *']) {
      const r = await ping({ 'accept-encoding': refusing });
      assert.equal(Object.keys(plain(r).presences).length, NAMES.length, refusing);
    }
    for (const accepting of ['*', 'GZip;q=0.5', 'br;q=1, gzip;q=0.1', 'identity, *;q=0.3']) {
      const r = await ping({ 'accept-encoding': accepting });
      assert.equal(Object.keys(JSON.parse(gunzipped(r)).presences).length, NAMES.length, accepting);
    }
  });

  it('gzips an answer that lists ignored parameters too: they come after the shared part', async () => {
    const r = await ping({ 'accept-encoding': 'gzip' }, 'status=active&new_user_input=true&no_such_parameter=1');
    const json = JSON.parse(gunzipped(r));
    assert.deepEqual(json.ignored_parameters_unsupported, ['no_such_parameter']);
    assert.equal(Object.keys(json.presences).length, NAMES.length);
    assert.ok(r.body.includes('"ignored_parameters_unsupported":["no_such_parameter"]'), 'in the stored tail');
  });

  it('gzips GET /realm/presence the same way', async () => {
    const gz = await raw('GET', '/realm/presence', undefined, { 'accept-encoding': 'gzip, deflate' });
    const p = plain(await raw('GET', '/realm/presence', undefined, {}));
    const json = JSON.parse(gunzipped(gz));
    assert.deepEqual(Object.keys(json).sort(), ['msg', 'presences', 'result', 'server_timestamp']);
    assert.deepEqual({ ...json, server_timestamp: 0 }, { ...p, server_timestamp: 0 });
    assert.ok(gz.body.length * 4 < bodyBytes(p));
  });
  const bodyBytes = (json: unknown) => Buffer.byteLength(JSON.stringify(json));

  it('leaves every other answer as it was: ping_only, slim answers under 4 KB, register, errors', async () => {
    const gzip = { 'accept-encoding': 'gzip, deflate' };
    assert.deepEqual(plain(await ping(gzip, 'status=active&ping_only=true')), { result: 'success', msg: '', zephyr_mirror_active: false });
    // 24 users' modern presences are some 1.6 KB: not worth it.
    const slim = plain(await ping(gzip, 'status=active&slim_presence=true'));
    assert.equal(Object.keys(slim.presences).length, NAMES.length);
    assert.ok(bodyBytes(slim.presences) < 4096);
    const reg = plain(await raw('POST', '/register', 'event_types=%5B%22presence%22%5D', gzip));
    assert.equal(Object.keys(reg.presences).length, NAMES.length);
    const bad = await ping(gzip, 'status=sleeping');
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(bad.body.toString()).result, 'error');
  });

  it('is read by Node fetch (undici) as a real client reads it', async () => {
    const res = await fetch(`${realm.server.chatUrl}/api/v1/users/me/presence`, {
      method: 'POST',
      headers: { authorization: auth(first), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=active&new_user_input=true',
    });
    assert.equal(res.status, 200);
    // fetch asks for gzip itself, and decompresses.
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    const json = (await res.json()) as Record<string, any>;
    assert.equal(json.result, 'success');
    assert.equal(Object.keys(json.presences).length, NAMES.length);
  });

  // curl is a client people use against Keel; .ci/run installs it, so its absence is a failure here.
  it('is read by curl --compressed', () => {
    assert.ok(curl, 'curl is not installed (.ci/run installs it)');
    const out = spawnSync('curl', ['-sS', '--compressed', '-D', '-', '-u', `${first.email}:${first.apiKey}`, '-d', 'status=active', `${realm.server.chatUrl}/api/v1/users/me/presence`], {
      encoding: 'utf8',
    });
    assert.equal(out.status, 0, out.stderr);
    const [head, body] = out.stdout.split('\r\n\r\n');
    assert.match(head, /^content-encoding: gzip$/im);
    const json = JSON.parse(body);
    assert.equal(json.result, 'success');
    assert.equal(Object.keys(json.presences).length, NAMES.length);
  });
});

// Black-box: the Infra transport as real clients use it (paths, body parsing, envelope, errors).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra, type RunningServer } from '../helpers/server.js';
import { InfraClient, send } from '../helpers/infra-client.js';

await forEachEngine('infra transport', (engine) => {
  let server: RunningServer;
  let api: InfraClient;
  let basic: [string, string];
  let stop: () => Promise<void>;

  before(async () => ({ server, api, basic, stop } = await startInfra(engine)));
  after(() => stop?.());

  it('answers compact JSON with HTTP 200 and code first', async () => {
    const r = await api.rest('GET', '/apiusers');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type')!, /^application\/json/);
    assert.ok(r.text.startsWith('{"code":"OK","message":'), r.text);
    assert.equal(r.body.matches, 1);
    assert.equal(r.body.data.length, 1);
  });

  it('serves REST under /api/<ver>/ and /api/rest/<ver>/ for any version', async () => {
    for (const base of ['/api/rest/v2.10', '/api/v2.9', '/api/v2.8', '/api/rest/v1.2', '/api/rest/v2']) {
      const r = await new InfraClient(server.infraUrl, { basic }, base).rest('GET', '/apiusers');
      assert.equal(r.body.code, 'OK', `${base}: ${r.text}`);
    }
  });

  it('accepts the family segment singular or plural, and a trailing slash', async () => {
    const r1 = await api.rest('GET', '/apiuser');
    const r2 = await api.rest('GET', '/apiusers/');
    assert.equal(r1.body.code, 'OK');
    assert.equal(r2.body.code, 'OK');
  });

  it('runs commands at json.php by POST, and by GET with query parameters', async () => {
    const post = await api.cmd('apiuser.getall', { resWindow: 5 });
    assert.equal(post.body.code, 'OK');
    assert.equal(post.body.apiusers.length, 1, 'command style carries the resource-named top-level key');
    assert.deepEqual(post.body.data, post.body.apiusers);
    const get = await send(`${api.base}/json.php?cmd=apiuser.get&id=${post.body.apiusers[0].id}`, { auth: { basic } });
    assert.equal(get.body.code, 'OK', get.text);
    assert.equal(get.body.apiuser.uuid, basic[0]);
  });

  it('parses the body as JSON whatever the Content-Type says (acme.sh sends form-urlencoded)', async () => {
    const r = await send(`${api.base}/json.php`, {
      rawBody: JSON.stringify({ cmd: 'apiuser.getall', APIUUID: basic[0], APISECRET: basic[1] }),
      contentType: 'application/x-www-form-urlencoded',
    });
    assert.ok(r.text.includes('"code":"OK"'), r.text);
    const plain = await send(`${api.base}/json.php`, { rawBody: JSON.stringify({ cmd: 'apiuser.getall' }), contentType: 'text/plain', auth: { basic } });
    assert.equal(plain.body.code, 'OK');
  });

  it('accepts a {} body on GET (the Go client sends one) and merges query parameters', async () => {
    const r = await fetch(`${api.base}/apiusers?resWindow=1`, {
      method: 'GET',
      headers: { authorization: 'Basic ' + Buffer.from(basic.join(':')).toString('base64'), 'content-type': 'application/json', 'content-length': '2' },
      // fetch refuses a GET body, so send one with node:http below instead.
    }).then((x) => x.json());
    assert.equal(r.code, 'OK');
    const { request } = await import('node:http');
    const url = new URL(`${api.base}/apiusers?resWindow=1`);
    const text = await new Promise<string>((resolve, reject) => {
      const req = request(
        url,
        { method: 'GET', headers: { authorization: 'Basic ' + Buffer.from(basic.join(':')).toString('base64'), 'content-type': 'application/json', 'content-length': '2' } },
        (res) => {
          let d = '';
          res.on('data', (c) => (d += c));
          res.on('end', () => resolve(d));
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    const body = JSON.parse(text);
    assert.equal(body.code, 'OK');
    assert.equal(body.data.length, 1);
  });

  it('names an unknown command in an ERROR', async () => {
    const r = await api.cmd('frobnicate.all');
    assert.deepEqual(r.body, { code: 'ERROR', message: 'Unknown command: frobnicate.all' });
  });

  it('reports a missing cmd, malformed JSON and a non-object body as errors', async () => {
    const missing = await send(`${api.base}/json.php`, { body: {}, auth: { basic } });
    assert.equal(missing.body.code, 'FAULT');
    assert.match(missing.body.message, /cmd/);
    const broken = await send(`${api.base}/json.php`, { rawBody: '{"cmd":"apiuser.create",', auth: { basic } });
    assert.equal(broken.status, 200);
    assert.equal(broken.body.code, 'ERROR');
    assert.match(broken.body.message, /Malformed JSON/);
    const list = await send(`${api.base}/json.php`, { rawBody: '[1,2]', auth: { basic } });
    assert.equal(list.body.code, 'ERROR');
    // Nothing was created by the broken request.
    assert.equal((await api.cmd('apiuser.getall')).body.matches, 1);
  });

  it('names a malformed parameter and changes nothing', async () => {
    const r = await api.cmd('apiuser.getall', { resWindow: 0 });
    assert.equal(r.body.code, 'FAULT');
    assert.match(r.body.message, /resWindow/);
    assert.ok(r.body.error.resWindow);
    const s = await api.cmd('apiuser.getall', { resStart: 'abc' });
    assert.match(s.body.message, /resStart/);
    const c = await api.cmd('apiuser.create', { name: 'x', permissions: ['no.such.permission'] });
    assert.equal(c.body.code, 'FAULT');
    assert.match(c.body.message, /permissions/);
    assert.equal((await api.cmd('apiuser.getall')).body.matches, 1);
  });

  it('answers unknown REST paths and wrong methods with an ERROR envelope', async () => {
    const r = await api.rest('GET', '/nothing/here');
    assert.equal(r.status, 200);
    assert.equal(r.body.code, 'ERROR');
    const m = await api.rest('DELETE', '/apiusers');
    assert.equal(m.body.code, 'ERROR');
    assert.match(m.body.message, /GET|POST/);
    const outside = await send(`${server.infraUrl}/elsewhere`, {});
    assert.equal(outside.body.code, 'ERROR');
  });

  it('serves the OpenAPI document without credentials', async () => {
    const r = await send(`${server.infraUrl}/api/rest/v2.10/openapi.json`, {});
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.0.3');
    assert.equal(r.body.paths['/apiusers'].get['x-vendor-cmd'], 'apiuser.getall');
  });
});

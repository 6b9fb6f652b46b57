// The Infra listener's own HTTP handling (plain node:http): malformed requests, the body limit,
// path and query decoding, and a prompt close with idle keep-alive connections open.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessInfra } from '../helpers/in-process.js';
import { BODY_LIMIT } from '../../src/infra/transport/server.js';

/** Writes raw bytes on a fresh connection and returns everything the server sent before closing. */
function rawExchange(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    let got = '';
    socket.on('data', (c) => (got += c));
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => reject(new Error(`no close after ${JSON.stringify(got)}`)));
  });
}

function request(port: number, opts: http.RequestOptions, body?: string | ((req: http.ClientRequest) => void)): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, ...opts }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    if (typeof body === 'function') body(req);
    else req.end(body);
  });
}

await forEachEngine('infra http server', (engine) => {
  let storage: Storage;
  let infra: Awaited<ReturnType<typeof inProcessInfra>>;
  let port: number;
  let authorization: string;

  before(async () => {
    storage = await createStorage(engine);
    infra = await inProcessInfra(storage);
    await infra.app.listen({ host: '127.0.0.1', port: 0, backlog: 64 });
    port = (infra.app.server.address() as net.AddressInfo).port;
    authorization = 'Basic ' + Buffer.from(`${infra.ctx.created!.apiUuid}:${infra.ctx.created!.apiSecret}`).toString('base64');
  });
  after(async () => {
    await infra?.close();
    await storage?.dispose();
  });

  it('answers malformed HTTP with 400 and keeps serving', async () => {
    const bad = await rawExchange(port, 'THIS IS NOT HTTP\r\n\r\n');
    assert.match(bad, /^HTTP\/1\.1 400 /);
    const badHeader = await rawExchange(port, 'GET /api/rest/v2.10/apiusers HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n');
    assert.match(badHeader, /^HTTP\/1\.1 400 /);
    const ok = await request(port, { path: '/api/rest/v2.10/apiusers', headers: { authorization } });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.text).code, 'OK');
  });

  it('answers a body over the limit with an ERROR envelope, announced or streamed', async () => {
    const announced = await rawExchange(port, `POST /api/rest/v2.10/json.php HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${BODY_LIMIT + 1}\r\n\r\n{"cmd":`);
    assert.match(announced, /^HTTP\/1\.1 200 /);
    assert.match(announced, /\{"code":"ERROR","message":"Request body too large/);
    assert.match(announced, /connection: close/i);

    const streamed = await request(port, { method: 'POST', path: '/api/rest/v2.10/json.php', headers: { authorization, 'transfer-encoding': 'chunked' } }, (req) => {
      req.on('error', () => {}); // the server may close before the client has sent everything
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i <= BODY_LIMIT / chunk.length; i++) req.write(chunk);
      req.end();
    });
    assert.equal(streamed.status, 200);
    assert.match(streamed.text, /^\{"code":"ERROR","message":"Request body too large/);

    const injected = await infra.app.inject({ method: 'POST', url: '/api/rest/v2.10/json.php', headers: { authorization }, payload: ' '.repeat(BODY_LIMIT + 1) });
    assert.equal(injected.statusCode, 200);
    assert.equal(JSON.parse(injected.body).code, 'ERROR');
    // Still serving.
    assert.equal((await infra.cmd('apiuser.getall')).code, 'OK');
  });

  it('reads a body on GET and DELETE whatever the Content-Type, and merges the query under it', async () => {
    const get = await infra.app.inject({
      method: 'GET',
      url: '/api/rest/v2.10/json.php?cmd=apiuser.getall&resWindow=5',
      headers: { authorization, 'content-type': 'text/plain' },
      payload: '{"resWindow":1}',
    });
    const body = JSON.parse(get.body);
    assert.equal(body.code, 'OK', get.body);
    const del = await infra.app.inject({
      method: 'DELETE',
      url: '/api/rest/v2.10/dns/records/999999',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '{"bogus":',
    });
    assert.match(JSON.parse(del.body).message, /Malformed JSON/);
  });

  it('percent-decodes path parameters and query values, and names a malformed escape', async () => {
    const uuid = infra.ctx.created!.apiUuid;
    const encoded = await infra.app.inject({ method: 'GET', url: `/api/rest/v2.10/apiusers/${encodeURIComponent(uuid).replace(/-/g, '%2D')}`, headers: { authorization } });
    assert.equal(JSON.parse(encoded.body).data.uuid, uuid);
    const query = await infra.app.inject({ method: 'GET', url: `/api/rest/v2.10/json.php?cmd=apiuser%2Eget&id=${uuid.replace(/-/g, '%2d')}`, headers: { authorization } });
    assert.equal(JSON.parse(query.body).apiuser.uuid, uuid, query.body);
    const malformed = await infra.app.inject({ method: 'GET', url: '/api/rest/v2.10/apiusers/%E0%A4%A', headers: { authorization } });
    assert.equal(malformed.statusCode, 200);
    assert.deepEqual(JSON.parse(malformed.body), { code: 'ERROR', message: 'Malformed percent-encoding in the path segment %E0%A4%A' });
    const dotted = await infra.app.inject({ method: 'GET', url: '/api/rest/v2.10/zz/../apiusers', headers: { authorization } });
    assert.equal(JSON.parse(dotted.body).code, 'OK', dotted.body);
    // As the WHATWG URL parser reads them: an encoded dot segment, and a backslash for a slash.
    for (const url of ['/api/rest/v2.10/zz/%2E%2e/apiusers', '/api/rest/v2.10\\apiusers', '/api/rest/v2.10/./apiusers']) {
      const res = await infra.app.inject({ method: 'GET', url, headers: { authorization } });
      assert.equal(JSON.parse(res.body).code, 'OK', `${url}: ${res.body}`);
    }
  });

  it('sets the session cookie on session.login', async () => {
    const r = await infra.app.inject({
      method: 'POST',
      url: '/api/rest/v2.10/json.php',
      payload: JSON.stringify({ cmd: 'session.login', username: infra.ctx.created!.username, password: infra.ctx.created!.password }),
    });
    assert.equal(JSON.parse(r.body).code, 'OK', r.body);
    assert.match(String(r.headers['set-cookie']), /^JWTSESSIONID=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
  });
});

await forEachEngine('infra http server close', (engine) => {
  it('closes promptly with idle keep-alive connections open', async () => {
    const storage = await createStorage(engine);
    const infra = await inProcessInfra(storage);
    try {
      await infra.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (infra.app.server.address() as net.AddressInfo).port;
      const agent = new http.Agent({ keepAlive: true });
      const r = await request(port, { agent, path: '/api/rest/v2.10/openapi.json' });
      assert.equal(r.status, 200);
      assert.equal(r.headers['keep-alive'], 'timeout=65');
      const started = Date.now();
      await infra.app.close();
      assert.ok(Date.now() - started < 2_000, `close took ${Date.now() - started} ms`);
      agent.destroy();
    } finally {
      await infra.close();
      await storage.dispose();
    }
  });
});

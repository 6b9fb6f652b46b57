// Bodies before authentication: without valid credentials in the headers, at most 64 KB of a body is
// read (credentials sent in the body fit in that); with them, bodies up to BODY_LIMIT still work.
import assert from 'node:assert/strict';
import type net from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessInfra } from '../helpers/in-process.js';
import { jsonBody, sendLargeBody, watchAnswers } from '../helpers/large-body.js';
import { OPEN_BODY_LIMIT } from '../../src/platform/http/connections.js';

const MB = 1024 * 1024;
/** Under the 10 MiB limit of an authenticated request: read whole before this fix. */
const LARGE = Math.floor(9.5 * MB);
/** What the server may read past OPEN_BODY_LIMIT before it notices: the headers and a few socket reads. */
const READ_BOUND = OPEN_BODY_LIMIT + 4 * 64 * 1024;
const CMD = 'POST /api/rest/v2.10/json.php HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close';

await forEachEngine('infra request bodies before authentication', (engine) => {
  let storage: Storage;
  let infra: Awaited<ReturnType<typeof inProcessInfra>>;
  let port: number;
  let readAtAnswer: Map<number, number>;
  let basic: string;

  before(async () => {
    storage = await createStorage(engine);
    infra = await inProcessInfra(storage);
    await infra.app.listen({ host: '127.0.0.1', port: 0 });
    port = (infra.app.server.address() as net.AddressInfo).port;
    readAtAnswer = watchAnswers(infra.app.server);
    basic = 'Basic ' + Buffer.from(`${infra.ctx.created!.apiUuid}:${infra.ctx.created!.apiSecret}`).toString('base64');
  });
  after(async () => {
    await infra?.close();
    await storage?.dispose();
  });

  it('refuses a 9.5 MB body without credentials after reading at most about 64 KB, announced or chunked', async () => {
    for (const chunked of [false, true]) {
      const head = chunked ? `${CMD}\r\nTransfer-Encoding: chunked` : `${CMD}\r\nContent-Length: ${LARGE}`;
      const r = await sendLargeBody(port, readAtAnswer, head, LARGE, { chunked, fill: 0x20 });
      assert.match(r.response, /^HTTP\/1\.1 200 /);
      assert.match(r.response, /connection: close/i);
      const body = jsonBody(r.response);
      assert.equal(body.code, 'ERROR');
      assert.match(body.message, /^Request body too large: the limit is 65536 bytes without valid credentials in the headers/);
      assert.ok(r.readByServer !== undefined && r.readByServer <= READ_BOUND, `read ${r.readByServer} bytes before answering`);
      console.log(`# infra, ${chunked ? 'chunked' : 'announced'} 9.5 MB without credentials: answered after reading ${r.readByServer} bytes (client had sent ${r.sent})`);
    }
  });

  it('refuses it with wrong credentials in the headers too', async () => {
    const wrong = 'Basic ' + Buffer.from(`${infra.ctx.created!.apiUuid}:not-the-secret`).toString('base64');
    const r = await sendLargeBody(port, readAtAnswer, `${CMD}\r\nAuthorization: ${wrong}\r\nContent-Length: ${LARGE}`, LARGE, { fill: 0x20 });
    assert.match(jsonBody(r.response).message, /^Request body too large/);
    assert.ok(r.readByServer! <= READ_BOUND, `read ${r.readByServer}`);
  });

  it('reads a 1 MB body with HTTP Basic or the session cookie, announced or chunked', async () => {
    const login = await infra.cmd('session.login', { username: infra.ctx.created!.username, password: infra.ctx.created!.password }, {});
    assert.equal(login.code, 'OK', JSON.stringify(login));
    const cookie = `JWTSESSIONID=${login.token}`;
    for (const creds of [`Authorization: ${basic}`, `Cookie: ${cookie}`]) {
      for (const chunked of [false, true]) {
        // The command first, then a megabyte of white space: valid JSON.
        const json = Buffer.from('{"cmd":"apiuser.getall"}');
        const size = MB;
        const head = `${CMD}\r\n${creds}\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`}`;
        const r = await sendRaw(head, json, size, chunked);
        const body = jsonBody(r.response);
        assert.equal(body.code, 'OK', `${creds.split(':')[0]} ${chunked ? 'chunked' : 'announced'}: ${JSON.stringify(body).slice(0, 200)}`);
      }
    }
  });

  it('still reads credentials sent in a small body', async () => {
    const padded = JSON.stringify({ cmd: 'apiuser.getall', APIUUID: infra.ctx.created!.apiUuid, APISECRET: infra.ctx.created!.apiSecret }).padEnd(OPEN_BODY_LIMIT - 10, ' ');
    const res = await infra.app.inject({ method: 'POST', url: '/api/rest/v2.10/json.php', payload: padded });
    assert.equal(JSON.parse(res.body).code, 'OK', res.body);
  });

  /** A body that starts with `json` and is padded with spaces to `size` bytes. */
  function sendRaw(head: string, json: Buffer, size: number, chunked: boolean) {
    return sendLargeBody(port, readAtAnswer, head, size, { chunked, fill: 0x20, prefix: json });
  }
});

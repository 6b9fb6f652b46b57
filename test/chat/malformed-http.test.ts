// HTTP that node's parser refuses before any request exists (a header section over its limit, a
// broken request line or header line, headers that never finish) is answered in Zulip's error
// envelope with the status node means (431, 400, 408), and the connection closes; the server goes
// on serving. Over raw sockets: inject() sends only well-formed requests.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessChat, ok } from '../helpers/in-process-chat.js';

const HOST = 'chat.keel.test';
/** Short, so that the 408 case takes a moment; the silence timeout runs past it (connections.ts). */
const HEADERS_MS = 400;

/** Writes raw bytes on a fresh connection; everything the server sent before it closed the connection. */
function exchange(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    let got = '';
    socket.on('data', (c) => (got += c));
    socket.on('close', () => resolve(got));
    socket.on('error', () => {}); // a reset after the answer: 'close' follows
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error(`no close after ${JSON.stringify(got)}`));
    });
  });
}

await forEachEngine('chat malformed HTTP', (engine) => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;
  let port: number;

  before(async () => {
    storage = await createStorage(engine);
    chat = await inProcessChat(storage, { timeouts: { headersMs: HEADERS_MS } });
    await chat.app.listen({ host: '127.0.0.1', port: 0 });
    port = (chat.app.server.address() as net.AddressInfo).port;
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const cases: [string, string, number, string][] = [
    ['a header section over the limit', `GET /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\nX-Filler: ${'x'.repeat(20_000)}\r\n\r\n`, 431, 'Request Header Fields Too Large'],
    ['no HTTP at all', 'THIS IS NOT HTTP\r\n\r\n', 400, 'Bad Request'],
    ['a broken header line', `GET /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\nBroken header line\r\n\r\n`, 400, 'Bad Request'],
    ['a bad Content-Length', `POST /api/v1/messages HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 12x\r\n\r\n`, 400, 'Bad Request'],
    ['headers that never finish', `GET /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\n`, 408, 'Request Timeout'],
  ];
  for (const [what, data, status, reason] of cases) {
    it(`answers ${what} ${status} in Zulip's error envelope and closes the connection`, async () => {
      const got = await exchange(port, data);
      const [head, body] = got.split('\r\n\r\n');
      assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), got.slice(0, 300));
      assert.match(head, /^connection: close$/im);
      assert.match(head, /^content-type: application\/json/im);
      assert.deepEqual(JSON.parse(body), { result: 'error', msg: `Malformed HTTP request (${reason})`, code: 'BAD_REQUEST' });
    });
  }

  it('still answers a whole request followed by bytes that are no request (a body sent without its length), then closes', async () => {
    const auth = Buffer.from(`${chat.owner.email}:${chat.owner.apiKey}`).toString('base64');
    // node's client sends a DELETE's body with neither Content-Length nor chunked encoding.
    const got = await exchange(port, `GET /api/v1/users/me HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Basic ${auth}\r\n\r\nqueue_id=abc`);
    const [head, body] = got.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 /, got.slice(0, 300));
    assert.match(head, /^connection: close$/im);
    assert.equal(JSON.parse(body).email, chat.owner.email);
  });

  it('goes on serving', async () => {
    assert.equal((await ok(chat.owner, 'GET', '/users/me')).email, chat.owner.email);
  });
});

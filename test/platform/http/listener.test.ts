// The listener both services run on (platform/http/listener.ts) with a handler of its own: inject()
// through node's parser, answers held until the store is flushed, bodies under their limits, a
// parked answer told when its client goes away, and close() answering parked requests and asking
// clients to close.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { it } from 'node:test';
import { Listener, onClientGone } from '../../../src/platform/http/listener.js';
import { BodyTooLarge, readBody } from '../../../src/platform/http/body.js';
import { closeAfterRefusal, OPEN_BODY_LIMIT } from '../../../src/platform/http/connections.js';
import type { Flushes } from '../../../src/platform/http/durable.js';
import { createLogger } from '../../../src/platform/log.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const failure = () => '{"failed":true}';

/** A listener that echoes what it read, parks `/park` until close, and flushes when told. */
function echo(store: Flushes = { durable: () => true, synced: () => Promise.resolve() }) {
  const parked: ServerResponse[] = [];
  const gone: string[] = [];
  const listener: Listener = new Listener(
    {
      name: 'test',
      log: createLogger('error', () => {}),
      store,
      malformed: (status, reason) => JSON.stringify({ status, reason }),
      onClosing: () => {
        for (const res of parked.splice(0)) void listener.answer(res, 200, JSON_HEADERS, '{"parked":"ended"}', failure);
      },
    },
    (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/park') {
        parked.push(res);
        onClientGone(res, () => gone.push(req.url!));
        return;
      }
      readBody(req, OPEN_BODY_LIMIT).then(
        (body) => {
          const text = JSON.stringify({ method: req.method, url: req.url, host: req.headers.host, ip: req.socket.remoteAddress, body: body.toString('utf8') });
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          void listener.answer(res, 201, JSON_HEADERS, text, failure);
        },
        (err: unknown) => {
          assert.ok(err instanceof BodyTooLarge);
          closeAfterRefusal(res);
          void listener.answer(res, 413, JSON_HEADERS, JSON.stringify({ limit: err.limit }), failure);
        },
      );
    },
  );
  return { listener, parked, gone };
}

it("injects a request through node's parser, with the answer's status, headers and body", async () => {
  const { listener } = echo();
  const r = await listener.inject({ method: 'post', url: '/x?y=1', headers: { 'Content-Type': 'text/plain' }, payload: 'héllo' });
  assert.equal(r.statusCode, 201);
  assert.deepEqual(r.json(), { method: 'POST', url: '/x?y=1', host: 'localhost:80', ip: '127.0.0.1', body: 'héllo' });
  assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  assert.deepEqual(r.headers['set-cookie'], ['a=1', 'b=2']);
  assert.equal((await listener.inject('/plain')).statusCode, 201);
  // Malformed HTTP never reaches the handler: node's parser refuses it, answered in the envelope.
  const bad = await listener.inject({ url: '/a b' });
  assert.deepEqual([bad.statusCode, bad.json()], [400, { status: 400, reason: 'Bad Request' }]);
  await listener.close();
});

it('refuses a body over its limit and closes the connection after the answer', async () => {
  const { listener } = echo();
  const r = await listener.inject({ method: 'POST', url: '/big', payload: 'x'.repeat(OPEN_BODY_LIMIT + 1) });
  assert.deepEqual([r.statusCode, r.json(), r.headers.connection], [413, { limit: OPEN_BODY_LIMIT }, 'close']);
  await listener.close();
});

it('holds an answer until the store is flushed', async () => {
  let flush!: () => void;
  const store: Flushes = { durable: () => false, synced: () => new Promise<void>((resolve) => (flush = resolve)) };
  const { listener } = echo(store);
  let answered = false;
  const pending = listener.inject({ url: '/x' }).then((r) => {
    answered = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(answered, false, 'nothing leaves before the flush');
  flush();
  assert.equal((await pending).statusCode, 201);
  await listener.close();
});

it('tells a parked request when its client goes away, and answers parked requests at close with connection: close', async () => {
  const { listener, gone } = echo();
  await listener.listen({ host: '127.0.0.1', port: 0 });
  const { port } = listener.server.address() as net.AddressInfo;
  const request = (path: string) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (text += c));
    return { socket, ended: new Promise<string>((resolve) => socket.on('close', () => resolve(text))) };
  };
  const leaving = request('/park');
  const staying = request('/park');
  await new Promise((r) => setTimeout(r, 100));
  leaving.socket.destroy();
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(gone, ['/park']);
  const started = Date.now();
  await listener.close();
  const answer = await staying.ended;
  assert.match(answer, /^HTTP\/1\.1 200 /);
  assert.match(answer, /connection: close/i);
  assert.match(answer, /\{"parked":"ended"\}/);
  assert.ok(Date.now() - started < 5_000, 'the close did not wait for the keep-alive timeout');
  assert.deepEqual(gone, ['/park'], 'an answered request is not gone');
});

// The connection cap on the Chat listener: at the cap, idle connections are closed to make room,
// never parked GET /events polls, which still get their events; a new request is still answered.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessChat, ok } from '../helpers/in-process-chat.js';
import { ConnectionCap } from '../../src/platform/http/connections.js';
import { hold, until, type Held } from '../helpers/held-sockets.js';

const HOST = 'chat.keel.test';
const CAP = 60;
const POLLS = 20;

await forEachEngine('chat connection cap', (engine) => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;
  const cap = new ConnectionCap(CAP);

  before(async () => {
    storage = await createStorage(engine);
    chat = await inProcessChat(storage, { cap });
    await chat.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  it(`keeps ${POLLS} parked polls and answers a new request with ${CAP * 5} idle connections against a cap of ${CAP}`, async () => {
    const port = (chat.app.server.address() as net.AddressInfo).port;
    const auth = 'Basic ' + Buffer.from(`${chat.owner.email}:${chat.owner.apiKey}`).toString('base64');
    const queues: string[] = [];
    for (let i = 0; i < POLLS; i++) queues.push((await ok(chat.owner, 'POST', '/register', { event_types: ['message'] })).queue_id as string);
    const polls = await Promise.all(queues.map((q) => hold(port, `GET /api/v1/events?queue_id=${q}&last_event_id=-1 HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: ${auth}\r\n\r\n`)));
    const ownerId = (await ok(chat.owner, 'GET', '/users/me')).user_id as number;
    await until('the polls to park', () => queues.every((q) => chat.events.queueOf(q, ownerId).parked));

    const idle: Held[] = [];
    for (let i = 0; i < CAP * 4; i++) idle.push(await hold(port));
    for (let i = 0; i < CAP; i++) idle.push(await hold(port, `GET /api/v1/server_settings HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`));
    const answer = await new Promise<number>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/users/me', headers: { host: HOST, authorization: auth }, agent: new http.Agent({ keepAlive: false }) }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
    });
    assert.equal(answer, 200);
    await until('the cap to be kept', () => idle.filter((h) => !h.closed).length <= CAP - POLLS);
    assert.equal(cap.refused, 0);
    assert.ok(
      polls.every((p) => !p.closed),
      'no parked poll was closed',
    );

    await ok(chat.owner, 'POST', '/messages', { type: 'direct', to: [ownerId], content: 'still delivered' });
    await until('every poll to get the message', () => polls.every((p) => p.got.includes('still delivered')));
    console.log(`# chat, cap ${CAP}: ${POLLS} parked polls + ${idle.length} idle connections; ${cap.evicted} idle closed, ${POLLS}/${POLLS} polls got the message, a new request answered`);
    for (const h of [...idle, ...polls]) h.socket.destroy();
  });
});

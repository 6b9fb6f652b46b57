// The connection cap and timeouts both HTTP listeners share: at the cap idle connections are closed to
// make room, never connections with a response in progress (parked long-polls); a connection that
// sends half its headers, or nothing, is dropped after the header timeout.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { describe, it } from 'node:test';
import { ConnectionCap, connectionCapFor, createHttpServer, readOpenFilesLimit, type HttpTimeouts } from '../../../src/platform/http/connections.js';
import { createLogger } from '../../../src/platform/log.js';
import { buildConfig } from '../../../src/config/config.js';
import { readOptions, UsageError } from '../../../src/config/env.js';
import { hold, until, type Held } from '../../helpers/held-sockets.js';

const log = createLogger('error');

/** A server whose /park requests wait until `release()`, as parked long-polls do; anything else is answered at once. */
async function start(cap: ConnectionCap, timeouts?: Partial<HttpTimeouts>) {
  const parked: http.ServerResponse[] = [];
  const server = createHttpServer({ cap, timeouts, log, name: 'test' }, (req, res) => {
    if (req.url === '/park') parked.push(res);
    else res.end('answered');
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    server,
    port,
    parked,
    release() {
      for (const res of parked.splice(0)) res.end('released');
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const get = (port: number, path: string, agent?: http.Agent) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
  });

describe('connection cap', () => {
  it('derives the cap from the open-files limit, keeping a tenth (at least 128) for other files', () => {
    assert.equal(connectionCapFor(20_000), 18_000);
    assert.equal(connectionCapFor(1024), 896);
    assert.equal(connectionCapFor(Infinity), 100_000);
    assert.equal(connectionCapFor(undefined), 100_000);
    const limit = readOpenFilesLimit();
    if (process.platform === 'linux') assert.ok(limit && limit.soft > 0 && limit.hard >= limit.soft, JSON.stringify(limit));
    assert.equal(new ConnectionCap().max, connectionCapFor(limit?.soft));
  });

  it('takes a fixed cap from --max-connections (KEEL_MAX_CONNECTIONS), a whole number >= 1', () => {
    assert.equal(buildConfig(readOptions([], {}).options).maxConnections, undefined);
    assert.equal(buildConfig(readOptions(['--max-connections', '500'], {}).options).maxConnections, 500);
    assert.equal(buildConfig(readOptions([], { KEEL_MAX_CONNECTIONS: '700' }).options).maxConnections, 700);
    for (const bad of ['0', '-3', '1.5', 'many']) {
      assert.throws(
        () => buildConfig(readOptions([`--max-connections=${bad}`], {}).options),
        (err: Error) => err instanceof UsageError && /--max-connections must be a whole number >= 1/.test(err.message),
      );
    }
    assert.equal(new ConnectionCap(500).max, 500);
  });

  it('holds 2,000 idle connections against a cap of 500: idle ones close, parked polls stay, a new request is answered', async () => {
    const cap = new ConnectionCap(500);
    const s = await start(cap);
    try {
      // 100 parked long-polls first: the oldest connections, so the first the cap would reach.
      const polls = await Promise.all(Array.from({ length: 100 }, () => hold(s.port, 'GET /park HTTP/1.1\r\nHost: x\r\n\r\n')));
      await until('the polls to park', () => s.parked.length === 100);
      // 1,000 connections that send nothing, and 1,000 idle keep-alive ones (a request answered, then quiet).
      const held: Held[] = [];
      for (let i = 0; i < 1_000; i++) held.push(await hold(s.port));
      for (let i = 0; i < 1_000; i++) held.push(await hold(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      const started = Date.now();
      const answer = await get(s.port, '/', new http.Agent({ keepAlive: false }));
      const answeredMs = Date.now() - started;
      assert.deepEqual(answer, { status: 200, text: 'answered' });
      await until('the cap to be kept', () => held.filter((h) => !h.closed).length <= 500 - 100);
      assert.ok(cap.size <= 500, `open ${cap.size}`);
      assert.equal(cap.refused, 0);
      assert.ok(cap.evicted >= 2_000 + 100 + 1 - 500, `evicted ${cap.evicted}`);
      // The newest idle connections are the ones left: the oldest were closed first.
      assert.ok(held.slice(0, 1_000).every((h) => h.closed));
      // Every parked poll is still open and gets its answer.
      assert.ok(polls.every((p) => !p.closed));
      s.release();
      await until('the polls to be answered', () => polls.every((p) => p.got.endsWith('released')));
      const stillOpen = held.filter((h) => !h.closed).length;
      console.log(
        `# cap 500: 100 parked polls + 2,000 idle connections held; ${cap.evicted} idle closed, ${stillOpen} idle still open, 100/100 parked polls answered, a new request answered in ${answeredMs} ms`,
      );
      for (const h of [...held, ...polls]) h.socket.destroy();
    } finally {
      await s.close();
    }
  });

  it('refuses a new connection when every open one is busy, and closes none of them', async () => {
    const cap = new ConnectionCap(20);
    const s = await start(cap);
    try {
      const polls = await Promise.all(Array.from({ length: 20 }, () => hold(s.port, 'GET /park HTTP/1.1\r\nHost: x\r\n\r\n')));
      await until('the polls to park', () => s.parked.length === 20);
      const late = await hold(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await until('the new connection to be refused', () => late.closed);
      assert.equal(late.got, '');
      assert.equal(cap.refused, 1);
      assert.ok(polls.every((p) => !p.closed));
      s.release();
      await until('the polls to be answered', () => polls.every((p) => p.got.endsWith('released')));
      // Once they are idle, there is room again.
      assert.deepEqual(await get(s.port, '/', new http.Agent({ keepAlive: false })), { status: 200, text: 'answered' });
      for (const p of polls) p.socket.destroy();
    } finally {
      await s.close();
    }
  });
});

describe('connection timeouts', () => {
  const timeouts = { headersMs: 300, requestMs: 600, keepAliveMs: 300 };

  it('drops a client that sends half its headers after the header timeout, with 408', async () => {
    const s = await start(new ConnectionCap(100), timeouts);
    try {
      const started = Date.now();
      const half = await hold(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n');
      await until('the half-sent request to be dropped', () => half.closed, 5_000);
      const ms = Date.now() - started;
      assert.match(half.got, /^HTTP\/1\.1 408 /);
      assert.ok(ms >= 250 && ms < 2_000, `dropped after ${ms} ms`);
      console.log(`# header timeout 300 ms: half-sent headers dropped after ${ms} ms`);
    } finally {
      await s.close();
    }
  });

  it('closes a connection that sends nothing, and an idle keep-alive one, but not a parked request', async () => {
    const s = await start(new ConnectionCap(100), timeouts);
    try {
      const started = Date.now();
      const silent = await hold(s.port);
      const idle = await hold(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      const poll = await hold(s.port, 'GET /park HTTP/1.1\r\nHost: x\r\n\r\n');
      await until('the silent connection to close', () => silent.closed, 5_000);
      const silentMs = Date.now() - started;
      assert.ok(silentMs < 2_000, `silent connection closed after ${silentMs} ms`);
      // Node adds a second to the keep-alive timeout it announces.
      await until('the idle keep-alive connection to close', () => idle.closed, 5_000);
      assert.match(idle.got, /answered$/);
      // Parked well past every timeout, then answered on the same connection.
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(poll.closed, false);
      s.release();
      await until('the poll to be answered', () => poll.got.endsWith('released'));
      poll.socket.destroy();
    } finally {
      await s.close();
    }
  });
});

// The DNS server's TCP connection limits (RFC 7766): held-open connections cannot keep real queries
// out (idle ones are closed first when a cap is reached), a message trickled in is dropped after the
// per-message timeout, and one source address is held to its own cap.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { sourceOf, startDnsServer, TCP_DEFAULTS, type DnsServer, type TcpLimits } from '../../src/dns/server.js';
import { ZoneCatalog } from '../../src/zones/zone.js';
import { createLogger } from '../../src/platform/log.js';
import { makeQuery, rdataOf, TcpClient, type Addr } from '../helpers/dns-client.js';
import { exampleZone, NS_ADDRESSES, NS_DOMAIN } from './fixtures.js';

const SECONDARY = '127.0.0.3';

async function start(tcp: Partial<TcpLimits> = {}): Promise<{ server: DnsServer; at: Addr }> {
  const catalog = new ZoneCatalog();
  catalog.put(exampleZone());
  const server = await startDnsServer({
    catalog,
    listen: { host: '127.0.0.1', port: 0 },
    nameserverDomain: NS_DOMAIN,
    nameserverAddresses: NS_ADDRESSES,
    secondaries: [{ host: SECONDARY, port: 9 }],
    notifyAttempts: 1,
    log: createLogger('error'),
    tcp,
  });
  return { server, at: { address: '127.0.0.1', port: server.tcpAddress.port } };
}

/** Opens `n` connections from `from` that send nothing, as an attacker holding sockets would. */
async function hold(at: Addr, n: number, from: string[] = ['127.0.0.1']): Promise<TcpClient[]> {
  const out: TcpClient[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, (_, j) => TcpClient.connect(at, from[(i + j) % from.length]));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/** A query over a new connection: true when it is answered (with the right data) within 3 s. */
async function answered(at: Addr, from = '127.0.0.1'): Promise<boolean> {
  let c: TcpClient;
  try {
    c = await TcpClient.connect(at, from);
  } catch {
    return false;
  }
  try {
    c.send(makeQuery('www.example.com', 'A'));
    const raw = await c.next(3000);
    return raw !== null && dnsPacket.decode(raw).answers!.map(rdataOf).sort().join() === '192.0.2.10,192.0.2.11';
  } finally {
    c.close();
  }
}

/** `n` real queries, each over its own new connection, a few at a time; how many were answered. */
async function realQueries(at: Addr, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i += 8) {
    const batch = await Promise.all(Array.from({ length: Math.min(8, n - i) }, () => answered(at)));
    ok += batch.filter(Boolean).length;
  }
  return ok;
}

const framed = (msg: Buffer) => Buffer.concat([Buffer.from([msg.length >> 8, msg.length & 0xff]), msg]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('dns tcp limits', () => {
  const servers: DnsServer[] = [];
  const clients: TcpClient[] = [];
  after(async () => {
    for (const c of clients) c.close();
    await Promise.all(servers.map((s) => s.close()));
  });

  it('answers every real query while 600 idle connections are held from the same address', async () => {
    const { server, at } = await start();
    servers.push(server);
    const held = await hold(at, 600);
    clients.push(...held);
    const ok = await realQueries(at, 40);
    const closed = held.filter((c) => c.closed).length;
    console.log(`# answered ${ok}/40 with 600 held sockets from one address (server closed ${closed} of them; per-source cap ${TCP_DEFAULTS.maxConnectionsPerSource})`);
    assert.equal(ok, 40);
    assert.ok(closed >= 600 - TCP_DEFAULTS.maxConnectionsPerSource, `held connections past the per-source cap are closed (${closed})`);
  });

  it('answers every real query while 600 idle connections from 30 addresses fill the total cap', async () => {
    const { server, at } = await start();
    servers.push(server);
    const sources = Array.from({ length: 30 }, (_, i) => `127.0.0.${10 + i}`);
    const held = await hold(at, 600, sources);
    clients.push(...held);
    const ok = await realQueries(at, 40);
    const closed = held.filter((c) => c.closed).length;
    console.log(`# answered ${ok}/40 with 600 held sockets from 30 addresses (server closed ${closed}; total cap ${TCP_DEFAULTS.maxConnections})`);
    assert.equal(ok, 40);
    assert.ok(closed >= 600 - TCP_DEFAULTS.maxConnections, `the longest-idle connections past the total cap are closed (${closed})`);
  });

  it('drops a query trickled in one byte at a time after the message timeout, and answers one sent in two parts', async () => {
    const { server, at } = await start({ messageTimeoutMs: 300, idleTimeoutMs: 3000 });
    servers.push(server);
    const slow = await TcpClient.connect(at);
    clients.push(slow);
    const bytes = framed(makeQuery('www.example.com', 'A'));
    const began = Date.now();
    let sent = 0;
    while (!slow.closed && sent < bytes.length) {
      slow.socket.write(bytes.subarray(sent, sent + 1));
      sent++;
      await sleep(25);
    }
    const after = Date.now() - began;
    console.log(`# trickled query (1 byte per 25 ms) dropped after ${after} ms, ${sent} of ${bytes.length} bytes sent (message timeout 300 ms)`);
    assert.equal(slow.closed, true, 'closed before the message was complete');
    assert.ok(sent < bytes.length);
    assert.ok(after >= 250 && after < 2500, `closed by the message timeout; the idle one never runs out while bytes arrive (${after} ms)`);
    assert.equal(await slow.next(100), null, 'no answer');

    const split = await TcpClient.connect(at);
    clients.push(split);
    split.socket.write(bytes.subarray(0, 10));
    await sleep(150);
    split.socket.write(bytes.subarray(10));
    assert.notEqual(await split.next(), null, 'a message that arrives within the bound is answered');
    // The idle timeout still applies between messages.
    assert.equal(await split.waitClosed(5000), true);
  });

  it('holds one source to its own cap, closing its idle connections first, and leaves other sources alone', async () => {
    const { server, at } = await start({ maxConnectionsPerSource: 4, messageTimeoutMs: 5000, idleTimeoutMs: 5000 });
    servers.push(server);
    const query = framed(makeQuery('www.example.com', 'A'));
    // Four connections each with a message under way: none of them is idle.
    const busy = await hold(at, 4);
    clients.push(...busy);
    for (const c of busy) c.socket.write(query.subarray(0, 5));
    await sleep(200); // for the server to read them
    const fifth = await TcpClient.connect(at);
    clients.push(fifth);
    assert.equal(await fifth.waitClosed(1000), true, 'a fifth connection from the same address is refused');
    assert.ok(
      busy.every((c) => !c.closed),
      'the four busy ones stay',
    );
    assert.equal(await answered(at, '127.0.0.2'), true, 'another address is served');
    // Secondaries are not held to the per-source cap.
    const secondary = await hold(at, 6, [SECONDARY]);
    clients.push(...secondary);
    for (const c of secondary) c.socket.write(query.subarray(0, 5));
    await sleep(200);
    assert.ok(
      secondary.every((c) => !c.closed),
      'a secondary may open more',
    );

    // One of the four finishes its message and is answered: now idle, it is the one a new connection replaces.
    busy[0].socket.write(query.subarray(5));
    assert.notEqual(await busy[0].next(), null);
    assert.equal(await answered(at), true);
    assert.equal(await busy[0].waitClosed(1000), true, 'the idle connection made room');
    assert.ok(busy.slice(1).every((c) => !c.closed));
  });

  it('counts IPv6 clients by /64 and IPv4 clients by address', () => {
    assert.equal(sourceOf('2001:db8::1'), sourceOf('2001:db8:0:0:ffff::2'));
    assert.equal(sourceOf('2001:db8::1'), '2001:db8:0:0::/64');
    assert.notEqual(sourceOf('2001:db8:0:1::1'), sourceOf('2001:db8::1'));
    assert.equal(sourceOf('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(sourceOf('::ffff:192.0.2.1'), '192.0.2.1');
    assert.notEqual(sourceOf('192.0.2.1'), sourceOf('192.0.2.2'));
  });
});

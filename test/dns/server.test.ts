// The DNS server's sockets, started in-process on a free loopback port: UDP and TCP answers, TCP
// framing and limits, zone transfers to allowed secondaries, and NOTIFY with retries.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { startDnsServer, type DnsServer } from '../../src/dns/server.js';
import { ZoneCatalog } from '../../src/zones/zone.js';
import { createLogger } from '../../src/platform/log.js';
import { axfr, makeQuery, rcodeOf, rdataOf, tcpQuery, TcpClient, udpQuery, type Addr } from '../helpers/dns-client.js';
import { bigZone, exampleZone, NS_ADDRESSES, NS_DOMAIN, orgZone } from './fixtures.js';

const SECONDARY = '127.0.0.2';

describe('dns server sockets', () => {
  let catalog: ZoneCatalog;
  let server: DnsServer;
  let at: Addr;
  let notifySocket: dgram.Socket;
  const notifies: { zone: string; serial: number; id: number }[] = [];
  let dropNext = 0;

  before(async () => {
    // A stand-in secondary on 127.0.0.2 that records NOTIFY messages and acknowledges them, except
    // those it is told to drop (to see the retries).
    notifySocket = dgram.createSocket('udp4');
    notifySocket.on('message', (msg, rinfo) => {
      const p = dnsPacket.decode(msg);
      const soa = p.answers?.find((a) => a.type === 'SOA') as dnsPacket.SoaAnswer | undefined;
      notifies.push({ zone: p.questions![0].name, serial: soa?.data.serial ?? -1, id: p.id! });
      if (dropNext > 0) {
        dropNext--;
        return;
      }
      notifySocket.send(dnsPacket.encode({ type: 'response', id: p.id, flags: (4 << 11) | dnsPacket.AUTHORITATIVE_ANSWER, questions: p.questions }), rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve) => notifySocket.bind(0, SECONDARY, () => resolve()));

    catalog = new ZoneCatalog();
    catalog.put(exampleZone());
    catalog.put(orgZone());
    catalog.put(bigZone());
    server = await startDnsServer({
      catalog,
      listen: { host: '127.0.0.1', port: 0 },
      nameserverDomain: NS_DOMAIN,
      nameserverAddresses: NS_ADDRESSES,
      secondaries: [{ host: SECONDARY, port: notifySocket.address().port }],
      log: createLogger('error'),
      tcp: { idleTimeoutMs: 400, messageTimeoutMs: 400 },
      notifyRetryMs: 100,
      notifyAttempts: 4,
    });
    at = { address: '127.0.0.1', port: server.udpAddress.port };
  });

  after(async () => {
    await server?.close();
    notifySocket?.close();
  });

  it('listens for UDP and TCP on one port', async () => {
    assert.equal(server.udpAddress.port, server.tcpAddress.port);
    assert.notEqual(server.udpAddress.port, 0);
    const u = await udpQuery(at, 'www.example.com', 'A');
    assert.deepEqual(u.packet.answers!.map(rdataOf).sort(), ['192.0.2.10', '192.0.2.11']);
    const t = await tcpQuery(at, 'www.example.com', 'A');
    assert.deepEqual(t.answers!.map(rdataOf).sort(), ['192.0.2.10', '192.0.2.11']);
    assert.ok(t.flag_aa);
  });

  it('truncates over UDP and gives the whole answer over TCP', async () => {
    const u = await udpQuery(at, 'big.example.com', 'TXT');
    assert.ok(u.packet.flag_tc);
    assert.ok(u.raw.length <= 1232);
    const t = await tcpQuery(at, 'big.example.com', 'TXT');
    assert.equal(t.flag_tc, false);
    assert.equal((rdataOf(t.answers![0]) as Buffer[]).length, 12);
  });

  it('answers several queries sent in one TCP write, and frames split byte by byte', async () => {
    const c = await TcpClient.connect(at);
    const frames = ['www.example.com', 'example.org', 'mail.example.com'].map((n, i) => {
      const q = makeQuery(n, n === 'example.org' ? 'SOA' : 'A', { id: 100 + i });
      const head = Buffer.alloc(2);
      head.writeUInt16BE(q.length);
      return Buffer.concat([head, q]);
    });
    c.socket.write(Buffer.concat(frames.slice(0, 2)));
    for (const byte of frames[2]) {
      c.socket.write(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r));
    }
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(dnsPacket.decode((await c.next())!).id);
    assert.deepEqual(ids, [100, 101, 102]);
    c.close();
  });

  it('closes idle TCP connections, stalled frames and streams that are not DNS', async () => {
    const idle = await TcpClient.connect(at);
    assert.equal(await idle.waitClosed(2000), true, 'idle connection closed');
    const stalled = await TcpClient.connect(at);
    stalled.socket.write(Buffer.from([0, 40, 1, 2, 3]));
    assert.equal(await stalled.waitClosed(2000), true, 'half a frame is not kept forever');
    const junk = await TcpClient.connect(at);
    junk.socket.write(Buffer.from([0, 3, 1, 2, 3]));
    assert.equal(await junk.waitClosed(1000), true, 'a 3-byte "message" ends the connection');
    // And the server is still fine.
    assert.equal(rcodeOf(await tcpQuery(at, 'example.com', 'SOA')), 0);
  });

  it('refuses AXFR to addresses that are not secondaries', async () => {
    const [reply] = await axfr(at, 'example.com');
    assert.equal(rcodeOf(reply), 5);
  });

  it('transfers a zone to a secondary: SOA first and last, every record, split into several messages', async () => {
    const messages = await axfr(at, 'big.test', SECONDARY);
    assert.ok(messages.length > 1, `several messages (${messages.length})`);
    const rrs = messages.flatMap((m) => m.answers ?? []);
    assert.equal(rrs[0].type, 'SOA');
    assert.equal(rrs[rrs.length - 1].type, 'SOA');
    assert.equal(rrs.filter((r) => r.type === 'A').length, 3000);
    assert.equal(rrs.filter((r) => r.type === 'NS').length, 4);
    assert.ok(messages.every((m) => m.flag_aa && rcodeOf(m) === 0));
    assert.equal(messages[0].questions!.length, 1);

    const example = (await axfr(at, 'example.com', SECONDARY)).flatMap((m) => m.answers ?? []);
    const types = new Set(example.map((r) => r.type));
    for (const t of ['SOA', 'NS', 'A', 'AAAA', 'MX', 'TXT', 'CNAME', 'SRV', 'PTR', 'CAA']) assert.ok(types.has(t as dnsPacket.RecordType), t);
    assert.ok(
      example.some((r) => r.name === 'ns1.sub.example.com' && r.type === 'A'),
      'glue is part of the zone',
    );
  });

  it('answers SOA over UDP to secondaries', async () => {
    const r = await udpQuery(at, 'big.test', 'SOA', { edns: false });
    assert.equal((rdataOf(r.packet.answers![0]) as dnsPacket.SoaData).serial, 42);
  });

  it('sends NOTIFY with the new serial on every change, retrying until acknowledged', async () => {
    notifies.length = 0;
    dropNext = 2;
    catalog.put(exampleZone(2024010199));
    const deadline = Date.now() + 3000;
    while ((server.pendingNotifies() > 0 || notifies.length < 3) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(server.pendingNotifies(), 0, 'acknowledged');
    assert.equal(notifies.length, 3, 'two dropped, the third acknowledged, no more');
    assert.ok(notifies.every((n) => n.zone === 'example.com' && n.serial === 2024010199));
    const soa = await udpQuery(at, 'example.com', 'SOA');
    assert.equal((rdataOf(soa.packet.answers![0]) as dnsPacket.SoaData).serial, 2024010199, 'the secondary that follows up sees the new serial');
  });
});

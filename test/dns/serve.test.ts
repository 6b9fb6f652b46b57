// Black-box: the DNS server inside the real `keel serve`, driven over UDP and TCP like a client would:
// the nameserver domain, REFUSED, FORMERR, the start-up line and the options. Zones filled through
// the API are in api-to-dns.test.ts; the answer rules in detail in answer and server tests.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { createStorage, runKeel, startServer, type RunningServer, type Storage } from '../helpers/server.js';
import { makeQuery, rcodeOf, rdataOf, tcpQuery, udpExchange, udpQuery } from '../helpers/dns-client.js';

describe('keel serve: DNS', () => {
  let storage: Storage;
  let server: RunningServer;

  before(async () => {
    storage = await createStorage('sqlite');
    server = await startServer(storage, ['--nameserver-domain', 'NS.Keel.Test.', '--nameserver-addresses', '127.0.0.5,::1']);
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('prints the DNS address in the listening line and answers for ns1..ns4 over UDP and TCP', async () => {
    assert.equal(server.dns.address, '127.0.0.1');
    assert.ok(server.dns.port > 0);
    const ns1 = await udpQuery(server.dns, 'ns1.ns.keel.test', 'A');
    assert.ok(ns1.packet.flag_aa);
    assert.deepEqual(ns1.packet.answers!.map(rdataOf), ['127.0.0.5']);
    const ns2 = await tcpQuery(server.dns, 'NS2.ns.keel.test', 'AAAA');
    assert.deepEqual(ns2.answers!.map(rdataOf), ['::1']);
    assert.equal(ns2.answers![0].name, 'NS2.ns.keel.test');
    assert.deepEqual((await udpQuery(server.dns, 'ns3.ns.keel.test', 'A')).packet.answers!.map(rdataOf), ['127.0.0.5'], 'the list repeats');
    const soa = await udpQuery(server.dns, 'ns.keel.test', 'SOA');
    assert.equal((rdataOf(soa.packet.answers![0]) as dnsPacket.SoaData).mname, 'ns1.ns.keel.test');
    const ns = await udpQuery(server.dns, 'ns.keel.test', 'NS');
    assert.deepEqual(ns.packet.answers!.map(rdataOf), ['ns1.ns.keel.test', 'ns2.ns.keel.test', 'ns3.ns.keel.test', 'ns4.ns.keel.test']);
  });

  it('refuses other names, answers FORMERR to a broken question, and ignores responses', async () => {
    const r = await udpQuery(server.dns, 'www.example.com', 'A');
    assert.equal(rcodeOf(r.packet), 5);
    const broken = makeQuery('www.example.com', 'A', { id: 777, edns: false }).subarray(0, 18);
    const formerr = await udpExchange(server.dns, broken);
    assert.ok(formerr);
    assert.equal(formerr.readUInt16BE(0), 777);
    assert.equal(formerr.readUInt16BE(2) & 0x800f, 0x8001);
    const response = dnsPacket.encode({ type: 'response', id: 778, questions: [{ name: 'ns1.ns.keel.test', type: 'A' }] });
    assert.equal(await udpExchange(server.dns, response, 300), null);
    assert.equal(rcodeOf((await udpQuery(server.dns, 'ns4.ns.keel.test', 'A')).packet), 0, 'still answering');
  });

  it('says in one line that the DNS port is taken, and exits non-zero', async () => {
    const other = await createStorage('sqlite');
    try {
      const r = await runKeel(['serve', '--infra-listen', '127.0.0.1:0', '--dns-listen', `127.0.0.1:${server.dns.port}`, '--data-dir', other.dataDir], { KEEL_LOG_LEVEL: 'error' });
      assert.notEqual(r.code, 0);
      assert.equal(r.stderr.trim(), `keel: cannot listen on 127.0.0.1:${server.dns.port} for dns (UDP and TCP): address already in use`);
    } finally {
      await other.dispose();
    }
  });

  it('rejects a bad DNS option, from a flag or a variable, with one clear line', async () => {
    // The validation of each option is unit-tested in test/config; this checks the command's output.
    const flag = await runKeel(['serve', '--nameserver-addresses', '127.0.0.1,banana']);
    assert.equal(flag.code, 2);
    assert.equal(flag.stderr, 'keel: --nameserver-addresses must be 1 to 4 comma-separated IPv4 or IPv6 addresses (ns1..ns4), got "127.0.0.1,banana"\n');
    const env = await runKeel(['serve'], { KEEL_DNS_SECONDARIES: 'nope' });
    assert.equal(env.code, 2);
    assert.equal(env.stderr, 'keel: --dns-secondaries must be comma-separated IP, IP:PORT or [IPv6]:PORT entries, got "nope"\n');
  });
});

// Fuzzing: random and mutated messages, first straight into the responder (no reply may throw, and
// every reply must decode and match the query's id), then over real UDP and TCP sockets; afterwards
// the server must still answer correctly. The seed is printed so a failure can be replayed.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { Authority } from '../../src/dns/answer.js';
import { transferMessages } from '../../src/dns/axfr.js';
import { Responder } from '../../src/dns/respond.js';
import { startDnsServer, type DnsServer } from '../../src/dns/server.js';
import { ZoneCatalog } from '../../src/zones/zone.js';
import type { Logger } from '../../src/platform/log.js';
import { makeQuery, rcodeOf, rdataOf, tcpQuery, udpQuery, type Addr } from '../helpers/dns-client.js';
import { exampleZone, NS_ADDRESSES, NS_DOMAIN, orgZone } from './fixtures.js';
import { prng as rng } from '../helpers/prng.js';

const SEED = Number(process.env.KEEL_FUZZ_SEED ?? Date.now() % 1_000_000);
console.log(`# dns fuzz seed ${SEED} (set KEEL_FUZZ_SEED to replay)`);

const NAMES = ['www.example.com', 'example.com', 'big.example.com', 'a.b.sub.example.com', 'x.cn.example.com', 'loop1.example.com', `ns1.${NS_DOMAIN}`, 'nope.example.net', ''];
const TYPES: dnsPacket.RecordType[] = ['A', 'AAAA', 'MX', 'TXT', 'NS', 'SOA', 'CNAME', 'SRV', 'CAA', 'PTR', 'AXFR', 'IXFR', 'OPT', 'NULL'];

function fuzzCase(rand: () => number): Buffer {
  const int = (n: number) => Math.floor(rand() * n);
  const kind = int(6);
  if (kind === 0) return Buffer.from(Array.from({ length: int(600) }, () => int(256)));
  const base = makeQuery(NAMES[int(NAMES.length)] || 'example.com', TYPES[int(TYPES.length)], { edns: rand() < 0.5 ? false : int(5000), do: rand() < 0.3 });
  const b = Buffer.from(base);
  switch (kind) {
    case 1: // bit flips
      for (let i = 0, n = 1 + int(6); i < n; i++) b[int(b.length)] ^= 1 << int(8);
      return b;
    case 2: // truncation
      return b.subarray(0, int(b.length));
    case 3: // counts rewritten: sections that are not there, or too many
      for (let i = 4; i < 12; i += 2) if (rand() < 0.5) b.writeUInt16BE(int(rand() < 0.5 ? 4 : 65536), i);
      return b;
    case 4: {
      // name bytes replaced: bad label lengths, pointers (to themselves, forwards, loops)
      const at = 12 + int(Math.max(1, b.length - 12));
      const v = [0xc0, 0xc0 | int(64), 63, 64, 255, 0][int(6)];
      b[at] = v;
      if (at + 1 < b.length) b[at + 1] = int(256);
      return b;
    }
    default: {
      // random bytes inserted or appended
      const at = int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), Buffer.from(Array.from({ length: 1 + int(40) }, () => int(256))), b.subarray(at)]);
    }
  }
}

function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    if (level === 'error') errors.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  };
  return { errors, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

function catalog(): ZoneCatalog {
  const c = new ZoneCatalog();
  c.put(exampleZone());
  c.put(orgZone());
  return c;
}

describe('dns fuzz', () => {
  let server: DnsServer;
  let at: Addr;
  const log = recordingLogger();

  before(async () => {
    server = await startDnsServer({
      catalog: catalog(),
      listen: { host: '127.0.0.1', port: 0 },
      nameserverDomain: NS_DOMAIN,
      nameserverAddresses: NS_ADDRESSES,
      secondaries: [{ host: '127.0.0.1', port: 9 }],
      log,
      tcp: { idleTimeoutMs: 500, messageTimeoutMs: 500 },
      notifyAttempts: 1,
    });
    at = { address: '127.0.0.1', port: server.udpAddress.port };
  });
  after(async () => server?.close());

  it('never throws on 30,000 random and mutated messages, and every reply is well-formed', () => {
    const rand = rng(SEED);
    const responder = new Responder({ authority: new Authority(catalog(), { domain: NS_DOMAIN, addresses: NS_ADDRESSES }), transferAllowed: () => true });
    let replies = 0;
    for (let i = 0; i < 30_000; i++) {
      const msg = fuzzCase(rand);
      const tcp = rand() < 0.3;
      let out: Buffer | null;
      try {
        if (tcp) {
          const r = responder.tcp(msg, '127.0.0.1');
          // A transfer is a series of messages: check the first (and make them all).
          out = r && 'message' in r ? r.message : r ? [...transferMessages(r.transfer.query, r.transfer.raw, r.transfer.zone)][0] : null;
        } else out = responder.udp(msg, '127.0.0.1');
      } catch (err) {
        assert.fail(`case ${i} (${msg.toString('hex')}) threw: ${(err as Error).stack}`);
      }
      if (!out) {
        // Silence is only for what cannot be answered: no full header, or a response.
        assert.ok(msg.length < 12 || (msg[2] & 0x80) !== 0, `case ${i} (${msg.toString('hex')}) got no reply`);
        continue;
      }
      replies++;
      let p: dnsPacket.DecodedPacket;
      try {
        p = dnsPacket.decode(out);
      } catch (err) {
        assert.fail(`case ${i} (${msg.toString('hex')}): reply does not decode: ${(err as Error).message}`);
      }
      assert.equal(p.id, msg.readUInt16BE(0));
      assert.equal(p.flag_qr, true);
      if (!tcp) assert.ok(out.length <= 1232, `case ${i}: UDP reply of ${out.length} bytes`);
    }
    assert.ok(replies > 10_000, `${replies} replies`);
  });

  it('survives thousands of hostile UDP packets and TCP streams, then still answers correctly', async () => {
    const rand = rng(SEED + 1);
    const sender = dgram.createSocket('udp4');
    sender.on('message', () => {});
    await new Promise<void>((r) => sender.bind(0, '127.0.0.1', () => r()));
    for (let i = 0; i < 4000; i++) {
      sender.send(fuzzCase(rand), at.port, at.address);
      if (i % 200 === 199) await new Promise((r) => setTimeout(r, 5)); // a burst, not a flood the kernel drops
    }
    sender.close();

    const streams: Promise<void>[] = [];
    for (let c = 0; c < 150; c++) {
      const chunks: Buffer[] = [];
      for (let i = 0, n = 1 + Math.floor(rand() * 6); i < n; i++) {
        const msg = fuzzCase(rand);
        const head = Buffer.alloc(2);
        // Mostly honest lengths, sometimes lies (longer, shorter, huge).
        head.writeUInt16BE(rand() < 0.7 ? msg.length : Math.floor(rand() * 65536));
        chunks.push(head, msg);
      }
      const data = Buffer.concat(chunks);
      streams.push(
        new Promise((resolve) => {
          const s = net.connect(at.port, at.address, () => {
            // Sometimes in pieces, sometimes cut off in the middle.
            const cut = rand() < 0.3 ? Math.floor(rand() * data.length) : data.length;
            s.write(data.subarray(0, cut));
            if (rand() < 0.5) s.end();
            else setTimeout(() => s.destroy(), 20);
          });
          s.on('data', () => {});
          s.on('error', () => resolve());
          s.on('close', () => resolve());
        }),
      );
    }
    await Promise.all(streams);

    const u = await udpQuery(at, 'www.example.com', 'A');
    assert.deepEqual(u.packet.answers!.map(rdataOf).sort(), ['192.0.2.10', '192.0.2.11']);
    const t = await tcpQuery(at, 'example.org', 'SOA');
    assert.equal(rcodeOf(t), 0);
    assert.equal((rdataOf(t.answers![0]) as dnsPacket.SoaData).serial, 7);
    const nx = await udpQuery(at, 'nothing.deep.ent.example.com', 'A');
    assert.equal(rcodeOf(nx.packet), 3);
    assert.deepEqual(log.errors, [], 'no query failed inside the server');
  });
});

// Unit tests of the answer logic: a catalog filled here, queries encoded with dns-packet and passed to
// the responder without sockets, replies decoded with dns-packet.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { Authority } from '../../src/dns/answer.js';
import { Responder } from '../../src/dns/respond.js';
import { ZoneCatalog } from '../../src/zones/zone.js';
import { makeQuery, rcodeOf, type QueryOptions, type QueryType } from '../helpers/dns-client.js';
import { exampleZone, NS_ADDRESSES, NS_DOMAIN, orgZone } from './fixtures.js';

const NOERROR = 0,
  FORMERR = 1,
  NXDOMAIN = 3,
  NOTIMP = 4,
  REFUSED = 5,
  NOTAUTH = 9;

let catalog: ZoneCatalog;
let responder: Responder;

function setup(secondaries: string[] = []): void {
  catalog = new ZoneCatalog();
  catalog.put(exampleZone());
  catalog.put(orgZone());
  const authority = new Authority(catalog, { domain: NS_DOMAIN, addresses: NS_ADDRESSES });
  responder = new Responder({ authority, transferAllowed: (a) => secondaries.includes(a) });
}

function ask(name: string, type: QueryType, o: QueryOptions & { tcp?: boolean } = {}): dnsPacket.DecodedPacket & { size: number } {
  const msg = makeQuery(name, type, o);
  const raw = o.tcp ? (responder.tcp(msg, '127.0.0.1') as { message: Buffer }).message : responder.udp(msg, '127.0.0.1');
  assert.ok(raw, `a reply to ${name} ${type}`);
  return Object.assign(dnsPacket.decode(raw), { size: raw.length });
}

function data(rrs: dnsPacket.Answer[] | undefined, type?: string): unknown[] {
  return (rrs ?? []).filter((r) => !type || r.type === type).map((r) => ('data' in r ? r.data : undefined));
}

function names(rrs: dnsPacket.Answer[] | undefined): string[] {
  return (rrs ?? []).map((r) => `${r.name} ${r.type}`);
}

describe('dns answers', () => {
  beforeEach(() => setup());

  it('answers A, AAAA, MX, TXT, CAA, SRV and PTR authoritatively', () => {
    const a = ask('www.example.com', 'A');
    assert.equal(rcodeOf(a), NOERROR);
    assert.ok(a.flag_aa && a.flag_qr && !a.flag_tc);
    assert.deepEqual(data(a.answers).sort(), ['192.0.2.10', '192.0.2.11']);
    assert.deepEqual(
      a.answers!.map((r) => (r as { ttl: number }).ttl),
      [300, 300],
      'one TTL per RRset: the lowest',
    );
    assert.deepEqual(data(ask('www.example.com', 'AAAA').answers), ['2001:db8::10']);
    assert.deepEqual(data(ask('example.com', 'MX').answers), [
      { preference: 10, exchange: 'mail.example.com' },
      { preference: 20, exchange: 'mail2.example.com' },
    ]);
    assert.deepEqual(data(ask('example.com', 'TXT').answers), [[Buffer.from('v=spf1 -all')]]);
    const caa = data(ask('example.com', 'CAA').answers)[0] as dnsPacket.CaaData;
    assert.equal(caa.tag, 'issue');
    assert.equal(caa.value, 'letsencrypt.org');
    assert.deepEqual(data(ask('_sip._tcp.example.com', 'SRV').answers), [{ priority: 10, weight: 5, port: 5060, target: 'sip.example.com' }]);
    assert.deepEqual(data(ask('1.2.0.192.in-addr.example.com', 'PTR').answers), ['www.example.com']);
  });

  it('makes the apex SOA and NS from the configuration, ignoring NS records given for the apex', () => {
    const soa = ask('example.com', 'SOA');
    assert.ok(soa.flag_aa);
    const s = data(soa.answers)[0] as dnsPacket.SoaData;
    assert.equal(s.mname, `ns1.${NS_DOMAIN}`);
    assert.equal(s.rname, 'hostmaster.example.com');
    assert.equal(s.serial, 2024010101);
    assert.ok(s.refresh! > 0 && s.retry! > 0 && s.expire! > s.refresh! && s.minimum! > 0);
    const ns = ask('example.com', 'NS');
    assert.deepEqual(
      data(ns.answers),
      [1, 2, 3, 4].map((i) => `ns${i}.${NS_DOMAIN}`),
    );
    assert.deepEqual(
      names(ns.additionals).filter((n) => !n.endsWith('OPT')),
      [`ns1.${NS_DOMAIN} A`, `ns2.${NS_DOMAIN} A`, `ns3.${NS_DOMAIN} AAAA`, `ns4.${NS_DOMAIN} A`],
    );
  });

  it('answers for the nameserver domain itself though no zone of that name is hosted', () => {
    assert.deepEqual(data(ask(`ns2.${NS_DOMAIN}`, 'A').answers), ['127.0.0.2']);
    assert.deepEqual(data(ask(`ns3.${NS_DOMAIN}`, 'AAAA').answers), ['::1']);
    const nodata = ask(`ns3.${NS_DOMAIN}`, 'A');
    assert.equal(rcodeOf(nodata), NOERROR);
    assert.equal(nodata.answers!.length, 0);
    assert.equal(nodata.authorities![0].type, 'SOA');
    const soa = ask(NS_DOMAIN, 'SOA');
    assert.ok(soa.flag_aa);
    assert.equal((data(soa.answers)[0] as dnsPacket.SoaData).rname, `hostmaster.${NS_DOMAIN}`);
    assert.equal(rcodeOf(ask(`ns5.${NS_DOMAIN}`, 'A')), NXDOMAIN);
  });

  it('tells NXDOMAIN from NODATA, with the SOA in the authority section at the negative TTL', () => {
    const nx = ask('nothing.deep.ent.example.com', 'A');
    assert.equal(rcodeOf(nx), NXDOMAIN);
    assert.ok(nx.flag_aa);
    assert.equal(nx.answers!.length, 0);
    assert.equal(nx.authorities!.length, 1);
    const soa = nx.authorities![0] as dnsPacket.SoaAnswer;
    assert.equal(soa.type, 'SOA');
    assert.equal(soa.name, 'example.com');
    assert.equal(soa.ttl, Math.min(3600, soa.data.minimum!), 'RFC 2308: min(SOA TTL, minimum)');

    const nodata = ask('www.example.com', 'MX');
    assert.equal(rcodeOf(nodata), NOERROR);
    assert.equal(nodata.answers!.length, 0);
    assert.equal(nodata.authorities![0].type, 'SOA');

    const ent = ask('ent.example.com', 'A');
    assert.equal(rcodeOf(ent), NOERROR, 'an empty non-terminal exists');
    assert.equal(ent.answers!.length, 0);
    assert.equal(ent.authorities![0].type, 'SOA');
  });

  it('matches wildcards only for names that do not exist (RFC 4592)', () => {
    const w = ask('Random.Example.COM', 'A');
    assert.equal(rcodeOf(w), NOERROR);
    assert.deepEqual(names(w.answers), ['Random.Example.COM A'], 'the owner is the question name, in its case');
    assert.deepEqual(data(w.answers), ['192.0.2.99']);
    assert.equal((w.answers![0] as { ttl: number }).ttl, 120);
    assert.deepEqual(data(ask('a.b.c.example.com', 'TXT').answers), [[Buffer.from('wild')]], 'several labels below the closest encloser');
    assert.equal(ask('random.example.com', 'AAAA').answers!.length, 0, 'NODATA at a wildcard match');
    assert.equal(rcodeOf(ask('random.example.com', 'AAAA')), NOERROR);
    // www exists: no wildcard for its missing types.
    assert.equal(ask('www.example.com', 'TXT').answers!.length, 0);
    // "ent" exists as an empty non-terminal, so *.example.com does not apply to it, nor below "ent".
    assert.equal(ask('ent.example.com', 'A').answers!.length, 0);
    assert.equal(rcodeOf(ask('x.ent.example.com', 'A')), NXDOMAIN, 'closest encloser is ent, which has no wildcard');
    // A wildcard CNAME is followed.
    const c = ask('foo.cn.example.com', 'A');
    assert.deepEqual(names(c.answers), ['foo.cn.example.com CNAME', 'www.example.com A', 'www.example.com A']);
  });

  it('follows CNAME chains inside the zone and across hosted zones', () => {
    const chain = ask('chain.example.com', 'A');
    assert.ok(chain.flag_aa);
    assert.deepEqual(names(chain.answers), ['chain.example.com CNAME', 'alias.example.com CNAME', 'www.example.com A', 'www.example.com A']);
    assert.deepEqual(data(ask('across.example.com', 'A').answers), ['host.example.org', '198.51.100.7']);
    assert.deepEqual(names(ask('alias.example.com', 'CNAME').answers), ['alias.example.com CNAME'], 'a CNAME query gets the CNAME only');
    const out = ask('outside.example.com', 'A');
    assert.equal(rcodeOf(out), NOERROR);
    assert.deepEqual(data(out.answers), ['somewhere.invalid'], 'the chain stops where our data stops');
    const dangling = ask('dangling.example.com', 'A');
    assert.equal(rcodeOf(dangling), NXDOMAIN, 'RFC 6604: the rcode is for the last name of the chain');
    assert.deepEqual(names(dangling.answers), ['dangling.example.com CNAME']);
    assert.equal(dangling.authorities![0].type, 'SOA');
    const loop = ask('loop1.example.com', 'A');
    assert.equal(rcodeOf(loop), NOERROR);
    assert.deepEqual(names(loop.answers), ['loop1.example.com CNAME', 'loop2.example.com CNAME'], 'a loop ends');
  });

  it('refers below a zone cut, without AA, with glue from inside the zone only', () => {
    for (const q of ['sub.example.com', 'www.sub.example.com', 'ns1.sub.example.com']) {
      const r = ask(q, 'A');
      assert.equal(rcodeOf(r), NOERROR, q);
      assert.equal(r.flag_aa, false, `${q}: referrals are not authoritative`);
      assert.equal(r.answers!.length, 0);
      assert.deepEqual(data(r.authorities, 'NS').sort(), ['ns.elsewhere.net', 'ns1.sub.example.com']);
      assert.deepEqual(
        names(r.additionals).filter((n) => !n.endsWith('OPT')),
        ['ns1.sub.example.com A', 'ns1.sub.example.com AAAA'],
      );
    }
  });

  it('refuses names outside every hosted zone, without AA', () => {
    const r = ask('www.example.net', 'A');
    assert.equal(rcodeOf(r), REFUSED);
    assert.equal(r.flag_aa, false);
    assert.equal(r.answers!.length, 0);
    assert.equal(rcodeOf(ask('com', 'NS')), REFUSED);
    assert.equal(rcodeOf(ask('example.com', 'A', { class: 'CH' })), REFUSED, 'only class IN is served');
  });

  it('splits TXT strings into 255-byte character-strings', () => {
    const r = ask('long.example.com', 'TXT');
    const strings = data(r.answers)[0] as Buffer[];
    assert.deepEqual(
      strings.map((s) => s.length),
      [255, 45, 5],
    );
    assert.equal(Buffer.concat(strings.slice(0, 2)).toString(), 'a'.repeat(300));
  });

  it('echoes the question as asked and compresses names', () => {
    const q = makeQuery('WWW.eXample.com', 'A', { id: 4242 });
    const raw = responder.udp(q, '127.0.0.1')!;
    assert.equal(raw.readUInt16BE(0), 4242);
    assert.ok(raw.includes(Buffer.from('\x03WWW\x07eXample\x03com\x00', 'latin1')));
    const ns = ask('example.com', 'NS');
    const uncompressed = dnsPacket.encodingLength({ ...ns, type: 'response' });
    assert.ok(ns.size < uncompressed - 40, `compressed ${ns.size} < uncompressed ${uncompressed}`);
  });

  it('patches id, RD and the name case into cached replies, and drops the cache when a zone changes', () => {
    const first = dnsPacket.decode(responder.udp(makeQuery('www.example.com', 'A', { id: 1, flags: dnsPacket.RECURSION_DESIRED }), '127.0.0.1')!);
    assert.equal(first.flag_rd, true);
    const second = dnsPacket.decode(responder.udp(makeQuery('WWW.EXAMPLE.COM', 'A', { id: 2 }), '127.0.0.1')!);
    assert.equal(second.id, 2);
    assert.equal(second.flag_rd, false);
    assert.equal(second.questions![0].name, 'WWW.EXAMPLE.COM');
    assert.equal(second.answers![0].name, 'WWW.EXAMPLE.COM');
    const zone = exampleZone(2024010102);
    zone.records = zone.records.filter((r) => r.name !== 'www.example.com').concat({ name: 'www.example.com', type: 'A', ttl: 300, data: '203.0.113.1' });
    catalog.put(zone);
    assert.deepEqual(data(ask('www.example.com', 'A').answers), ['203.0.113.1']);
    assert.equal((data(ask('example.com', 'SOA').answers)[0] as dnsPacket.SoaData).serial, 2024010102);
    catalog.remove('example.org');
    assert.equal(rcodeOf(ask('host.example.org', 'A')), REFUSED);
  });

  it('answers ANY with one RRset (RFC 8482)', () => {
    const r = ask('www.example.com', 'ANY');
    assert.equal(rcodeOf(r), NOERROR);
    assert.ok(r.answers!.length >= 1);
    assert.equal(new Set(r.answers!.map((a) => a.type)).size, 1);
    assert.equal(rcodeOf(ask('nothing.deep.ent.example.com', 'ANY')), NXDOMAIN);
  });

  it('handles EDNS: OPT only when asked, payload size honoured, TC when the answer does not fit', () => {
    assert.equal(ask('www.example.com', 'A', { edns: false }).additionals!.length, 0);
    const withOpt = ask('www.example.com', 'A', { do: true });
    const opt = withOpt.additionals!.find((a) => a.type === 'OPT') as dnsPacket.OptAnswer;
    assert.ok(opt);
    assert.equal(opt.udpPayloadSize, 1232);
    assert.equal(opt.flag_do, true, 'DO is echoed');
    // big.example.com's TXT is ~2.5 KB: too big for 512, for 1232 and for a claimed 4096 (capped at 1232).
    for (const o of [{ edns: false as const }, { edns: 1232 }, { edns: 4096 }, { edns: 100 }]) {
      const r = ask('big.example.com', 'TXT', o);
      assert.ok(r.flag_tc, `TC with ${JSON.stringify(o)}`);
      assert.equal(r.answers!.length, 0);
      assert.ok(r.size <= 1232);
      assert.equal(r.questions![0].name, 'big.example.com');
    }
    const tcp = ask('big.example.com', 'TXT', { tcp: true });
    assert.equal(tcp.flag_tc, false);
    assert.equal((data(tcp.answers)[0] as Buffer[]).length, 12);
    // The 12-line MX+TXT apex fits in 512 without EDNS: no TC.
    assert.equal(ask('example.com', 'MX', { edns: false }).flag_tc, false);
  });

  it('answers BADVERS to an EDNS version it does not know', () => {
    const msg = dnsPacket.encode({
      type: 'query',
      id: 9,
      questions: [{ name: 'example.com', type: 'A' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 1, flags: 0, flag_do: false, options: [] }],
    });
    const r = dnsPacket.decode(responder.udp(msg, '127.0.0.1')!);
    const opt = r.additionals!.find((a) => a.type === 'OPT') as dnsPacket.OptAnswer;
    assert.equal(opt.extendedRcode, 1, 'BADVERS = 16 = extended 1, rcode 0');
    assert.equal(rcodeOf(r), 0);
  });

  it('answers NOTIMP to other opcodes, FORMERR to bad questions, nothing to responses or headerless bytes', () => {
    const notify = makeQuery('example.com', 'SOA', { flags: 4 << 11 });
    const r = dnsPacket.decode(responder.udp(notify, '127.0.0.1')!);
    assert.equal(rcodeOf(r), NOTIMP);
    assert.equal(r.flag_qr, true);
    assert.equal((r.flags! >> 11) & 0xf, 4, 'opcode is echoed');

    const twoQuestions = dnsPacket.encode({
      type: 'query',
      id: 5,
      questions: [
        { name: 'a.example.com', type: 'A' },
        { name: 'b.example.com', type: 'A' },
      ],
    });
    assert.equal(rcodeOf(dnsPacket.decode(responder.udp(twoQuestions, '127.0.0.1')!)), FORMERR);
    const cut = makeQuery('www.example.com', 'A').subarray(0, 20);
    const formerr = dnsPacket.decode(responder.udp(cut, '127.0.0.1')!);
    assert.equal(rcodeOf(formerr), FORMERR);
    assert.equal(formerr.id, cut.readUInt16BE(0));
    assert.equal(rcodeOf(ask('example.com', 'OPT')), FORMERR);

    const response = dnsPacket.encode({ type: 'response', id: 6, questions: [{ name: 'example.com', type: 'A' }] });
    assert.equal(responder.udp(response, '127.0.0.1'), null, 'never answer a response');
    assert.equal(responder.udp(Buffer.from([1, 2, 3]), '127.0.0.1'), null);
  });

  it('allows transfers to secondaries only: REFUSED to others, NOTAUTH below the apex, SOA for IXFR over UDP', () => {
    assert.equal(rcodeOf(ask('example.com', 'AXFR', { tcp: true })), REFUSED);
    setup(['127.0.0.1']);
    assert.equal(rcodeOf(ask('www.example.com', 'AXFR', { tcp: true })), NOTAUTH);
    assert.equal(rcodeOf(ask('example.com', 'AXFR')), NOTIMP, 'AXFR needs TCP');
    const ixfr = ask('example.com', 'IXFR');
    assert.deepEqual(names(ixfr.answers), ['example.com SOA']);
    const t = responder.tcp(makeQuery('example.com', 'AXFR'), '127.0.0.1');
    assert.ok(t && 'transfer' in t);
  });
});

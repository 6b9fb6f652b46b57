// A real secondary (Knot DNS) transfers zones from the in-process Keel server, then must answer the
// same as Keel; after a change, Keel's NOTIFY must make it transfer the new version. Knot runs in the
// foreground on a free loopback port with a temporary configuration; the test skips without knotd.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import dnsPacket from 'dns-packet';
import { startDnsServer, type DnsServer } from '../../src/dns/server.js';
import { ZoneCatalog } from '../../src/zones/zone.js';
import { createLogger } from '../../src/platform/log.js';
import { udpQuery, type Addr, type QueryType } from '../helpers/dns-client.js';
import { bigZone, exampleZone, NS_ADDRESSES, NS_DOMAIN, orgZone } from './fixtures.js';
import { freePort } from '../helpers/ports.js';

const missing = spawnSync('knotd', ['--version']).error ? 'knotd is not installed (Debian package knot)' : undefined;
if (missing) console.log(`# skipping the secondary test: ${missing}`);

/** What a client sees, without the parts that legitimately differ between servers (id, OPT, order). */
function comparable(p: dnsPacket.DecodedPacket): unknown {
  const norm = (rrs: dnsPacket.Answer[] | undefined) =>
    (rrs ?? [])
      .filter((r) => r.type !== 'OPT')
      .map((r) => JSON.stringify({ ...r, name: r.name.toLowerCase() }))
      .sort();
  return { rcode: (p.flags ?? 0) & 0xf, aa: p.flag_aa, answers: norm(p.answers), authorities: norm(p.authorities) };
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a Knot secondary of Keel', { skip: missing }, () => {
  let catalog: ZoneCatalog;
  let keel: DnsServer;
  let knot: ChildProcess;
  let knotLog = '';
  let dir: string;
  let keelAt: Addr;
  let knotAt: Addr;

  const serialAt = async (at: Addr, zone: string) => {
    const r = await udpQuery(at, zone, 'SOA', { edns: false });
    const soa = r.packet.answers?.find((a) => a.type === 'SOA') as dnsPacket.SoaAnswer | undefined;
    return soa?.data.serial;
  };

  before(async () => {
    const knotPort = await freePort();
    knotAt = { address: '127.0.0.1', port: knotPort };
    catalog = new ZoneCatalog();
    for (const z of [exampleZone(), orgZone(), bigZone(2000)]) catalog.put(z);
    keel = await startDnsServer({
      catalog,
      listen: { host: '127.0.0.1', port: 0 },
      nameserverDomain: NS_DOMAIN,
      nameserverAddresses: NS_ADDRESSES,
      secondaries: [{ host: '127.0.0.1', port: knotPort }],
      log: createLogger('error'),
      notifyRetryMs: 500,
    });
    keelAt = { address: '127.0.0.1', port: keel.udpAddress.port };
    dir = mkdtempSync(path.join(os.tmpdir(), 'keel-knot-'));
    writeFileSync(
      path.join(dir, 'knot.conf'),
      `
server:
    rundir: "${dir}"
    listen: 127.0.0.1@${knotPort}
database:
    storage: "${dir}/db"
log:
  - target: stderr
    any: info
remote:
  - id: keel
    address: 127.0.0.1@${keelAt.port}
acl:
  - id: from_keel
    address: 127.0.0.1
    action: notify
template:
  - id: default
    storage: "${dir}"
    zonefile-sync: -1
    zonefile-load: none
    journal-content: none
    master: keel
    acl: from_keel
zone:
  - domain: example.com
  - domain: example.org
  - domain: big.test
`,
    );
    knot = spawn('knotd', ['-c', path.join(dir, 'knot.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    knot.stderr!.on('data', (c) => (knotLog += c));
    try {
      for (const zone of ['example.com', 'example.org', 'big.test']) {
        await until(`knot to load ${zone}`, 20_000, async () => ((await serialAt(knotAt, zone)) === catalog.get(zone)!.serial ? true : undefined));
      }
    } catch (err) {
      throw new Error(`${(err as Error).message}; knot said:\n${knotLog}`);
    }
  });

  after(async () => {
    if (knot && knot.exitCode === null) {
      knot.kill('SIGTERM');
      await new Promise((r) => knot.once('exit', r));
    }
    await keel?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers the same as Keel after the transfer', async () => {
    const questions: [string, QueryType][] = [
      ['www.example.com', 'A'],
      ['WWW.Example.com', 'AAAA'],
      ['example.com', 'MX'],
      ['example.com', 'TXT'],
      ['example.com', 'CAA'],
      ['example.com', 'SOA'],
      ['example.com', 'NS'],
      ['long.example.com', 'TXT'],
      ['_sip._tcp.example.com', 'SRV'],
      ['1.2.0.192.in-addr.example.com', 'PTR'],
      ['alias.example.com', 'A'],
      ['chain.example.com', 'AAAA'],
      ['random.example.com', 'A'],
      ['a.b.random.example.com', 'TXT'],
      ['foo.cn.example.com', 'A'],
      ['ent.example.com', 'A'],
      ['nothing.deep.ent.example.com', 'A'],
      ['www.example.com', 'MX'],
      ['host.example.org', 'A'],
      ['host-1999.big.test', 'A'],
      ['host-2000.big.test', 'A'],
    ];
    for (const [name, type] of questions) {
      const k = await udpQuery(keelAt, name, type);
      const s = await udpQuery(knotAt, name, type);
      assert.deepEqual(comparable(k.packet), comparable(s.packet), `${name} ${type}`);
    }
    // A referral: the same delegation and glue (Knot may order or add additional data differently).
    const k = await udpQuery(keelAt, 'www.sub.example.com', 'A');
    const s = await udpQuery(knotAt, 'www.sub.example.com', 'A');
    assert.equal(k.packet.flag_aa, s.packet.flag_aa);
    assert.deepEqual(comparable({ ...k.packet, additionals: [] }), comparable({ ...s.packet, additionals: [] }));
  });

  it('follows a change after Keel notifies it', async () => {
    const changed = exampleZone(2024010105);
    changed.records.push({ name: 'new.example.com', type: 'A', ttl: 300, data: '203.0.113.5' });
    catalog.put(changed);
    await until('knot to pick up serial 2024010105', 15_000, async () => ((await serialAt(knotAt, 'example.com')) === 2024010105 ? true : undefined));
    const r = await udpQuery(knotAt, 'new.example.com', 'A');
    assert.deepEqual(
      r.packet.answers!.map((a) => ('data' in a ? a.data : null)),
      ['203.0.113.5'],
    );
    assert.equal(keel.pendingNotifies(), 0, 'Knot acknowledged the NOTIFY');
  });
});

// dig (BIND's client) against the in-process server: a second, independent decoder of Keel's replies,
// including its TC-to-TCP retry and AXFR. Skips, saying so, when dig is not installed.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startDnsServer, type DnsServer } from '../../src/dns/server.js';
import { ZoneCatalog } from '../../src/zones/zone.js';
import { createLogger } from '../../src/platform/log.js';
import { exampleZone, NS_ADDRESSES, NS_DOMAIN, orgZone } from './fixtures.js';

const missing = spawnSync('dig', ['-v']).error ? 'dig is not installed (Debian package dnsutils)' : undefined;
if (missing) console.log(`# skipping dig tests: ${missing}`);

describe('dns seen by dig', { skip: missing }, () => {
  let server: DnsServer;

  function dig(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile('dig', ['@127.0.0.1', '-p', String(server.udpAddress.port), '+time=2', '+tries=1', ...args], { timeout: 10_000 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
  }

  before(async () => {
    const catalog = new ZoneCatalog();
    catalog.put(exampleZone());
    catalog.put(orgZone());
    server = await startDnsServer({
      catalog,
      listen: { host: '127.0.0.1', port: 0 },
      nameserverDomain: NS_DOMAIN,
      nameserverAddresses: NS_ADDRESSES,
      secondaries: [{ host: '127.0.0.2', port: 9 }],
      log: createLogger('error'),
      notifyAttempts: 1,
    });
  });
  after(async () => server?.close());

  it('answers what dig asks, with AA and no warnings', async () => {
    const out = await dig('+norec', 'www.example.com', 'A');
    assert.match(out, /status: NOERROR/);
    assert.match(out, /flags: qr aa;/);
    assert.doesNotMatch(out, /WARNING|malformed|FORMERR/i);
    assert.deepEqual((await dig('+short', 'www.example.com', 'A')).trim().split('\n').sort(), ['192.0.2.10', '192.0.2.11']);
    assert.equal((await dig('+short', 'example.com', 'MX')).trim(), '10 mail.example.com.\n20 mail2.example.com.');
    assert.equal((await dig('+short', 'chain.example.com', 'A')).trim().split('\n')[0], 'alias.example.com.');
    assert.equal((await dig('+short', '_sip._tcp.example.com', 'SRV')).trim(), '10 5 5060 sip.example.com.');
    assert.equal((await dig('+short', 'example.com', 'CAA')).trim(), '0 issue "letsencrypt.org"');
    assert.match(await dig('nothing.deep.ent.example.com', 'A'), /status: NXDOMAIN/);
    assert.match(await dig('www.example.net', 'A'), /status: REFUSED/);
  });

  it('retries over TCP after TC and gets the whole answer', async () => {
    const out = await dig('big.example.com', 'TXT');
    assert.match(out, /Truncated, retrying in TCP mode/);
    assert.match(out, /ANSWER: 1,/);
    assert.match(out, /\(TCP\)/);
  });

  it('transfers a zone from a secondary address, refused from others', async () => {
    const ok = await dig('-b', '127.0.0.2', 'example.com', 'AXFR');
    const records = ok.split('\n').filter((l) => l && !l.startsWith(';'));
    assert.match(records[0], /^example\.com\.\s+\d+\s+IN\s+SOA\s+ns1\.ns\.keel\.test\. hostmaster\.example\.com\. 2024010101 /);
    assert.match(records[records.length - 1], /\sSOA\s/);
    assert.ok(
      records.some((l) => /^long\.example\.com\.\s.*TXT\s+"a{255}" "a{45}" "short"$/.test(l)),
      'TXT split at 255 bytes',
    );
    assert.match(await dig('-b', '127.0.0.1', 'example.com', 'AXFR'), /Transfer failed/);
  });
});

// Black-box: which zones a customer may host. Two customers made by `keel admin create-customer`;
// the second cannot take the first's zone or one inside it, nor the nameserver domain (which would
// let it answer for ns1..ns4), a public suffix or a wide reverse zone, and such an attempt leaves
// nothing behind: the DNS server, asked over its real port, still names the configured addresses.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { startInfra } from '../helpers/server.js';
import { createCustomer, type TestCustomer } from '../helpers/infra-customers.js';
import { rcodeOf, rdataOf, tcpQuery, udpQuery, type Addr } from '../helpers/dns-client.js';
import type { Reply } from '../helpers/infra-client.js';

const NS_ADDRESSES = ['192.0.2.53', '192.0.2.54', '192.0.2.55', '192.0.2.56'];

function fault(r: Reply, field: string, why: RegExp): void {
  assert.equal(r.status, 200);
  assert.equal(r.body.code, 'FAULT', `expected a FAULT naming ${field}: ${r.text}`);
  assert.ok(r.body.error && field in r.body.error, `expected error.${field}: ${r.text}`);
  assert.match(r.body.error[field], why, r.text);
  assert.match(r.body.message, new RegExp(field), r.text);
}

await forEachEngine('dns zone ownership', (engine) => {
  let infra: Awaited<ReturnType<typeof startInfra>>;
  let b: TestCustomer;
  let dns: Addr;

  before(async () => {
    infra = await startInfra(engine, ['--nameserver-addresses', NS_ADDRESSES.join(',')]);
    b = await createCustomer(infra.storage, infra.server.infraUrl, 'bob');
    dns = infra.server.dns;
  });
  after(async () => infra?.stop());

  async function nameserverAddresses(): Promise<string[]> {
    const out = [];
    for (let i = 1; i <= 4; i++) {
      const u = await udpQuery(dns, `ns${i}.keel.localhost`, 'A');
      const t = await tcpQuery(dns, `ns${i}.keel.localhost`, 'A');
      assert.deepEqual(t.answers!.map(rdataOf), u.packet.answers!.map(rdataOf), 'UDP and TCP agree');
      out.push(...(u.packet.answers!.map(rdataOf) as string[]));
    }
    return out;
  }

  it('gives a second customer its own key through keel admin create-customer', async () => {
    assert.notEqual(b.customerId, infra.server.secrets!.customerId);
    assert.equal((await b.api.cmd('dns.domain.getall')).body.matches, 0);
    const login = await b.api.cmd('session.login', { username: 'bob', password: b.password, jwt: 1 }, null);
    assert.equal(login.body.code, 'OK', login.text);
  });

  it("refuses another customer's zone, the nameserver domain, public suffixes and wide reverse zones, and creates nothing", async () => {
    assert.deepEqual(await nameserverAddresses(), NS_ADDRESSES);
    const a = infra.api;
    const mine = (await a.cmd('dns.domain.create', { name: 'alice.example', records: [{ type: 'A', lookup: 'www', data: '192.0.2.7' }] })).body;
    assert.equal(mine.code, 'OK', JSON.stringify(mine));

    fault(await b.api.cmd('dns.domain.create', { name: 'alice.example' }), 'name', /already hosted/);
    fault(await b.api.cmd('dns.domain.create', { name: 'www.alice.example' }), 'name', /another customer/);
    // Hosting the nameserver domain, or a name inside it, would let this customer answer for ns1..ns4.
    const hijack = [{ type: 'A', lookup: 'ns1', data: '203.0.113.66' }];
    fault(await b.api.cmd('dns.domain.create', { name: 'keel.localhost', records: hijack }), 'name', /nameserver domain/);
    fault(await b.api.cmd('dns.domain.create', { name: 'KEEL.localhost.' }), 'name', /nameserver domain/);
    fault(await b.api.cmd('dns.domain.create', { name: 'ns1.keel.localhost', records: [{ type: 'A', lookup: '@', data: '203.0.113.66' }] }), 'name', /nameserver domain/);
    fault(await b.api.rest('POST', '/dns/domain', { name: 'ns2.keel.localhost' }), 'name', /nameserver domain/);
    fault(await a.cmd('dns.domain.create', { name: 'keel.localhost' }), 'name', /nameserver domain/);
    for (const suffix of ['co.uk', 'in-addr.arpa', 'ip6.arpa', 'github.io']) {
      fault(await b.api.cmd('dns.domain.create', { name: suffix }), 'name', /public suffix/);
    }
    fault(await b.api.cmd('dns.domain.create', { name: 'com' }), 'name', /two labels/);
    fault(await b.api.cmd('dns.domain.create', { name: '10.in-addr.arpa' }), 'name', /wider than a \/24/);
    fault(await b.api.cmd('dns.domain.create', { name: '0.10.in-addr.arpa' }), 'name', /wider than a \/24/);
    fault(await b.api.cmd('dns.domain.create', { name: '8.b.d.0.1.0.0.2.ip6.arpa' }), 'name', /wider than a \/48/);

    assert.equal((await b.api.cmd('dns.domain.getall')).body.matches, 0, 'nothing was created');
    assert.equal((await a.cmd('dns.domain.getall')).body.matches, 1);
    assert.deepEqual(await nameserverAddresses(), NS_ADDRESSES);
    const alice = await udpQuery(dns, 'www.alice.example', 'A');
    assert.deepEqual(alice.packet.answers!.map(rdataOf), ['192.0.2.7']);
    assert.equal(rcodeOf((await udpQuery(dns, 'co.uk', 'SOA')).packet), 5, 'co.uk is not served: REFUSED');

    // What may be hosted still is: a name registered under a suffix, a /24 reverse zone.
    for (const name of ['bob.co.uk', 'bob.github.io', '2.0.192.in-addr.arpa']) {
      const r = await b.api.cmd('dns.domain.create', { name });
      assert.equal(r.body.code, 'OK', r.text);
    }
  });
});

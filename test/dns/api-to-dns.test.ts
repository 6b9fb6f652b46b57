// Black-box, end to end: zones and records changed through the Infra API of a real `keel serve` are
// answered by its DNS server, over UDP and TCP, as soon as each API call returns.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type dnsPacket from 'dns-packet';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../helpers/server.js';
import { InfraClient } from '../helpers/infra-client.js';
import { rcodeOf, rdataOf, tcpQuery, udpQuery } from '../helpers/dns-client.js';

const NXDOMAIN = 3;

await forEachEngine('API changes answered by DNS (keel serve)', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let api: InfraClient;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage, ['--nameserver-domain', 'ns.keel.test']);
    api = new InfraClient(server.infraUrl, { basic: [server.secrets!.apiUuid, server.secrets!.apiSecret] });
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  const ok = (r: { body: Record<string, any>; text: string }) => {
    assert.equal(r.body.code, 'OK', r.text);
    return r.body;
  };
  const serialOf = async (zone: string) => (rdataOf((await udpQuery(server.dns, zone, 'SOA')).packet.answers![0]) as dnsPacket.SoaData).serial ?? 0;

  it('serves a new zone, each record change and a deletion at once, over UDP and TCP', async () => {
    const zone = ok(await api.cmd('dns.domain.create', { name: 'e2e.example' }));
    const zoneId = zone.data?.id ?? zone.id;
    assert.ok(zoneId, JSON.stringify(zone));
    const apex = await udpQuery(server.dns, 'e2e.example', 'NS');
    assert.ok(apex.packet.flag_aa);
    assert.deepEqual(apex.packet.answers!.map(rdataOf), ['ns1.ns.keel.test', 'ns2.ns.keel.test', 'ns3.ns.keel.test', 'ns4.ns.keel.test']);

    // acme.sh's flat form, then the answer right away.
    const created = ok(await api.cmd('dns.record.create', { name: 'e2e.example', type: 'A', lookup: 'www', data: '192.0.2.1', ttl: 300 }));
    const recordId = created.data[0].id;
    const udp = await udpQuery(server.dns, 'WWW.e2e.example', 'A');
    assert.ok(udp.packet.flag_aa);
    assert.equal(udp.packet.answers![0].name, 'WWW.e2e.example', "the question's case is echoed");
    assert.deepEqual(udp.packet.answers!.map(rdataOf), ['192.0.2.1']);
    assert.equal((udp.packet.answers![0] as { ttl?: number }).ttl, 300);
    assert.deepEqual((await tcpQuery(server.dns, 'www.e2e.example', 'A')).answers!.map(rdataOf), ['192.0.2.1']);

    const before = await serialOf('e2e.example');
    ok(await api.cmd('dns.record.update', { id: recordId, data: '192.0.2.2' }));
    assert.deepEqual((await udpQuery(server.dns, 'www.e2e.example', 'A')).packet.answers!.map(rdataOf), ['192.0.2.2']);
    assert.ok((await serialOf('e2e.example')) > before, 'the SOA serial grew');

    ok(await api.rest('POST', '/dns/records', { data: [{ domainId: zoneId, lookup: '_acme-challenge', type: 'TXT', data: 'token-1', ttl: 120 }] }));
    const txt = await tcpQuery(server.dns, '_acme-challenge.e2e.example', 'TXT');
    assert.deepEqual(
      txt.answers!.map((a) => (rdataOf(a) as Buffer[]).map(String)),
      [['token-1']],
    );

    ok(await api.cmd('dns.record.delete', { id: recordId }));
    const gone = await udpQuery(server.dns, 'www.e2e.example', 'A');
    assert.equal(rcodeOf(gone.packet), NXDOMAIN);
    assert.equal(gone.packet.authorities![0].type, 'SOA', 'a negative answer carries the SOA');

    ok(await api.cmd('dns.domain.delete', { id: zoneId }));
    const refused = await udpQuery(server.dns, 'e2e.example', 'SOA');
    assert.equal(rcodeOf(refused.packet), 5, 'a zone no longer hosted is REFUSED');
  });
});

// Black-box: dns.domain.* and dns.record.* through the real server, in both styles, driven the way
// acme.sh, both lego providers and the RackCorp Python client drive them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, startServer, type RunningServer, type Storage } from '../helpers/server.js';
import { InfraClient, send, type Reply } from '../helpers/infra-client.js';
import { createCustomer } from '../helpers/infra-customers.js';

function ok(r: Reply): Record<string, any> {
  assert.equal(r.status, 200);
  assert.equal(r.body.code, 'OK', r.text);
  return r.body;
}

function fault(r: Reply, field: string): void {
  assert.equal(r.status, 200);
  assert.equal(r.body.code, 'FAULT', `expected a FAULT naming ${field}: ${r.text}`);
  assert.ok(r.body.error && field in r.body.error, `expected error.${field}: ${r.text}`);
  assert.match(r.body.message, new RegExp(field.replace(/\./g, '\\.')), r.text);
}

const today = () => {
  const d = new Date();
  return (d.getUTCFullYear() * 10000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate()) * 100;
};

await forEachEngine('dns api', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let api: InfraClient;
  let basic: [string, string];
  let other: InfraClient;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    basic = [server.secrets!.apiUuid, server.secrets!.apiSecret];
    api = new InfraClient(server.infraUrl, { basic });
    other = (await createCustomer(storage, server.infraUrl, 'other')).api;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  async function zone(name: string): Promise<number> {
    return ok(await api.cmd('dns.domain.create', { name })).data.id;
  }
  async function domain(id: number): Promise<Record<string, any>> {
    return ok(await api.rest('GET', `/dns/domain/${id}`)).data;
  }

  describe('domains', () => {
    it('creates, gets, lists, updates and deletes zones in both styles', async () => {
      const created = ok(await api.cmd('dns.domain.create', { name: 'Alpha.Example.' }));
      assert.equal(created.data.name, 'alpha.example', 'the name is stored lower case without the trailing dot');
      assert.deepEqual(created.data.records, []);
      assert.ok(Number(created.data.serial) >= today(), `serial ${created.data.serial} is YYYYMMDDnn`);
      assert.equal(typeof created.data.serial, 'string', 'the Python client reads serial as a string');
      const id = created.data.id;
      assert.equal(typeof id, 'number');

      const rest = ok(await api.rest('POST', '/dns/domain', { name: 'beta.example' }));
      assert.equal(rest.data.name, 'beta.example');
      assert.equal(rest.id, undefined, 'REST answers carry the payload in data only');

      const cmdGet = ok(await api.cmd('dns.domain.get', { id }));
      assert.equal(cmdGet.id, id, 'command style puts the domain fields at the top level');
      assert.equal(cmdGet.name, 'alpha.example');
      assert.deepEqual(cmdGet.records, []);
      assert.equal(cmdGet.data.id, id);
      const byName = ok(await api.cmd('dns.domain.get', { name: 'alpha.example' }));
      assert.equal(byName.data.id, id);
      const restGet = ok(await api.rest('GET', `/dns/domain/${id}`));
      assert.equal(restGet.data.customerId, server.secrets!.customerId);
      assert.equal(restGet.data.customerid, server.secrets!.customerId);
      assert.equal(restGet.data.status, 'ACTIVE');

      const all = ok(await api.cmd('dns.domain.getall'));
      assert.ok(all.matches >= 2);
      assert.ok(Array.isArray(all.data));
      assert.ok(!Array.isArray(all.domains) && typeof all.domains === 'object', 'domains is a map keyed by id');
      assert.equal(all.domains[String(id)].name, 'alpha.example');
      const restAll = ok(await api.rest('GET', '/dns/domain'));
      assert.equal(restAll.domains, undefined);
      assert.equal(restAll.matches, restAll.data.length);
      const window = ok(await api.rest('GET', '/dns/domain?resWindow=1&resStart=1'));
      assert.equal(window.data.length, 1);
      assert.equal(window.matches, restAll.matches, 'matches is the total, whatever the window');

      const disabled = ok(await api.rest('PUT', `/dns/domain/${id}`, { status: 'DISABLED' }));
      assert.equal(disabled.data.status, 'DISABLED');
      assert.ok(Number(disabled.data.serial) > Number(created.data.serial));
      const touched = ok(await api.cmd('dns.domain.update', { id }));
      assert.equal(Number(touched.data.serial), Number(disabled.data.serial) + 1, 'an update without fields still bumps the serial');
      assert.equal(touched.data.status, 'DISABLED');

      ok(await api.rest('DELETE', `/dns/domain/${rest.data.id}`));
      ok(await api.cmd('dns.domain.delete', { id }));
      const gone = await api.cmd('dns.domain.get', { id });
      assert.equal(gone.body.code, 'ERROR');
      assert.match(gone.body.message, /Could not find domain/);
      // Hosted again, the zone's serial continues above the deleted one's (secondaries only take higher serials).
      const again = ok(await api.cmd('dns.domain.create', { name: 'alpha.example' }));
      assert.ok(Number(again.data.serial) > Number(touched.data.serial), `${again.data.serial} > ${touched.data.serial}`);
      ok(await api.cmd('dns.domain.delete', { name: 'alpha.example' }));
    });

    it('creates a zone with its first records, all or nothing', async () => {
      const bad = await api.cmd('dns.domain.create', {
        name: 'gamma.example',
        records: [
          { type: 'A', lookup: 'www', data: '192.0.2.1' },
          { type: 'A', lookup: 'x', data: '300.1.1.1' },
        ],
      });
      fault(bad, 'records.1.data');
      assert.equal(ok(await api.cmd('dns.domain.getall', { exactName: 'gamma.example' })).matches, 0, 'no zone was created');
      const good = ok(await api.cmd('dns.domain.create', { name: 'gamma.example', records: [{ type: 'A', lookup: 'www', data: '192.0.2.1' }] }));
      assert.equal(good.data.records.length, 1);
      assert.equal(good.data.records[0].lookup, 'www');
    });

    it('filters getall by name (a fully qualified name finds its zone) and exactName', async () => {
      const id = await zone('filter-test.example');
      await zone('sub.filter-test.example');
      const sub = ok(await api.cmd('dns.domain.getall', { name: 'filter-test' }));
      assert.deepEqual(sub.data.map((d: any) => d.name).sort(), ['filter-test.example', 'sub.filter-test.example']);
      const fqdn = ok(await api.cmd('dns.domain.getall', { name: '_acme-challenge.www.filter-test.example' }));
      assert.deepEqual(
        fqdn.data.map((d: any) => d.name),
        ['filter-test.example'],
      );
      const exact = ok(await api.cmd('dns.domain.getall', { exactName: 'filter-test.example' }));
      assert.equal(exact.matches, 1);
      assert.deepEqual(Object.keys(exact.domains), [String(id)]);
      assert.equal(ok(await api.cmd('dns.domain.getall', { exactName: 'www.filter-test.example' })).matches, 0);
    });

    it('refuses bad zone names and a zone already hosted', async () => {
      for (const name of ['localhost', 'bad_name.example', '-x.example', 'a..example', `${'a'.repeat(64)}.example`, `${'abcdefghi.'.repeat(26)}example`, '']) {
        fault(await api.cmd('dns.domain.create', { name }), 'name');
      }
      await zone('taken.example');
      fault(await api.cmd('dns.domain.create', { name: 'taken.example' }), 'name');
    });
  });

  describe('client flows', () => {
    it('acme.sh: getall by name and exactName, flat create, delete by match (raw compact JSON)', async () => {
      await zone('acme.example');
      const raw = (params: Record<string, unknown>) =>
        send(`${server.infraUrl}/api/rest/v2.4/json.php`, {
          rawBody: JSON.stringify({ APIUUID: basic[0], APISECRET: basic[1], ...params }),
          contentType: 'application/x-www-form-urlencoded',
        });
      const fqdn = '_acme-challenge.www.acme.example';
      assert.ok((await raw({ cmd: 'dns.domain.getall', name: fqdn })).text.includes('"code":"OK"'));
      // _get_root walks the suffixes until exactly one zone has that exact name.
      let found: string | undefined;
      const labels = fqdn.split('.');
      for (let i = 0; i < labels.length && !found; i++) {
        const h = labels.slice(i).join('.');
        const r = await raw({ cmd: 'dns.domain.getall', exactName: h });
        assert.ok(r.text.includes('"code":"OK"'), r.text);
        if (r.text.includes('"matches":1') && r.text.includes(`"name":"${h}"`)) found = h;
      }
      assert.equal(found, 'acme.example');
      const add = await raw({ cmd: 'dns.record.create', name: 'acme.example', type: 'TXT', lookup: '_acme-challenge.www', data: 'token-value-1', ttl: 300 });
      assert.ok(add.text.includes('"code":"OK"'), add.text);
      assert.equal(add.body.data[0].ttl, 300);
      const id = (await api.cmd('dns.domain.getall', { exactName: 'acme.example' })).body.data[0].id;
      assert.deepEqual(
        (await domain(id)).records.map((r: any) => [r.lookup, r.type, r.data]),
        [['_acme-challenge.www', 'TXT', 'token-value-1']],
      );
      const rm = await raw({ cmd: 'dns.record.delete', name: 'acme.example', type: 'TXT', lookup: '_acme-challenge.www', data: 'token-value-1' });
      assert.ok(rm.text.includes('"code":"OK"'), rm.text);
      assert.deepEqual((await domain(id)).records, []);
      const again = await raw({ cmd: 'dns.record.delete', name: 'acme.example', type: 'TXT', lookup: '_acme-challenge.www', data: 'token-value-1' });
      assert.equal(again.body.code, 'ERROR', 'nothing left to match');
    });

    it('lego (LEGO-J): getall map, get top-level fields, create with data {"0":...}, delete by id; two TXT at one lookup', async () => {
      await zone('lego-j.example');
      const lego = new InfraClient(server.infraUrl, { basic }, '/api/rest/v2.9');
      const all = ok(await lego.cmd('dns.domain.getall'));
      const entry = Object.values(all.domains as Record<string, any>).find((d) => d.name === 'lego-j.example');
      assert.ok(entry);
      const got = ok(await lego.cmd('dns.domain.get', { id: entry.id }));
      assert.equal(got.id, entry.id);
      assert.equal(got.name, 'lego-j.example');
      assert.deepEqual(got.records, []);
      const ids: number[] = [];
      for (const value of ['wildcard-token', 'bare-token']) {
        const r = ok(await lego.cmd('dns.record.create', { data: { 0: { id: 0, lookup: '_acme-challenge', type: 'TXT', data: value, ttl: 120, domainId: got.id } } }));
        assert.equal(typeof r.data[0].id, 'number');
        assert.equal(r.data[0].domainId, got.id);
        ids.push(r.data[0].id);
      }
      const both = ok(await lego.cmd('dns.domain.get', { id: entry.id }));
      assert.deepEqual(
        both.records.map((r: any) => [r.id, r.lookup, r.type, r.data, r.ttl, r.domainId]),
        [
          [ids[0], '_acme-challenge', 'TXT', 'wildcard-token', 120, entry.id],
          [ids[1], '_acme-challenge', 'TXT', 'bare-token', 120, entry.id],
        ],
      );
      for (const id of ids) ok(await lego.cmd('dns.record.delete', { id }));
      assert.deepEqual(ok(await lego.cmd('dns.domain.get', { id: entry.id })).records, []);
    });

    it('lego (LEGO-L): REST getall, POST /dns/records {"data":[...]}, DELETE /dns/records/{id}', async () => {
      await zone('lego-l.example');
      const lego = new InfraClient(server.infraUrl, { basic }, '/api/v2.8');
      const list = ok(await lego.rest('GET', '/dns/domain'));
      const d = list.data.find((x: any) => x.name === 'lego-l.example');
      const created = ok(await lego.rest('POST', '/dns/records', { data: [{ type: 'TXT', lookup: '_acme-challenge', domainid: d.id, data: 'lego-l-token', ttl: 120 }] }));
      const rec = created.data.find((r: any) => r.type === 'TXT' && r.data === 'lego-l-token');
      assert.ok(rec, JSON.stringify(created));
      assert.equal(rec.domainid, d.id);
      const del = ok(await lego.rest('DELETE', `/dns/records/${rec.id}`));
      assert.equal(del.message, 'Record deleted successfully');
      assert.equal((await lego.rest('GET', `/dns/records/${rec.id}`)).body.code, 'ERROR');
    });

    it('RackCorp Python client: REST reads, create by domainId/domainID/name, update keyed by record id, delete by id', async () => {
      await zone('py.example');
      const py = new InfraClient(server.infraUrl, { basic }, '/api/v2.8');
      const d = ok(await py.rest('GET', '/dns/domain')).data.find((x: any) => x.name === 'py.example');
      for (const key of ['id', 'name', 'customerid', 'stdname', 'serial', 'type', 'lastmodified', 'records']) assert.ok(key in d, `domain has ${key}`);
      const one = ok(await py.cmd('dns.record.create', { data: { 0: { type: 'TXT', lookup: '_acme-challenge.www', data: 'v1', domainid: d.id, domainId: d.id, domainID: d.id, ttl: 120 } } }));
      const two = ok(await py.cmd('dns.record.create', { data: { 0: { type: 'A', lookup: 'www', data: '192.0.2.10', domainID: String(d.id), ttl: 120 } } }));
      const three = ok(await py.cmd('dns.record.create', { name: 'py.example', data: { 0: { type: 'AAAA', lookup: 'www', data: '2001:DB8::10' } } }));
      assert.equal(three.data[0].data, '2001:db8::10');
      assert.equal(three.data[0].ttl, 3600, 'the default TTL');
      const rec = one.data[0];
      const fetched = ok(await py.rest('GET', `/dns/records/${rec.id}`)).data;
      assert.deepEqual([fetched.lookup, fetched.type, fetched.data, fetched.ttl, fetched.name], ['_acme-challenge.www', 'TXT', 'v1', 120, 'py.example']);
      const updated = ok(await py.cmd('dns.record.update', { data: { [rec.id]: { ...fetched, data: 'v2' } } }));
      assert.equal(updated.data[0].id, rec.id);
      assert.equal(updated.data[0].data, 'v2');
      const view = ok(await py.rest('GET', `/dns/domain/${d.id}`)).data;
      assert.deepEqual(
        view.records.map((r: any) => r.data),
        ['v2', '192.0.2.10', '2001:db8::10'],
      );
      for (const r of view.records) for (const k of ['lookup', 'type', 'data', 'id']) assert.ok(k in r);
      ok(await py.cmd('dns.record.delete', { id: rec.id }));
      ok(await py.cmd('dns.record.delete', { id: two.data[0].id }));
      ok(await py.cmd('dns.record.delete', { data: { [three.data[0].id]: {} } }));
      assert.deepEqual(ok(await py.rest('GET', `/dns/domain/${d.id}`)).data.records, []);
    });
  });

  describe('records', () => {
    it('stores every type with its parts, in both styles, and never shows SOA', async () => {
      const id = await zone('types.example');
      const created = ok(
        await api.cmd('dns.record.create', {
          domainId: id,
          data: [
            { type: 'A', lookup: '@', data: '192.0.2.1' },
            { type: 'AAAA', lookup: '', data: '2001:db8::1' },
            { type: 'MX', lookup: '', data: 'mail.types.example.', priority: 5 },
            { type: 'MX', lookup: 'zf', data: '20 mx2.types.example' },
            { type: 'TXT', lookup: '', data: 'v=spf1 -all' },
            { type: 'SRV', lookup: '_sip._tcp', data: 'sip.types.example', priority: 10, weight: 60, port: 5060 },
            { type: 'SRV', lookup: '_xmpp._tcp', data: '5 0 5222 xmpp.types.example' },
            { type: 'CAA', lookup: '', data: 'letsencrypt.org', caaflag: 0, caatag: 'issue' },
            { type: 'caa', lookup: '', data: '128 iodef "mailto:sec@types.example"' },
            { type: 'CNAME', lookup: 'www.types.example.', data: 'types.example' },
            { type: 'NS', lookup: 'delegated', data: 'ns1.elsewhere.example' },
            { type: 'PTR', lookup: '1', data: 'host.types.example' },
            { type: 'A', lookup: '*.wild', data: '192.0.2.2', ttl: '600' },
          ],
        }),
      );
      assert.equal(created.data.length, 13);
      const rows = (await domain(id)).records as any[];
      const by = (type: string, lookup: string) => rows.filter((r) => r.type === type && r.lookup === lookup);
      assert.equal(by('A', '')[0].data, '192.0.2.1');
      assert.deepEqual([by('MX', '')[0].data, by('MX', '')[0].priority], ['mail.types.example', 5]);
      assert.deepEqual([by('MX', 'zf')[0].data, by('MX', 'zf')[0].priority], ['mx2.types.example', 20]);
      assert.deepEqual([by('SRV', '_sip._tcp')[0].priority, by('SRV', '_sip._tcp')[0].weight, by('SRV', '_sip._tcp')[0].port], [10, 60, 5060]);
      assert.deepEqual([by('SRV', '_xmpp._tcp')[0].data, by('SRV', '_xmpp._tcp')[0].port, by('SRV', '_xmpp._tcp')[0].priority], ['xmpp.types.example', 5222, 5]);
      const caa = by('CAA', '');
      assert.deepEqual(
        caa.map((r) => [r.caaflag, r.caatag, r.data]),
        [
          [0, 'issue', 'letsencrypt.org'],
          [128, 'iodef', 'mailto:sec@types.example'],
        ],
      );
      assert.equal(by('CNAME', 'www').length, 1, 'a fully qualified lookup is made relative');
      assert.equal(by('A', '*.wild')[0].ttl, 600);
      assert.equal(by('TXT', '')[0].priority, undefined, 'priority only on MX and SRV');
      const known = new Set(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SRV', 'CAA', 'PTR']);
      for (const r of rows) assert.ok(known.has(r.type), `no ${r.type} in records`);
      assert.ok(!rows.some((r) => r.type === 'SOA'));
      for (const r of rows) {
        assert.equal(r.domainId, id);
        assert.equal(r.domainid, id);
        assert.equal(r.domainID, id);
      }
    });

    it('gets, lists with filters and updates records in both styles', async () => {
      const id = await zone('rw.example');
      const [a, t1, t2] = ok(
        await api.rest('POST', '/dns/records', {
          domainId: id,
          data: [
            { type: 'A', lookup: 'www', data: '192.0.2.1' },
            { type: 'TXT', lookup: 'www', data: 'one' },
            { type: 'TXT', lookup: 'other', data: 'two' },
          ],
        }),
      ).data;
      assert.equal(ok(await api.cmd('dns.record.get', { id: a.id })).record.data, '192.0.2.1');
      assert.equal(ok(await api.rest('GET', `/dns/records/${a.id}`)).data.lookup, 'www');
      const txt = ok(await api.cmd('dns.record.getall', { domainId: id, type: 'txt' }));
      assert.equal(txt.matches, 2);
      assert.deepEqual(
        txt.records.map((r: any) => r.id),
        [t1.id, t2.id],
      );
      const www = ok(await api.rest('GET', `/dns/records?name=rw.example&lookup=www.rw.example`));
      assert.deepEqual(
        www.data.map((r: any) => r.id),
        [a.id, t1.id],
      );
      const both = ok(await api.cmd('dns.record.getall', { domain: 'rw.example', lookup: 'www', type: 'TXT' }));
      assert.deepEqual(
        both.data.map((r: any) => r.id),
        [t1.id],
      );

      const put = ok(await api.rest('PUT', `/dns/records/${a.id}`, { data: '192.0.2.9', ttl: 120 }));
      assert.deepEqual([put.data[0].data, put.data[0].ttl, put.data[0].lookup], ['192.0.2.9', 120, 'www']);
      const flat = ok(await api.cmd('dns.record.update', { id: t1.id, lookup: 'renamed' }));
      assert.deepEqual([flat.data[0].lookup, flat.data[0].data], ['renamed', 'one']);
      const list = ok(
        await api.cmd('dns.record.update', {
          data: [
            { id: t2.id, data: 'two-b' },
            { id: a.id, type: 'AAAA', data: '2001:db8::9' },
          ],
        }),
      );
      assert.deepEqual(
        list.data.map((r: any) => [r.type, r.data]),
        [
          ['TXT', 'two-b'],
          ['AAAA', '2001:db8::9'],
        ],
      );
      fault(await api.cmd('dns.record.update', { data: { 0: { data: 'x' } } }), 'data.0.id');
      fault(await api.cmd('dns.record.update', { data: 'x' }), 'id');
      fault(await api.cmd('dns.record.update', { id: a.id, domainId: id + 1000 }), 'domainId');
      assert.equal((await api.cmd('dns.record.update', { id: 99999999, data: 'x' })).body.code, 'ERROR');
    });

    it('allows duplicate TXT records at one lookup, and deletes by match all that match', async () => {
      const id = await zone('dup.example');
      ok(await api.cmd('dns.record.create', { domainId: id, type: 'TXT', lookup: '_acme-challenge', data: 'a' }));
      ok(await api.cmd('dns.record.create', { domainId: id, type: 'TXT', lookup: '_acme-challenge', data: 'b' }));
      ok(await api.cmd('dns.record.create', { domainId: id, type: 'TXT', lookup: '_acme-challenge', data: 'b' }));
      assert.equal((await domain(id)).records.length, 3);
      const del = ok(await api.cmd('dns.record.delete', { domainId: id, type: 'TXT', lookup: '_acme-challenge', data: 'b' }));
      assert.equal(del.data.length, 2);
      assert.deepEqual(
        (await domain(id)).records.map((r: any) => r.data),
        ['a'],
      );
      fault(await api.cmd('dns.record.delete', { domainId: id, lookup: '_acme-challenge' }), 'type');
      fault(await api.cmd('dns.record.delete', { type: 'TXT', lookup: '_acme-challenge', data: 'a' }), 'domainId');
    });

    it('bumps the serial once per change, YYYYMMDDnn style', async () => {
      const id = await zone('serial.example');
      const serial = async () => Number((await domain(id)).serial);
      const s0 = await serial();
      assert.ok(s0 >= today() && s0 < today() + 100, `${s0}`);
      const [r] = ok(await api.cmd('dns.record.create', { domainId: id, type: 'A', lookup: 'a', data: '192.0.2.1' })).data;
      assert.equal(await serial(), s0 + 1);
      ok(
        await api.cmd('dns.record.create', {
          domainId: id,
          data: [
            { type: 'A', lookup: 'b', data: '192.0.2.2' },
            { type: 'A', lookup: 'c', data: '192.0.2.3' },
          ],
        }),
      );
      assert.equal(await serial(), s0 + 2, 'one batch is one change');
      ok(await api.cmd('dns.record.update', { id: r.id, data: '192.0.2.4' }));
      assert.equal(await serial(), s0 + 3);
      ok(await api.cmd('dns.record.delete', { id: r.id }));
      assert.equal(await serial(), s0 + 4);
      fault(await api.cmd('dns.record.create', { domainId: id, type: 'A', lookup: 'd', data: 'nope' }), 'data');
      assert.equal(await serial(), s0 + 4, 'a refused change does not bump');
      // More than 99 changes in a day still grow the serial.
      for (let i = 0; i < 100; i++) ok(await api.cmd('dns.domain.update', { id }));
      assert.equal(await serial(), s0 + 104);
    });

    it('lets 16 concurrent clients update one zone, all succeeding', async () => {
      const id = await zone('busy.example');
      const created = ok(await api.cmd('dns.record.create', { domainId: id, data: Array.from({ length: 16 }, (_, i) => ({ type: 'TXT', lookup: `r${i}`, data: 'before' })) })).data;
      const s0 = Number((await domain(id)).serial);
      const results = await Promise.all(
        created.map((r: any, i: number) => (i % 2 ? api.cmd('dns.record.update', { data: { [r.id]: { data: `after-${i}` } } }) : api.rest('PUT', `/dns/records/${r.id}`, { data: `after-${i}` }))),
      );
      for (const r of results) ok(r);
      const d = await domain(id);
      assert.equal(Number(d.serial), s0 + 16);
      assert.deepEqual(d.records.map((r: any) => r.data).sort(), created.map((_: any, i: number) => `after-${i}`).sort());
      const adds = await Promise.all(Array.from({ length: 16 }, (_, i) => api.cmd('dns.record.create', { domainId: id, type: 'TXT', lookup: 'many', data: `v${i}` })));
      for (const r of adds) ok(r);
      assert.equal(Number((await domain(id)).serial), s0 + 32);
    });
  });

  describe('validation', () => {
    let id: number;
    before(async () => {
      id = await zone('valid.example');
      ok(
        await api.cmd('dns.record.create', {
          domainId: id,
          data: [
            { type: 'A', lookup: 'host', data: '192.0.2.1' },
            { type: 'CNAME', lookup: 'alias', data: 'host.valid.example' },
          ],
        }),
      );
    });

    const cases: [string, Record<string, unknown>, string][] = [
      ['a label longer than 63', { type: 'A', lookup: 'a'.repeat(64), data: '192.0.2.1' }, 'lookup'],
      ['a name longer than 253', { type: 'A', lookup: Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.'), data: '192.0.2.1' }, 'lookup'],
      ['a wildcard not leftmost', { type: 'A', lookup: 'x.*', data: '192.0.2.1' }, 'lookup'],
      ['a partial wildcard label', { type: 'A', lookup: 'a*', data: '192.0.2.1' }, 'lookup'],
      ['a bad character', { type: 'A', lookup: 'sp ace', data: '192.0.2.1' }, 'lookup'],
      ['a name outside the zone', { type: 'A', lookup: 'www.other.example.', data: '192.0.2.1' }, 'lookup'],
      ['a missing lookup', { type: 'A', data: '192.0.2.1' }, 'lookup'],
      ['a bad IPv4 address', { type: 'A', lookup: 'x', data: '192.0.2.256' }, 'data'],
      ['an IPv6 address in an A record', { type: 'A', lookup: 'x', data: '2001:db8::1' }, 'data'],
      ['a bad IPv6 address', { type: 'AAAA', lookup: 'x', data: '2001:db8::g' }, 'data'],
      ['a TTL too low', { type: 'A', lookup: 'x', data: '192.0.2.1', ttl: 59 }, 'ttl'],
      ['a TTL too high', { type: 'A', lookup: 'x', data: '192.0.2.1', ttl: 604801 }, 'ttl'],
      ['a TTL that is not a number', { type: 'A', lookup: 'x', data: '192.0.2.1', ttl: 'soon' }, 'ttl'],
      ['an MX priority out of range', { type: 'MX', lookup: 'x', data: 'mail.valid.example', priority: 65536 }, 'priority'],
      ['a negative MX priority', { type: 'MX', lookup: 'x', data: 'mail.valid.example', priority: -1 }, 'priority'],
      ['an SRV without port', { type: 'SRV', lookup: '_s._tcp', data: 'srv.valid.example' }, 'port'],
      ['an SRV port out of range', { type: 'SRV', lookup: '_s._tcp', data: 'srv.valid.example', port: 70000 }, 'port'],
      ['an SRV weight out of range', { type: 'SRV', lookup: '_s._tcp', data: 'srv.valid.example', port: 1, weight: 65536 }, 'weight'],
      ['a CAA flag out of range', { type: 'CAA', lookup: '', data: 'ca.example', caaflag: 256, caatag: 'issue' }, 'caaflag'],
      ['a bad CAA tag', { type: 'CAA', lookup: '', data: 'ca.example', caatag: 'is-sue' }, 'caatag'],
      ['a CAA without tag', { type: 'CAA', lookup: '', data: 'ca.example' }, 'caatag'],
      ['a TXT over 4000 bytes', { type: 'TXT', lookup: 'x', data: 'é'.repeat(2001) }, 'data'],
      ['a bad CNAME target', { type: 'CNAME', lookup: 'c2', data: 'bad target.example' }, 'data'],
      ['a single-label NS target', { type: 'NS', lookup: 'sub', data: 'ns1' }, 'data'],
      ['a bad MX target', { type: 'MX', lookup: 'x', data: '-mail.example' }, 'data'],
      ['a bad PTR target', { type: 'PTR', lookup: '5', data: 'a..example' }, 'data'],
      ['a CNAME at the apex', { type: 'CNAME', lookup: '@', data: 'host.valid.example' }, 'type'],
      ['a CNAME beside an A record', { type: 'CNAME', lookup: 'host', data: 'other.example' }, 'type'],
      ['an A record beside a CNAME', { type: 'A', lookup: 'alias', data: '192.0.2.5' }, 'type'],
      ['a second CNAME at a name', { type: 'CNAME', lookup: 'alias', data: 'other.example' }, 'type'],
      ['NS at the apex', { type: 'NS', lookup: '', data: 'ns1.other.example' }, 'type'],
      ['an unknown type', { type: 'SOA', lookup: '', data: 'x' }, 'type'],
      ['AHASHED', { type: 'AHASHED', lookup: 'x', data: '192.0.2.1' }, 'type'],
      ['a missing type', { lookup: 'x', data: '192.0.2.1' }, 'type'],
      ['a missing value', { type: 'TXT', lookup: 'x' }, 'data'],
    ];
    for (const [what, record, field] of cases) {
      it(`refuses ${what}, naming ${field}, and leaves the zone unchanged`, async () => {
        const before = await domain(id);
        const batch = await api.cmd('dns.record.create', { domainId: id, data: { 0: { type: 'TXT', lookup: 'fine', data: 'ok' }, 1: record } });
        fault(batch, `data.1.${field}`);
        const flat = await api.cmd('dns.record.create', { domainId: id, ...record, data: record.data ?? null });
        fault(flat, field);
        const afterwards = await domain(id);
        assert.equal(afterwards.serial, before.serial);
        assert.deepEqual(afterwards.records, before.records);
      });
    }

    it('refuses a bad change in an update batch and keeps every record as it was', async () => {
      const before = await domain(id);
      const host = before.records.find((r: any) => r.lookup === 'host');
      const alias = before.records.find((r: any) => r.lookup === 'alias');
      const r = await api.cmd('dns.record.update', { data: { [host.id]: { data: '192.0.2.99' }, [alias.id]: { type: 'A', data: '192.0.2.300' } } });
      fault(r, `data.${alias.id}.data`);
      const clash = await api.cmd('dns.record.update', { data: { [host.id]: { lookup: 'alias' } } });
      fault(clash, `data.${host.id}.type`);
      assert.deepEqual(await domain(id), before);
    });

    it('never ignores a bad domain given with a record id: the delete is refused and the record kept', async () => {
      const mine = await zone('keep-me.example');
      const elsewhere = await zone('elsewhere.example');
      const [rec] = ok(await api.cmd('dns.record.create', { domainId: mine, type: 'TXT', lookup: 'keep', data: 'kept' })).data;
      for (const domainId of ['abc', -1, 0, 1.5, '1e3', ' 5', true, null, '', [mine], { id: mine }, 2 ** 64]) {
        fault(await api.cmd('dns.record.delete', { id: rec.id, domainId }), 'domainId');
      }
      // A null or empty id is not a missing one: the delete by id must not become a delete by match.
      for (const id of [null, '']) fault(await api.cmd('dns.record.delete', { id, domainId: mine, type: 'TXT', lookup: 'keep' }), 'id');
      fault(await api.cmd('dns.record.create', { domainId: null, name: 'keep-me.example', type: 'TXT', lookup: 'new', data: 'x' }), 'domainId');
      fault(await api.cmd('dns.record.getall', { domainId: null }), 'domainId');
      fault(await api.cmd('dns.record.update', { data: { [rec.id]: { domainId: null, data: 'changed' } } }), `data.${rec.id}.domainId`);
      assert.equal((await api.cmd('dns.record.delete', { id: rec.id, domainId: elsewhere })).body.code, 'ERROR', 'a record of another zone is not found');
      assert.equal((await api.cmd('dns.record.delete', { id: rec.id, domainId: 999_999 })).body.code, 'ERROR');
      assert.equal((await api.cmd('dns.record.delete', { id: rec.id, name: 'elsewhere.example' })).body.code, 'ERROR');
      fault(await api.cmd('dns.record.delete', { id: '18446744073709551617' }), 'id');
      assert.deepEqual(
        (await domain(mine)).records.map((r: any) => r.id),
        [rec.id],
        'the record is still there',
      );
      // The zone id and name must agree when both are given.
      fault(await api.cmd('dns.domain.delete', { id: mine, name: 'elsewhere.example' }), 'name');
      assert.equal((await domain(mine)).id, mine);
      ok(await api.cmd('dns.record.delete', { id: rec.id, domainId: String(mine) }));
      assert.deepEqual((await domain(mine)).records, []);
    });

    it('accepts the apex as "@", "" or the zone name, and a lookup ending in the zone', async () => {
      const r = ok(
        await api.cmd('dns.record.create', {
          domainId: id,
          data: [
            { type: 'TXT', lookup: '@', data: 'at' },
            { type: 'TXT', lookup: 'valid.example.', data: 'fq' },
            { type: 'TXT', lookup: '_acme-challenge.Deep.valid.example', data: 'deep' },
          ],
        }),
      );
      assert.deepEqual(
        r.data.map((x: any) => x.lookup),
        ['', '', '_acme-challenge.deep'],
      );
      // A TXT value longer than 255 bytes is kept whole.
      const long = 'x'.repeat(700);
      assert.equal(ok(await api.cmd('dns.record.create', { domainId: id, type: 'TXT', lookup: 'long', data: long })).data[0].data, long);
    });
  });

  describe('customers and permissions', () => {
    it("keeps each customer to its own zones: another's answers like one that does not exist", async () => {
      const id = await zone('mine.example');
      const [rec] = ok(await api.cmd('dns.record.create', { domainId: id, type: 'A', lookup: 'x', data: '192.0.2.1' })).data;
      const missing = await other.cmd('dns.domain.get', { id: 99999999 });
      const foreign = await other.cmd('dns.domain.get', { id });
      assert.deepEqual(foreign.body, missing.body);
      assert.equal(foreign.body.code, 'ERROR');
      assert.equal(ok(await other.cmd('dns.domain.getall')).matches, 0);
      assert.equal(ok(await other.cmd('dns.domain.getall', { exactName: 'mine.example' })).matches, 0);
      assert.equal(ok(await other.cmd('dns.record.getall')).matches, 0);
      assert.equal((await other.rest('GET', `/dns/records/${rec.id}`)).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.record.create', { domainId: id, type: 'A', lookup: 'y', data: '192.0.2.2' })).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.record.create', { name: 'mine.example', type: 'A', lookup: 'y', data: '192.0.2.2' })).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.record.update', { id: rec.id, data: '192.0.2.3' })).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.record.delete', { id: rec.id })).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.record.delete', { name: 'mine.example', type: 'A', lookup: 'x' })).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.domain.update', { id, status: 'DISABLED' })).body.code, 'ERROR');
      assert.equal((await other.cmd('dns.domain.delete', { id })).body.code, 'ERROR');
      fault(await other.cmd('dns.domain.create', { name: 'mine.example' }), 'name');
      fault(await other.cmd('dns.domain.create', { name: 'sub.mine.example' }), 'name');
      const d = await domain(id);
      assert.equal(d.status, 'ACTIVE');
      assert.deepEqual(
        d.records.map((r: any) => r.data),
        ['192.0.2.1'],
      );
      // The other customer's own zone stays out of this customer's view.
      const theirs = ok(await other.cmd('dns.domain.create', { name: 'theirs.example' })).data.id;
      assert.equal((await api.cmd('dns.domain.get', { id: theirs })).body.code, 'ERROR');
      assert.equal(ok(await api.cmd('dns.domain.getall', { exactName: 'theirs.example' })).matches, 0);
    });

    it('makes each command its own permission', async () => {
      const perms = ok(await api.cmd('apiuser.permissions.system')).permissions as string[];
      for (const c of [
        'dns.*',
        'dns.domain.getall',
        'dns.domain.get',
        'dns.domain.create',
        'dns.domain.update',
        'dns.domain.delete',
        'dns.record.getall',
        'dns.record.get',
        'dns.record.create',
        'dns.record.update',
        'dns.record.delete',
      ]) {
        assert.ok(perms.includes(c), c);
      }
      const key = ok(await api.cmd('apiuser.create', { name: 'reader', permissions: ['dns.domain.getall', 'dns.domain.get'] })).apiuser;
      const reader = new InfraClient(server.infraUrl, { basic: [key.uuid, key.secret] });
      ok(await reader.cmd('dns.domain.getall'));
      const denied = await reader.cmd('dns.record.create', { name: 'mine.example', type: 'TXT', lookup: 'x', data: 'y' });
      assert.equal(denied.body.code, 'ACCESS_DENIED');
    });
  });
});

// In-process: the ZoneCatalog the DNS server answers from reflects each dns.* change as soon as the
// API call returns, never goes back in time, and is filled from the store at start.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { openCore, type Core } from '../../src/app.js';
import { inProcessInfra, type InProcessInfra } from '../helpers/in-process-infra.js';
import type { ZoneRecord } from '../../src/zones/zone.js';

await forEachEngine('dns zone catalog', (engine) => {
  let infra: InProcessInfra;
  let ctx: Core;

  before(async () => {
    infra = await inProcessInfra(engine);
    ctx = infra.ctx;
  });
  after(async () => {
    await infra?.close();
  });

  async function cmd(cmd: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const body = await infra.call(cmd, params);
    assert.equal(body.code, 'OK', JSON.stringify(body));
    return body;
  }
  const records = (zone: string, type?: string): ZoneRecord[] => (ctx.zones.get(zone)?.records ?? []).filter((r) => type === undefined || r.type === type);

  it('reflects each change as soon as the call returns, with the serial the API shows', async () => {
    const created = await cmd('dns.domain.create', { name: 'cat.example' });
    const id = created.data.id;
    assert.equal(ctx.zones.get('cat.example')?.serial, Number(created.data.serial));
    assert.deepEqual(records('cat.example'), []);

    const long = 'y'.repeat(700);
    const made = await cmd('dns.record.create', {
      domainId: id,
      data: [
        { type: 'A', lookup: 'www', data: '192.0.2.1', ttl: 300 },
        { type: 'TXT', lookup: '', data: long },
        { type: 'MX', lookup: '', data: 'mail.cat.example', priority: 10 },
        { type: 'SRV', lookup: '_sip._tcp', data: 'sip.cat.example', priority: 1, weight: 2, port: 5060 },
        { type: 'CAA', lookup: '', data: 'letsencrypt.org', caaflag: 0, caatag: 'issue' },
        { type: 'CNAME', lookup: 'alias', data: 'www.cat.example' },
      ],
    });
    const zone = ctx.zones.get('cat.example')!;
    assert.equal(zone.serial, Number((await cmd('dns.domain.get', { id })).serial));
    assert.deepEqual(records('cat.example', 'A'), [{ name: 'www.cat.example', ttl: 300, type: 'A', data: '192.0.2.1' }]);
    const txt = records('cat.example', 'TXT')[0];
    assert.equal(txt.name, 'cat.example');
    assert.deepEqual(
      (txt.data as string[]).map((s) => s.length),
      [255, 255, 190],
      'a long TXT value is sent as strings of at most 255 bytes',
    );
    assert.equal((txt.data as string[]).join(''), long);
    assert.deepEqual(records('cat.example', 'MX')[0].data, { preference: 10, exchange: 'mail.cat.example' });
    assert.deepEqual(records('cat.example', 'SRV')[0], { name: '_sip._tcp.cat.example', ttl: 3600, type: 'SRV', data: { priority: 1, weight: 2, port: 5060, target: 'sip.cat.example' } });
    assert.deepEqual(records('cat.example', 'CAA')[0].data, { flags: 0, tag: 'issue', value: 'letsencrypt.org' });
    assert.deepEqual(records('cat.example', 'CNAME')[0].data, 'www.cat.example');

    const a = made.data[0];
    await cmd('dns.record.update', { id: a.id, data: '192.0.2.2' });
    assert.deepEqual(
      records('cat.example', 'A').map((r) => r.data),
      ['192.0.2.2'],
    );
    await cmd('dns.record.delete', { id: a.id });
    assert.deepEqual(records('cat.example', 'A'), []);

    await cmd('dns.domain.update', { id, status: 'DISABLED' });
    assert.equal(ctx.zones.get('cat.example'), undefined, 'a disabled zone is not served');
    const enabled = await cmd('dns.domain.update', { id, status: 'ACTIVE' });
    assert.equal(ctx.zones.get('cat.example')?.serial, Number(enabled.data.serial));
    await cmd('dns.domain.delete', { id });
    assert.equal(ctx.zones.get('cat.example'), undefined);
    assert.ok(!ctx.zones.names().includes('cat.example'));
  });

  it('serves an RRset once per distinct record, at the lowest TTL among them', async () => {
    const id = (await cmd('dns.domain.create', { name: 'set.example' })).data.id;
    await cmd('dns.record.create', {
      domainId: id,
      data: [
        { type: 'TXT', lookup: 't', data: 'same', ttl: 300 },
        { type: 'TXT', lookup: 't', data: 'same', ttl: 300 },
        { type: 'TXT', lookup: 't', data: 'other', ttl: 120 },
      ],
    });
    assert.equal((await cmd('dns.domain.get', { id })).records.length, 3, 'the API keeps every record');
    assert.deepEqual(
      records('set.example', 'TXT').map((r) => [r.data, r.ttl]),
      [
        [['same'], 120],
        [['other'], 120],
      ],
    );
  });

  it('keeps all 16 concurrent changes and ends at the stored serial', async () => {
    const id = (await cmd('dns.domain.create', { name: 'race.example' })).data.id;
    await Promise.all(Array.from({ length: 16 }, (_, i) => cmd('dns.record.create', { domainId: id, type: 'TXT', lookup: `n${i}`, data: `v${i}` })));
    const stored = await cmd('dns.domain.get', { id });
    assert.equal(ctx.zones.get('race.example')?.serial, Number(stored.serial));
    assert.equal(records('race.example', 'TXT').length, 16);
  });

  const raw = (cmd: string, params: Record<string, unknown> = {}) => infra.call(cmd, params);
  /** The zone the catalog serves, as the API lists it: [owner, type, data] sorted. */
  const served = (zone: string) =>
    records(zone)
      .map((r) => [r.name, r.type, JSON.stringify(r.data)].join(' '))
      .sort();
  async function stored(zone: string): Promise<string[]> {
    const d = (await cmd('dns.domain.get', { name: zone })).data;
    assert.equal(ctx.zones.get(zone)?.serial, Number(d.serial), 'the catalog holds the stored serial');
    return d.records.map((r: any) => [r.lookup ? `${r.lookup}.${zone}` : zone, r.type, JSON.stringify(r.type === 'TXT' ? [r.data] : r.data)].join(' ')).sort();
  }
  /** Counts the transactions the store runs while `fn` does. */
  async function transactions(fn: () => Promise<void>): Promise<number> {
    const db = ctx.db as { transaction: typeof ctx.db.transaction };
    const original = db.transaction;
    let n = 0;
    db.transaction = <T>(f: Parameters<typeof original>[0]): Promise<T> => {
      n++;
      return original.call(ctx.db, f) as Promise<T>;
    };
    try {
      await fn();
    } finally {
      db.transaction = original;
    }
    return n;
  }

  it('runs concurrent changes of one zone as batches; a refused change fails alone and does not move the serial', async () => {
    const id = (
      await cmd('dns.domain.create', {
        name: 'batch.example',
        records: [{ type: 'CNAME', lookup: 'alias', data: 'www.batch.example' }, ...Array.from({ length: 12 }, (_, i) => ({ type: 'TXT', lookup: `t${i}`, data: 'before' }))],
      })
    ).data;
    const s0 = Number((await cmd('dns.domain.get', { id: id.id })).serial);
    const txt = (await cmd('dns.record.getall', { name: 'batch.example', type: 'TXT' })).data as { id: number; lookup: string }[];
    let results: Record<string, any>[] = [];
    const count = await transactions(async () => {
      results = await Promise.all([
        ...txt.map((r, i) => raw('dns.record.update', { id: r.id, data: `after-${i}` })),
        // Refused by the zone rules, checked inside the batch: a CNAME must be alone at its name.
        raw('dns.record.create', { domainId: id.id, type: 'A', lookup: 'alias', data: '192.0.2.9' }),
        raw('dns.record.create', { domainId: id.id, type: 'A', lookup: 'new', data: '192.0.2.10' }),
        raw('dns.record.delete', { domainId: id.id, type: 'TXT', lookup: 'nothing-here' }),
      ]);
    });
    assert.ok(count < results.length, `${results.length} changes ran in ${count} transactions`);
    const [refused, created, missing] = results.slice(txt.length);
    for (const r of results.slice(0, txt.length)) assert.equal(r.code, 'OK', JSON.stringify(r));
    assert.equal(refused.code, 'FAULT');
    assert.match(refused.error.type, /CNAME/);
    assert.equal(created.code, 'OK', JSON.stringify(created));
    assert.equal(missing.code, 'ERROR');
    assert.equal(Number((await cmd('dns.domain.get', { id: id.id })).serial), s0 + txt.length + 1, 'one serial step per change made');
    assert.deepEqual(served('batch.example'), await stored('batch.example'));
    assert.ok(served('batch.example').includes('new.batch.example A "192.0.2.10"'));
    assert.ok(!served('batch.example').includes('alias.batch.example A "192.0.2.9"'));
  });

  it('judges each change of a batch against the changes before it', async () => {
    const id = (await cmd('dns.domain.create', { name: 'order.example' })).data.id;
    const results = await Promise.all([
      raw('dns.record.create', { domainId: id, type: 'CNAME', lookup: 'x', data: 'www.order.example' }),
      raw('dns.record.create', { domainId: id, type: 'A', lookup: 'x', data: '192.0.2.1' }),
    ]);
    assert.equal(results.filter((r) => r.code === 'OK').length, 1, JSON.stringify(results));
    assert.equal(results.filter((r) => r.code === 'FAULT').length, 1);
    assert.deepEqual(served('order.example'), await stored('order.example'));
  });

  it('serves the stored zone after updates and deletes of the same records race', async () => {
    const made = (await cmd('dns.domain.create', { name: 'race2.example', records: Array.from({ length: 8 }, (_, i) => ({ type: 'A', lookup: `h${i}`, data: `192.0.2.${i + 1}` })) })).data;
    const list = (await cmd('dns.record.getall', { domainId: made.id })).data as { id: number }[];
    const results = await Promise.all(
      list.flatMap((r, i) => [
        raw('dns.record.update', { id: r.id, data: `198.51.100.${i + 1}` }),
        raw('dns.record.delete', { id: r.id }),
        raw('dns.record.update', { id: r.id, data: `203.0.113.${i + 1}` }),
      ]),
    );
    for (const r of results) assert.ok(r.code === 'OK' || /Could not find record/.test(r.message), JSON.stringify(r));
    assert.deepEqual(served('race2.example'), await stored('race2.example'));
    assert.deepEqual(served('race2.example'), [], 'every record was deleted');
  });

  it('never replaces a zone with an older serial', async () => {
    const id = (await cmd('dns.domain.create', { name: 'newer.example' })).data.id;
    const newer = { name: 'newer.example', serial: 4_000_000_000, records: [] };
    ctx.zones.put(newer);
    await cmd('dns.record.create', { domainId: id, type: 'A', lookup: 'x', data: '192.0.2.7' });
    assert.equal(ctx.zones.get('newer.example'), newer);
  });

  it('loads every active zone from the store at start', async () => {
    const id = (await cmd('dns.domain.create', { name: 'start.example' })).data.id;
    await cmd('dns.record.create', { domainId: id, type: 'A', lookup: 'www', data: '192.0.2.1' });
    const off = (await cmd('dns.domain.create', { name: 'off.example' })).data.id;
    await cmd('dns.domain.update', { id: off, status: 'DISABLED' });
    const second = await openCore(infra.config);
    try {
      assert.equal(second.created, null);
      assert.deepEqual(second.zones.get('start.example'), ctx.zones.get('start.example'));
      assert.equal(second.zones.get('off.example'), undefined);
      assert.deepEqual(second.zones.get('set.example'), ctx.zones.get('set.example'));
      // Zones patched from the changes (ZoneMirror.applyChange) equal the zones read afresh.
      for (const n of second.zones.names()) if (n !== 'newer.example') assert.deepEqual(second.zones.get(n), ctx.zones.get(n), n);
      assert.deepEqual(second.zones.names().sort(), ['batch.example', 'newer.example', 'order.example', 'race.example', 'race2.example', 'set.example', 'start.example']);
    } finally {
      await second.close();
    }
  });
});

// The per-zone write coalescer on its own: changes that meet in one batch, a change refused by its
// checks, and a database error, which only the change that caused it must see.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, storageArgs, type Storage } from '../helpers/server.js';
import { openCore, type Core } from '../../src/app.js';
import { buildConfig } from '../../src/config/config.js';
import { readOptions } from '../../src/config/env.js';
import type { ZoneWork } from '../../src/infra/dns-batches.js';
import { infraErrors } from '../../src/infra/errors.js';
import { serialBase } from '../../src/infra/dns-rules.js';

await forEachEngine('dns write batches', (engine) => {
  let storage: Storage;
  let ctx: Core;
  let domainId: number;

  before(async () => {
    storage = await createStorage(engine);
    ctx = await openCore(buildConfig(readOptions([...storageArgs(storage), '--log-level', 'error'], {}).options));
    const now = Math.floor(Date.now() / 1000);
    const row = await ctx.db.kysely
      .insertInto('dns_domains')
      .values({ customer_id: ctx.created!.customerId, name: 'writer.example', serial: serialBase(Date.now()) + 50, status: 'ACTIVE', date_created: now, date_modified: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    domainId = row.id;
  });
  after(async () => {
    await ctx?.close();
    await storage?.dispose();
  });

  /** A change that adds one TXT record at `lookup`. */
  const add =
    (lookup: string): ZoneWork<string> =>
    async (trx, zone) =>
    async () => {
      const now = Math.floor(Date.now() / 1000);
      const row = await trx
        .insertInto('dns_records')
        .values({ domain_id: zone.id, lookup, type: 'TXT', data: lookup, ttl: 300, priority: 0, weight: 0, port: 0, caa_flag: 0, caa_tag: '', date_created: now, date_modified: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      return { value: lookup, upserts: [row] };
    };
  const serial = async () => Number((await ctx.db.kysely.selectFrom('dns_domains').select('serial').where('id', '=', domainId).executeTakeFirstOrThrow()).serial);
  const txt = () => (ctx.zones.get('writer.example')?.records ?? []).map((r) => r.name).sort();

  it('answers each change of a batch on its own, after one commit, with the zone in the catalog', async () => {
    const writer = ctx.zoneWriter;
    const s0 = await serial();
    const refused: ZoneWork<string> = async () => {
      throw infraErrors.invalidParameter({ name: 'lookup', problem: 'no' });
    };
    const results = await Promise.allSettled([writer.submit(domainId, add('a')), writer.submit(domainId, refused), writer.submit(domainId, add('b'))]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal((results[1] as PromiseRejectedResult).reason.code, 'FAULT');
    assert.equal(await serial(), s0 + 2);
    assert.deepEqual(txt(), ['a.writer.example', 'b.writer.example']);
    assert.equal(ctx.zones.get('writer.example')?.serial, s0 + 2);
  });

  it('rolls back a batch whose every change is refused: the serial does not move', async () => {
    const writer = ctx.zoneWriter;
    const s0 = await serial();
    const refused: ZoneWork<string> = async () => {
      throw infraErrors.invalidParameter({ name: 'lookup', problem: 'no' });
    };
    const results = await Promise.allSettled([writer.submit(domainId, refused), writer.submit(domainId, refused)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(await serial(), s0);
  });

  it('after a database error, runs the changes again one by one so only the faulty one fails', async () => {
    const writer = ctx.zoneWriter;
    const s0 = await serial();
    const broken: ZoneWork<string> = async (trx) => async () => {
      // No such table: a database error in the writes, which are not expected to refuse.
      await trx
        .selectFrom('no_such_table' as 'dns_records')
        .selectAll()
        .execute();
      return { value: 'never' };
    };
    const results = await Promise.allSettled([writer.submit(domainId, add('c')), writer.submit(domainId, broken), writer.submit(domainId, add('d'))]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(await serial(), s0 + 2);
    assert.deepEqual(
      txt(),
      ['a', 'b', 'c', 'd'].map((l) => `${l}.writer.example`),
    );
  });

  it('refuses every change of a zone that is gone', async () => {
    const writer = ctx.zoneWriter;
    await assert.rejects(writer.submit(domainId + 1000, add('e')), /Could not find domain/);
  });
});

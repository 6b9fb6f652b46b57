// What a customer holds is bounded: at most MAX_ZONES_PER_CUSTOMER zones, MAX_RECORDS_PER_ZONE
// records in a zone, MAX_API_USERS_PER_CUSTOMER API users. The call that would pass a bound is refused
// naming it, and changes nothing. The rows up to the bound are written straight to the store to keep it quick.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { inProcessInfra, type InProcessInfra } from '../helpers/in-process-infra.js';
import { MAX_RECORDS_PER_ZONE, MAX_ZONES_PER_CUSTOMER } from '../../src/infra/dns-rules.js';
import { MAX_API_USERS_PER_CUSTOMER } from '../../src/infra/commands/apiuser.js';

await forEachEngine('infra bounds', (engine) => {
  let infra: InProcessInfra;
  before(async () => {
    infra = await inProcessInfra(engine);
  });
  after(async () => {
    await infra?.close();
  });

  const cmd = (name: string, params: Record<string, unknown> = {}) => infra.call(name, params);
  const db = () => infra.ctx.db.kysely;
  const count = async (table: 'dns_domains' | 'dns_records' | 'api_users') =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('refuses records past the zone bound, naming it, and adds none of the batch', async () => {
    const made = await cmd('dns.domain.create', { name: 'full.example' });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    const id = Number(made.data.id);
    const rows = Array.from({ length: MAX_RECORDS_PER_ZONE - 2 }, (_, i) => ({
      domain_id: id,
      lookup: `h${i}`,
      type: 'A',
      data: '192.0.2.1',
      ttl: 300,
      priority: 0,
      weight: 0,
      port: 0,
      caa_flag: 0,
      caa_tag: '',
      date_created: 0,
      date_modified: 0,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await db()
        .insertInto('dns_records')
        .values(rows.slice(i, i + 500))
        .execute();
    const three = ['a', 'b', 'c'].map((lookup) => ({ type: 'A', lookup, data: '192.0.2.9' }));
    const refused = await cmd('dns.record.create', { domainId: id, data: three });
    assert.equal(refused.code, 'FAULT', JSON.stringify(refused));
    assert.match(JSON.stringify(refused), new RegExp(`more than ${MAX_RECORDS_PER_ZONE} records in the zone full.example`));
    assert.equal(await count('dns_records'), MAX_RECORDS_PER_ZONE - 2);
    const two = await cmd('dns.record.create', { domainId: id, data: three.slice(0, 2) });
    assert.equal(two.code, 'OK', JSON.stringify(two));
    assert.equal(await count('dns_records'), MAX_RECORDS_PER_ZONE);
  });

  it('refuses a zone past the customer bound, naming it, and creates nothing', async () => {
    const customerId = (await db().selectFrom('dns_domains').select('customer_id').executeTakeFirstOrThrow()).customer_id;
    const have = await count('dns_domains');
    const rows = Array.from({ length: MAX_ZONES_PER_CUSTOMER - have - 1 }, (_, i) => ({
      customer_id: customerId,
      name: `z${i}.example`,
      serial: 1,
      status: 'ACTIVE',
      date_created: 0,
      date_modified: 0,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await db()
        .insertInto('dns_domains')
        .values(rows.slice(i, i + 500))
        .execute();
    assert.equal((await cmd('dns.domain.create', { name: 'last.example' })).code, 'OK');
    const refused = await cmd('dns.domain.create', { name: 'over.example', records: [{ type: 'A', lookup: 'www', data: '192.0.2.1' }] });
    assert.equal(refused.code, 'FAULT', JSON.stringify(refused));
    assert.match(JSON.stringify(refused), new RegExp(`more than ${MAX_ZONES_PER_CUSTOMER} zones in this account`));
    assert.equal(await count('dns_domains'), MAX_ZONES_PER_CUSTOMER);
  });

  it('refuses an API user past the customer bound, naming it, and creates nothing', async () => {
    const { id: _id, ...template } = await db().selectFrom('api_users').selectAll().orderBy('id').executeTakeFirstOrThrow();
    const missing = MAX_API_USERS_PER_CUSTOMER - 1 - (await count('api_users'));
    const rows = Array.from({ length: missing }, (_, i) => ({ ...template, uuid: `filler-${i}`, secret_hash: `filler-${i}`, name: `filler ${i}` }));
    for (let i = 0; i < rows.length; i += 200)
      await db()
        .insertInto('api_users')
        .values(rows.slice(i, i + 200))
        .execute();
    assert.equal((await cmd('apiuser.create', { name: 'last' })).code, 'OK');
    const refused = await cmd('apiuser.create', { name: 'over' });
    assert.deepEqual(refused, { code: 'ERROR', message: `Limit reached: a customer has at most ${MAX_API_USERS_PER_CUSTOMER} API users; delete one first` });
    assert.equal(await count('api_users'), MAX_API_USERS_PER_CUSTOMER);
  });
});

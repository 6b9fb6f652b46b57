// The customer scope helpers other families use (src/infra/customer-scope.ts), over a real store, and
// the bound on sub-customers: the call past it is refused naming it and makes nothing, through the API
// and through `keel admin create-customer --parent`. Rows up to the bound go straight to the store.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { inProcessInfra, type InProcessInfra } from '../helpers/in-process-infra.js';
import { runKeel, storageArgs } from '../helpers/server.js';
import { customerForCall, customersToList, visibleCustomers, visibleCustomersSql } from '../../src/infra/customer-scope.js';
import { MAX_SUB_CUSTOMERS_PER_CUSTOMER } from '../../src/infra/commands/customer.js';
import { InfraError } from '../../src/infra/errors.js';
import { sql } from 'kysely';

await forEachEngine('customer scope', (engine) => {
  let infra: InProcessInfra;
  let operatorId: number;
  before(async () => {
    infra = await inProcessInfra(engine);
    operatorId = infra.ctx.created!.customerId;
  });
  after(async () => {
    await infra?.close();
  });
  const db = () => infra.ctx.db.kysely;
  const insert = async (companyName: string, parentId: number | null) =>
    (
      await db()
        .insertInto('customers')
        .values({
          company_name: companyName,
          std_name: companyName.toUpperCase(),
          first_name: '',
          last_name: '',
          email: '',
          status: 'ACTIVE',
          parent_id: parentId,
          currency: 'AUD',
          date_created: 0,
          date_modified: 0,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const childrenOf = async (id: number) =>
    Number(
      (
        await db()
          .selectFrom('customers')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('parent_id', '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      return err;
    }
    assert.fail('not refused');
  };

  it('resolves a customerId parameter within the caller tree, and anything else as not found', async () => {
    const a = await insert('A', operatorId);
    const b = await insert('B', a);
    const beside = await insert('Beside', null);
    assert.equal(await customerForCall(db(), operatorId, undefined), operatorId, 'absent: the caller');
    assert.equal(await customerForCall(db(), operatorId, null), operatorId);
    assert.equal(await customerForCall(db(), operatorId, ''), operatorId);
    assert.equal(await customerForCall(db(), operatorId, b), b, 'two levels down');
    assert.equal(await customerForCall(db(), operatorId, String(b)), b, 'as the Go clients send it');
    assert.equal(await customerForCall(db(), a, a), a);
    for (const [caller, requested] of [
      [a, operatorId],
      [a, beside],
      [b, a],
      [operatorId, beside],
      [operatorId, 999_999],
      [operatorId, 'abc'],
      [operatorId, '1e3'],
      [operatorId, 0],
      [operatorId, -1],
    ] as [number, number | string][]) {
      const err = await refusal(customerForCall(db(), caller, requested));
      assert.ok(err instanceof InfraError, String(err));
      assert.equal(err.message, 'Could not find customer', `${caller} asking ${requested}`);
    }
    // Another family names its own "not found".
    const own = new Error('Could not find device');
    assert.equal(await refusal(customerForCall(db(), a, beside, () => own)), own);

    assert.deepEqual(await customersToList(db(), a, undefined), [a, b]);
    assert.deepEqual(await customersToList(db(), a, String(b)), [b]);
    assert.deepEqual(await customersToList(db(), a, operatorId), [], 'a filter outside the tree lists nothing');
    assert.deepEqual(await customersToList(db(), a, beside), []);

    const viaSql = async (id: number) =>
      (
        await db()
          .selectFrom('customers')
          .select('id')
          .where(sql<boolean>`id in ${visibleCustomersSql(id)}`)
          .orderBy('id')
          .execute()
      ).map((r) => r.id);
    for (const id of [operatorId, a, b, beside])
      assert.deepEqual(
        await viaSql(id),
        [...(await visibleCustomers(db(), id))].sort((x, y) => x - y),
        `customer ${id}`,
      );
    // A cycle (no API call can make one) still ends.
    const c1 = await insert('Cycle 1', null);
    const c2 = await insert('Cycle 2', c1);
    await db().updateTable('customers').set({ parent_id: c2 }).where('id', '=', c1).execute();
    assert.deepEqual(await viaSql(c1), [c1, c2]);
    assert.deepEqual(await visibleCustomers(db(), c2), [c2, c1]);
  });

  it('refuses a sub-customer past the bound, naming it, and makes none (API and command line)', async () => {
    const missing = MAX_SUB_CUSTOMERS_PER_CUSTOMER - 1 - (await childrenOf(operatorId));
    const rows = Array.from({ length: missing }, (_, i) => ({
      company_name: `Filler ${i}`,
      std_name: `FILLER ${i}`,
      first_name: '',
      last_name: '',
      email: '',
      status: 'ACTIVE',
      parent_id: operatorId,
      currency: 'AUD',
      date_created: 0,
      date_modified: 0,
    }));
    for (let i = 0; i < rows.length; i += 200)
      await db()
        .insertInto('customers')
        .values(rows.slice(i, i + 200))
        .execute();
    const last = await infra.call('customer.create', { companyName: 'Last' });
    assert.equal(last.code, 'OK', JSON.stringify(last));
    assert.equal(await childrenOf(operatorId), MAX_SUB_CUSTOMERS_PER_CUSTOMER);
    const refused = await infra.call('customer.create', { companyName: 'Over' });
    assert.deepEqual(refused, { code: 'ERROR', message: `Limit reached: a customer has at most ${MAX_SUB_CUSTOMERS_PER_CUSTOMER} sub-customers; delete one first` });
    assert.equal(await childrenOf(operatorId), MAX_SUB_CUSTOMERS_PER_CUSTOMER);
    const cli = await runKeel(['admin', 'create-customer', '--company-name', 'Over CLI', '--username', 'overcli', '--parent', String(operatorId), ...storageArgs(infra.storage)]);
    assert.equal(cli.code, 2, cli.stderr);
    assert.match(cli.stderr, new RegExp(`--parent: customer ${operatorId} has ${MAX_SUB_CUSTOMERS_PER_CUSTOMER} sub-customers, the most a customer may have`));
    assert.equal(await childrenOf(operatorId), MAX_SUB_CUSTOMERS_PER_CUSTOMER);
    assert.equal(await db().selectFrom('logins').select('id').where('username', '=', 'overcli').executeTakeFirst(), undefined);
    // The bound is per parent: a sub-customer that is a reseller still has room.
    const sub = await infra.call('customer.create', { companyName: 'Roomy', isreseller: true, parentId: last.customer.id });
    assert.equal(sub.code, 'ACCESS_DENIED', 'Last is no reseller');
    await db().updateTable('customers').set({ is_reseller: 1 }).where('id', '=', last.customer.id).execute();
    assert.equal((await infra.call('customer.create', { companyName: 'Below last', parentId: last.customer.id })).code, 'OK');
  });
});

// Black-box: `keel admin create-customer --parent ID [--reseller yes|no]`, an operator's sub-customer
// with its own login and key; bad --parent or --reseller values change nothing.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs } from '../helpers/server.js';
import { InfraClient } from '../helpers/infra-client.js';

await forEachEngine('keel admin create-customer --parent', (engine) => {
  it('makes a sub-customer that its parent sees, and refuses a bad parent or flag', async () => {
    const storage = await createStorage(engine);
    try {
      const args = storageArgs(storage);
      const init = JSON.parse((await runKeel(['init', '--json', ...args])).stdout);
      const operatorId: number = init.infra?.customerId ?? init.customerId;
      assert.ok(Number.isInteger(operatorId), JSON.stringify(init));

      const text = await runKeel(['admin', 'create-customer', '--company-name', 'Child Pty', '--username', 'child', '--parent', String(operatorId), ...args]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`^customer (\\d+) \\(Child Pty\\), a sub-customer of customer ${operatorId}, created; its secrets are shown only this once:\\n`));
      const childId = Number(/^customer (\d+)/.exec(text.stdout)![1]);
      const json = await runKeel([
        'admin',
        'create-customer',
        '--company-name',
        'Grand',
        '--username',
        'grand',
        '--password',
        'pass-word-9',
        '--parent',
        String(childId),
        '--reseller',
        'YES',
        '--json',
        ...args,
      ]);
      assert.equal(json.code, 0, json.stderr);
      const grand = JSON.parse(json.stdout);
      assert.deepEqual(Object.keys(grand).sort(), ['apiSecret', 'apiUuid', 'customerId', 'parentId', 'username']);
      assert.equal(grand.parentId, childId);

      for (const [bad, why] of [
        [['--parent', '0'], /--parent must be a customer id, got "0"/],
        [['--parent', 'one'], /--parent must be a customer id, got "one"/],
        [['--parent', '999999'], /--parent: there is no customer 999999/],
        [['--reseller', 'maybe'], /--reseller must be yes or no, got "maybe"/],
      ] as [string[], RegExp][]) {
        const r = await runKeel(['admin', 'create-customer', '--company-name', 'X', '--username', `bad${bad.join('')}`.replace(/[^a-z0-9]/gi, ''), ...bad, ...args]);
        assert.equal(r.code, 2, `${bad.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, why);
      }

      const server = await startServer(storage);
      try {
        const operator = new InfraClient(server.infraUrl, { basic: [init.infra?.apiUuid ?? init.apiUuid, init.infra?.apiSecret ?? init.apiSecret] });
        const all = await operator.cmd('customer.getall');
        assert.deepEqual(
          all.body.customers.map((c: { id: number; parentID: number }) => [c.id, c.parentID]),
          [
            [operatorId, 0],
            [childId, operatorId],
            [grand.customerId, childId],
          ],
          'the refused attempts made nothing; the tree is two levels deep',
        );
        const g = (await operator.cmd('customer.get', { id: grand.customerId })).body.customer;
        assert.equal(g.isreseller, true);
        assert.equal(g.parentStdName, 'CHILD PTY');
        assert.equal(all.body.customers[1].isreseller, false, 'not a reseller unless asked');
        // The grandchild's own key works and sees only itself; a reseller, it may make sub-customers.
        const own = new InfraClient(server.infraUrl, { basic: [grand.apiUuid, grand.apiSecret] });
        assert.equal((await own.cmd('customer.getall')).body.count, 1);
        assert.equal((await own.cmd('customer.create', { companyName: 'Great-grand' })).body.code, 'OK');
        assert.equal((await own.cmd('customer.get', { id: childId })).body.message, 'Could not find customer');
      } finally {
        await server.stop();
      }
    } finally {
      await storage.dispose();
    }
  });
});

// Black-box: `keel admin create-customer`, which an operator uses to add Infra customers.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs } from '../helpers/server.js';
import { InfraClient } from '../helpers/infra-client.js';

await forEachEngine('keel admin create-customer', (engine) => {
  it('makes a customer with an owner login and a key, printed once; bad input changes nothing', async () => {
    const storage = await createStorage(engine);
    try {
      const args = storageArgs(storage);
      const early = await runKeel(['admin', 'create-customer', '--company-name', 'Early', '--username', 'early', ...args]);
      assert.equal(early.code, 2);
      assert.match(early.stderr, /not set up yet: run keel init first/);
      assert.equal((await runKeel(['init', '--json', ...args])).code, 0);

      const text = await runKeel(['admin', 'create-customer', '--company-name', 'Other Pty', '--username', 'other', ...args]);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^customer 2 \(Other Pty\) created; its secrets are shown only this once:\n {2}login: +other \/ \S{20}\n {2}API key: +[0-9a-f-]{36}\n {2}API secret: +[0-9a-f]{64}\n$/);
      const json = await runKeel(['admin', 'create-customer', '--company-name', 'Third', '--username', 'third', '--password', 'pass-word-3', '--json', ...args]);
      assert.equal(json.code, 0, json.stderr);
      const made = JSON.parse(json.stdout);
      assert.deepEqual(Object.keys(made).sort(), ['apiSecret', 'apiUuid', 'customerId', 'username'], 'a password given is not printed back');

      for (const [bad, why] of [
        [['--username', 'x'], /--company-name is required/],
        [['--company-name', 'X', '--username', 'other'], /the username other is taken/],
        [['--company-name', 'X', '--username', 'short', '--password', 'abc'], /--password must be at least 8/],
        [['--company-name', 'X', '--username', 'flag', '--subdomain', 'x'], /Unknown option '--subdomain'/],
      ] as [string[], RegExp][]) {
        const r = await runKeel(['admin', 'create-customer', ...bad, ...args]);
        assert.equal(r.code, 2, `${bad.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, why);
      }

      const server = await startServer(storage);
      try {
        const api = new InfraClient(server.infraUrl, { basic: [made.apiUuid, made.apiSecret] });
        const zone = await api.cmd('dns.domain.create', { name: 'third.example' });
        assert.equal(zone.body.data.customerId, made.customerId, zone.text);
        const login = await api.cmd('session.login', { username: 'third', password: 'pass-word-3', jwt: 1 }, null);
        assert.equal(login.body.code, 'OK', login.text);
        // Three customers and no more: the refused attempts made none.
        const fourth = await runKeel(['admin', 'create-customer', '--company-name', 'Fourth', '--username', 'fourth', '--json', ...args]);
        assert.equal(JSON.parse(fourth.stdout).customerId, 4);
      } finally {
        await server.stop();
      }
    } finally {
      await storage.dispose();
    }
  });
});

// A further Infra customer for black-box tests, made the way an operator makes one:
// `keel admin create-customer --json`, on the running server's store.
import assert from 'node:assert/strict';
import { InfraClient } from './infra-client.js';
import { runKeel, storageArgs, type Storage } from './server.js';

export interface TestCustomer {
  customerId: number;
  username: string;
  password: string;
  basic: [string, string];
  /** A client holding the customer's API key (HTTP Basic). */
  api: InfraClient;
}

export async function createCustomer(storage: Storage, infraUrl: string, username: string): Promise<TestCustomer> {
  const r = await runKeel(['admin', 'create-customer', '--company-name', `${username} Ltd`, '--username', username, '--json', ...storageArgs(storage)]);
  assert.equal(r.code, 0, r.stderr);
  const made = JSON.parse(r.stdout);
  const basic: [string, string] = [made.apiUuid, made.apiSecret];
  return { customerId: made.customerId, username: made.username, password: made.password, basic, api: new InfraClient(infraUrl, { basic }) };
}

// `keel admin create-customer`: makes an Infra customer from the command line, with its owner login
// and an API key holding every permission, and prints their secrets once (as `keel init` does for
// the first customer).
import { buildConfig } from '../config/config.js';
import { readCommandArgs, readOptions, UsageError } from '../config/env.js';
import type { OpenStore } from '../platform/db/open.js';
import type { InfraTables } from './tables.js';
import { unixSeconds, systemClock } from '../platform/clock.js';
import { isUniqueViolation } from '../platform/db/database.js';
import { hashPassword } from '../platform/auth/passwords.js';
import { randomPassword } from '../platform/auth/secrets.js';
import { createCustomer, LOGIN_PASSWORD_MIN, LOGIN_USERNAME, type InitResult } from './accounts.js';
import { MAX_SUB_CUSTOMERS_PER_CUSTOMER } from './commands/customer.js';

export const INFRA_ADMIN_USAGE = `  admin create-customer --company-name N --username U [--email E] [--password P] [--parent ID] [--reseller yes|no] [--json]
            create an infra customer with its owner login and an API key, and print them once;
            --parent makes it a sub-customer of customer ID, --reseller yes lets it make its own`;

export const INFRA_ADMIN_COMMANDS = ['create-customer'];

const OWN = {
  'company-name': { type: 'string' },
  username: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  parent: { type: 'string' },
  reseller: { type: 'string' },
} as const;

const USERNAME = LOGIN_USERNAME;
const PASSWORD_MIN = LOGIN_PASSWORD_MIN;

function need(own: Record<string, string | undefined>, name: string): string {
  const v = own[name]?.trim();
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** `open` opens the store the configuration names, its schema up to date (the composition root's openStore). */
export async function runInfraAdmin(argv: string[], out: (line: string) => void, open: OpenStore): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'create-customer') throw new UsageError(`unknown admin command "${sub ?? ''}"`);
  const { own, shared } = readCommandArgs(rest, OWN);
  const { options } = readOptions(shared);
  const config = buildConfig(options);
  // Every check before the store is opened, so bad input changes nothing.
  const companyName = need(own, 'company-name');
  if (companyName.length > 200) throw new UsageError('--company-name must be at most 200 characters');
  const username = need(own, 'username');
  if (!USERNAME.test(username)) throw new UsageError('--username must be 1 to 100 letters, digits and . _ @ + -');
  const email = own.email?.trim();
  if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`--email must be an email address, got "${email}"`);
  const generated = own.password === undefined;
  const password = own.password ?? randomPassword();
  if (password.length < PASSWORD_MIN) throw new UsageError(`--password must be at least ${PASSWORD_MIN} characters`);
  const parentId = own.parent === undefined ? undefined : Number(own.parent.trim());
  if (parentId !== undefined && !(/^\d{1,15}$/.test(own.parent!.trim()) && parentId >= 1)) throw new UsageError(`--parent must be a customer id, got "${own.parent}"`);
  const reseller = own.reseller?.trim().toLowerCase();
  if (reseller !== undefined && reseller !== 'yes' && reseller !== 'no') throw new UsageError(`--reseller must be yes or no, got "${own.reseller}"`);
  const passwordHash = await hashPassword(password);

  const db = await open<InfraTables>(config);
  let made: InitResult;
  try {
    // keel init makes the first customer: without one, this store was never set up.
    if (!(await db.kysely.selectFrom('customers').select('id').limit(1).executeTakeFirst())) throw new UsageError('Keel is not set up yet: run keel init first');
    made = await db.transaction(async (trx) => {
      const taken = await trx.selectFrom('logins').select('id').where('username', '=', username).executeTakeFirst();
      if (taken) throw new UsageError(`the username ${username} is taken`);
      // The operator may place a sub-customer under any customer (through the API only a reseller
      // may have them), within the same bound; the parent's row is locked on PostgreSQL for the count.
      let currency: string | undefined;
      if (parentId !== undefined) {
        let q = trx.selectFrom('customers').select(['id', 'currency']).where('id', '=', parentId);
        if (db.engine === 'postgres') q = q.forUpdate();
        const parent = await q.executeTakeFirst();
        if (!parent) throw new UsageError(`--parent: there is no customer ${parentId}`);
        const held = await trx
          .selectFrom('customers')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('parent_id', '=', parentId)
          .executeTakeFirstOrThrow();
        if (Number(held.n) >= MAX_SUB_CUSTOMERS_PER_CUSTOMER) throw new UsageError(`--parent: customer ${parentId} has ${MAX_SUB_CUSTOMERS_PER_CUSTOMER} sub-customers, the most a customer may have`);
        currency = parent.currency;
      }
      return createCustomer(trx, { companyName, username, password, passwordHash, email, parentId, currency, isReseller: reseller === 'yes' }, unixSeconds(systemClock));
    });
  } catch (err) {
    // Two creates of one username racing: the loser meets the UNIQUE constraint.
    if (isUniqueViolation(err)) throw new UsageError(`the username ${username} is taken`);
    throw err;
  } finally {
    await db.close();
  }
  const result: Record<string, unknown> = { customerId: made.customerId, username: made.username, apiUuid: made.apiUuid, apiSecret: made.apiSecret };
  if (parentId !== undefined) result.parentId = parentId;
  if (generated) result.password = password;
  if (options.json) out(JSON.stringify(result));
  else {
    const under = parentId === undefined ? '' : `, a sub-customer of customer ${parentId},`;
    out(`customer ${made.customerId} (${companyName})${under} created; its secrets are shown only this once:`);
    out(`  login:       ${made.username}${generated ? ` / ${password}` : ''}`);
    out(`  API key:     ${made.apiUuid}`);
    out(`  API secret:  ${made.apiSecret}`);
  }
  return 0;
}

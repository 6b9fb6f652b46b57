// Customers, their logins and API users: who a credential belongs to, and the first-run set-up.
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../platform/db/database.js';
import { hashPassword, verifyPassword, decoyHash } from '../platform/auth/passwords.js';
import { constantTimeEqual, randomPassword, randomToken, sha256Hex } from '../platform/auth/secrets.js';
import type { Principal } from './command.js';
import type { ApiUserRow, InfraTables } from './tables.js';
import type { Selectable } from 'kysely';

export type ApiUser = Selectable<ApiUserRow>;

/** A login's username: what `keel admin create-customer` and customer.create accept. */
export const LOGIN_USERNAME = /^[A-Za-z0-9._@+-]{1,100}$/;
/** A login's shortest password. */
export const LOGIN_PASSWORD_MIN = 8;

export function parsePermissions(json: string): string[] {
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * What an API user's JWTs carry of its secret: derived from the stored hash (never the secret), and
 * changed by every new secret, which so ends the sessions the old one opened.
 */
export function secretTag(secretHash: string): string {
  return sha256Hex(`jwt ${secretHash}`).slice(0, 16);
}

/** A fresh API key: the uuid, the secret (shown once) and what is stored. */
export function newApiKey(): { uuid: string; secret: string; secretHash: string } {
  const secret = randomToken(32);
  return { uuid: randomUUID(), secret, secretHash: sha256Hex(secret) };
}

async function activeCustomer(db: Queryable<InfraTables>, id: number): Promise<boolean> {
  const c = await db.selectFrom('customers').select('status').where('id', '=', id).executeTakeFirst();
  return c?.status === 'ACTIVE';
}

export async function principalForApiKey(db: Database<InfraTables>, uuid: string, secret: string): Promise<Principal | null> {
  // Every API request comes through here: the customer's status rides along in the same query.
  const row = await db.kysely
    .selectFrom('api_users')
    .leftJoin('customers', 'customers.id', 'api_users.customer_id')
    .selectAll('api_users')
    .select('customers.status as customer_status')
    .where('api_users.uuid', '=', uuid)
    .executeTakeFirst();
  // Hash and compare even when the uuid is unknown, so timing does not tell which part was wrong.
  const ok = constantTimeEqual(row?.secret_hash ?? sha256Hex('no such key'), sha256Hex(secret));
  if (!row || !ok || row.status !== 'ACTIVE') return null;
  if (row.customer_status !== 'ACTIVE') return null;
  return { kind: 'apiuser', id: row.id, customerId: row.customer_id, permissions: parsePermissions(row.permissions), secretTag: secretTag(row.secret_hash) };
}

/** `tag` is the JWT's: an API user's must match its current secret (`secretTag`). */
export async function principalForSubject(db: Database<InfraTables>, sub: string, tag?: string): Promise<Principal | null> {
  const m = /^(apiuser|login):(\d+)$/.exec(sub);
  if (!m) return null;
  const id = Number(m[2]);
  if (m[1] === 'apiuser') {
    const row = await db.kysely.selectFrom('api_users').select(['id', 'customer_id', 'permissions', 'status', 'secret_hash']).where('id', '=', id).executeTakeFirst();
    if (!row || row.status !== 'ACTIVE' || tag === undefined || tag !== secretTag(row.secret_hash)) return null;
    if (!(await activeCustomer(db.kysely, row.customer_id))) return null;
    return { kind: 'apiuser', id: row.id, customerId: row.customer_id, permissions: parsePermissions(row.permissions), secretTag: tag };
  }
  const login = await db.kysely.selectFrom('logins').select(['id', 'customer_id', 'status']).where('id', '=', id).executeTakeFirst();
  if (!login || login.status !== 'ACTIVE' || !(await activeCustomer(db.kysely, login.customer_id))) return null;
  // A customer's login is its owner: it may do everything within the customer.
  return { kind: 'login', id: login.id, customerId: login.customer_id, permissions: ['*'] };
}

export async function checkLogin(db: Database<InfraTables>, username: string, password: string): Promise<{ id: number; customerId: number } | null> {
  const row = await db.kysely.selectFrom('logins').selectAll().where('username', '=', username).executeTakeFirst();
  const ok = await verifyPassword(row?.password_hash ?? (await decoyHash()), password);
  if (!row || !ok || row.status !== 'ACTIVE') return null;
  if (!(await activeCustomer(db.kysely, row.customer_id))) return null;
  return { id: row.id, customerId: row.customer_id };
}

export interface InitResult {
  customerId: number;
  username: string;
  password: string;
  apiUuid: string;
  apiSecret: string;
}

/** `passwordHash` is hashPassword(password), made before the transaction: hashing is slow on purpose. */
export interface NewCustomer {
  companyName: string;
  username: string;
  password: string;
  passwordHash: string;
  email?: string;
  /** A sub-customer's parent (customer-scope.ts); none for a top-level customer. */
  parentId?: number;
  /** Whether it may make sub-customers (customer.create): the operator's first customer is one. */
  isReseller?: boolean;
  /** Defaults to AUD (a sub-customer takes its parent's). */
  currency?: string;
}

/**
 * A customer, its owner login and an API key holding every permission, in the caller's transaction.
 * Returns the key's secret, which is stored only hashed.
 */
export async function createCustomer(trx: Queryable<InfraTables>, c: NewCustomer, now: number): Promise<InitResult> {
  const customer = await trx
    .insertInto('customers')
    .values({
      company_name: c.companyName,
      std_name: c.companyName.toUpperCase(),
      first_name: '',
      last_name: '',
      email: c.email ?? '',
      status: 'ACTIVE',
      parent_id: c.parentId ?? null,
      currency: c.currency ?? 'AUD',
      is_reseller: c.isReseller ? 1 : 0,
      date_created: now,
      date_modified: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('logins')
    .values({ customer_id: customer.id, username: c.username, password_hash: c.passwordHash, name: 'Owner', role: 'OWNER', status: 'ACTIVE', last_login: null, date_created: now, date_modified: now })
    .execute();
  const key = newApiKey();
  await trx
    .insertInto('api_users')
    .values({ customer_id: customer.id, uuid: key.uuid, secret_hash: key.secretHash, name: 'initial key', permissions: JSON.stringify(['*']), status: 'ACTIVE', date_created: now, date_modified: now })
    .execute();
  return { customerId: customer.id, username: c.username, password: c.password, apiUuid: key.uuid, apiSecret: key.secret };
}

/**
 * First run: the first customer, its owner login and an API key holding every permission. Returns
 * null when this database was set up before, that is has a customer (nothing is changed then).
 * (The JWT key is derived from the server's secret key, kept outside the store: server-keys.ts.)
 */
export async function initialise(db: Database<InfraTables>, now: number): Promise<InitResult | null> {
  const password = randomPassword();
  const passwordHash = await hashPassword(password);
  // One node at a time (several may start at once on one PostgreSQL): the second finds it done.
  return db.exclusive(7032, async (trx) => {
    const existing = await trx.selectFrom('customers').select('id').limit(1).executeTakeFirst();
    if (existing) return null;
    return createCustomer(trx, { companyName: 'Keel', username: 'admin', password, passwordHash, isReseller: true }, now);
  });
}

// customer.*: the caller's customer account and, for a reseller or partner, its sub-customers
// (customers.parent_id, at any depth: customer-scope.ts). A customer outside the caller's tree answers
// exactly like one that does not exist.
import Type from 'typebox';
import { sql, type Selectable, type Updateable } from 'kysely';
import { defineCommand, requirePrincipal, type Command } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { pagingParams } from '../params.js';
import { customerForCall, visibleCustomersSql } from '../customer-scope.js';
import { unixSeconds } from '../../platform/clock.js';
import type { CustomerRow } from '../tables.js';
import { LOGIN_PASSWORD_MIN, LOGIN_USERNAME } from '../accounts.js';
import { requireMayGrant } from '../credential-rules.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { isUniqueViolation } from '../../platform/db/database.js';

/** Direct sub-customers one customer may have: each is a tree to walk on every scoped request. */
export const MAX_SUB_CUSTOMERS_PER_CUSTOMER = 1000;

const Paging = pagingParams(20);
const Status = Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED')], { description: 'ACTIVE, or SUSPENDED: its credentials stop working' });
const CustomerId = Type.Integer({ minimum: 1, description: "customer id; defaults to the caller's" });
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const CURRENCY = /^[A-Z]{3}$/;

/** The fields a caller may set on create and change on update (the provider's names). */
const Editable = {
  firstName: Type.Optional(Type.String({ maxLength: 100 })),
  lastName: Type.Optional(Type.String({ maxLength: 100 })),
  email: Type.Optional(Type.String({ maxLength: 254, description: 'an email address, or "" for none' })),
  companyABN: Type.Optional(Type.String({ maxLength: 50 })),
  companyACN: Type.Optional(Type.String({ maxLength: 50 })),
  customID: Type.Optional(Type.String({ maxLength: 100, description: "the customer's own reference" })),
  status: Type.Optional(Status),
  isreseller: Type.Optional(Type.Boolean({ description: 'whether it may make sub-customers of its own' })),
};

type Row = Selectable<CustomerRow> & { parent_std_name: string | null };

/** DOCS' customer object (infra-clients.md 2.6): ids and dates are integers, parentID 0 for none. */
function present(c: Row) {
  return {
    id: c.id,
    companyName: c.company_name,
    stdName: c.std_name,
    firstName: c.first_name,
    lastName: c.last_name,
    email: c.email,
    companyABN: c.company_abn,
    companyACN: c.company_acn,
    customID: c.custom_id,
    status: c.status,
    parentID: c.parent_id ?? 0,
    parentStdName: c.parent_std_name ?? '',
    dateCreated: Number(c.date_created),
    dateModified: Number(c.date_modified),
    currency: c.currency,
    isreseller: Number(c.is_reseller) === 1,
    locations: [] as string[],
  };
}

function checkEmail(email: string | undefined): void {
  if (email !== undefined && email !== '' && !EMAIL.test(email)) throw infraErrors.invalidParameter({ name: 'email', problem: P.emailAddress() });
}

/** A company name of spaces only names nothing (and its stdName would be blank). */
function checkCompanyName(name: string | undefined): void {
  if (name !== undefined && name.trim() === '') throw infraErrors.invalidParameter({ name: 'companyName', problem: P.empty() });
}

/** The provider's standardised name: the company name in capitals. */
const stdName = (companyName: string) => companyName.toUpperCase();

export const customerCommands: Command[] = [
  defineCommand({
    cmd: 'customer.get',
    summary: "A customer: the caller's own (by default) or one of its sub-customers",
    rest: { method: 'GET', path: '/customers/{id}' },
    params: Type.Object({ id: Type.Optional(CustomerId) }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      const db = call.services.db.kysely;
      const id = await customerForCall(db, customerId, p.id);
      const customer = present(await read(db, id));
      return { message: 'Customer Retrieved Successfully', data: customer, top: { customer } };
    },
  }),
  defineCommand({
    cmd: 'customer.getall',
    summary: "The caller's customer and every customer below it, by id",
    rest: { method: 'GET', path: '/customers' },
    params: Type.Object({
      ...Paging,
      id: Type.Optional(Type.Integer({ minimum: 1, description: 'only this customer' })),
      parentId: Type.Optional(Type.Integer({ minimum: 1, description: 'only the direct sub-customers of this customer' })),
      customerParentId: Type.Optional(Type.Integer({ minimum: 1, description: 'the same as parentId (the provider spells it both ways)' })),
      keyword: Type.Optional(Type.String({ maxLength: 200, description: 'only customers whose company name, name, email or customID contains this' })),
      stdName: Type.Optional(Type.String({ maxLength: 200, description: 'only customers whose standard name contains this' })),
      status: Type.Optional(Status),
    }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      const db = call.services.db.kysely;
      const contains = (text: string) => '%' + text.toLowerCase().replace(/[\\%_]/g, '\\$&') + '%';
      let q = db.selectFrom('customers').where(sql<boolean>`customers.id in ${visibleCustomersSql(customerId)}`);
      if (p.id !== undefined) q = q.where('customers.id', '=', p.id);
      const parent = p.parentId ?? p.customerParentId;
      if (parent !== undefined) q = q.where('customers.parent_id', '=', parent);
      if (p.status !== undefined) q = q.where('customers.status', '=', p.status);
      if (p.stdName) q = q.where(sql<boolean>`lower(customers.std_name) like ${contains(p.stdName)} escape '\\'`);
      if (p.keyword) {
        const k = contains(p.keyword);
        q = q.where(
          sql<boolean>`(lower(customers.company_name) like ${k} escape '\\' or lower(customers.first_name) like ${k} escape '\\' or lower(customers.last_name) like ${k} escape '\\' or lower(customers.email) like ${k} escape '\\' or lower(customers.custom_id) like ${k} escape '\\')`,
        );
      }
      const total = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await q
        .leftJoin('customers as parent', 'parent.id', 'customers.parent_id')
        .selectAll('customers')
        .select('parent.std_name as parent_std_name')
        .orderBy('customers.id')
        .limit(p.resWindow ?? 20)
        .offset(p.resStart ?? 0)
        .execute();
      const customers = rows.map(present);
      const count = Number(total.n);
      return { message: 'Customers Retrieved Successfully', data: customers, matches: count, top: { count, customers } };
    },
  }),
  defineCommand({
    cmd: 'customer.create',
    summary: 'Make a sub-customer of the caller (a reseller or partner) or of one of its sub-customers that is one',
    rest: { method: 'POST', path: '/customers' },
    params: Type.Object({
      companyName: Type.String({ minLength: 1, maxLength: 200 }),
      ...Editable,
      currency: Type.Optional(Type.String({ maxLength: 3, description: "three capital letters; defaults to the parent's" })),
      parentId: Type.Optional(Type.Integer({ minimum: 1, description: "the new customer's parent: the caller's customer (default) or one below it" })),
      username: Type.Optional(Type.String({ maxLength: 100, description: "with password: an owner login for the new customer (the caller must hold '*')" })),
      password: Type.Optional(Type.String({ minLength: LOGIN_PASSWORD_MIN, maxLength: 200, description: 'with username: the login password' })),
    }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      checkCompanyName(p.companyName);
      checkEmail(p.email);
      if (p.currency !== undefined && !CURRENCY.test(p.currency)) throw infraErrors.invalidParameter({ name: 'currency', problem: P.currencyCode() });
      if (p.username !== undefined && !LOGIN_USERNAME.test(p.username)) throw infraErrors.invalidParameter({ name: 'username', problem: P.username() });
      if ((p.username === undefined) !== (p.password === undefined)) {
        const [name, other] = p.username === undefined ? ['username', 'password'] : ['password', 'username'];
        throw infraErrors.invalidParameter({ name, problem: P.loginNeedsBoth({ other }) });
      }
      // An owner login holds every permission within its customer: only a caller holding them all may
      // make one, or a key allowed only customer.create could reach, through it, what it may not.
      if (p.username !== undefined) requireMayGrant(requirePrincipal(call), ['*']);
      const store = call.services.db;
      const parentId = await customerForCall(store.kysely, customerId, p.parentId);
      const now = unixSeconds(call.services.clock);
      // Slow on purpose, so before the transaction.
      const passwordHash = p.password === undefined ? undefined : await hashPassword(p.password);
      const create = () =>
        store.transaction(async (trx) => {
          // The parent's row is locked on PostgreSQL, so two creates cannot both pass the bound; SQLite
          // runs one writing transaction at a time anyway.
          let q = trx.selectFrom('customers').select(['id', 'is_reseller', 'currency']).where('id', '=', parentId);
          if (store.engine === 'postgres') q = q.forUpdate();
          const parent = await q.executeTakeFirst();
          if (!parent) throw infraErrors.customerNotFound();
          if (Number(parent.is_reseller) !== 1) throw infraErrors.notReseller({ id: parentId });
          const held = await trx
            .selectFrom('customers')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('parent_id', '=', parentId)
            .executeTakeFirstOrThrow();
          if (Number(held.n) >= MAX_SUB_CUSTOMERS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_SUB_CUSTOMERS_PER_CUSTOMER, things: 'sub-customers' });
          const made = await trx
            .insertInto('customers')
            .values({
              company_name: p.companyName,
              std_name: stdName(p.companyName),
              first_name: p.firstName ?? '',
              last_name: p.lastName ?? '',
              email: p.email ?? '',
              company_abn: p.companyABN ?? '',
              company_acn: p.companyACN ?? '',
              custom_id: p.customID ?? '',
              status: p.status ?? 'ACTIVE',
              is_reseller: p.isreseller ? 1 : 0,
              parent_id: parentId,
              currency: p.currency ?? parent.currency,
              date_created: now,
              date_modified: now,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          if (p.username !== undefined && passwordHash !== undefined) {
            const taken = await trx.selectFrom('logins').select('id').where('username', '=', p.username).executeTakeFirst();
            if (taken) throw infraErrors.invalidParameter({ name: 'username', problem: P.usernameTaken() });
            await trx
              .insertInto('logins')
              .values({
                customer_id: made.id,
                username: p.username,
                password_hash: passwordHash,
                name: 'Owner',
                role: 'OWNER',
                status: 'ACTIVE',
                last_login: null,
                date_created: now,
                date_modified: now,
              })
              .execute();
          }
          return made.id;
        });
      let id: number;
      try {
        id = await create();
      } catch (err) {
        // Two creates of one username at once: the second meets the UNIQUE constraint, and its customer rolls back.
        if (isUniqueViolation(err)) throw infraErrors.invalidParameter({ name: 'username', problem: P.usernameTaken() });
        throw err;
      }
      const customer = present(await read(store.kysely, id));
      return { message: 'Customer Created Successfully', data: customer, top: { customer } };
    },
  }),
  defineCommand({
    cmd: 'customer.update',
    summary: "Change a customer's names, email and references; the status and reseller flag of a sub-customer",
    rest: { method: 'PUT', path: '/customers/{id}' },
    params: Type.Object({
      id: Type.Optional(CustomerId),
      companyName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      ...Editable,
    }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      const db = call.services.db.kysely;
      const id = await customerForCall(db, customerId, p.id);
      // A customer cannot suspend itself (nor its parent, which it cannot see), nor make itself a
      // reseller. Its current values may be sent back unchanged: clients echo the object they read.
      if (id === customerId && (p.status !== undefined || p.isreseller !== undefined)) {
        const own = await read(db, id);
        if (p.status !== undefined && p.status !== own.status) throw infraErrors.invalidParameter({ name: 'status', problem: P.ownAccount() });
        if (p.isreseller !== undefined && p.isreseller !== (Number(own.is_reseller) === 1)) throw infraErrors.invalidParameter({ name: 'isreseller', problem: P.ownAccount() });
      }
      checkCompanyName(p.companyName);
      checkEmail(p.email);
      const changes: Updateable<CustomerRow> = { date_modified: unixSeconds(call.services.clock) };
      if (p.companyName !== undefined) {
        changes.company_name = p.companyName;
        changes.std_name = stdName(p.companyName);
      }
      if (p.firstName !== undefined) changes.first_name = p.firstName;
      if (p.lastName !== undefined) changes.last_name = p.lastName;
      if (p.email !== undefined) changes.email = p.email;
      if (p.companyABN !== undefined) changes.company_abn = p.companyABN;
      if (p.companyACN !== undefined) changes.company_acn = p.companyACN;
      if (p.customID !== undefined) changes.custom_id = p.customID;
      if (p.status !== undefined) changes.status = p.status;
      if (p.isreseller !== undefined) changes.is_reseller = p.isreseller ? 1 : 0;
      await db.updateTable('customers').set(changes).where('id', '=', id).execute();
      const customer = present(await read(db, id));
      return { message: 'Customer Updated Successfully', data: customer, top: { customer } };
    },
  }),
];

/** One customer with its parent's standard name; the caller has checked it is in scope. */
async function read(db: Parameters<typeof customerForCall>[0], id: number): Promise<Row> {
  const row = await db
    .selectFrom('customers')
    .leftJoin('customers as parent', 'parent.id', 'customers.parent_id')
    .selectAll('customers')
    .select('parent.std_name as parent_std_name')
    .where('customers.id', '=', id)
    .executeTakeFirst();
  if (!row) throw infraErrors.customerNotFound();
  return row;
}

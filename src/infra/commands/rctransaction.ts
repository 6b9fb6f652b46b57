// rctransaction.*: actions on a device (power, configuration, cancellation), queued as rows and run
// by the provisioning worker (infra/provisioning/) one at a time per device, in id order. Wire types
// are the Go client's (infra-clients.md 2.3): rcTransactionId is an int when created and a string
// when read back; objId is always a string.
import Type, { type TSchema } from 'typebox';
import type { Selectable } from 'kysely';
import { defineCommand, requirePrincipal, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { pagingParams } from '../params.js';
import { visibleCustomers } from '../customer-scope.js';
import { unixSeconds } from '../../platform/clock.js';
import type { TransactionRow } from '../tables.js';
import { NEEDS_CONFIRMATION, OBJ_TYPES, parseStartupData, TRANSACTION_STATUSES, TRANSACTION_TYPES, UNFINISHED } from '../provisioning/transaction-types.js';

/** Transactions waiting (PENDING or COMMENCED) on one device, and on all of a customer's devices. */
export const MAX_WAITING_PER_DEVICE = 20;
export const MAX_WAITING_PER_CUSTOMER = 1000;
/**
 * Finished transactions kept per customer: past this, creating one deletes the oldest finished ones.
 * Pollers read a transaction within minutes of its end; the history is a courtesy and must not grow forever.
 */
export const MAX_FINISHED_PER_CUSTOMER = 10_000;
const FINISHED = ['COMPLETED', 'FAILED'];
/** A STARTUP's data carries cloud-init user data; cloud-init's own sources allow about this much. */
const DATA_LIMIT = 65_536;

const Paging = pagingParams(20);
const literals = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );
const Type_ = literals(TRANSACTION_TYPES, 'what to do');
const ObjType = literals(OBJ_TYPES, 'the kind of object acted on');
const IdParam = (description: string) => Type.Union([Type.String({ minLength: 1, maxLength: 20 }), Type.Integer({ minimum: 1 })], { description });
const List = <T extends TSchema>(description: string, item: T) => Type.Optional(Type.Array(item, { maxItems: 1000, description }));

/** An id written as digits (or a number), within what a row can hold; else undefined. */
function idOf(raw: string | number): number | undefined {
  const n = typeof raw === 'number' ? raw : /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

type Row = Selectable<TransactionRow>;

/** rctransaction.get / getall: every id a string (the Go client's existingTransaction). */
function present(r: Row) {
  return {
    rcTransactionId: String(r.id),
    objType: r.obj_type,
    objId: String(r.obj_id),
    method: r.type,
    type: r.type,
    data: r.data ?? '',
    status: r.status,
    statusInfo: r.status_info,
    customerId: String(r.customer_id),
    dateCreated: Math.floor(r.date_created),
    dateModified: Math.floor(r.date_modified),
  };
}

/** A device the caller may act on, not cancelled; anything else reads as missing. */
async function visibleDevice(call: Call, id: number) {
  const visible = await visibleCustomers(call.services.db.kysely, requirePrincipal(call).customerId);
  const device = await call.services.db.kysely
    .selectFrom('devices')
    .select(['id', 'customer_id', 'status'])
    .where('id', '=', id)
    .where('customer_id', 'in', visible)
    .where('status', '!=', 'CANCELLED')
    .executeTakeFirst();
  if (!device) throw infraErrors.deviceNotFound();
  return device;
}

export const rctransactionCommands: Command[] = [
  defineCommand({
    cmd: 'rctransaction.create',
    summary: 'Queue an action on a device: STARTUP, SHUTDOWN, SAFESHUTDOWN, FORCESHUTDOWN, REFRESHCONFIG, CANCEL, OPENVNC or CLOSEVNC',
    rest: { method: 'POST', path: '/rctransaction' },
    params: Type.Object({
      objType: ObjType,
      objId: IdParam('the device id (a string; a number is accepted)'),
      type: Type_,
      confirmation: Type.Optional(Type.Boolean({ default: false, description: 'required (true) for CANCEL and the shutdowns; without it nothing is queued and the answer says confirmationRequired' })),
      data: Type.Optional(
        Type.Union([Type.String({ maxLength: DATA_LIMIT }), Type.Null()], {
          description: 'STARTUP: a JSON object in a string, {deployMediaImage...?, cloudInit: {userData?, metaData?, networkConfig?}}; "" for none',
        }),
      ),
    }),
    async handler(call, p) {
      const deviceId = idOf(p.objId);
      if (deviceId === undefined) throw infraErrors.invalidParameter({ name: 'objId', problem: P.deviceId() });
      const data = p.data === undefined || p.data === null || p.data === '' ? null : p.data;
      if (p.type === 'STARTUP') {
        const parsed = parseStartupData(data);
        if ('problem' in parsed) throw infraErrors.invalidParameter({ name: 'data', problem: parsed.problem });
      }
      const device = await visibleDevice(call, deviceId);
      const answer = (id: number, required: boolean, text: string) => ({
        rcTransactionId: id,
        confirmationRequired: required,
        confirmationText: text,
        objType: p.objType,
        objId: String(deviceId),
        type: p.type,
        data,
      });
      if (NEEDS_CONFIRMATION.has(p.type) && !p.confirmation) {
        // Nothing queued: the caller asks again with confirmation true (the id 0 names no transaction).
        const rcTransaction = answer(0, true, P.confirmTransaction({ type: p.type, id: deviceId }));
        return { message: 'Transaction requires confirmation', data: rcTransaction, top: { rcTransaction } };
      }
      const db = call.services.db.kysely;
      const waiting = (column: 'obj_id' | 'customer_id', value: number) =>
        db
          .selectFrom('transactions')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where(column, '=', value)
          .where('status', 'in', [...UNFINISHED])
          .executeTakeFirstOrThrow();
      if (Number((await waiting('obj_id', deviceId)).n) >= MAX_WAITING_PER_DEVICE) throw infraErrors.deviceQueueFull({ limit: MAX_WAITING_PER_DEVICE });
      if (Number((await waiting('customer_id', device.customer_id)).n) >= MAX_WAITING_PER_CUSTOMER) throw infraErrors.customerQueueFull({ limit: MAX_WAITING_PER_CUSTOMER });
      const now = call.services.clock.now();
      const seconds = unixSeconds(call.services.clock);
      const row = await db
        .insertInto('transactions')
        .values({
          customer_id: device.customer_id,
          obj_type: p.objType,
          obj_id: deviceId,
          type: p.type,
          data,
          confirmation: p.confirmation ? 1 : 0,
          status: 'PENDING',
          status_info: '',
          due_at: now,
          date_created: seconds,
          date_modified: seconds,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // The oldest finished transaction past the kept history, if any, and all before it, go.
      const cut = await db
        .selectFrom('transactions')
        .select('id')
        .where('customer_id', '=', device.customer_id)
        .where('status', 'in', FINISHED)
        .orderBy('id', 'desc')
        .limit(1)
        .offset(MAX_FINISHED_PER_CUSTOMER)
        .executeTakeFirst();
      if (cut) await db.deleteFrom('transactions').where('customer_id', '=', device.customer_id).where('status', 'in', FINISHED).where('id', '<=', cut.id).execute();
      const rcTransaction = answer(Number(row.id), false, '');
      return { message: 'Transaction successfully created', data: rcTransaction, top: { rcTransaction } };
    },
  }),
  defineCommand({
    cmd: 'rctransaction.get',
    summary: 'One transaction: its status (PENDING, COMMENCED, COMPLETED or FAILED) and statusInfo',
    rest: { method: 'GET', path: '/rctransactions/{rcTransactionId}' },
    params: Type.Object({ rcTransactionId: IdParam('the transaction id (a string or a number)') }),
    async handler(call, p) {
      const id = idOf(p.rcTransactionId);
      if (id === undefined) throw infraErrors.transactionNotFound();
      const visible = await visibleCustomers(call.services.db.kysely, requirePrincipal(call).customerId);
      const row = await call.services.db.kysely.selectFrom('transactions').selectAll().where('id', '=', id).where('customer_id', 'in', visible).executeTakeFirst();
      if (!row) throw infraErrors.transactionNotFound();
      const rcTransaction = present(row);
      return { message: 'Transaction retrieved successfully', data: rcTransaction, top: { rcTransaction } };
    },
  }),
  defineCommand({
    cmd: 'rctransaction.getall',
    summary: 'Transactions of the caller (and its sub-customers), filtered; top matches (the total) and rcTransactions',
    rest: { method: 'GET', path: '/rctransactions' },
    params: Type.Object({
      objType: ObjType,
      objId: List('object ids (strings or numbers)', Type.Union([Type.String({ maxLength: 20 }), Type.Integer({ minimum: 0 })])),
      method: List('transaction types', Type_),
      status: List('statuses', literals(TRANSACTION_STATUSES, 'a status')),
      customerId: List('customer ids (strings or numbers)', Type.Union([Type.String({ maxLength: 20 }), Type.Integer({ minimum: 0 })])),
      ...Paging,
    }),
    async handler(call, p) {
      const db = call.services.db.kysely;
      let customers = await visibleCustomers(db, requirePrincipal(call).customerId);
      if (p.customerId) {
        // A customer outside the caller's scope filters to nothing, as a missing one would.
        const asked = new Set(p.customerId.map((c) => idOf(c)).filter((c) => c !== undefined));
        customers = customers.filter((c) => asked.has(c));
      }
      let q = db.selectFrom('transactions').where('obj_type', '=', p.objType);
      q = customers.length ? q.where('customer_id', 'in', customers) : q.where('id', '<', 0);
      if (p.objId) {
        const ids = p.objId.map((o) => idOf(o)).filter((o) => o !== undefined);
        q = ids.length ? q.where('obj_id', 'in', ids) : q.where('id', '<', 0);
      }
      if (p.method?.length) q = q.where('type', 'in', p.method);
      if (p.status?.length) q = q.where('status', 'in', p.status);
      const total = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await q
        .selectAll()
        .orderBy('id')
        .limit(p.resWindow ?? 20)
        .offset(p.resStart ?? 0)
        .execute();
      const rcTransactions = rows.map(present);
      return { message: 'Transactions retrieved successfully', data: rcTransactions, matches: Number(total.n), top: { rcTransactions } };
    },
  }),
];

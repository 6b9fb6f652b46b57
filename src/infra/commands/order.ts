// order.* and order.contract.*: a customer orders servers (order.create, checked against the
// catalogue and priced), confirms the order (one PENDING contract per server, which the provisioning
// worker turns into a device and sets ACTIVE), and reads orders and contracts back with the wire types
// the Go client and Terraform decode: orderId an int from create but a string from get, contractID a
// list of ints, deviceID a string ("" while pending). Everything is scoped by customer-scope.ts.
import Type from 'typebox';
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { defineCommand, requirePrincipal, type Call, type Command, type Normaliser } from '../command.js';
import { infraErrors, infraProblems as P, problemsFault } from '../errors.js';
import { pagingParams } from '../params.js';
import { unixSeconds } from '../../platform/clock.js';
import { canActFor, visibleCustomers } from '../customer-scope.js';
import { checkProductDetails, ProductDetailsInput, type CheckedOrder } from '../orders-details.js';
import { changeText, serverPrice } from '../pricing.js';
import { inTransaction } from '../dns-batches.js';
import type { ContractRow, InfraTables, OrderRow } from '../tables.js';
import type { Transaction } from 'kysely';

/** Servers one order may make. */
export const MAX_QUANTITY = 100;
/** Orders a customer may hold unconfirmed (confirmed ones are history and are not counted). */
export const MAX_PENDING_ORDERS_PER_CUSTOMER = 2000;
/**
 * Servers a customer may hold: contracts not cancelled, plus those its unconfirmed orders would make.
 * An order beyond it is refused (order.create and order.confirm).
 */
export const MAX_SERVERS_PER_CUSTOMER = 2000;

const Paging = pagingParams(1000);
const Id = (what: string) => Type.Integer({ minimum: 1, description: `${what} id (a number, or digits in a string)` });
const OrderStatus = Type.Union([Type.Literal('PENDING'), Type.Literal('ACCEPTED'), Type.Literal('CANCELLED')]);
const ContractStatus = Type.Union([Type.Literal('PENDING'), Type.Literal('ACTIVE'), Type.Literal('CANCELLED')]);

type Trx = Transaction<InfraTables>;
type Order = Selectable<OrderRow>;
type Contract = Selectable<ContractRow>;

// ---- the order's details: null lists are absent, and problems name the place in productDetails ----

const CreateParams = Type.Object({
  productCode: Type.String({ minLength: 1, maxLength: 64, description: 'SERVER_VIRTUAL_{BUDGET|PERFORMANCE|STORAGE|TRAFFIC}_{country}; see product.getall' }),
  customerId: Type.Optional(Type.Integer({ minimum: 1, description: "the customer the servers are for (a number or digits): the caller's or a sub-customer's; default the caller's" })),
  quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_QUANTITY, default: 1, description: `servers to make, 1 to ${MAX_QUANTITY}` })),
  productDetails: Type.Optional(ProductDetailsInput),
});

const NULLABLE = ['credentials', 'storage', 'nics', 'firewallPolicies', 'hostGroupId'] as const;

/**
 * The Go client sends `credentials: null` when no password is given, and a client may send null for
 * any list it leaves out: null is taken as absent. Problems inside productDetails are named by their
 * place ("productDetails.storage.0.sizeGB").
 */
const createNormaliser: Normaliser = {
  input: CreateParams,
  run(params) {
    const d = params.productDetails;
    if (d !== null && typeof d === 'object' && !Array.isArray(d)) {
      const details = d as Record<string, unknown>;
      for (const key of NULLABLE) if (details[key] === null) details[key] = undefined;
    }
    return (path) => path.join('.');
  },
};

// ---- presentation ------------------------------------------------------------------------------

/** order.get's order: the Go client's Order has every field a string. */
function presentOrder(o: Order, contracts: Contract[]): Record<string, unknown> {
  return {
    orderId: String(o.id),
    customerId: String(o.customer_id),
    status: o.status,
    // The first contract: Terraform reads an empty one as "the server is gone".
    contractId: contracts.length ? String(contracts[0].id) : '',
    contractIds: contracts.map((c) => String(c.id)),
    productCode: o.product_code,
    quantity: Number(o.quantity),
    changeTxt: o.change_txt,
    currency: o.currency,
    cost: Number(o.cost_cents) / 100,
    dateCreated: Number(o.date_created),
    dateModified: Number(o.date_modified),
  };
}

/** order.contract.get's contract (the Go client's OrderContract plus the fixture's other fields). */
function presentContract(c: Contract, productCode: string): Record<string, unknown> {
  return {
    contractId: String(c.id),
    customerId: String(c.customer_id),
    orderId: String(c.order_id),
    serviceBillId: String(c.id),
    contractInfo: productCode,
    currency: c.currency,
    cost: Number(c.cost_cents) / 100,
    created: Number(c.date_created),
    modified: Number(c.date_modified),
    lastBilled: false,
    referenceID: String(c.order_id),
    notes: null,
    status: c.status,
    type: c.type,
    deviceID: c.device_id === null ? '' : String(c.device_id),
  };
}

// ---- look-ups ----------------------------------------------------------------------------------

async function ownOrder(db: Trx | Call['services']['db']['kysely'], customers: number[], id: number): Promise<Order> {
  const row = await db.selectFrom('orders').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.orderNotFound();
  return row;
}

async function contractsOf(db: Trx | Call['services']['db']['kysely'], orderIds: number[]): Promise<Map<number, Contract[]>> {
  const out = new Map<number, Contract[]>();
  if (orderIds.length === 0) return out;
  const rows = await db.selectFrom('contracts').selectAll().where('order_id', 'in', orderIds).orderBy('id').execute();
  for (const c of rows) {
    const list = out.get(c.order_id);
    if (list) list.push(c);
    else out.set(c.order_id, [c]);
  }
  return out;
}

/** Servers the customer holds or has ordered: contracts not cancelled, plus unconfirmed orders' quantities. */
async function serversHeld(trx: Trx, customerId: number): Promise<number> {
  const contracts = await trx
    .selectFrom('contracts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('customer_id', '=', customerId)
    .where('status', '!=', 'CANCELLED')
    .executeTakeFirstOrThrow();
  const pending = await trx
    .selectFrom('orders')
    .select((eb) => eb.fn.sum<number | string | null>('quantity').as('n'))
    .where('customer_id', '=', customerId)
    .where('status', '=', 'PENDING')
    .executeTakeFirstOrThrow();
  return Number(contracts.n) + Number(pending.n ?? 0);
}

/** A host name for an order that names none: "server-" and eight random hex digits. */
const newHostname = () => `server-${randomBytes(4).toString('hex')}`;

// ---- the commands ------------------------------------------------------------------------------

export const orderCommands: Command[] = [
  defineCommand({
    cmd: 'order.create',
    summary: 'Order servers: productDetails are checked against the product (sizes, data centre, operating system) and priced; nothing is made until order.confirm',
    rest: { method: 'POST', path: '/order' },
    params: CreateParams,
    normalise: createNormaliser,
    async handler(call, p) {
      const principal = requirePrincipal(call);
      const { db, catalogue, clock } = call.services;
      const product = catalogue.product(p.productCode);
      if (!product) throw infraErrors.invalidParameter({ name: 'productCode', problem: P.unknownProduct({ code: p.productCode }) });
      const customerId = p.customerId ?? principal.customerId;
      if (!(await canActFor(db.kysely, principal.customerId, customerId))) throw infraErrors.invalidParameter({ name: 'customerId', problem: P.unknownCustomer() });
      const checked = checkProductDetails(catalogue, product, p.productDetails ?? {}, newHostname);
      if (!('details' in checked)) throw problemsFault(checked);
      const { details, dataCentre, operatingSystem } = checked as CheckedOrder;
      const quantity = p.quantity ?? 1;
      const price = serverPrice(product, dataCentre, operatingSystem, details);
      const now = unixSeconds(clock);
      const id = await inTransaction(db, async (trx) => {
        const pending = await trx
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('customer_id', '=', customerId)
          .where('status', '=', 'PENDING')
          .executeTakeFirstOrThrow();
        if (Number(pending.n) >= MAX_PENDING_ORDERS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_PENDING_ORDERS_PER_CUSTOMER, things: 'unconfirmed orders' });
        if ((await serversHeld(trx, customerId)) + quantity > MAX_SERVERS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_SERVERS_PER_CUSTOMER, things: 'servers' });
        const row = await trx
          .insertInto('orders')
          .values({
            customer_id: customerId,
            product_code: product.code,
            quantity,
            details: JSON.stringify(details),
            change_txt: changeText(price),
            currency: catalogue.catalogue.currency,
            cost_cents: price.cents * quantity,
            status: 'PENDING',
            date_created: now,
            date_modified: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return row.id;
      });
      const result = { orderId: id, changeTxt: changeText(price), cost: (price.cents * quantity) / 100, currency: catalogue.catalogue.currency };
      return { message: 'Order created', data: result, top: result };
    },
  }),
  defineCommand({
    cmd: 'order.confirm',
    summary: 'Confirm an order: it becomes ACCEPTED and makes one PENDING contract per server (contractID); confirming it again answers the same contracts',
    rest: { method: 'POST', path: '/order/{orderId}/confirm' },
    params: Type.Object({ orderId: Id('order') }),
    async handler(call, p) {
      const principal = requirePrincipal(call);
      const { db, clock, catalogue } = call.services;
      const customers = await visibleCustomers(db.kysely, principal.customerId);
      const ids = await inTransaction(db, async (trx) => {
        const order = await ownOrder(trx, customers, p.orderId);
        if (order.status === 'ACCEPTED') return ((await contractsOf(trx, [order.id])).get(order.id) ?? []).map((c) => c.id);
        if (order.status !== 'PENDING') throw infraErrors.orderNotPending({ id: order.id, status: order.status });
        const now = unixSeconds(clock);
        // Only one confirmation wins a race; the other answers its contracts.
        const updated = await trx.updateTable('orders').set({ status: 'ACCEPTED', date_modified: now }).where('id', '=', order.id).where('status', '=', 'PENDING').executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return ((await contractsOf(trx, [order.id])).get(order.id) ?? []).map((c) => c.id);
        const quantity = Number(order.quantity);
        const perServer = Math.round(Number(order.cost_cents) / quantity);
        const type = catalogue.product(order.product_code)?.contractType ?? 'VIRTUALSERVER';
        const made: number[] = [];
        for (let i = 0; i < quantity; i++) {
          const row = await trx
            .insertInto('contracts')
            .values({
              order_id: order.id,
              customer_id: order.customer_id,
              type,
              status: 'PENDING',
              device_id: null,
              currency: order.currency,
              cost_cents: perServer,
              // The provisioning worker picks it up from now on.
              due_at: clock.now(),
              date_created: now,
              date_modified: now,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          made.push(row.id);
        }
        return made;
      });
      return { message: 'Order confirmed', data: { orderId: String(p.orderId), contractID: ids }, top: { contractID: ids } };
    },
  }),
  defineCommand({
    cmd: 'order.cancel',
    summary: 'Give up an unconfirmed order (CANCELLED); a confirmed one is ended device by device (rctransaction CANCEL)',
    rest: { method: 'POST', path: '/order/{orderId}/cancel' },
    params: Type.Object({ orderId: Id('order') }),
    async handler(call, p) {
      const { db, clock } = call.services;
      const customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      const view = await inTransaction(db, async (trx) => {
        const order = await ownOrder(trx, customers, p.orderId);
        if (order.status === 'ACCEPTED') throw infraErrors.orderNotPending({ id: order.id, status: order.status });
        // Cancelling a cancelled order again is done already.
        await trx
          .updateTable('orders')
          .set({ status: 'CANCELLED', date_modified: unixSeconds(clock) })
          .where('id', '=', order.id)
          .where('status', '=', 'PENDING')
          .execute();
        return presentOrder(await ownOrder(trx, customers, order.id), []);
      });
      return { message: 'Order cancelled', data: view, top: { order: view } };
    },
  }),
  defineCommand({
    cmd: 'order.get',
    summary: 'One order: orderId, customerId, status and contractId as strings (contractId "" until confirmed)',
    rest: { method: 'GET', path: '/order/{orderId}' },
    params: Type.Object({ orderId: Id('order') }),
    async handler(call, p) {
      const { db } = call.services;
      const customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      const order = await ownOrder(db.kysely, customers, p.orderId);
      const view = presentOrder(order, (await contractsOf(db.kysely, [order.id])).get(order.id) ?? []);
      return { message: 'Order lookup successful', data: view, top: { order: view } };
    },
  }),
  defineCommand({
    cmd: 'order.getall',
    summary: "The customer's orders (and its sub-customers'), newest last",
    rest: { method: 'GET', path: '/order' },
    params: Type.Object({
      ...Paging,
      customerId: Type.Optional(Type.Integer({ minimum: 1, description: 'only this customer’s (the caller’s or a sub-customer’s)' })),
      status: Type.Optional(OrderStatus),
      productCode: Type.Optional(Type.String({ maxLength: 64 })),
    }),
    async handler(call, p) {
      const { db } = call.services;
      let customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      if (p.customerId !== undefined) customers = customers.filter((c) => c === p.customerId);
      if (customers.length === 0) return { message: 'Orders Retrieved Successfully', data: [], matches: 0, top: { orders: [] } };
      let q = db.kysely.selectFrom('orders').where('customer_id', 'in', customers);
      if (p.status !== undefined) q = q.where('status', '=', p.status);
      if (p.productCode !== undefined) q = q.where('product_code', '=', p.productCode.toUpperCase());
      const total = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await q
        .selectAll()
        .orderBy('id')
        .limit(p.resWindow ?? 1000)
        .offset(p.resStart ?? 0)
        .execute();
      const contracts = await contractsOf(
        db.kysely,
        rows.map((r) => r.id),
      );
      const list = rows.map((o) => presentOrder(o, contracts.get(o.id) ?? []));
      return { message: 'Orders Retrieved Successfully', data: list, matches: Number(total.n), top: { orders: list } };
    },
  }),
  defineCommand({
    cmd: 'order.contract.get',
    summary: 'One contract: status PENDING until its server exists, then ACTIVE with deviceID (a string, "" while pending)',
    rest: { method: 'GET', path: '/order/contracts/{contractId}' },
    params: Type.Object({ contractId: Id('contract') }),
    async handler(call, p) {
      const { db } = call.services;
      const customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      const row = await db.kysely
        .selectFrom('contracts as c')
        .innerJoin('orders as o', 'o.id', 'c.order_id')
        .selectAll('c')
        .select('o.product_code')
        .where('c.id', '=', p.contractId)
        .where('c.customer_id', 'in', customers)
        .executeTakeFirst();
      if (!row) throw infraErrors.contractNotFound();
      const contract = presentContract(row, row.product_code);
      return { message: 'Contract lookup successful', data: contract, top: { contract } };
    },
  }),
  defineCommand({
    cmd: 'order.contract.getall',
    summary: "The customer's contracts (and its sub-customers'), oldest first",
    rest: { method: 'GET', path: '/order/contracts' },
    params: Type.Object({
      ...Paging,
      orderId: Type.Optional(Id('order')),
      customerId: Type.Optional(Type.Integer({ minimum: 1 })),
      deviceId: Type.Optional(Id('device')),
      status: Type.Optional(ContractStatus),
    }),
    async handler(call, p) {
      const { db } = call.services;
      let customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      if (p.customerId !== undefined) customers = customers.filter((c) => c === p.customerId);
      if (customers.length === 0) return { message: 'Contracts Retrieved Successfully', data: [], matches: 0, top: { contracts: [] } };
      let q = db.kysely.selectFrom('contracts as c').innerJoin('orders as o', 'o.id', 'c.order_id').where('c.customer_id', 'in', customers);
      if (p.orderId !== undefined) q = q.where('c.order_id', '=', p.orderId);
      if (p.deviceId !== undefined) q = q.where('c.device_id', '=', p.deviceId);
      if (p.status !== undefined) q = q.where('c.status', '=', p.status);
      const total = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await q
        .selectAll('c')
        .select('o.product_code')
        .orderBy('c.id')
        .limit(p.resWindow ?? 1000)
        .offset(p.resStart ?? 0)
        .execute();
      const list = rows.map((r) => presentContract(r, r.product_code));
      return { message: 'Contracts Retrieved Successfully', data: list, matches: Number(total.n), top: { contracts: list } };
    },
  }),
];

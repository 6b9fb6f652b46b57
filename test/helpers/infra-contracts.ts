// Orders and contracts written straight into the store, as order.create + order.confirm leave them
// (PENDING contracts due now): for the provisioning worker's tests, which do not need the order API.
import type { Database } from '../../src/platform/db/database.js';
import type { InfraTables } from '../../src/infra/tables.js';

export const SAMPLE_DETAILS = {
  hostname: 'web1.example.com',
  dcId: 1,
  cpu: 2,
  memoryGB: 4,
  storage: [{ name: 'root', sizeGB: 40, type: 'SSD', order: 1 }],
  trafficGB: 1000,
  install: { operatingSystem: 'UBUNTU22.04_64' },
  nics: [],
  firewallPolicies: [
    { direction: 'INBOUND', policy: 'ALLOW', order: 1, comment: 'ssh', ipAddressFrom: '', ipAddressTo: '', protocol: 'TCP', portFrom: '22', portTo: null },
    { direction: 'INBOUND', policy: 'DENY', order: 2, comment: '', ipAddressFrom: '', ipAddressTo: '', protocol: 'ANY', portFrom: null, portTo: null },
  ],
  credentials: [{ username: 'root', passwordHash: '$6$saltsalt$0123456789abcdef' }],
};

/** One accepted order with `quantity` PENDING contracts due at `dueAt`; the contract ids. */
export async function seedContracts(db: Database<InfraTables>, customerId: number, dueAt: number, quantity = 1, details: object = SAMPLE_DETAILS): Promise<number[]> {
  const seconds = Math.floor(dueAt / 1000);
  const order = await db.kysely
    .insertInto('orders')
    .values({
      customer_id: customerId,
      product_code: 'SERVER_VIRTUAL_PERFORMANCE_AU',
      quantity,
      details: JSON.stringify(details),
      change_txt: '',
      currency: 'AUD',
      cost_cents: 1000,
      status: 'ACCEPTED',
      date_created: seconds,
      date_modified: seconds,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const ids: number[] = [];
  for (let i = 0; i < quantity; i++) {
    const c = await db.kysely
      .insertInto('contracts')
      .values({
        order_id: order.id,
        customer_id: customerId,
        type: 'VIRTUALSERVER',
        status: 'PENDING',
        device_id: null,
        currency: 'AUD',
        cost_cents: 1000,
        due_at: dueAt,
        date_created: seconds,
        date_modified: seconds,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.push(Number(c.id));
  }
  return ids;
}

/** A top-level customer of its own (no API key): its resources are invisible to every other customer. */
export async function seedCustomer(db: Database<InfraTables>, name: string): Promise<number> {
  const row = await db.kysely
    .insertInto('customers')
    .values({ company_name: name, std_name: name.toUpperCase(), first_name: '', last_name: '', email: '', status: 'ACTIVE', parent_id: null, currency: 'AUD', date_created: 0, date_modified: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function contractRow(db: Database<InfraTables>, id: number) {
  return db.kysely.selectFrom('contracts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function deviceRow(db: Database<InfraTables>, id: number) {
  return db.kysely.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function deviceIps(db: Database<InfraTables>, id: number) {
  return db.kysely.selectFrom('device_ips').selectAll().where('device_id', '=', id).execute();
}

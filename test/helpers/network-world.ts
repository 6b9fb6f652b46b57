// An in-process Infra server with three customers for the network family's tests (sshkey.*,
// network.*, loadbalancer.*): the bootstrap customer (`owner`), a sub-customer of it (`child`,
// which the owner sees and acts for) and an unrelated one (`other`). Devices are written straight
// to the store (orders -> contracts -> devices), as the worker would make them.
import { createCustomer } from '../../src/infra/accounts.js';
import type { EngineName } from './engines.js';
import { inProcessInfra, type InProcessInfra } from './in-process-infra.js';

export interface Tenant {
  customerId: number;
  /** A command through json.php; the parsed envelope. */
  cmd(cmd: string, params?: Record<string, unknown>): Promise<Record<string, any>>;
  /** A REST call under /api/v2.9 (Go's prefix); GET carries `{}` as the Go client sends it. */
  rest(method: string, path: string, body?: unknown): Promise<Record<string, any>>;
}

export interface NetworkWorld {
  infra: InProcessInfra;
  owner: Tenant;
  child: Tenant;
  other: Tenant;
  /** A tenant calling with another API key (uuid and secret) of a customer. */
  as(customerId: number, uuid: string, secret: string): Tenant;
  /** A live device of the customer (a new order, contract and device row). */
  device(customerId: number): Promise<number>;
  count(table: 'ssh_keys' | 'vlans' | 'ip_networks' | 'load_balancers' | 'device_ips'): Promise<number>;
  close(): Promise<void>;
}

export async function networkWorld(engine: EngineName): Promise<NetworkWorld> {
  const infra = await inProcessInfra(engine);
  const db = infra.ctx.db.kysely;
  const tenant = (customerId: number, uuid: string, secret: string): Tenant => {
    const authorization = 'Basic ' + Buffer.from(`${uuid}:${secret}`).toString('base64');
    const send = async (method: string, url: string, body: unknown) => {
      const r = await infra.app.inject({ method, url, headers: { authorization, 'content-type': 'application/json' }, payload: JSON.stringify(body ?? {}) });
      return JSON.parse(r.body) as Record<string, any>;
    };
    return {
      customerId,
      cmd: (cmd, params = {}) => send('POST', '/api/rest/v2.10/json.php', { cmd, ...params }),
      rest: (method, path, body) => send(method, `/api/v2.9${path}`, body),
    };
  };
  const created = infra.ctx.created!;
  const owner = tenant(created.customerId, created.apiUuid, created.apiSecret);
  const make = async (name: string, parent: number | null) => {
    const c = await createCustomer(db, { companyName: `${name} Ltd`, username: name, password: 'unused', passwordHash: 'unused' }, 1_700_000_000);
    if (parent !== null) await db.updateTable('customers').set({ parent_id: parent }).where('id', '=', c.customerId).execute();
    return tenant(c.customerId, c.apiUuid, c.apiSecret);
  };
  const child = await make('child', owner.customerId);
  const other = await make('other', null);
  let devices = 0;
  return {
    infra,
    owner,
    child,
    other,
    as: tenant,
    async device(customerId) {
      devices++;
      const now = 1_700_000_000;
      const order = await db
        .insertInto('orders')
        .values({
          customer_id: customerId,
          product_code: 'SERVER_VIRTUAL_PERFORMANCE_AU',
          quantity: 1,
          details: '{}',
          change_txt: '',
          currency: 'AUD',
          cost_cents: 0,
          status: 'ACCEPTED',
          date_created: now,
          date_modified: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const contract = await db
        .insertInto('contracts')
        .values({
          order_id: order.id,
          customer_id: customerId,
          type: 'VIRTUALSERVER',
          status: 'ACTIVE',
          device_id: null,
          currency: 'AUD',
          cost_cents: 0,
          due_at: null,
          date_created: now,
          date_modified: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const device = await db
        .insertInto('devices')
        .values({
          customer_id: customerId,
          contract_id: contract.id,
          name: `host${devices}`,
          std_name: `HOST${devices}`,
          status: 'ACTIVE',
          dc_id: 19,
          product_code: 'SERVER_VIRTUAL_PERFORMANCE_AU',
          spec: '{}',
          machine_name: `keel-test-${devices}-${customerId}`,
          power_switch: 'ONLINE',
          power_status: 'ONLINE',
          traffic_mb: 0,
          date_created: now,
          date_modified: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db.updateTable('contracts').set({ device_id: device.id }).where('id', '=', contract.id).execute();
      return device.id;
    },
    async count(table) {
      const r = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
    close: () => infra.close(),
  };
}

/**
 * What Go's encoding/json accepts for a field: 'int' a JSON integer, 'string' a string, 'bool' a
 * boolean; [T] a list (never null: the brief's rule, stricter than Go); an object spec its fields,
 * each required. Returns the problems found, path by path (an empty list when it decodes).
 */
export type GoType = 'int' | 'string' | 'bool' | GoType[] | { [field: string]: GoType };

export function goProblems(spec: GoType, value: unknown, path = '$'): string[] {
  if (spec === 'int') return typeof value === 'number' && Number.isInteger(value) ? [] : [`${path}: want int, got ${JSON.stringify(value)}`];
  if (spec === 'string') return typeof value === 'string' ? [] : [`${path}: want string, got ${JSON.stringify(value)}`];
  if (spec === 'bool') return typeof value === 'boolean' ? [] : [`${path}: want bool, got ${JSON.stringify(value)}`];
  if (Array.isArray(spec)) {
    if (!Array.isArray(value)) return [`${path}: want list, got ${JSON.stringify(value)}`];
    return value.flatMap((v, i) => goProblems(spec[0], v, `${path}[${i}]`));
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path}: want object, got ${JSON.stringify(value)}`];
  const obj = value as Record<string, unknown>;
  return Object.entries(spec).flatMap(([k, s]) => (k in obj ? goProblems(s, obj[k], `${path}.${k}`) : [`${path}.${k}: missing`]));
}

// device.*: the servers contracts delivered (made by the provisioning worker). device.get and
// device.getall show them as the Go client, Terraform and the doc pages read them (devices/view.ts);
// device.update renames; device.firewall.update adds, changes and (policy "DELETED") removes firewall
// policies. A device of a customer outside the caller's scope, or a cancelled one, answers exactly as
// a missing one: "Could not find device", with no `debug` (Terraform compares the message).
import Type from 'typebox';
import { sql, type Transaction } from 'kysely';
import { defineCommand, requirePrincipal, type Call, type Command, type Normaliser } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { pagingParams } from '../params.js';
import { unixSeconds } from '../../platform/clock.js';
import { visibleCustomers } from '../customer-scope.js';
import { FirewallPolicyInput, MAX_FIREWALL_POLICIES } from '../orders-details.js';
import { applyFirewall } from '../devices/firewall.js';
import { inTransaction } from '../dns-batches.js';
import { loadOne, presentDevice, type DeviceRecord } from '../devices/view.js';
import { publishDevice, unpublishDevice } from '../devices/dns.js';
import type { InfraTables } from '../tables.js';

type Trx = Transaction<InfraTables>;

/** device.getall's default window: a customer's whole fleet in one answer in all but large accounts. */
const WINDOW_DEFAULT = 1000;
const Paging = pagingParams(WINDOW_DEFAULT);
const DeviceId = Type.Integer({ minimum: 1, description: 'device id (a number, or digits in a string)' });
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** The device a call names: `deviceId` (SDK, REST path) or `id` (the doc pages). */
function deviceIdOf(p: { deviceId?: number; id?: number }): number {
  const id = p.deviceId ?? p.id;
  if (id === undefined) throw infraErrors.missingParameterDetail({ name: 'deviceId', detail: 'the device id (deviceId or id)' });
  return id;
}

/** A live device of the caller's scope; anything else is "Could not find device". */
async function ownDevice(db: Call['services']['db']['kysely'] | Trx, customers: number[], id: number): Promise<DeviceRecord> {
  const row = await db.selectFrom('devices').selectAll().where('id', '=', id).where('customer_id', 'in', customers).where('status', '!=', 'CANCELLED').executeTakeFirst();
  if (!row) throw infraErrors.deviceNotFound();
  return row;
}

async function viewOf(call: Call, row: DeviceRecord): Promise<Record<string, unknown>> {
  return presentDevice(await loadOne(call.services.db.kysely, row), call.services.catalogue, 'get');
}

/** Problems inside firewallPolicies are named by their place (firewallPolicies.2.portTo). */
const byPlace = (input: Normaliser['input']): Normaliser => ({ input, run: () => (path) => path.join('.') });

const FirewallParams = Type.Object({
  deviceId: Type.Optional(DeviceId),
  id: Type.Optional(DeviceId),
  firewallPolicies: Type.Array(FirewallPolicyInput, {
    maxItems: MAX_FIREWALL_POLICIES * 2,
    description: 'policies without id (or id 0) are added; with id they replace that policy; with policy DELETED and id they are removed',
  }),
});

const UpdateParams = Type.Object({
  deviceId: Type.Optional(DeviceId),
  id: Type.Optional(DeviceId),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'the host name; its DNS records follow it' })),
});

export const deviceCommands: Command[] = [
  defineCommand({
    cmd: 'device.get',
    summary: 'One device: addresses, ports, firewall policies and `extra` (SYS_POWERSWITCH, SYS_POWERSTATUS ...)',
    rest: { method: 'GET', path: '/devices/{deviceId}' },
    params: Type.Object({ deviceId: Type.Optional(DeviceId), id: Type.Optional(DeviceId) }),
    async handler(call, p) {
      const { deviceViews } = call.services;
      const view = await deviceViews.get(deviceIdOf(p));
      if (!view || !(await deviceViews.visibleTo(requirePrincipal(call).customerId, view.customerId))) throw infraErrors.deviceNotFound();
      return { message: 'Device looked up successfully', data: view.json, top: { device: view.json } };
    },
  }),
  defineCommand({
    cmd: 'device.getall',
    summary: "The customer's devices (and its sub-customers'): filters id, customerID, name, stdName, dcId, dcName, ipAddress",
    rest: { method: 'GET', path: '/devices' },
    params: Type.Object({
      ...Paging,
      id: Type.Optional(DeviceId),
      customerID: Type.Optional(Type.Integer({ minimum: 1, description: "only this customer's (the caller's or a sub-customer's)" })),
      name: Type.Optional(Type.String({ maxLength: 253, description: 'devices whose name contains this (any case)' })),
      stdName: Type.Optional(Type.String({ maxLength: 253, description: 'devices whose stdName contains this (any case)' })),
      dcId: Type.Optional(Type.Integer({ minimum: 1 })),
      dcName: Type.Optional(Type.String({ maxLength: 64, description: 'data centre name or location code, such as RC-AU-GLOBESW1' })),
      ipAddress: Type.Optional(Type.String({ maxLength: 64, description: 'devices holding this address' })),
      status: Type.Optional(Type.Literal('ACTIVE')),
    }),
    async handler(call, p) {
      const { db, catalogue } = call.services;
      let customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      if (p.customerID !== undefined) customers = customers.filter((c) => c === p.customerID);
      if (customers.length === 0) return { message: 'Devices Retrieved Successfully', data: [], matches: 0, top: { devices: [] } };
      let q = db.kysely.selectFrom('devices').where('customer_id', 'in', customers).where('status', '!=', 'CANCELLED');
      if (p.id !== undefined) q = q.where('id', '=', p.id);
      if (p.dcId !== undefined) q = q.where('dc_id', '=', p.dcId);
      // An unknown data centre holds no devices.
      if (p.dcName) q = q.where('dc_id', '=', catalogue.dataCentre(p.dcName)?.id ?? 0);
      if (p.ipAddress) {
        const address = p.ipAddress
          .trim()
          .toLowerCase()
          .replace(/\/\d+$/, '');
        q = q.where('id', 'in', db.kysely.selectFrom('device_ips').select('device_id').where('address', '=', address));
      }
      const like = (v: string) => '%' + v.toLowerCase().replace(/[\\%_]/g, '\\$&') + '%';
      if (p.name) q = q.where(sql<boolean>`lower(name) like ${like(p.name)} escape '\\'`);
      if (p.stdName) q = q.where(sql<boolean>`lower(std_name) like ${like(p.stdName)} escape '\\'`);
      const total = await q.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const ids = await q
        .select('id')
        .orderBy('id')
        .limit(p.resWindow ?? WINDOW_DEFAULT)
        .offset(p.resStart ?? 0)
        .execute();
      // Each device's element is kept between requests (devices/view-cache.ts), the page spliced from them.
      const devices = await call.services.deviceViews.page(ids.map((r) => r.id));
      return { message: 'Devices Retrieved Successfully', data: devices, matches: Number(total.n), top: { devices } };
    },
  }),
  defineCommand({
    cmd: 'device.update',
    summary: "Rename a device; its A/AAAA and PTR records in the customer's zones follow the new name",
    rest: { method: 'PUT', path: '/devices/{deviceId}' },
    params: UpdateParams,
    async handler(call, p) {
      const { db, clock } = call.services;
      const customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      const row = await ownDevice(db.kysely, customers, deviceIdOf(p));
      if (p.name === undefined) throw infraErrors.invalidParameter({ name: 'name', problem: P.nothingToChange() });
      const name = p.name.trim().toLowerCase().replace(/\.$/, '');
      if (!HOSTNAME.test(name)) throw infraErrors.invalidParameter({ name: 'name', problem: P.hostname() });
      if (name !== row.name) {
        // The old name's records go, the new name's come: DNS shows the device by its current name.
        const published = await inTransaction(db, async (trx) => {
          const removed = await unpublishDevice(call.services, trx, row.id);
          await trx
            .updateTable('devices')
            .set({ name, date_modified: unixSeconds(clock) })
            .where('id', '=', row.id)
            .execute();
          const added = await publishDevice(call.services, trx, row.id);
          return [removed, added];
        });
        for (const change of published) await change.refresh();
      }
      const device = await viewOf(call, await ownDevice(db.kysely, customers, row.id));
      return { message: 'Device Updated Successfully', data: device, top: { device } };
    },
  }),
  defineCommand({
    cmd: 'device.firewall.update',
    summary: 'Change a device\'s firewall policies: without id added, with id replaced, with policy "DELETED" and id removed',
    rest: { method: 'PUT', path: '/devices/{deviceId}/firewall' },
    params: FirewallParams,
    normalise: byPlace(FirewallParams),
    async handler(call, p) {
      const { db, clock } = call.services;
      const customers = await visibleCustomers(db.kysely, requirePrincipal(call).customerId);
      const id = deviceIdOf(p);
      await inTransaction(db, async (trx) => {
        const row = await ownDevice(trx, customers, id);
        await applyFirewall(trx, row.id, p.firewallPolicies, unixSeconds(clock));
      });
      return { message: 'Firewall Policies Updated Successfully' };
    },
  }),
];

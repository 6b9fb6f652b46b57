// The provisioning worker: moves contracts and transactions through their states. It is owned by the
// composition root (app.ts: built in createApp, started after the listeners, stopped before the store
// closes). It wakes on a real, unref'd timer, but what is due is decided by the injectable clock and
// the rows' due_at, so tests with a ManualClock advance it and call runDue().
//
// Everything it knows is in rows, so a restart (even kill -9) loses nothing: a contract or a
// transaction whose step was under way is found again and its step is run (drivers' steps are
// idempotent), and the row then completes or fails with a readable statusInfo.
//
// Contracts (order.confirm makes them PENDING with due_at = now):
//   PENDING, no device  -> the device row (ACTIVE, switch ONLINE, power OFFLINE) and its primary IPv4
//                          are written, device_id set, due_at = now + driver.stepMs('create');
//   PENDING with device -> driver.create, then ACTIVE (due_at null); the device's name is published.
//   A failure (after retries for retryable ones) makes the contract FAILED (status_info says why),
//   its device CANCELLED and its addresses free.
// Transactions, per device one at a time in id order, once the device's contract is ACTIVE:
//   PENDING -> COMMENCED (due_at = now + the step's duration) -> the driver step runs -> COMPLETED,
//   or FAILED with statusInfo.
import { addOrderedPolicies } from '../devices/firewall.js';
import type { Selectable } from 'kysely';
import type { Database } from '../../platform/db/database.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/log.js';
import type { CatalogueIndex } from '../catalogue.js';
import type { ContractRow, DeviceRow, InfraTables, TransactionRow } from '../tables.js';
import { DriverError, type MachineDriver, type MachineSpec } from '../drivers/driver.js';
import { allocatePrimary, DEFAULT_POOL, parsePool, type AddressPool } from './addresses.js';
import { machineSpec, parseDetails, storedSpec } from './spec.js';
import { parseStartupData, stepOf, UNFINISHED } from './transaction-types.js';
import { STATUS_TEXT } from './status-text.js';

export interface WorkerOptions {
  /** Period of the real timer in ms; 0 runs no timer (tests call runDue()). */
  tickMs: number;
  /** The CIDR block primary IPv4 addresses come from. */
  pool: string;
  /** Steps run at once (different devices); one device's never overlap. */
  concurrency: number;
  /** Tries of a step whose driver error is retryable, before it fails. */
  maxAttempts: number;
  /** Wait before the first retry (doubled each time), in ms of the injectable clock. */
  retryMs: number;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { tickMs: 500, pool: DEFAULT_POOL, concurrency: 4, maxAttempts: 3, retryMs: 5_000 };

/** What the worker asks of other parts of Infra; each optional. */
export interface WorkerHooks {
  /** A device became ACTIVE: publish its name and address (devices/dns.ts, the orders helper's). */
  publish?(deviceId: number): Promise<void>;
  /** A device is being cancelled (its addresses are still on it): withdraw what publish made. */
  unpublish?(deviceId: number): Promise<void>;
  /** The public keys to install on a customer's machines (sshkey.*). */
  sshKeys?(customerId: number): Promise<string[]>;
}

export interface WorkerDeps {
  db: Database<InfraTables>;
  clock: Clock;
  log: Logger;
  driver: MachineDriver;
  catalogue: CatalogueIndex;
}

type Contract = Selectable<ContractRow>;
type Device = Selectable<DeviceRow>;
type Txn = Selectable<TransactionRow>;

/** Passes of one runDue: each may make the next step due (instant speed). Bounded against a loop. */
const MAX_ROUNDS = 50;
/** Rows looked at per pass. */
const BATCH = 2_000;

/** Runs fn over items, `limit` at a time; the sum of what fn returns. A failing item counts 0. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<number>): Promise<number> {
  let next = 0;
  let total = 0;
  const lane = async () => {
    while (next < items.length) {
      // Not `total += await ...`: that reads total before the await, losing the other lanes' counts.
      const done = await fn(items[next++]);
      total += done;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return total;
}

export class ProvisioningWorker {
  readonly options: WorkerOptions;
  readonly driver: MachineDriver;
  private readonly deps: WorkerDeps;
  private readonly hooks: WorkerHooks;
  private readonly pool: AddressPool;
  private chain: Promise<unknown> = Promise.resolve();
  private running = false;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(deps: WorkerDeps, options: Partial<WorkerOptions> = {}, hooks: WorkerHooks = {}) {
    this.deps = deps;
    this.driver = deps.driver;
    this.hooks = hooks;
    this.options = { ...DEFAULT_WORKER_OPTIONS, ...options };
    const pool = parsePool(this.options.pool);
    if (!pool) throw new Error(`the provisioning worker's address pool must be an IPv4 CIDR block of at least 4 addresses, got "${this.options.pool}"`);
    this.pool = pool;
  }

  /** Starts the timer (unless tickMs is 0) and runs once at once: whatever a restart left is resumed. */
  start(): void {
    this.stopping = false;
    if (this.options.tickMs <= 0) return;
    let ticking = false;
    const tick = () => {
      // A tick while its run (or a test's) is under way is skipped, not queued.
      if (ticking || this.running || this.stopping) return;
      ticking = true;
      this.runDue()
        .catch((err) => this.deps.log.error('provisioning worker run failed', { error: (err as Error).stack }))
        .finally(() => {
          ticking = false;
        });
    };
    this.timer = setInterval(tick, this.options.tickMs);
    this.timer.unref();
    tick();
  }

  /** Stops the timer and waits for the run under way (its step ends; the next one waits for a start). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.chain.catch(() => {});
  }

  /** Runs every step due now (by the clock), and those they make due, until none is; the steps run. */
  runDue(): Promise<number> {
    const run = this.chain.then(async () => {
      this.running = true;
      try {
        return await this.pass();
      } finally {
        this.running = false;
      }
    });
    this.chain = run.catch(() => {});
    return run;
  }

  private async pass(): Promise<number> {
    let total = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const n = (await this.contractsRound()) + (await this.transactionsRound());
      total += n;
      if (n === 0 || this.stopping) break;
    }
    return total;
  }

  private guarded(what: string, fn: (id: number) => Promise<number>): (id: number) => Promise<number> {
    return async (id) => {
      try {
        return await fn(id);
      } catch (err) {
        this.deps.log.error(`provisioning worker: ${what} ${id} failed`, { error: (err as Error).stack });
        return 0;
      }
    };
  }

  // ---- contracts --------------------------------------------------------------------------------

  private async contractsRound(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.db.kysely
      .selectFrom('contracts')
      .select('id')
      .where('status', '=', 'PENDING')
      .where('due_at', 'is not', null)
      .where('due_at', '<=', now)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    return eachLimited(
      due.map((r) => Number(r.id)),
      this.options.concurrency,
      this.guarded('contract', (id) => this.activate(id)),
    );
  }

  private async activate(id: number): Promise<number> {
    const db = this.deps.db.kysely;
    const c = await db.selectFrom('contracts').selectAll().where('id', '=', id).executeTakeFirst();
    if (!c || c.status !== 'PENDING' || c.due_at === null || c.due_at > this.deps.clock.now()) return 0;
    return c.device_id === null ? this.placeDevice(c) : this.buildMachine(c, c.device_id);
  }

  /** The device row and its address; the machine is built when the create step's time is over. */
  private async placeDevice(c: Contract): Promise<number> {
    const { clock, catalogue } = this.deps;
    const now = clock.now();
    const seconds = Math.floor(now / 1000);
    const placed = await this.deps.db.transaction(async (trx) => {
      const order = await trx.selectFrom('orders').select(['details', 'product_code']).where('id', '=', c.order_id).executeTakeFirst();
      const customer = await trx.selectFrom('customers').select('std_name').where('id', '=', c.customer_id).executeTakeFirst();
      const details = parseDetails(order?.details ?? '{}');
      const hostname = details.hostname || `server${c.id}`;
      const dcId = Number(details.dcId ?? 0);
      const device = await trx
        .insertInto('devices')
        .values({
          customer_id: c.customer_id,
          contract_id: c.id,
          name: hostname,
          std_name: customer?.std_name ?? '',
          status: 'ACTIVE',
          dc_id: Number.isSafeInteger(dcId) ? dcId : 0,
          product_code: order?.product_code ?? '',
          spec: '{}',
          // Unique until the id is known (the next statement names it keel-<id>).
          machine_name: `keel-contract-${c.id}`,
          power_switch: 'ONLINE',
          power_status: 'OFFLINE',
          traffic_mb: 0,
          date_created: seconds,
          date_modified: seconds,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const deviceId = Number(device.id);
      const spec = machineSpec(details, `keel-${deviceId}`, hostname, catalogue, []);
      await trx
        .updateTable('devices')
        .set({ machine_name: spec.name, spec: storedSpec(spec) })
        .where('id', '=', deviceId)
        .execute();
      // The order's firewall policies are the device's first ones (device.firewall.update changes them later).
      await addOrderedPolicies(trx, deviceId, { firewallPolicies: details.firewallPolicies ?? [] }, seconds);
      // As many IPv4 addresses as the order's NICs ask for (at least the primary one).
      const wanted = Math.max(
        1,
        (details.nics ?? []).reduce((n, nic) => n + (nic.ipv4 ?? 0), 0),
      );
      const address = await allocatePrimary(trx, this.pool, deviceId, seconds, wanted);
      if (address === undefined) return { failed: STATUS_TEXT.createFailed(STATUS_TEXT.poolExhausted(this.pool.cidr)), deviceId };
      const moved = await trx
        .updateTable('contracts')
        .set({ device_id: deviceId, due_at: now + this.driver.stepMs('create'), attempts: 0, date_modified: seconds })
        .where('id', '=', c.id)
        .where('status', '=', 'PENDING')
        .where('device_id', 'is', null)
        .executeTakeFirst();
      // Someone else placed it meanwhile (a second worker on the store): undo ours.
      if (Number(moved.numUpdatedRows) !== 1) throw new Error(`contract ${c.id} changed while its device was placed`);
      return { failed: undefined, deviceId };
    });
    if (placed.failed !== undefined) await this.failContract(c, placed.deviceId, placed.failed);
    return 1;
  }

  /** The spec a driver gets for a device: the stored one, the order's credentials, the current keys. */
  private async specOf(device: Device): Promise<MachineSpec> {
    const db = this.deps.db.kysely;
    const stored = JSON.parse(device.spec || '{}') as Omit<MachineSpec, 'credentials'>;
    const order = await db.selectFrom('contracts').innerJoin('orders', 'orders.id', 'contracts.order_id').select('orders.details').where('contracts.id', '=', device.contract_id).executeTakeFirst();
    const details = parseDetails(order?.details ?? '{}');
    const sshKeys = this.hooks.sshKeys ? await this.hooks.sshKeys(device.customer_id) : (stored.sshKeys ?? []);
    return {
      ...stored,
      name: device.machine_name,
      sshKeys,
      credentials: (details.credentials ?? []).map((cr) => ({ username: cr.username, passwordHash: cr.passwordHash })),
    };
  }

  private async buildMachine(c: Contract, deviceId: number): Promise<number> {
    const db = this.deps.db.kysely;
    const device = await db.selectFrom('devices').selectAll().where('id', '=', deviceId).executeTakeFirst();
    if (!device) {
      await this.failContract(c, null, STATUS_TEXT.deviceGone);
      return 1;
    }
    try {
      await this.driver.create(await this.specOf(device));
    } catch (err) {
      await this.contractStepFailed(c, device, err);
      return 1;
    }
    const seconds = Math.floor(this.deps.clock.now() / 1000);
    await db.updateTable('contracts').set({ status: 'ACTIVE', due_at: null, attempts: 0, status_info: '', date_modified: seconds }).where('id', '=', c.id).where('status', '=', 'PENDING').execute();
    // publish: devices/dns.ts (orders helper) — through the publish hook app.ts passes.
    if (this.hooks.publish) {
      await this.hooks.publish(deviceId).catch((err) => this.deps.log.warn('device could not be published in DNS', { deviceId, error: (err as Error).message }));
    }
    return 1;
  }

  private async contractStepFailed(c: Contract, device: Device, err: unknown): Promise<void> {
    const message = err instanceof DriverError ? err.message : 'internal error (see the server log)';
    if (!(err instanceof DriverError)) this.deps.log.error('machine create failed', { contractId: c.id, error: (err as Error).stack });
    const attempts = Number(c.attempts) + 1;
    if (err instanceof DriverError && err.retryable && attempts < this.options.maxAttempts) {
      const seconds = Math.floor(this.deps.clock.now() / 1000);
      await this.deps.db.kysely
        .updateTable('contracts')
        .set({ attempts, due_at: this.deps.clock.now() + this.options.retryMs * 2 ** (attempts - 1), status_info: STATUS_TEXT.retrying(message, attempts), date_modified: seconds })
        .where('id', '=', c.id)
        .execute();
      return;
    }
    // A half-made machine is not left behind.
    await this.driver.destroy(device.machine_name).catch(() => {});
    await this.failContract(c, device.id, STATUS_TEXT.createFailed(message));
  }

  /** FAILED, its device (if any) CANCELLED and its addresses free. */
  private async failContract(c: Contract, deviceId: number | null, info: string): Promise<void> {
    const seconds = Math.floor(this.deps.clock.now() / 1000);
    await this.deps.db.transaction(async (trx) => {
      await trx.updateTable('contracts').set({ status: 'FAILED', status_info: info, due_at: null, date_modified: seconds }).where('id', '=', c.id).execute();
      if (deviceId !== null) {
        await trx.updateTable('devices').set({ status: 'CANCELLED', power_status: 'OFFLINE', date_modified: seconds }).where('id', '=', deviceId).execute();
        await trx.deleteFrom('device_ips').where('device_id', '=', deviceId).execute();
      }
    });
  }

  // ---- transactions -----------------------------------------------------------------------------

  private async transactionsRound(): Promise<number> {
    const now = this.deps.clock.now();
    const open = await this.deps.db.kysely
      .selectFrom('transactions')
      .select(['id', 'obj_type', 'obj_id', 'due_at'])
      .where('status', 'in', [...UNFINISHED])
      .orderBy('id')
      .limit(BATCH)
      .execute();
    // Each object's oldest unfinished transaction is the only one that may move.
    const heads = new Map<string, (typeof open)[number]>();
    for (const t of open) {
      const key = `${t.obj_type}:${t.obj_id}`;
      if (!heads.has(key)) heads.set(key, t);
    }
    const due = [...heads.values()].filter((t) => t.due_at === null || t.due_at <= now).map((t) => Number(t.id));
    return eachLimited(
      due,
      this.options.concurrency,
      this.guarded('transaction', (id) => this.advance(id)),
    );
  }

  private async advance(id: number): Promise<number> {
    const db = this.deps.db.kysely;
    const now = this.deps.clock.now();
    const t = await db.selectFrom('transactions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!t || !(UNFINISHED as readonly string[]).includes(t.status) || (t.due_at !== null && t.due_at > now)) return 0;
    const device = t.obj_type === 'DEVICE' ? await db.selectFrom('devices').selectAll().where('id', '=', t.obj_id).executeTakeFirst() : undefined;
    if (!device || device.status === 'CANCELLED') return this.finish(t, 'FAILED', STATUS_TEXT.deviceGone);
    const contract = await db.selectFrom('contracts').select('status').where('id', '=', device.contract_id).executeTakeFirst();
    // Its machine is still being built: the transaction waits its turn (it is due, so it is looked at again).
    if (contract?.status === 'PENDING') return 0;
    if (contract?.status !== 'ACTIVE') return this.finish(t, 'FAILED', STATUS_TEXT.deviceGone);
    if (t.status === 'PENDING') {
      const step = stepOf(t.type);
      await db
        .updateTable('transactions')
        .set({ status: 'COMMENCED', status_info: STATUS_TEXT.commenced(t.type), due_at: now + (step ? this.driver.stepMs(step) : 0), date_modified: Math.floor(now / 1000) })
        .where('id', '=', t.id)
        .where('status', '=', 'PENDING')
        .execute();
      return 1;
    }
    return this.perform(t, device);
  }

  /** Runs a COMMENCED transaction's driver step (again, after a restart: steps are idempotent) and ends it. */
  private async perform(t: Txn, device: Device): Promise<number> {
    const driver = this.driver;
    try {
      switch (t.type) {
        case 'STARTUP': {
          const parsed = parseStartupData(t.data);
          const cloudInit = 'ok' in parsed && Object.keys(parsed.ok.cloudInit).length ? parsed.ok.cloudInit : undefined;
          await driver.start(device.machine_name, cloudInit);
          await this.adoptAddress(device);
          return this.finish(t, 'COMPLETED', STATUS_TEXT.completed.STARTUP, 'ONLINE');
        }
        case 'SHUTDOWN':
        case 'SAFESHUTDOWN':
          await driver.stop(device.machine_name, 'graceful');
          return this.finish(t, 'COMPLETED', STATUS_TEXT.completed[t.type], 'OFFLINE');
        case 'FORCESHUTDOWN':
          await driver.stop(device.machine_name, 'force');
          return this.finish(t, 'COMPLETED', STATUS_TEXT.completed.FORCESHUTDOWN, 'OFFLINE');
        case 'REFRESHCONFIG': {
          const spec = await this.specOf(device);
          await driver.reconfigure(spec);
          await this.deps.db.kysely
            .updateTable('devices')
            .set({ spec: storedSpec(spec) })
            .where('id', '=', device.id)
            .execute();
          return this.finish(t, 'COMPLETED', STATUS_TEXT.completed.REFRESHCONFIG);
        }
        case 'CANCEL':
          await driver.destroy(device.machine_name);
          // After the machine is gone (a failed destroy leaves the device as it was), before its addresses are freed.
          if (this.hooks.unpublish) {
            await this.hooks.unpublish(device.id).catch((err) => this.deps.log.warn('device could not be withdrawn from DNS', { deviceId: device.id, error: (err as Error).message }));
          }
          return this.finish(t, 'COMPLETED', STATUS_TEXT.completed.CANCEL, undefined, device);
        case 'OPENVNC':
          return this.finish(t, 'FAILED', STATUS_TEXT.vncUnavailable);
        case 'CLOSEVNC':
          return this.finish(t, 'COMPLETED', STATUS_TEXT.completed.CLOSEVNC);
        default:
          return this.finish(t, 'FAILED', STATUS_TEXT.internal(t.type));
      }
    } catch (err) {
      return this.stepFailed(t, err);
    }
  }

  private async stepFailed(t: Txn, err: unknown): Promise<number> {
    if (!(err instanceof DriverError)) {
      this.deps.log.error('transaction step failed', { transactionId: t.id, type: t.type, error: (err as Error).stack });
      return this.finish(t, 'FAILED', STATUS_TEXT.internal(t.type));
    }
    const attempts = Number(t.attempts) + 1;
    if (err.retryable && attempts < this.options.maxAttempts) {
      const now = this.deps.clock.now();
      await this.deps.db.kysely
        .updateTable('transactions')
        .set({ attempts, due_at: now + this.options.retryMs * 2 ** (attempts - 1), status_info: STATUS_TEXT.retrying(err.message, attempts), date_modified: Math.floor(now / 1000) })
        .where('id', '=', t.id)
        .execute();
      return 1;
    }
    return this.finish(t, 'FAILED', STATUS_TEXT.driverFailed(t.type, err.message));
  }

  /**
   * Ends a transaction, with its effect on the device in the same store transaction: the power
   * status, or (CANCEL) the device and contract CANCELLED and the device's addresses free.
   */
  /**
   * A driver whose machines have addresses of their own (incus: the instance's eth0) makes that the
   * device's primary IPv4, in place of the one the pool lent it, and the device is published again.
   * The sim's machines have none: the pool's address stays.
   */
  private async adoptAddress(device: Device): Promise<void> {
    const own = (await this.driver.state(device.machine_name))?.ipv4[0];
    if (!own) return;
    const seconds = Math.floor(this.deps.clock.now() / 1000);
    const changed = await this.deps.db.transaction(async (trx) => {
      const primary = await trx.selectFrom('device_ips').select(['id', 'address']).where('device_id', '=', device.id).where('is_primary', '=', 1).where('family', '=', 4).executeTakeFirst();
      if (primary?.address === own) return false;
      // Held by another device's row (a leftover): keep the pool's address rather than show one twice.
      if (await trx.selectFrom('device_ips').select('id').where('address', '=', own).executeTakeFirst()) return false;
      if (primary) await trx.updateTable('device_ips').set({ address: own }).where('id', '=', primary.id).execute();
      else await trx.insertInto('device_ips').values({ device_id: device.id, address: own, family: 4, is_primary: 1, network_id: null, date_created: seconds }).execute();
      return true;
    });
    if (changed && this.hooks.publish) {
      await this.hooks.publish(device.id).catch((err) => this.deps.log.warn('device could not be published in DNS', { deviceId: device.id, error: (err as Error).message }));
    }
  }

  private async finish(t: Txn, status: 'COMPLETED' | 'FAILED', info: string, power?: 'ONLINE' | 'OFFLINE', cancelled?: Device): Promise<number> {
    const seconds = Math.floor(this.deps.clock.now() / 1000);
    await this.deps.db.transaction(async (trx) => {
      if (power) await trx.updateTable('devices').set({ power_status: power, power_switch: 'ONLINE', date_modified: seconds }).where('id', '=', t.obj_id).execute();
      if (cancelled) {
        await trx.updateTable('devices').set({ status: 'CANCELLED', power_status: 'OFFLINE', date_modified: seconds }).where('id', '=', cancelled.id).execute();
        await trx.updateTable('contracts').set({ status: 'CANCELLED', due_at: null, date_modified: seconds }).where('id', '=', cancelled.contract_id).execute();
        await trx.deleteFrom('device_ips').where('device_id', '=', cancelled.id).execute();
      }
      await trx.updateTable('transactions').set({ status, status_info: info, due_at: null, date_modified: seconds }).where('id', '=', t.id).execute();
    });
    return 1;
  }
}

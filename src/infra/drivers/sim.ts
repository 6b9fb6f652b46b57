// The simulated driver (the default): no machine runs, but each machine is a row (sim_machines) with
// its power state, so the API behaves as the provider's does, with the provider's delays or none,
// and a restart finds every machine as it was. Tests make a step fail with failNext() or a rule.
import { sql } from 'kysely';
import type { Database } from '../../platform/db/database.js';
import type { Clock } from '../../platform/clock.js';
import type { InfraTables } from '../tables.js';
import { DriverError, type CloudInit, type MachineDriver, type MachineSpec, type MachineState } from './driver.js';

export type SimSpeed = 'instant' | 'fast' | 'realistic';
export const SIM_SPEEDS: readonly SimSpeed[] = ['instant', 'fast', 'realistic'];
export type Step = Parameters<MachineDriver['stepMs']>[0];

/**
 * How long each step takes at each speed, in ms. `realistic` is the provider's order of magnitude
 * (a virtual server is built in about three minutes, boots in one, shuts down in half of one);
 * `fast` keeps the same shape in seconds, for trying the API by hand; `instant` is for tests.
 */
const STEP_MS: Record<SimSpeed, Record<Step, number>> = {
  instant: { create: 0, start: 0, stop: 0, reconfigure: 0, destroy: 0 },
  fast: { create: 5_000, start: 2_000, stop: 1_000, reconfigure: 2_000, destroy: 2_000 },
  realistic: { create: 180_000, start: 60_000, stop: 30_000, reconfigure: 60_000, destroy: 60_000 },
};

/** Decides whether a step fails: a message (or a DriverError) makes it fail, undefined lets it run. */
export type FailureRule = (step: Step, name: string) => string | DriverError | undefined;

export interface SimOptions {
  speed?: SimSpeed;
  /** Consulted before every step (after the failNext queue). */
  fail?: FailureRule;
}

/** The spec as stored: everything but the credentials, which only the order keeps (as hashes). */
function storedSpec(spec: MachineSpec): string {
  const { credentials: _credentials, ...rest } = spec;
  return JSON.stringify(rest);
}

export class SimDriver implements MachineDriver {
  readonly kind = 'sim' as const;
  readonly speed: SimSpeed;
  private readonly rule?: FailureRule;
  private readonly queued: { step: Step; error: DriverError }[] = [];
  private readonly db: Database<InfraTables>;
  private readonly clock: Clock;

  constructor(db: Database<InfraTables>, clock: Clock, options: SimOptions = {}) {
    this.db = db;
    this.clock = clock;
    this.speed = options.speed ?? 'fast';
    this.rule = options.fail;
  }

  stepMs(step: Step): number {
    return STEP_MS[this.speed][step];
  }

  /** Makes the next `step` (of any machine) fail with `message`; queued failures are used in order. */
  failNext(step: Step, message: string, retryable = false): void {
    this.queued.push({ step, error: new DriverError(message, retryable) });
  }

  private check(step: Step, name: string): void {
    const i = this.queued.findIndex((q) => q.step === step);
    if (i >= 0) throw this.queued.splice(i, 1)[0].error;
    const verdict = this.rule?.(step, name);
    if (verdict !== undefined) throw typeof verdict === 'string' ? new DriverError(verdict) : verdict;
  }

  private async mustExist(name: string): Promise<void> {
    const row = await this.db.kysely.selectFrom('sim_machines').select('name').where('name', '=', name).executeTakeFirst();
    if (!row) throw new DriverError(`The machine ${name} does not exist`);
  }

  async create(spec: MachineSpec): Promise<void> {
    this.check('create', spec.name);
    const now = this.clock.now();
    // Idempotent: a create resumed after a crash finds the machine it made and leaves it as it is.
    await this.db.kysely
      .insertInto('sim_machines')
      .values({ name: spec.name, power: 'OFFLINE', spec: storedSpec(spec), cloud_init: null, date_created: now, date_modified: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }

  async start(name: string, cloudInit?: CloudInit): Promise<void> {
    this.check('start', name);
    await this.mustExist(name);
    await this.db.kysely
      .updateTable('sim_machines')
      .set({ power: 'ONLINE', cloud_init: cloudInit ? JSON.stringify(cloudInit) : null, starts: sql`starts + 1`, date_modified: this.clock.now() })
      .where('name', '=', name)
      .execute();
  }

  async stop(name: string, _how: 'graceful' | 'force'): Promise<void> {
    this.check('stop', name);
    await this.mustExist(name);
    await this.db.kysely.updateTable('sim_machines').set({ power: 'OFFLINE', date_modified: this.clock.now() }).where('name', '=', name).execute();
  }

  async reconfigure(spec: MachineSpec): Promise<void> {
    this.check('reconfigure', spec.name);
    await this.mustExist(spec.name);
    await this.db.kysely
      .updateTable('sim_machines')
      .set({ spec: storedSpec(spec), date_modified: this.clock.now() })
      .where('name', '=', spec.name)
      .execute();
  }

  async destroy(name: string): Promise<void> {
    this.check('destroy', name);
    await this.db.kysely.deleteFrom('sim_machines').where('name', '=', name).execute();
  }

  async state(name: string): Promise<MachineState | null> {
    const row = await this.db.kysely.selectFrom('sim_machines').select('power').where('name', '=', name).executeTakeFirst();
    if (!row) return null;
    // The sim has no network: the worker allocates addresses in the store (device_ips).
    return { power: row.power === 'ONLINE' ? 'ONLINE' : 'OFFLINE', ipv4: [], ipv6: [] };
  }

  async close(): Promise<void> {}
}

// The machine driver the configuration names (--infra-driver): `sim` by default, `incus` for real
// system containers through the Incus/LXD REST API (drivers/incus.ts).
import type { Config } from '../../config/config.js';
import { UsageError } from '../../config/env.js';
import type { Database } from '../../platform/db/database.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/log.js';
import type { InfraTables } from '../tables.js';
import type { MachineDriver } from './driver.js';
import { SimDriver, type SimOptions } from './sim.js';

export interface DriverDeps {
  db: Database<InfraTables>;
  clock: Clock;
  log: Logger;
  /** Extra options of the sim driver (tests: failure rules). */
  sim?: SimOptions;
}

/** What drivers/incus.ts exports for the factory. */
interface IncusModule {
  createIncusDriver(options: { socketPath: string; log: Logger; clock: Clock }): MachineDriver | Promise<MachineDriver>;
}

// A variable, so the build does not need the module: it is another branch's (issue 15) until merged.
const INCUS_MODULE = './incus.js';

export async function createDriver(config: Pick<Config, 'infraDriver' | 'infraSimSpeed' | 'incusSocket'>, deps: DriverDeps): Promise<MachineDriver> {
  if (config.infraDriver === 'sim') return new SimDriver(deps.db, deps.clock, { speed: config.infraSimSpeed, ...deps.sim });
  let mod: Partial<IncusModule>;
  try {
    mod = (await import(INCUS_MODULE)) as Partial<IncusModule>;
  } catch {
    throw new UsageError('--infra-driver incus: the incus driver is not built in');
  }
  if (typeof mod.createIncusDriver !== 'function') throw new UsageError('--infra-driver incus: the incus driver is not built in');
  return mod.createIncusDriver({ socketPath: config.incusSocket, log: deps.log, clock: deps.clock });
}

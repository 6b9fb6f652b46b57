// The composition root: builds the store, clock, logger, JWT signer and zone catalog from the configuration.
// Tests pass their own clock or logger through `overrides`.
import type { Config } from './config/config.js';
import type { Database } from './platform/db/database.js';
import { openDatabase } from './platform/db/open.js';
import { MIGRATIONS } from './platform/db/migrations/index.js';
import { systemClock, unixSeconds, type Clock } from './platform/clock.js';
import { createLogger, type Logger } from './platform/log.js';
import { JwtSigner } from './platform/auth/jwt.js';
import { initialise, jwtKey, type InitResult } from './infra/accounts.js';
import type { InfraTables } from './infra/tables.js';
import { ZoneCatalog } from './dns/zone.js';
import { loadAllZones } from './infra/dns-zones.js';

export interface Context {
  config: Config;
  db: Database<InfraTables>;
  clock: Clock;
  log: Logger;
  jwt: JwtSigner;
  zones: ZoneCatalog;
  /** Set when this start created the first customer (its secrets, to print once). */
  created: InitResult | null;
  close(): Promise<void>;
}

export async function openStore(config: Config): Promise<Database<InfraTables>> {
  return openDatabase<InfraTables>({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, migrations: MIGRATIONS });
}

/** Opens the store, runs first-time set-up when the database is new, and wires the services. */
export async function createContext(config: Config, overrides: { clock?: Clock; log?: Logger } = {}): Promise<Context> {
  const clock = overrides.clock ?? systemClock;
  const log = overrides.log ?? createLogger(config.logLevel);
  const db = await openStore(config);
  try {
    const created = await initialise(db, unixSeconds(clock));
    const key = await jwtKey(db);
    if (!key) throw new Error('the JWT signing key is missing from the database');
    const jwt = new JwtSigner(key, config.jwtLifetimeSeconds, clock);
    const zones = new ZoneCatalog();
    // The DNS server answers from the catalog, so every stored zone is in it before anything listens.
    await loadAllZones(db, zones);
    return { config, db, clock, log, jwt, zones, created, close: () => db.close() };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

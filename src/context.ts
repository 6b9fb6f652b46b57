// The composition root: builds the store, clock, logger, server keys, JWT signer and zone catalog from the configuration.
// Tests pass their own clock or logger through `overrides`.
import path from 'node:path';
import type { Config, ListenAddress } from './config/config.js';
import type { Database } from './platform/db/database.js';
import { openDatabase, sqliteFile } from './platform/db/open.js';
import { tooOpen } from './platform/file-modes.js';
import { MIGRATIONS } from './platform/db/migrations/index.js';
import { systemClock, unixSeconds, type Clock } from './platform/clock.js';
import { createLogger, type Logger } from './platform/log.js';
import { JwtSigner } from './platform/auth/jwt.js';
import { initialise, type InitResult } from './infra/accounts.js';
import { bindServerKeys, secretKeyFile } from './server-keys.js';
import type { ApiKeySeal } from './chat/domain/api-keys.js';
import type { InfraTables } from './infra/tables.js';
import { ZoneCatalog } from './dns/zone.js';
import { loadAllZones } from './infra/dns-zones.js';
import type { ChatTables } from './chat/tables.js';
import { initialiseChat, type ChatInitResult } from './chat/domain/realm.js';
import { defaultRootDomain } from './chat/domain/subdomains.js';

export interface Context {
  config: Config;
  db: Database<InfraTables>;
  /** The same store seen through the Chat tables (one database, one schema). */
  chatDb: Database<ChatTables>;
  clock: Clock;
  log: Logger;
  jwt: JwtSigner;
  /** Seals chat API keys under a key derived from the secret key (server-keys.ts). */
  apiKeySeal: ApiKeySeal;
  zones: ZoneCatalog;
  /** Set when this start created the first customer (its secrets, to print once). */
  created: InitResult | null;
  /** Set when this start created the chat realm and its owner (their secrets, to print once). */
  chatCreated: ChatInitResult | null;
  /** Set when this start made the secret key file (to tell the operator, with the secrets). */
  createdKeyFile?: string;
  close(): Promise<void>;
}

export async function openStore(config: Config): Promise<Database<InfraTables>> {
  return openDatabase<InfraTables>({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, migrations: MIGRATIONS });
}

/**
 * The first chat realm's URL: the configured root domain, else the address the chat listener is
 * given, with the listener's port (the one it actually got, for port 0).
 */
export function chatUrl(listen: ListenAddress, rootDomain?: string): string {
  const name = rootDomain ?? listen.host;
  const host = name.includes(':') ? `[${name}]` : name;
  return `http://${host}:${listen.port}`;
}

/** The domain chat realms are subdomains of (domain/subdomains.ts). */
export function chatRootDomain(config: Config): string {
  return config.chatRootDomain ?? defaultRootDomain(config.chatListen.host);
}

/** The data dir and files that should be the owner's alone (platform/file-modes.ts), as this configuration uses them. */
function privatePaths(config: Config): { path: string; dir?: boolean }[] {
  const paths: { path: string; dir?: boolean }[] = [];
  const keyFile = secretKeyFile(config);
  if (!config.databaseUrl || keyFile?.startsWith(config.dataDir + path.sep)) paths.push({ path: config.dataDir, dir: true });
  if (!config.databaseUrl) {
    const file = sqliteFile(config.dataDir);
    paths.push({ path: file }, { path: `${file}-wal` }, { path: `${file}-shm` });
  }
  if (keyFile) paths.push({ path: keyFile });
  return paths;
}

/** Opens the store, runs first-time set-up when the database is new, and wires the services. */
export async function createContext(config: Config, overrides: { clock?: Clock; log?: Logger } = {}): Promise<Context> {
  const clock = overrides.clock ?? systemClock;
  const log = overrides.log ?? createLogger(config.logLevel);
  const db = await openStore(config);
  try {
    const keys = await bindServerKeys(db, config, log);
    for (const line of tooOpen(privatePaths(config))) log.warn(line);
    const created = await initialise(db, unixSeconds(clock));
    const jwt = new JwtSigner(keys.jwt, config.jwtLifetimeSeconds, clock);
    const zones = new ZoneCatalog();
    // The DNS server answers from the catalog, so every stored zone is in it before anything listens.
    await loadAllZones(db, zones);
    // Both services share one database; each sees it through its own table types.
    const chatDb = db as unknown as Database<ChatTables>;
    const chatCreated = await initialiseChat(chatDb, clock.now(), chatUrl(config.chatListen, config.chatRootDomain), keys.apiKeySeal);
    return { config, db, chatDb, clock, log, jwt, apiKeySeal: keys.apiKeySeal, zones, created, chatCreated, createdKeyFile: keys.createdFile, close: () => db.close() };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

// The composition root: from the configuration it builds the store, clock, logger, server keys, JWT
// signer, zone catalog and writer, event hub, presence, limiters, caches and the three listeners, and
// starts and stops them in order. `keel serve|init|migrate|admin` (main.ts) and the tests call it;
// nothing else builds these, and no module keeps state of its own about a store or a catalog.
import { LocalFileStore } from './platform/files/local-store.js';
import type { Mailer } from './platform/mail/mailer.js';
import { OutboxMailer } from './platform/mail/outbox.js';
import { SmtpMailer } from './platform/mail/smtp.js';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Config, ListenAddress } from './config/config.js';
import { UsageError } from './config/env.js';
import type { Database } from './platform/db/database.js';
import type { Migration } from './platform/db/migrate.js';
import { openDatabase, sqliteFile } from './platform/db/open.js';
import { FulltextUpkeep, type FulltextUpkeepOptions } from './platform/db/fulltext-upkeep.js';
import { tooOpen } from './platform/file-modes.js';
import { systemClock, unixSeconds, type Clock } from './platform/clock.js';
import { createLogger, type Logger } from './platform/log.js';
import { JwtSigner } from './platform/auth/jwt.js';
import { ConnectionCap, readOpenFilesLimit, type HttpTimeouts, type OpenFilesLimit } from './platform/http/connections.js';
import { bindServerKeys, secretKeyFile } from './server-keys.js';
import { ZoneCatalog } from './zones/zone.js';
import { startDnsServer, type DnsAddress, type DnsServer } from './dns/server.js';
import { INFRA_MIGRATIONS } from './infra/migrations/index.js';
import type { InfraTables } from './infra/tables.js';
import { initialise, type InitResult } from './infra/accounts.js';
import { zoneMirror } from './infra/dns-zones.js';
import { ZoneWriter } from './infra/dns-batches.js';
import { InfraLimits } from './infra/rate-limit.js';
import { createInfraServer } from './infra/transport/server.js';
import { allCommands } from './infra/commands/index.js';
import { CatalogueIndex, DEFAULT_CATALOGUE } from './infra/catalogue.js';
import { readCatalogueFile } from './infra/catalogue-file.js';
import { createDriver } from './infra/drivers/index.js';
import type { MachineDriver } from './infra/drivers/driver.js';
import type { SimOptions } from './infra/drivers/sim.js';
import { customerSshKeys } from './infra/commands/sshkey.js';
import { publishDevice, unpublishDevice } from './infra/devices/dns.js';
import { DeviceViews } from './infra/devices/view-cache.js';
import type { InfraServices } from './infra/command.js';
import { ProvisioningWorker, type WorkerHooks, type WorkerOptions } from './infra/provisioning/worker.js';
import { CHAT_MIGRATIONS } from './chat/migrations/index.js';
import type { ChatTables } from './chat/tables.js';
import type { Realm } from './chat/tables.js';
import type { ApiKeySeal } from './chat/domain/api-keys.js';
import { createS3Server, type S3Server } from './infra/s3/server.js';
import { initialiseChat, type ChatInitResult } from './chat/domain/realm.js';
import { chatRootDomain, chatUrl, realmUrlFor } from './chat/domain/subdomains.js';
import { ChatLimits } from './chat/domain/rate-limit.js';
import { PresenceStore, type PresenceOptions } from './chat/domain/presence.js';
import { ReaderCaches } from './chat/domain/reader-cache.js';
import { EventHub, type HubLimits, type HubTimings } from './chat/events/hub.js';
import { restoreQueues, saveQueues } from './chat/events/persist.js';
import { createChatServer } from './chat/http.js';
import { allEndpoints } from './chat/endpoints/index.js';
import { BouncerPushService, type PushService } from './chat/push.js';
import type { ChatServices } from './chat/endpoint.js';
import { ScheduledDelivery, type DeliveryOptions } from './chat/domain/scheduled-delivery.js';
import { ExportWorker, type ExportWorkerOptions } from './chat/exports/worker.js';

/** Both services' migrations: one sequence of versions over one schema table (platform/db/migrate.ts). */
export const MIGRATIONS: readonly Migration[] = [...INFRA_MIGRATIONS, ...CHAT_MIGRATIONS].sort((a, b) => a.version - b.version);

/** Opens the store the configuration names and brings its schema up to date (keel migrate, keel admin). */
export function openStore<S = InfraTables>(config: { dataDir: string; databaseUrl?: string }, clock: Clock = systemClock): Promise<Database<S>> {
  return openDatabase<S>({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, migrations: MIGRATIONS, clock });
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

/** What every command that uses the store set up (keel init, keel serve, in-process tests). */
export interface Core {
  config: Config;
  db: Database<InfraTables>;
  /** The same store seen through the Chat tables (one database, one schema). */
  chatDb: Database<ChatTables>;
  clock: Clock;
  log: Logger;
  jwt: JwtSigner;
  /** Seals chat API keys under a key derived from the secret key (server-keys.ts). */
  apiKeySeal: ApiKeySeal;
  /** The zones the DNS server answers from. */
  zones: ZoneCatalog;
  /** Every change of a zone's records goes through it; it keeps `zones` in step with the store. */
  zoneWriter: ZoneWriter;
  /** Set when this start created the first customer (its secrets, to print once). */
  created: InitResult | null;
  /** Set when this start created the chat realm and its owner (their secrets, to print once). */
  chatCreated: ChatInitResult | null;
  /** Set when this start made the secret key file (to tell the operator, with the secrets). */
  createdKeyFile?: string;
  /** Closes the store. */
  close(): Promise<void>;
}

/** Opens the store, runs first-time set-up when the database is new, and loads every zone (keel init; createApp). */
export async function openCore(config: Config, overrides: { clock?: Clock; log?: Logger } = {}): Promise<Core> {
  const clock = overrides.clock ?? systemClock;
  const log = overrides.log ?? createLogger(config.logLevel);
  const db = await openStore(config, clock);
  try {
    const keys = await bindServerKeys(db, config, log);
    for (const line of tooOpen(privatePaths(config))) log.warn(line);
    const created = await initialise(db, unixSeconds(clock));
    const jwt = new JwtSigner(keys.jwt, config.jwtLifetimeSeconds, clock);
    const zones = new ZoneCatalog();
    const zoneWriter = new ZoneWriter(db, zoneMirror(db, zones), clock);
    // The DNS server answers from the catalog, so every stored zone is in it before anything listens.
    await zoneWriter.mirror.loadAll();
    // Both services share one database; each sees it through its own table types.
    const chatDb = db as unknown as Database<ChatTables>;
    const chatCreated = await initialiseChat(chatDb, clock.now(), chatUrl(config.chatListen, config.chatRootDomain), keys.apiKeySeal);
    return { config, db, chatDb, clock, log, jwt, apiKeySeal: keys.apiKeySeal, zones, zoneWriter, created, chatCreated, createdKeyFile: keys.createdFile, close: () => db.close() };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  /** The event hub's timings and bounds (tests: sweepEveryMs 0, the sweep runs when they call it). */
  events?: Partial<HubTimings & HubLimits>;
  /** Presence batching (tests: flushEveryMs 0, written when they call flush()). */
  presence?: Partial<PresenceOptions>;
  /** The merging of SQLite's full-text index (tests: everyMs 0, merged when they call run()). */
  fulltext?: Partial<FulltextUpkeepOptions>;
  /** The HTTP listeners' connection cap (default: one shared by both, from --max-connections) and timeouts. */
  http?: { cap?: ConnectionCap; timeouts?: Partial<HttpTimeouts> };
  /** Realms named under a fixed base URL and root domain (tests), instead of the chat listener's address. */
  chatSite?: { url: string; rootDomain: string };
  /** The provisioning worker (tests: tickMs 0, steps run when they call runDue()) and the sim driver's failure rules. */
  worker?: Partial<WorkerOptions> & { hooks?: WorkerHooks; sim?: SimOptions };
  /** The push notification service instead of the one --push-url names (tests). */
  push?: PushService;
  /** POST /streams/{id}/delete_topic's batch size and time budget (Zulip's: 100 messages, 50 s). */
  topicDeletion?: Partial<{ batchSize: number; budgetMs: number }>;
  /** The scheduled messages' scheduler (tests that do not start the app call scheduler.runDue()). */
  scheduler?: Partial<DeliveryOptions>;
  /** The realm export writer (tests: tickMs 0; exports are written when they call runDue()). */
  exports?: Partial<ExportWorkerOptions>;
}

/** Where the listeners listen once started, and the connection budget they share. */
export interface Listening {
  infra: AddressInfo | string | null;
  chat: AddressInfo | string | null;
  /** UDP and TCP share the port, so one address describes both. */
  dns: DnsAddress;
  /** The S3-compatible endpoint (issue 17). */
  s3: AddressInfo | string | null;
  openFiles: OpenFilesLimit | undefined;
  maxConnections: number;
}

export type InfraServer = ReturnType<typeof createInfraServer>;
export type ChatServer = ReturnType<typeof createChatServer>;

/** Everything `keel serve` runs: the core, the services over it and their listeners (built, not yet listening). */
export interface App extends Core {
  limits: { infra: InfraLimits; chat: ChatLimits };
  events: EventHub;
  presence: PresenceStore;
  caches: ReaderCaches;
  /** Chat's outgoing mail (invitations): SMTP with --smtp-url, else the outbox in the data dir (platform/mail/). */
  mailer: Mailer;
  /** Merges SQLite's full-text index after messages were written (platform/db/fulltext-upkeep.ts); runs from start() to stop(). */
  fulltext: FulltextUpkeep<ChatTables>;
  /** What every Infra command is given (the store, clock, zone writer, limits, catalogue, device views). */
  infraServices: InfraServices;
  infraServer: InfraServer;
  chatServer: ChatServer;
  /** The S3-compatible endpoint (infra/s3/server.ts), on --s3-listen from start() to stop(). */
  s3Server: S3Server;
  /** The machines behind Infra devices (--infra-driver). */
  driver: MachineDriver;
  /** Moves contracts and transactions (infra/provisioning/); runs from start() to stop(). */
  worker: ProvisioningWorker;
  /** Sends scheduled messages when they come due (chat/domain/scheduled-delivery.ts); runs from start() to stop(). */
  scheduler: ScheduledDelivery;
  /** Writes requested realm exports in the background (chat/exports/worker.ts); runs from start() to stop(). */
  exports: ExportWorker;
  /** Takes back the event queues the last stop saved; before any listener opens, so a client polling its old queue finds it. */
  restoreQueues(): Promise<void>;
  /**
   * Saves the event queues for the next start; a failed save leaves clients as a crash would (they
   * get BAD_EVENT_QUEUE_ID and register again), so it is logged, never thrown. A failed start says
   * so in one line of its own, so its save is logged only at debug level.
   */
  saveQueues(failedStart?: boolean): Promise<void>;
  /** Restores the queues, then opens the Infra, Chat and DNS listeners; a start that fails closes what it opened, saves the queues and closes the store. */
  start(): Promise<Listening>;
  /** After start: closes the listeners, saves the queues, closes the store. */
  stop(): Promise<void>;
}

function listenFailure(err: unknown, what: string, at: ListenAddress): UsageError {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'EADDRINUSE' ? 'address already in use' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
  return new UsageError(`cannot listen on ${at.host}:${at.port} for ${what}: ${why}`);
}

/** Builds Keel from the configuration: the core (openCore), both services and their listeners. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  // The operator's catalogue is checked before the store opens: a bad file changes nothing.
  const catalogue = new CatalogueIndex(config.infraCatalogue === undefined ? DEFAULT_CATALOGUE : readCatalogueFile(config.infraCatalogue));
  const core = await openCore(config, options);
  const { clock, log, chatDb } = core;
  // One cap on the connections of both HTTP listeners: they share the open files. Node raises the
  // soft open-files limit to the hard one as it starts; only the hard limit (ulimit -Hn, systemd's
  // LimitNOFILE, docker --ulimit nofile) allows more.
  const openFiles = readOpenFilesLimit();
  const cap = options.http?.cap ?? new ConnectionCap(config.maxConnections);
  const http = { cap, timeouts: options.http?.timeouts };
  const limits = {
    infra: new InfraLimits(clock, config.rateLimits, config.trustedProxies),
    chat: new ChatLimits(clock, config.rateLimits, config.trustedProxies),
  };
  let driver: MachineDriver;
  try {
    driver = await createDriver(config, { db: core.db, clock, log, sim: options.worker?.sim });
  } catch (err) {
    await core.close();
    throw err;
  }
  const { hooks, sim: _sim, ...workerOptions } = options.worker ?? {};
  // S3 objects (issue 17) stay out of the store too, in their own directory of the data dir.
  const s3Files = new LocalFileStore(path.join(config.dataDir, 's3'));
  const infraServices: InfraServices = {
    db: core.db,
    jwt: core.jwt,
    clock,
    log,
    zoneWriter: core.zoneWriter,
    nameserverDomain: config.nameserverDomain,
    limits: limits.infra,
    catalogue,
    deviceViews: new DeviceViews(core.db, clock, catalogue),
    s3Seal: core.apiKeySeal,
    s3Files,
  };
  // The worker installs the customer's SSH keys (sshkey.*) on the machines it builds, and publishes
  // an active device's name and addresses in the customer's zones (devices/dns.ts).
  const worker = new ProvisioningWorker({ db: core.db, clock, log, driver, catalogue }, workerOptions, {
    sshKeys: (customerId) => customerSshKeys(core.db.kysely, customerId),
    publish: async (deviceId) => {
      await publishDevice(infraServices, undefined, deviceId);
    },
    unpublish: async (deviceId) => {
      await unpublishDevice(infraServices, undefined, deviceId);
    },
    ...hooks,
  });
  /** The store closes last: the driver (an incus socket) before it. */
  const closeCore = async (): Promise<void> => {
    await driver.close().catch(() => {});
    await core.close();
  };
  const infraServer = createInfraServer(infraServices, allCommands(), http);
  const s3Server = createS3Server({ db: core.db, clock, log, files: s3Files, seal: core.apiKeySeal, domain: config.s3Domain });

  // Port 0 picks a free port: realm URLs name the port actually chosen (noted once the listener is up).
  let chatAt = config.chatListen;
  const rootDomain = options.chatSite?.rootDomain ?? chatRootDomain(config);
  const fixedSite = options.chatSite?.url;
  const events = new EventHub(clock, log, options.events, () => chatDb.synced());
  const presence = new PresenceStore(chatDb, clock, log, options.presence);
  const caches = new ReaderCaches(chatDb, clock);
  const fulltext = new FulltextUpkeep(chatDb, options.fulltext, log);
  // Uploaded files stay out of the store, in the data dir (platform/files/local-store.ts).
  const files = new LocalFileStore(path.join(config.dataDir, 'uploads'));
  const push = options.push ?? (config.push ? new BouncerPushService(config.push, log) : undefined);
  if (config.devMode) {
    log.warn('DEVELOPMENT MODE IS ON (--dev-mode on): POST /api/v1/dev_fetch_api_key gives anyone the API key of any user, without a password. Never run a server others can reach this way.');
  }
  // Mail goes through --smtp-url, else into the outbox (which also keeps what the server refuses).
  const outbox = new OutboxMailer(outboxDir(config), clock);
  const mailer: Mailer = config.smtpUrl ? new SmtpMailer(config.smtpUrl, outbox, log, clock) : outbox;
  const realmUrl = (realm: Realm) => realmUrlFor(fixedSite ?? chatUrl(chatAt, config.chatRootDomain), rootDomain, realm.string_id);
  const exports = new ExportWorker({ db: chatDb, clock, log, events, files, realmUrl }, options.exports);
  const chatServices: ChatServices = {
    db: chatDb,
    clock,
    log,
    realmUrl,
    rootDomain,
    limits: limits.chat,
    events,
    presence,
    apiKeySeal: core.apiKeySeal,
    caches,
    files,
    push,
    bigBlueButton: config.bigBlueButton,
    devMode: config.devMode,
    topicDeletion: { batchSize: 100, budgetMs: 50_000, ...options.topicDeletion },
    mailer,
    exports,
    maxFileUploadMib: config.chatMaxUploadMib,
  };
  // Sends scheduled messages when they come due (domain/scheduled-delivery.ts); runs from start() to stop().
  const scheduler = new ScheduledDelivery(chatServices, options.scheduler);
  chatServices.scheduler = scheduler;
  // Unfinished resumable uploads (chat/tus.ts) are staged in the data dir, beside the file store.
  const chatServer = createChatServer(chatServices, allEndpoints(), { ...http, tusDir: path.join(config.dataDir, 'tus') });

  let dns: DnsServer | undefined;
  const saveQueuesNow = async (failedStart = false): Promise<void> => {
    try {
      const saved = await saveQueues(events, chatDb, clock.now());
      log[failedStart ? 'debug' : 'info']('event queues saved', { saved });
    } catch (err) {
      log.error('event queues could not be saved', { error: (err as Error).stack });
    }
  };

  return {
    ...core,
    limits,
    events,
    presence,
    caches,
    fulltext,
    infraServices,
    mailer,
    infraServer,
    chatServer,
    s3Server,
    driver,
    worker,
    scheduler,
    exports,
    restoreQueues: async () => {
      await restoreQueues(events, chatDb, clock.now(), log);
    },
    saveQueues: saveQueuesNow,
    async start() {
      try {
        // Before the listener opens: a client polling its old queue finds it (and its restart event).
        await restoreQueues(events, chatDb, clock.now(), log);
      } catch (err) {
        await closeCore();
        throw err;
      }
      try {
        await infraServer.listen({ host: config.infraListen.host, port: config.infraListen.port, backlog: 4096 });
      } catch (err) {
        // A start that fails must not lose the queues it took from the store.
        await saveQueuesNow(true);
        await closeCore();
        throw listenFailure(err, 'infra', config.infraListen);
      }
      try {
        await chatServer.listen({ host: config.chatListen.host, port: config.chatListen.port, backlog: 4096 });
      } catch (err) {
        await infraServer.close();
        await saveQueuesNow(true);
        await closeCore();
        throw listenFailure(err, 'chat', config.chatListen);
      }
      const chatAddress = chatServer.server.address();
      if (chatAddress && typeof chatAddress !== 'string') chatAt = { host: config.chatListen.host, port: chatAddress.port };
      try {
        dns = await startDnsServer({
          catalog: core.zones,
          listen: config.dnsListen,
          nameserverDomain: config.nameserverDomain,
          nameserverAddresses: config.nameserverAddresses,
          secondaries: config.dnsSecondaries,
          log,
        });
      } catch (err) {
        await Promise.all([infraServer.close(), chatServer.close()]);
        await saveQueuesNow(true);
        await closeCore();
        throw listenFailure(err, 'dns (UDP and TCP)', config.dnsListen);
      }
      try {
        await s3Server.listen(config.s3Listen.host, config.s3Listen.port);
      } catch (err) {
        await Promise.all([infraServer.close(), chatServer.close(), dns.close()]);
        await saveQueuesNow(true);
        await closeCore();
        throw listenFailure(err, 's3', config.s3Listen);
      }
      fulltext.start();
      log.info(mailer.description);
      // After the listeners: a step resumed now is visible to pollers at once.
      worker.start();
      // After the listener: what came due while the server was down goes out now, its events to restored queues.
      scheduler.start();
      exports.start();
      log.info('provisioning worker started', { driver: driver.kind, ...(driver.kind === 'sim' ? { speed: config.infraSimSpeed } : { socket: config.incusSocket }) });
      return { infra: infraServer.server.address(), chat: chatAddress, dns: dns.udpAddress, s3: s3Server.server.address(), openFiles, maxConnections: cap.max };
    },
    async stop() {
      // The chat listener's close answers parked polls and waits for every request, so nothing adds
      // to the queues while they are saved; answers written during it ask clients to close their
      // connection (chat/http.ts), and presence not yet written reaches the store.
      await Promise.all([dns?.close(), s3Server.close(), infraServer.close(), chatServer.close(), fulltext.stop(), worker.stop(), scheduler.stop(), exports.stop()]);
      await saveQueuesNow();
      await mailer.close();
      await closeCore();
    },
  };
}

/** Where chat mail is kept without --smtp-url (and when the SMTP server refuses it): `keel admin outbox` reads it. */
export function outboxDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'outbox');
}

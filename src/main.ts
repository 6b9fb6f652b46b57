// Entry point of the `keel` command: keel serve | init | migrate | admin | help.
import { buildConfig, type Config, type ListenAddress } from './config/config.js';
import { OPTIONS, readOptions, SECRET_KEY_ENV, UsageError } from './config/env.js';
import { chatRootDomain, chatUrl, createContext, openStore, type Context } from './context.js';
import { realmUrlFor } from './chat/domain/subdomains.js';
import { DatabaseError } from './platform/db/database.js';
import { schemaVersion } from './platform/db/migrate.js';
import type { InitResult } from './infra/accounts.js';
import { createInfraServer } from './infra/transport/server.js';
import { allCommands } from './infra/commands/index.js';
import { startDnsServer, type DnsServer } from './dns/server.js';
import type { ChatInitResult } from './chat/domain/realm.js';
import { createChatServer } from './chat/http.js';
import { allEndpoints } from './chat/endpoints/index.js';
import { ChatLimits } from './chat/domain/rate-limit.js';
import { InfraLimits } from './infra/rate-limit.js';
import { ADMIN_USAGE, CHAT_ADMIN_COMMANDS, runAdmin } from './chat/admin.js';
import { INFRA_ADMIN_COMMANDS, INFRA_ADMIN_USAGE, runInfraAdmin } from './infra/admin.js';
import { EventHub } from './chat/events/hub.js';
import { restoreQueues, saveQueues } from './chat/events/persist.js';
import { PresenceStore } from './chat/domain/presence.js';
import { ConnectionCap, readOpenFilesLimit } from './platform/http/connections.js';
import type { HttpService } from './platform/http/listener.js';
import { SecretKeyError } from './platform/auth/secret-key.js';
import { ROTATE_USAGE, runRotateSecretKey } from './rotate-secret-key.js';
import { keepTheKeyFile } from './server-keys.js';

const USAGE = `usage: keel <command> [options]

commands:
  serve     start the Infra API, the DNS server and the Chat API (and, on a new data dir or
            database, set Keel up first)
  init      create the database, the first customer, login and API key, and the chat realm
            with its owner (secrets printed once)
  migrate   bring the database schema up to date
${INFRA_ADMIN_USAGE}
${ADMIN_USAGE}
${ROTATE_USAGE}
  help      show this text

options (each can also be set by the environment variable shown):
${Object.entries(OPTIONS)
  .map(([name, o]) => `  --${name.padEnd(20)} ${o.env.padEnd(25)} ${o.help}${'default' in o ? ` (default ${o.default})` : ''}`)
  .join('\n')}
  --json                                           print machine-readable JSON (init, serve)
  (no flag)              ${SECRET_KEY_ENV.padEnd(25)} the secret key itself (64 hex characters), instead of a key file
`;

function out(line: string): void {
  process.stdout.write(line + '\n');
}

function printInit(result: InitResult | null, chat: ChatInitResult | null, json: boolean, config: Config, keyFile?: string): void {
  if (json) {
    const created: Record<string, unknown> = {};
    if (result) created.infra = result;
    if (chat) created.chat = chat;
    if (keyFile) created.secretKeyFile = keyFile;
    out(JSON.stringify(result || chat ? created : { alreadyInitialised: true }));
    return;
  }
  if (!result && !chat) {
    out(`Keel is already set up (${config.databaseUrl ? 'PostgreSQL' : config.dataDir}); nothing changed.`);
    return;
  }
  out('Keel is set up. These secrets are shown only this once:');
  if (result) {
    out(`  infra customer id: ${result.customerId}`);
    out(`  infra login:       ${result.username} / ${result.password}`);
    out(`  infra API key:     ${result.apiUuid}`);
    out(`  infra API secret:  ${result.apiSecret}`);
  }
  if (chat) {
    out(`  chat realm:        ${chat.realmUrl}`);
    out(`  chat owner login:  ${chat.email} / ${chat.password}`);
    out(`  chat API key:      ${chat.apiKey}`);
  }
  if (keyFile) out(`Note: ${keepTheKeyFile(keyFile, config.databaseUrl !== undefined)}.`);
}

function hostPort(a: { address: string; port: number } | string | null, fallback: ListenAddress): string {
  if (!a || typeof a === 'string') return `${fallback.host}:${fallback.port}`;
  return a.address.includes(':') ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

function listenFailure(err: unknown, what: string, at: ListenAddress): UsageError {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'EADDRINUSE' ? 'address already in use' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
  return new UsageError(`cannot listen on ${at.host}:${at.port} for ${what}: ${why}`);
}

function startChat(ctx: Context, config: Config, cap: ConnectionCap): { app: HttpService; events: EventHub; url: () => string; close: () => Promise<void> } {
  let actual = config.chatListen;
  const rootDomain = chatRootDomain(config);
  const events = new EventHub(ctx.clock, ctx.log, {}, () => ctx.chatDb.synced());
  const app = createChatServer(
    {
      db: ctx.chatDb,
      clock: ctx.clock,
      log: ctx.log,
      // Port 0 picks a free port: the realm URL names the port actually chosen.
      realmUrl: (realm) => realmUrlFor(chatUrl(actual, config.chatRootDomain), rootDomain, realm.string_id),
      rootDomain,
      limits: new ChatLimits(ctx.clock, config.rateLimits, config.trustedProxies),
      events,
      presence: new PresenceStore(ctx.chatDb, ctx.clock, ctx.log),
      apiKeySeal: ctx.apiKeySeal,
    },
    allEndpoints(),
    { cap },
  );
  return {
    app,
    events,
    // Answers written during the close ask clients to close their connection (chat/http.ts).
    close: () => app.close(),
    url: () => {
      const a = app.server.address();
      if (a && typeof a !== 'string') actual = { host: config.chatListen.host, port: a.port };
      return chatUrl(actual, config.chatRootDomain);
    },
  };
}

async function serve(config: Config, json: boolean): Promise<number> {
  const ctx = await createContext(config);
  if (ctx.created || ctx.chatCreated) printInit(ctx.created, ctx.chatCreated, json, config, ctx.createdKeyFile);
  // One cap on the connections of both HTTP listeners: they share the open files. Node raises the
  // soft open-files limit to the hard one as it starts; only the hard limit (ulimit -Hn, systemd's
  // LimitNOFILE, docker --ulimit nofile) allows more.
  const openFiles = readOpenFilesLimit();
  const cap = new ConnectionCap(config.maxConnections);
  const infra = createInfraServer({ db: ctx.db, jwt: ctx.jwt, clock: ctx.clock, log: ctx.log, zones: ctx.zones, nameserverDomain: ctx.config.nameserverDomain, limits: new InfraLimits(ctx.clock, config.rateLimits, config.trustedProxies) }, allCommands(), { cap });
  const chat = startChat(ctx, config, cap);
  // Saves the queues for the next start; a failed save leaves clients as a crash would (they get
  // BAD_EVENT_QUEUE_ID and register again), so it is logged and the shutdown goes on.
  // A failed start says so in one line of its own, so its save is logged only at debug level.
  const keepQueues = async (failedStart = false) => {
    try {
      const saved = await saveQueues(chat.events, ctx.chatDb, ctx.clock.now());
      ctx.log[failedStart ? 'debug' : 'info']('event queues saved', { saved });
    } catch (err) {
      ctx.log.error('event queues could not be saved', { error: (err as Error).stack });
    }
  };
  try {
    // Before the listener opens: a client polling its old queue finds it (and its restart event).
    await restoreQueues(chat.events, ctx.chatDb, ctx.clock.now(), ctx.log);
  } catch (err) {
    await ctx.close();
    throw err;
  }
  try {
    await infra.listen({ host: config.infraListen.host, port: config.infraListen.port, backlog: 4096 });
  } catch (err) {
    // A start that fails must not lose the queues it took from the store.
    await keepQueues(true);
    await ctx.close();
    throw listenFailure(err, 'infra', config.infraListen);
  }
  try {
    await chat.app.listen({ host: config.chatListen.host, port: config.chatListen.port, backlog: 4096 });
  } catch (err) {
    await infra.close();
    await keepQueues(true);
    await ctx.close();
    throw listenFailure(err, 'chat', config.chatListen);
  }
  chat.url();
  const infraAddr = hostPort(infra.server.address(), config.infraListen);

  let dns: DnsServer;
  try {
    dns = await startDnsServer({
      catalog: ctx.zones,
      listen: config.dnsListen,
      nameserverDomain: config.nameserverDomain,
      nameserverAddresses: config.nameserverAddresses,
      secondaries: config.dnsSecondaries,
      log: ctx.log,
    });
  } catch (err) {
    await Promise.all([infra.close(), chat.app.close()]);
    await keepQueues(true);
    await ctx.close();
    throw listenFailure(err, 'dns (UDP and TCP)', config.dnsListen);
  }
  // UDP and TCP share the port, so one address describes both.
  const dnsAddr = hostPort(dns.udpAddress, config.dnsListen);
  const chatAddr = hostPort(chat.app.server.address(), config.chatListen);
  // JSON numbers: an unlimited limit is null.
  const files = openFiles && { soft: Number.isFinite(openFiles.soft) ? openFiles.soft : null, hard: Number.isFinite(openFiles.hard) ? openFiles.hard : null };
  if (json) out(JSON.stringify({ listening: { infra: infraAddr, dns: dnsAddr, chat: chatAddr }, openFiles: files ?? null, maxConnections: cap.max }));
  else {
    out(`infra listening on http://${infraAddr}/api/rest/v2.10/`);
    out(`dns listening on ${dnsAddr} (UDP and TCP), nameservers ns1..ns4.${config.nameserverDomain}`);
    out(`chat listening on http://${chatAddr}/api/v1/`);
    const limit = files ? `open-files limit ${files.soft ?? 'unlimited'} (hard ${files.hard ?? 'unlimited'})` : 'open-files limit unknown';
    const set = config.maxConnections === undefined ? '' : ', set by --max-connections';
    out(`${limit}: at most ${cap.max} HTTP connections (Infra and Chat together${set}; idle ones close first)`);
  }

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  ctx.log.info('shutting down');
  // The chat listener's close answers parked polls and waits for every request, so nothing adds to
  // the queues while they are saved.
  await Promise.all([dns.close(), infra.close(), chat.close()]);
  await keepQueues();
  await ctx.close();
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command = 'help', ...rest] = argv;
  try {
    if (command === 'help' || command === '--help' || command === '-h') {
      out(USAGE);
      return 0;
    }
    if (command === 'admin' && rest[0] === 'rotate-secret-key') return await runRotateSecretKey(rest.slice(1), out);
    if (command === 'admin') {
      if (INFRA_ADMIN_COMMANDS.includes(rest[0])) return await runInfraAdmin(rest, out);
      if (CHAT_ADMIN_COMMANDS.includes(rest[0])) return await runAdmin(rest, out);
      throw new UsageError(`unknown admin command "${rest[0] ?? ''}" (admin commands: ${[...INFRA_ADMIN_COMMANDS, 'rotate-secret-key', ...CHAT_ADMIN_COMMANDS].join(', ')})`);
    }
    const { options, positionals } = readOptions(rest);
    if (options.help) {
      out(USAGE);
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}" (see keel help)`);
    const config = buildConfig(options);
    switch (command) {
      case 'serve':
        return await serve(config, options.json === true);
      case 'init': {
        const ctx = await createContext(config);
        printInit(ctx.created, ctx.chatCreated, options.json === true, config, ctx.createdKeyFile);
        await ctx.close();
        return 0;
      }
      case 'migrate': {
        const db = await openStore(config);
        out(`schema version ${await schemaVersion(db.kysely)} (${db.location})`);
        await db.close();
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}" (commands: serve, init, migrate, admin, help)`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`keel: ${err.message}\n`);
      return 2;
    }
    if (err instanceof DatabaseError || err instanceof SecretKeyError) {
      process.stderr.write(`keel: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`keel: ${(err as Error).stack ?? err}\n`);
    return 1;
  }
}

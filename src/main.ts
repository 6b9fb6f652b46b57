// Entry point of the `keel` command: keel serve | init | migrate | admin | version | help.
import { buildConfig, type Config, type ListenAddress } from './config/config.js';
import { OPTIONS, readOptions, SECRET_KEY_ENV, UsageError } from './config/env.js';
import { createApp, openCore, openStore } from './app.js';
import { DatabaseError } from './platform/db/database.js';
import { schemaVersion } from './platform/db/migrate.js';
import type { InitResult } from './infra/accounts.js';
import type { ChatInitResult } from './chat/domain/realm.js';
import { ADMIN_USAGE, CHAT_ADMIN_COMMANDS, runAdmin } from './chat/admin.js';
import { INFRA_ADMIN_COMMANDS, INFRA_ADMIN_USAGE, runInfraAdmin } from './infra/admin.js';
import { CATALOGUE_ADMIN_USAGE, runCatalogueAdmin } from './infra/catalogue-admin.js';
import { SecretKeyError } from './platform/auth/secret-key.js';
import { ROTATE_USAGE, runRotateSecretKey } from './rotate-secret-key.js';
import { keepTheKeyFile } from './server-keys.js';
import { keelVersion } from './version.js';
import { OUTBOX_USAGE, runOutboxAdmin } from './outbox-admin.js';

const USAGE = `usage: keel <command> [options]

commands:
  serve     start the Infra API, the DNS server and the Chat API (and, on a new data dir or
            database, set Keel up first)
  init      create the database, the first customer, login and API key, and the chat realm
            with its owner (secrets printed once)
  migrate   bring the database schema up to date
${INFRA_ADMIN_USAGE}
${CATALOGUE_ADMIN_USAGE}
${ADMIN_USAGE}
${ROTATE_USAGE}
${OUTBOX_USAGE}
  version   print Keel's version (also --version)
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

async function serve(config: Config, json: boolean): Promise<number> {
  const app = await createApp(config);
  if (app.created || app.chatCreated) printInit(app.created, app.chatCreated, json, config, app.createdKeyFile);
  const at = await app.start();
  const infraAddr = hostPort(at.infra, config.infraListen);
  const dnsAddr = hostPort(at.dns, config.dnsListen);
  const chatAddr = hostPort(at.chat, config.chatListen);
  const s3Addr = hostPort(at.s3, config.s3Listen);
  // JSON numbers: an unlimited limit is null.
  const files = at.openFiles && { soft: Number.isFinite(at.openFiles.soft) ? at.openFiles.soft : null, hard: Number.isFinite(at.openFiles.hard) ? at.openFiles.hard : null };
  if (json) out(JSON.stringify({ listening: { infra: infraAddr, dns: dnsAddr, chat: chatAddr, s3: s3Addr }, openFiles: files ?? null, maxConnections: at.maxConnections }));
  else {
    out(`infra listening on http://${infraAddr}/api/rest/v2.10/`);
    out(`dns listening on ${dnsAddr} (UDP and TCP), nameservers ns1..ns4.${config.nameserverDomain}`);
    out(`chat listening on http://${chatAddr}/api/v1/`);
    out(`s3 listening on http://${s3Addr}/ (virtual-host buckets under ${config.s3Domain})`);
    const limit = files ? `open-files limit ${files.soft ?? 'unlimited'} (hard ${files.hard ?? 'unlimited'})` : 'open-files limit unknown';
    const set = config.maxConnections === undefined ? '' : ', set by --max-connections';
    out(`${limit}: at most ${at.maxConnections} HTTP connections (Infra and Chat together${set}; idle ones close first)`);
  }

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  app.log.info('shutting down');
  await app.stop();
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command = 'help', ...rest] = argv;
  try {
    if (command === 'help' || command === '--help' || command === '-h') {
      out(USAGE);
      return 0;
    }
    if (command === 'version' || command === '--version') {
      if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}" (keel version takes none)`);
      out(keelVersion());
      return 0;
    }
    if (command === 'admin' && rest[0] === 'rotate-secret-key') return await runRotateSecretKey(rest.slice(1), out);
    if (command === 'admin' && rest[0] === 'catalogue') return await runCatalogueAdmin(rest.slice(1), out);
    if (command === 'admin' && rest[0] === 'outbox') return await runOutboxAdmin(rest.slice(1), out);
    if (command === 'admin') {
      if (INFRA_ADMIN_COMMANDS.includes(rest[0])) return await runInfraAdmin(rest, out, openStore);
      if (CHAT_ADMIN_COMMANDS.includes(rest[0])) return await runAdmin(rest, out, openStore);
      throw new UsageError(`unknown admin command "${rest[0] ?? ''}" (admin commands: ${[...INFRA_ADMIN_COMMANDS, 'catalogue', 'rotate-secret-key', 'outbox', ...CHAT_ADMIN_COMMANDS].join(', ')})`);
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
        const core = await openCore(config);
        printInit(core.created, core.chatCreated, options.json === true, config, core.createdKeyFile);
        await core.close();
        return 0;
      }
      case 'migrate': {
        const db = await openStore(config);
        out(`schema version ${await schemaVersion(db.kysely)} (${db.location})`);
        await db.close();
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}" (commands: serve, init, migrate, admin, version, help)`);
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

// Entry point of the `keel` command: keel serve | init | migrate | help.
import { buildConfig, type Config, type ListenAddress } from './config/config.js';
import { OPTIONS, readOptions, UsageError } from './config/env.js';
import { createContext, openStore } from './context.js';
import { DatabaseError } from './platform/db/database.js';
import { schemaVersion } from './platform/db/migrate.js';
import type { InitResult } from './infra/accounts.js';
import { createInfraServer } from './infra/transport/server.js';
import { allCommands } from './infra/commands/index.js';
import { startDnsServer, type DnsServer } from './dns/server.js';

const USAGE = `usage: keel <command> [options]

commands:
  serve     start the Infra API and the DNS server (and, on a new data dir, set Keel up first)
  init      create the database and the first customer, login and API key (printed once)
  migrate   bring the database schema up to date
  help      show this text

options (each can also be set by the environment variable shown):
${Object.entries(OPTIONS)
  .map(([name, o]) => `  --${name.padEnd(20)} ${o.env.padEnd(25)} ${o.help}${'default' in o ? ` (default ${o.default})` : ''}`)
  .join('\n')}
  --json                                           print machine-readable JSON (init, serve)
`;

function out(line: string): void {
  process.stdout.write(line + '\n');
}

function printInit(result: InitResult | null, json: boolean, config: Config): void {
  if (json) {
    out(JSON.stringify(result ? { infra: result } : { alreadyInitialised: true }));
    return;
  }
  if (!result) {
    out(`Keel is already set up (${config.databaseUrl ? 'PostgreSQL' : config.dataDir}); nothing changed.`);
    return;
  }
  out('Keel is set up. These secrets are shown only this once:');
  out(`  infra customer id: ${result.customerId}`);
  out(`  infra login:       ${result.username} / ${result.password}`);
  out(`  infra API key:     ${result.apiUuid}`);
  out(`  infra API secret:  ${result.apiSecret}`);
}

function hostPort(a: { address: string; port: number } | string | null, fallback: ListenAddress): string {
  if (!a || typeof a === 'string') return `${fallback.host}:${fallback.port}`;
  return a.address.includes(':') ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

async function serve(config: Config, json: boolean): Promise<number> {
  const ctx = await createContext(config);
  if (ctx.created) printInit(ctx.created, json, config);
  const infra = createInfraServer({ db: ctx.db, jwt: ctx.jwt, clock: ctx.clock, log: ctx.log, zones: ctx.zones }, allCommands());
  try {
    await infra.listen({ host: config.infraListen.host, port: config.infraListen.port, backlog: 4096 });
  } catch (err) {
    await ctx.close();
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? 'address already in use' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new UsageError(`cannot listen on ${config.infraListen.host}:${config.infraListen.port} for infra: ${why}`);
  }
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
    await infra.close();
    await ctx.close();
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EADDRINUSE' ? 'address already in use' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new UsageError(`cannot listen on ${config.dnsListen.host}:${config.dnsListen.port} for dns (UDP and TCP): ${why}`);
  }
  // UDP and TCP share the port, so one address describes both.
  const dnsAddr = hostPort(dns.udpAddress, config.dnsListen);
  if (json) out(JSON.stringify({ listening: { infra: infraAddr, dns: dnsAddr } }));
  else {
    out(`infra listening on http://${infraAddr}/api/rest/v2.10/`);
    out(`dns listening on ${dnsAddr} (UDP and TCP), nameservers ns1..ns4.${config.nameserverDomain}`);
  }

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  ctx.log.info('shutting down');
  await dns.close();
  await infra.close();
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
        printInit(ctx.created, options.json === true, config);
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
        throw new UsageError(`unknown command "${command}" (commands: serve, init, migrate, help)`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`keel: ${err.message}\n`);
      return 2;
    }
    if (err instanceof DatabaseError) {
      process.stderr.write(`keel: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`keel: ${(err as Error).stack ?? err}\n`);
    return 1;
  }
}

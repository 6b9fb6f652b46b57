// Reads the command line and KEEL_* environment variables into raw strings; config.ts shapes them.
import { parseArgs } from 'node:util';

/** Every option of every subcommand, with the environment variable that can also set it. */
export const OPTIONS = {
  'data-dir': { env: 'KEEL_DATA_DIR', help: 'directory for the SQLite file, keys and uploads', default: './data' },
  'database-url': { env: 'KEEL_DATABASE_URL', help: 'postgres://... to use PostgreSQL; absent = SQLite file in the data dir' },
  'infra-listen': { env: 'KEEL_INFRA_LISTEN', help: 'HOST:PORT of the Infra HTTP API (port 0 picks a free port)', default: '127.0.0.1:8080' },
  'chat-listen': { env: 'KEEL_CHAT_LISTEN', help: 'HOST:PORT of the Chat HTTP API', default: '127.0.0.1:9991' },
  'chat-root-domain': {
    env: 'KEEL_CHAT_ROOT_DOMAIN',
    help: 'domain whose subdomains are chat realms; the first realm answers on the domain itself (default: the chat listen host if it is a name, else localhost)',
  },
  's3-listen': { env: 'KEEL_S3_LISTEN', help: 'HOST:PORT of the S3-compatible object storage endpoint', default: '127.0.0.1:9000' },
  's3-domain': { env: 'KEEL_S3_DOMAIN', help: 'domain of the S3 endpoint: <bucket>.<domain> in the Host header addresses a bucket (virtual-host style)', default: 's3.keel.localhost' },
  'dns-listen': { env: 'KEEL_DNS_LISTEN', help: 'HOST:PORT of the DNS server (UDP and TCP)', default: '127.0.0.1:5353' },
  'nameserver-domain': { env: 'KEEL_NAMESERVER_DOMAIN', help: 'domain of the nameservers ns1..ns4 named in every zone', default: 'keel.localhost' },
  'nameserver-addresses': { env: 'KEEL_NAMESERVER_ADDRESSES', help: 'comma-separated IPv4/IPv6 addresses of ns1..ns4 (default: the DNS listen host)' },
  'dns-secondaries': { env: 'KEEL_DNS_SECONDARIES', help: 'comma-separated IP or IP:PORT of secondaries (AXFR allowed, NOTIFY sent)' },
  'jwt-lifetime': { env: 'KEEL_JWT_LIFETIME', help: 'lifetime of issued JWTs in seconds', default: '3600' },
  'rate-limits': { env: 'KEEL_RATE_LIMITS', help: 'on, off (no API budgets: benchmarks, test harnesses; password budgets stay), or NAME=COUNT/SECONDS,... (docs/configuration.md)', default: 'on' },
  'trusted-proxies': { env: 'KEEL_TRUSTED_PROXIES', help: 'comma-separated addresses or CIDR blocks of reverse proxies whose X-Forwarded-For names the client (and X-Forwarded-Proto the scheme)' },
  'log-level': { env: 'KEEL_LOG_LEVEL', help: 'error, warn, info or debug', default: 'info' },
  'chat-max-upload-mib': {
    env: 'KEEL_CHAT_MAX_UPLOAD_MIB',
    help: "largest Chat upload in MiB (register's max_file_upload_size_mib; the resumable /api/v1/tus endpoint takes files up to it)",
    default: '25',
  },
  'max-connections': { env: 'KEEL_MAX_CONNECTIONS', help: 'most open HTTP connections, Infra and Chat together (default: from the open-files limit)' },
  // catalogue family
  'infra-catalogue': {
    env: 'KEEL_INFRA_CATALOGUE',
    help: 'JSON file of the products, data centres, operating systems and prices on sale, checked at start (default: the built-in catalogue, printed by keel admin catalogue --print)',
  },
  // ---- machines behind Infra devices (issue 15) ----
  'infra-driver': { env: 'KEEL_INFRA_DRIVER', help: 'machines behind devices: sim (simulated, the default) or incus (system containers through the Incus/LXD API)', default: 'sim' },
  'infra-sim-speed': { env: 'KEEL_INFRA_SIM_SPEED', help: 'how long the sim driver takes: instant, fast (seconds) or realistic (minutes, as the provider)', default: 'fast' },
  'incus-socket': {
    env: 'KEEL_INCUS_SOCKET',
    help: 'unix socket of the Incus/LXD daemon (default: /var/lib/incus/unix.socket if it exists, else /var/lib/lxd/unix.socket)',
  },
  'smtp-url': {
    env: 'KEEL_SMTP_URL',
    help: 'smtp://[user:pass@]host[:port] or smtps://... of the server chat mail (invitations) goes through (default: none, mail is kept in <data-dir>/outbox)',
  },
  'secret-key-file': {
    env: 'KEEL_SECRET_KEY_FILE',
    help: 'file holding the secret key (64 hex characters) that signs tokens and seals chat API keys (default: <data-dir>/secret.key, made on first start)',
  },
  // ---- chat: push notifications, video calls, development login (issue 16) ----
  'push-url': {
    env: 'KEEL_PUSH_URL',
    help: "https://ORG_ID:ORG_KEY@host of a push notification service speaking Zulip's bouncer API (/api/v1/remotes/push/...); absent: push off (prefer the environment variable: the key is a secret)",
  },
  'bigbluebutton-url': { env: 'KEEL_BIGBLUEBUTTON_URL', help: 'base URL of a BigBlueButton server (https://bbb.example.com/bigbluebutton/) for video calls; needs --bigbluebutton-secret' },
  'bigbluebutton-secret': { env: 'KEEL_BIGBLUEBUTTON_SECRET', help: "that BigBlueButton server's shared secret (prefer the environment variable)" },
  'dev-mode': { env: 'KEEL_DEV_MODE', help: "on: POST /dev_fetch_api_key hands out any user's API key without a password (development only, never in production)", default: 'off' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type RawOptions = Partial<Record<OptionName, string>> & { json?: boolean; help?: boolean; secretKey?: string };

/** The secret key itself, from the environment only: a command line is visible to every user of the machine. */
export const SECRET_KEY_ENV = 'KEEL_SECRET_KEY';

export class UsageError extends Error {}

/** Parses argv (after the subcommand) and fills gaps from the environment, then from defaults. */
export function readOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): { options: RawOptions; positionals: string[] } {
  const spec: Record<string, { type: 'string' | 'boolean' }> = { json: { type: 'boolean' }, help: { type: 'boolean' } };
  for (const name of Object.keys(OPTIONS)) spec[name] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]);
  }
  const options: RawOptions = { json: parsed.values.json === true, help: parsed.values.help === true };
  for (const [name, def] of Object.entries(OPTIONS) as [OptionName, (typeof OPTIONS)[OptionName]][]) {
    const value = (parsed.values[name] as string | undefined) ?? env[def.env] ?? ('default' in def ? def.default : undefined);
    if (value !== undefined && value !== '') options[name] = value;
  }
  if (env[SECRET_KEY_ENV]) options.secretKey = env[SECRET_KEY_ENV];
  return { options, positionals: parsed.positionals };
}

/**
 * For subcommands with flags of their own (keel admin ...): splits `own` flags (string-valued) from
 * the shared ones (data dir, database URL ...), which are given back for readOptions to check.
 */
export function readCommandArgs(argv: string[], own: Record<string, { type: 'string' }>): { own: Record<string, string | undefined>; shared: string[] } {
  const spec: Record<string, { type: 'string' | 'boolean' }> = { ...own, json: { type: 'boolean' }, help: { type: 'boolean' } };
  for (const name of Object.keys(OPTIONS)) spec[name] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false, tokens: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]);
  }
  const values: Record<string, string | undefined> = {};
  const shared: string[] = [];
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option') continue;
    if (t.name in own) values[t.name] = t.value;
    else shared.push(`--${t.name}`, ...(t.value === undefined ? [] : [t.value]));
  }
  return { own: values, shared };
}

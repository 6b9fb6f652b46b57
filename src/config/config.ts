// Shapes and validates the raw options into the typed configuration the rest of Keel uses.
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { SECRET_KEY_ENV, UsageError, type RawOptions } from './env.js';
import { parseSecretKey } from '../platform/auth/secret-key.js';
import { parseRateLimits, type RateLimits } from './rate-limits.js';
import { parseTrustedProxies } from '../platform/client-address.js';

export interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  dataDir: string;
  /** Absent: SQLite file in the data dir. */
  databaseUrl?: string;
  infraListen: ListenAddress;
  chatListen: ListenAddress;
  /** Lower case, no trailing dot; absent when not configured (see chatRootDomain()). */
  chatRootDomain?: string;
  dnsListen: ListenAddress;
  /** The S3-compatible endpoint (issue 17) and the domain whose subdomains name buckets. */
  s3Listen: ListenAddress;
  s3Domain: string;
  /** Lower case, no trailing dot: ns1..ns4 live under it. */
  nameserverDomain: string;
  /** The addresses of ns1, ns2, ns3 and ns4, in that order. */
  nameserverAddresses: [string, string, string, string];
  /** Secondaries allowed to AXFR and sent NOTIFY; port is where NOTIFY goes. */
  dnsSecondaries: ListenAddress[];
  jwtLifetimeSeconds: number;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** The largest Chat upload in MiB (max_file_upload_size_mib). */
  chatMaxUploadMib: number;
  /** Most open HTTP connections; undefined: derived from the open-files limit. */
  maxConnections?: number;
  /** The secret key file named by --secret-key-file (absent: <data-dir>/secret.key; server-keys.ts). */
  secretKeyFile?: string;
  /** The secret key given in KEEL_SECRET_KEY, instead of a file. */
  secretKey?: Buffer;
  rateLimits: RateLimits;
  /** Reverse proxies (addresses, CIDR blocks) whose X-Forwarded-For names the client, for per-address budgets. */
  trustedProxies: string[];
  /** The operator's catalogue file (--infra-catalogue), read and checked at start; absent: the built-in one. */
  infraCatalogue?: string;
  /** The machines behind Infra devices (infra/drivers): simulated, or Incus/LXD containers. */
  infraDriver: 'sim' | 'incus';
  /** How long the sim driver's steps take (drivers/sim.ts). */
  infraSimSpeed: 'instant' | 'fast' | 'realistic';
  /** The Incus/LXD daemon's unix socket (the incus driver). */
  incusSocket: string;
  /** The push notification service (--push-url): its base URL and the server's credentials there. */
  push?: PushConfig;
  /** The BigBlueButton server of video calls (--bigbluebutton-url and --bigbluebutton-secret). */
  bigBlueButton?: { url: string; secret: string };
  /** --dev-mode on: POST /dev_fetch_api_key works (development servers only). */
  devMode: boolean;
  /** The SMTP server chat mail goes through (--smtp-url); absent: the outbox in the data dir (platform/mail/). */
  smtpUrl?: string;
}

export interface PushConfig {
  /** Origin and path the bouncer API lives under, ending in a slash, without credentials. */
  url: string;
  orgId: string;
  orgKey: string;
}

/** --push-url: http(s)://ORG_ID:ORG_KEY@host[/path], the credentials Zulip's server sends the bouncer. */
export function parsePushUrl(value: string | undefined): PushConfig | undefined {
  if (value === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new UsageError('--push-url must be a URL such as https://ORG_ID:ORG_KEY@push.example.com');
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || !u.username || !u.password || u.search || u.hash) {
    throw new UsageError('--push-url must be an http(s) URL with the organization id and key as its user and password: https://ORG_ID:ORG_KEY@push.example.com');
  }
  const orgId = decodeURIComponent(u.username);
  const orgKey = decodeURIComponent(u.password);
  u.username = '';
  u.password = '';
  return { url: u.href.endsWith('/') ? u.href : `${u.href}/`, orgId, orgKey };
}

/** --bigbluebutton-url and --bigbluebutton-secret: both or neither. */
export function parseBigBlueButton(url: string | undefined, secret: string | undefined): Config['bigBlueButton'] {
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined || secret === undefined) throw new UsageError('--bigbluebutton-url and --bigbluebutton-secret go together: give both or neither');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--bigbluebutton-url must be a URL such as https://bbb.example.com/bigbluebutton/, got "${url}"`);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.search || u.hash || u.username) {
    throw new UsageError(`--bigbluebutton-url must be an http(s) URL without query or credentials, got "${url}"`);
  }
  return { url: u.href.endsWith('/') ? u.href : `${u.href}/`, secret };
}

function parseDevMode(value: string | undefined): boolean {
  const v = value ?? 'off';
  if (v !== 'on' && v !== 'off') throw new UsageError(`--dev-mode must be on or off, got "${v}"`);
  return v === 'on';
}

function secretKeyOptions(o: RawOptions): Pick<Config, 'secretKeyFile' | 'secretKey'> {
  const file = o['secret-key-file'];
  if (o.secretKey === undefined) return file === undefined ? {} : { secretKeyFile: path.resolve(file) };
  if (file !== undefined) throw new UsageError(`give the secret key one way: --secret-key-file or ${SECRET_KEY_ENV}, not both`);
  try {
    return { secretKey: parseSecretKey(o.secretKey, SECRET_KEY_ENV) };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function parseListen(flag: string, value: string): ListenAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--${flag} must be HOST:PORT (for example 127.0.0.1:8080), got "${value}"`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

function parseDomain(flag: string, example: string, value: string): string {
  const name = value.toLowerCase().replace(/\.$/, '');
  if (!HOSTNAME.test(name)) throw new UsageError(`--${flag} must be a domain name such as ${example}, got "${value}"`);
  return name;
}

/** The chat root domain: a name (an IP address has no subdomains). */
export function parseChatRootDomain(value: string): string {
  const name = parseDomain('chat-root-domain', 'chat.example.com', value);
  if (isIP(name)) throw new UsageError(`--chat-root-domain must be a domain name such as chat.example.com, got "${value}"`);
  return name;
}

export function parseNameserverDomain(value: string): string {
  return parseDomain('nameserver-domain', 'ns.example.com', value);
}

/** 1 to 4 addresses; fewer than four are repeated in turn so that ns1..ns4 each get one. */
export function parseNameserverAddresses(value: string | undefined, dnsListen: ListenAddress): [string, string, string, string] {
  let list: string[];
  if (value === undefined) {
    // The listen host is what a client on this machine can reach; an unspecified or named host is not an address.
    const h = dnsListen.host;
    list = [h === '0.0.0.0' || !isIP(h) ? '127.0.0.1' : h === '::' ? '::1' : h];
  } else {
    list = value.split(',').map((a) => a.trim().replace(/^\[|\]$/g, ''));
    if (list.length > 4 || list.some((a) => !isIP(a))) {
      throw new UsageError(`--nameserver-addresses must be 1 to 4 comma-separated IPv4 or IPv6 addresses (ns1..ns4), got "${value}"`);
    }
  }
  return [0, 1, 2, 3].map((i) => list[i % list.length]) as [string, string, string, string];
}

/** IP, IP:PORT or [IPv6]:PORT; the port (default 53) is where NOTIFY is sent. */
export function parseSecondaries(value: string | undefined): ListenAddress[] {
  if (value === undefined) return [];
  return value.split(',').map((raw) => {
    const item = raw.trim();
    let host = item;
    let port = 53;
    const bracket = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(item);
    const v4port = /^([0-9.]+):(\d{1,5})$/.exec(item);
    if (bracket) [host, port] = [bracket[1], bracket[2] ? Number(bracket[2]) : 53];
    else if (v4port) [host, port] = [v4port[1], Number(v4port[2])];
    if (!isIP(host) || port < 1 || port > 65535) {
      throw new UsageError(`--dns-secondaries must be comma-separated IP, IP:PORT or [IPv6]:PORT entries, got "${item}"`);
    }
    return { host, port };
  });
}

/** Where the daemon listens: Incus, Debian's lxd package, the lxd snap; the first that exists is the default. */
export const INCUS_SOCKETS = ['/var/lib/incus/unix.socket', '/var/lib/lxd/unix.socket', '/var/snap/lxd/common/lxd/unix.socket'] as const;

function machineOptions(o: RawOptions, exists: (p: string) => boolean = existsSync): Pick<Config, 'infraDriver' | 'infraSimSpeed' | 'incusSocket'> {
  const driver = o['infra-driver'] ?? 'sim';
  if (driver !== 'sim' && driver !== 'incus') throw new UsageError(`--infra-driver must be sim or incus, got "${driver}"`);
  const speed = o['infra-sim-speed'] ?? 'fast';
  if (speed !== 'instant' && speed !== 'fast' && speed !== 'realistic') throw new UsageError(`--infra-sim-speed must be instant, fast or realistic, got "${speed}"`);
  // None there: Debian's lxd path, which the error on first use then names.
  const socket = o['incus-socket'] ?? INCUS_SOCKETS.find((p) => exists(p)) ?? INCUS_SOCKETS[1];
  return { infraDriver: driver, infraSimSpeed: speed, incusSocket: path.resolve(socket) };
}

export function buildConfig(o: RawOptions): Config {
  const url = o['database-url'];
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError(`--database-url must start with postgres:// (leave it out to use SQLite), got "${url}"`);
  }
  const lifetime = Number(o['jwt-lifetime']);
  if (!Number.isInteger(lifetime) || lifetime < 1) throw new UsageError(`--jwt-lifetime must be a whole number of seconds >= 1, got "${o['jwt-lifetime']}"`);
  const level = o['log-level'];
  if (level !== 'error' && level !== 'warn' && level !== 'info' && level !== 'debug') {
    throw new UsageError(`--log-level must be error, warn, info or debug, got "${level}"`);
  }
  const maxConnections = o['max-connections'] === undefined ? undefined : Number(o['max-connections']);
  if (maxConnections !== undefined && (!Number.isInteger(maxConnections) || maxConnections < 1)) {
    throw new UsageError(`--max-connections must be a whole number >= 1, got "${o['max-connections']}"`);
  }
  const maxUploadMib = Number(o['chat-max-upload-mib'] ?? '25');
  if (!Number.isInteger(maxUploadMib) || maxUploadMib < 1 || maxUploadMib > 1024 * 1024) {
    throw new UsageError(`--chat-max-upload-mib must be a whole number of MiB from 1 to 1048576, got "${o['chat-max-upload-mib']}"`);
  }
  const dnsListen = parseListen('dns-listen', o['dns-listen']!);
  const trustedProxies = parseTrustedProxies(o['trusted-proxies']);
  if (!trustedProxies) throw new UsageError(`--trusted-proxies must be comma-separated IPv4 or IPv6 addresses or CIDR blocks (10.0.0.0/8), got "${o['trusted-proxies']}"`);
  return {
    dataDir: path.resolve(o['data-dir'] ?? './data'),
    databaseUrl: url,
    infraListen: parseListen('infra-listen', o['infra-listen']!),
    chatListen: parseListen('chat-listen', o['chat-listen']!),
    chatRootDomain: o['chat-root-domain'] === undefined ? undefined : parseChatRootDomain(o['chat-root-domain']),
    dnsListen,
    s3Listen: parseListen('s3-listen', o['s3-listen']!),
    s3Domain: parseDomain('s3-domain', 's3.example.com', o['s3-domain']!),
    nameserverDomain: parseNameserverDomain(o['nameserver-domain']!),
    nameserverAddresses: parseNameserverAddresses(o['nameserver-addresses'], dnsListen),
    dnsSecondaries: parseSecondaries(o['dns-secondaries']),
    jwtLifetimeSeconds: lifetime,
    logLevel: level,
    maxConnections,
    chatMaxUploadMib: maxUploadMib,
    ...secretKeyOptions(o),
    rateLimits: parseRateLimits(o['rate-limits']),
    trustedProxies,
    infraCatalogue: o['infra-catalogue'] === undefined ? undefined : path.resolve(o['infra-catalogue']),
    ...machineOptions(o),
    push: parsePushUrl(o['push-url']),
    bigBlueButton: parseBigBlueButton(o['bigbluebutton-url'], o['bigbluebutton-secret']),
    devMode: parseDevMode(o['dev-mode']),
    smtpUrl: parseSmtpUrl(o['smtp-url']),
  };
}

function parseSmtpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') || !u.hostname) {
    throw new UsageError(`--smtp-url must be smtp://[user:pass@]host[:port] or smtps://..., got "${raw.replace(/\/\/[^@/]*@/, '//…@')}"`);
  }
  return raw;
}

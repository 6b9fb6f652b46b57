// Shapes and validates the raw options into the typed configuration the rest of Keel uses.
import path from 'node:path';
import { UsageError, type RawOptions } from './env.js';

export interface ListenAddress { host: string; port: number }

export interface Config {
  dataDir: string;
  /** Absent: SQLite file in the data dir. */
  databaseUrl?: string;
  infraListen: ListenAddress;
  chatListen: ListenAddress;
  dnsListen: ListenAddress;
  jwtLifetimeSeconds: number;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
}

export function parseListen(flag: string, value: string): ListenAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new UsageError(`--${flag} must be HOST:PORT (for example 127.0.0.1:8080), got "${value}"`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
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
  return {
    dataDir: path.resolve(o['data-dir'] ?? './data'),
    databaseUrl: url,
    infraListen: parseListen('infra-listen', o['infra-listen']!),
    chatListen: parseListen('chat-listen', o['chat-listen']!),
    dnsListen: parseListen('dns-listen', o['dns-listen']!),
    jwtLifetimeSeconds: lifetime,
    logLevel: level,
  };
}

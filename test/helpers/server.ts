// Starts the real `keel serve` in a child process on free ports with a temporary data dir, and
// reads its printed start-up JSON (the first-run secrets and the chosen addresses).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createTempDatabase, type TempDatabase } from './postgres.js';
import type { EngineName } from './engines.js';
import { OPTIONS } from '../../src/config/env.js';

export const KEEL_BIN = path.resolve('bin/keel.js');

export interface InitSecrets {
  customerId: number;
  username: string;
  password: string;
  apiUuid: string;
  apiSecret: string;
}

export interface ChatSecrets {
  realmUrl: string;
  email: string;
  password: string;
  apiKey: string;
}

export interface Storage {
  engine: EngineName;
  dataDir: string;
  databaseUrl?: string;
  pg?: TempDatabase;
  dispose(): Promise<void>;
}

export async function createStorage(engine: EngineName): Promise<Storage> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'keel-test-'));
  const pg = engine === 'postgres' ? await createTempDatabase() : undefined;
  return {
    engine,
    dataDir,
    databaseUrl: pg?.url,
    pg,
    async dispose() {
      rmSync(dataDir, { recursive: true, force: true });
      await pg?.drop();
    },
  };
}

export function storageArgs(s: Storage): string[] {
  return ['--data-dir', s.dataDir, ...(s.databaseUrl ? ['--database-url', s.databaseUrl] : [])];
}

export interface RunningServer {
  infraUrl: string;
  /** The DNS server's address (UDP and TCP on the same port). */
  dns: { address: string; port: number };
  /** Base URL of the Chat listener (its API is under /api/v1). */
  chatUrl: string;
  /** Base URL of the S3 endpoint (http://host:port). */
  s3Url: string;
  /** Present on the run that set the database up. */
  secrets?: InitSecrets;
  /** The chat realm owner's secrets; present on the run that set the database up. */
  chatSecrets?: ChatSecrets;
  process: ChildProcess;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no clean shutdown at all. */
  kill9(): Promise<void>;
  /** What the server wrote to stderr so far (its log lines at KEEL_LOG_LEVEL). */
  stderr(): string;
}

/** Every listener `keel serve` opens, by its flag (each defaults to a fixed port: 8080, 9991, 5353). */
const LISTEN_FLAGS = Object.keys(OPTIONS)
  .filter((name) => name.endsWith('-listen'))
  .map((name) => `--${name}`);

/**
 * `keel serve` arguments with every listener the arguments do not place put on a free port, so no
 * test binds a default port (one taken by `npm start` on the same machine would fail the test).
 * Other commands are left as they are: they open no listener.
 */
export function withFreePorts(args: string[]): string[] {
  if (args[0] !== 'serve') return args;
  const free = LISTEN_FLAGS.filter((flag) => !args.includes(flag)).flatMap((flag) => [flag, '127.0.0.1:0']);
  return [...args, ...free];
}

/**
 * Starts `keel serve` with the Infra API, Chat and DNS on free ports (unless `extra` places them),
 * and API rate limits off unless `extra` sets --rate-limits: suites send far more than a client would.
 * The server's secret key is the data dir's secret.key, made on first start (on PostgreSQL too: the
 * storage's data dir holds it), unless `env` gives KEEL_SECRET_KEY or `extra` --secret-key-file.
 */
export async function startServer(storage: Storage, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const limitArgs = extra.includes('--rate-limits') ? [] : ['--rate-limits', 'off'];
  const child = spawn(process.execPath, [KEEL_BIN, ...withFreePorts(['serve', '--json', ...limitArgs, ...storageArgs(storage), ...extra])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KEEL_LOG_LEVEL: 'warn', ...env },
  });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  let secrets: InitSecrets | undefined;
  let dns = { address: '', port: 0 };
  let chatSecrets: ChatSecrets | undefined;
  let chatUrl = '';
  let s3Url = '';
  const infraUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server that never started must not outlive the test (its pipes would keep the file running).
      child.kill('SIGKILL');
      reject(new Error(`keel serve did not start in 30 s: ${stderr}`));
    }, 30_000);
    lines.on('line', (line) => {
      const msg = JSON.parse(line);
      if (msg.infra && typeof msg.infra === 'object') secrets = msg.infra;
      if (msg.chat && typeof msg.chat === 'object') chatSecrets = msg.chat;
      if (msg.listening) {
        clearTimeout(timer);
        const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(msg.listening.dns ?? '');
        if (m) dns = { address: m[1], port: Number(m[2]) };
        chatUrl = `http://${msg.listening.chat}`;
        s3Url = `http://${msg.listening.s3}`;
        resolve(`http://${msg.listening.infra}`);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`keel serve exited with ${code}: ${stderr}`));
    });
  });
  return {
    infraUrl,
    dns,
    chatUrl,
    s3Url,
    secrets,
    chatSecrets,
    process: child,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stderr: () => stderr,
  };
}

/** Runs `keel <args>` to completion (`serve` on free ports for the listeners args do not place). */
export function runKeel(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [KEEL_BIN, ...withFreePorts(args)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A real `keel serve` on a fresh store, with a client holding the first API key (by HTTP Basic). */
export async function startInfra(engine: EngineName, extra: string[] = []) {
  const { InfraClient } = await import('./infra-client.js');
  const storage = await createStorage(engine);
  const server = await startServer(storage, extra);
  const basic: [string, string] = [server.secrets!.apiUuid, server.secrets!.apiSecret];
  const api = new InfraClient(server.infraUrl, { basic });
  return {
    storage,
    server,
    basic,
    api,
    async stop() {
      await server.stop();
      await storage.dispose();
    },
  };
}

// Shared machinery of the benchmarks: the shape of a benchmark and its figures, the servers under
// test (real `keel serve`, a bare node:http baseline) and the load generator, each in its own process.
// Run directly (`node --import tsx bench/lib.ts <role>`), this file is one of those child processes.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort } from '../test/helpers/ports.js';
export { freePort };

const LIB = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(LIB), '..');
const KEEL_BIN = path.join(ROOT, 'bin/keel.js');

/** One measured number. A figure naming a `baseline` is reported as a ratio against that figure. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline?: string;
  /** The ratio we aim for; falling short is reported, never a failure. */
  target?: number;
  /** Absolute targets for the value itself (a rate to reach, a count of failures to stay under), reported likewise. */
  atLeast?: number;
  atMost?: number;
  detail?: string;
}

export interface Benchmark {
  name: string;
  summary: string;
  run(): Promise<Figure[]>;
}

export function note(line: string): void {
  process.stdout.write(`  ${line}\n`);
}

// ---- child processes ----------------------------------------------------------------------------

export interface Child {
  process: ChildProcess;
  /** The JSON lines printed before the one `ready` accepted. */
  lines: Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Spawns a process that announces itself with JSON lines on stdout, and waits for the line `ready`
 * accepts. Its stderr is kept for the error message when it dies or never becomes ready.
 */
function startChild(args: string[], ready: (msg: Record<string, unknown>) => boolean, env: NodeJS.ProcessEnv = {}, ipc = false): Promise<Child> {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc' as const] : [])], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines: Record<string, unknown>[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start in 60 s: ${stderr}`));
    }, 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line);
      } catch {
        return; // not ours: a stray log line
      }
      lines.push(msg);
      if (!ready(msg)) return;
      clearTimeout(timer);
      resolve({
        process: child,
        lines,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${child.exitCode ?? child.signalCode}: ${stderr}`));
    });
  });
}

function selfArgs(role: string, ...rest: string[]): string[] {
  return ['--import', 'tsx', LIB, role, ...rest];
}

/**
 * Runs a benchmark module as one of its own child processes (`node --import tsx FILE ROLE ARG`), with
 * an IPC channel (`child.process.send`, `process.send` in the child) for what does not fit in lines.
 */
export function startRole(file: string, role: string, arg: string, ready: (msg: Record<string, unknown>) => boolean): Promise<Child> {
  return startChild(['--import', 'tsx', file, role, arg], ready, {}, true);
}

/** Whether `moduleUrl` (import.meta.url) is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return !!process.argv[1] && pathToFileURL(path.resolve(process.argv[1])).href === moduleUrl;
}

/** The open-files limit (soft, hard) of a process, from /proc; undefined off Linux. */
export function fdLimit(pid: number): { soft: number; hard: number } | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    const n = (v: string) => (v === 'unlimited' ? Infinity : Number(v));
    return m ? { soft: n(m[1]), hard: n(m[2]) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes sure a process may hold `need` open files, raising its limit with `prlimit` when it is lower
 * (raising the hard limit needs root or CAP_SYS_RESOURCE). Says what it found and did.
 */
export function ensureFdLimit(pid: number, need: number, what: string): string {
  const before = fdLimit(pid);
  if (!before) return `${what}: open-files limit unknown`;
  if (before.soft >= need) return `${what}: open files ${before.soft}/${before.hard}`;
  const want = Math.max(need, 65535);
  const r = spawnSync('prlimit', ['--pid', String(pid), `--nofile=${want}:${want}`], { encoding: 'utf8' });
  const after = fdLimit(pid);
  if (after && after.soft >= need) return `${what}: open files ${before.soft}/${before.hard}, raised to ${after.soft}/${after.hard}`;
  throw new Error(`${what} needs ${need} open files but may hold ${before.soft} (hard ${before.hard}); prlimit: ${r.error?.message ?? r.stderr.trim()}`);
}

/** A process's resident set (VmRSS) in MiB, from /proc; undefined off Linux. */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** Open file descriptors of a process (sockets included), from /proc; undefined off Linux. */
export function openFiles(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/** Runs `work` over `items` with at most `concurrency` at once; results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

function listeningUrl(c: Child, key: string): string {
  const msg = c.lines.at(-1) as { listening: Record<string, string> };
  return `http://${msg.listening[key]}`;
}

export interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The baseline: node:http answering a fixed small JSON body, nothing else. */
export const BARE_BODY = JSON.stringify({ code: 'OK', message: 'bare node:http', data: { id: 1 } });

export async function startBareServer(): Promise<Server> {
  const c = await startChild(selfArgs('bare-server'), (m) => 'listening' in m);
  return { url: listeningUrl(c, 'bare'), pid: c.process.pid!, stop: c.stop };
}

export interface KeelServer extends Server {
  apiUuid: string;
  apiSecret: string;
  /** The authoritative DNS server (UDP and TCP on one port). */
  dns: { host: string; port: number };
  /** The Chat listener and its first-run owner (email and API key). */
  chat: { url: string; email: string; apiKey: string };
  /** The Chat listener's base URL (http://host:port, without /api/v1). */
  chatUrl: string;
  /** The S3 endpoint's base URL (http://host:port). */
  s3Url: string;
}

export interface KeelOptions {
  /** PostgreSQL instead of SQLite in the data dir. */
  databaseUrl?: string;
  /** Extra `keel serve` flags. */
  args?: string[];
  /**
   * A data dir already set up (and seeded) by the caller, which then knows its keys: no first-run
   * key is expected. It is removed when the server stops, like a fresh one.
   */
  dataDir?: string;
}

/** KEEL_BENCH_PROFILE=DIR runs each `keel serve` with --cpu-prof, writing its profile to DIR on exit. */
const PROFILE_DIR = process.env.KEEL_BENCH_PROFILE;

/**
 * A real `keel serve` in a throw-away data dir (SQLite unless `databaseUrl`), every listener on a free
 * port, with its first-run API key.
 */
export async function startKeel(o: KeelOptions = {}): Promise<KeelServer> {
  const dataDir = o.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'keel-bench-'));
  let c: Child;
  try {
    c = await startChild(
      [
        ...(PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : []),
        // API rate limits off: a benchmark is a flood of requests by design (password budgets stay on).
        KEEL_BIN,
        'serve',
        '--json',
        '--infra-listen',
        '127.0.0.1:0',
        '--chat-listen',
        '127.0.0.1:0',
        '--dns-listen',
        '127.0.0.1:0',
        '--s3-listen',
        '127.0.0.1:0',
        '--rate-limits',
        'off',
        '--data-dir',
        dataDir,
        ...(o.databaseUrl ? ['--database-url', o.databaseUrl] : []),
        ...(o.args ?? []),
      ],
      (m) => 'listening' in m,
      { KEEL_LOG_LEVEL: 'warn' },
    );
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const init = c.lines.find((m) => m.infra && typeof m.infra === 'object')?.infra as { apiUuid: string; apiSecret: string } | undefined;
  const stop = async () => {
    await c.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  if (!init && !o.dataDir) {
    await stop();
    throw new Error('keel serve printed no first-run API key');
  }
  const dnsAt = /^\[?([^\]]+?)\]?:(\d+)$/.exec(String((c.lines.at(-1) as { listening: Record<string, string> }).listening.dns ?? ''));
  if (!dnsAt) {
    await stop();
    throw new Error('keel serve printed no DNS address');
  }
  const chatInit = c.lines.find((m) => m.chat && typeof m.chat === 'object')?.chat as { email: string; apiKey: string } | undefined;
  return {
    url: listeningUrl(c, 'infra'),
    pid: c.process.pid!,
    apiUuid: init?.apiUuid ?? '',
    apiSecret: init?.apiSecret ?? '',
    dns: { host: dnsAt[1], port: Number(dnsAt[2]) },
    chatUrl: listeningUrl(c, 'chat'),
    s3Url: listeningUrl(c, 's3'),
    stop,
    chat: { url: listeningUrl(c, 'chat'), email: chatInit?.email ?? '', apiKey: chatInit?.apiKey ?? '' },
  };
}

/** Runs `body` with a throw-away PostgreSQL database, dropped afterwards; or returns why it cannot. */
export async function withTempPostgres<R>(body: (url: string) => Promise<R>): Promise<{ result: R } | { skipped: string }> {
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (err) {
    return { skipped: `PostgreSQL is not reachable at ${POSTGRES_URL} (${(err as Error).message}); set KEEL_BENCH_POSTGRES_URL` };
  }
  const name = `keel_bench_${randomBytes(6).toString('hex')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    return { result: await body(url.toString()) };
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

export const POSTGRES_URL = process.env.KEEL_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether `command` can be run (`--version`-style probe); the reason when not. */
export function missingCommand(command: string, probeArgs: string[], debianPackage: string): string | undefined {
  const r = spawnSync(command, probeArgs, { stdio: 'ignore' });
  return r.error ? `${command} is not installed (Debian package ${debianPackage}: apt-get install -y ${debianPackage})` : undefined;
}

/** Resident set size of a process in KiB (VmRSS in /proc); undefined off Linux. */
export function rssKiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Latency percentile (0..100) of sorted milliseconds, rounded to 0.01 ms. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const v = sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return Math.round(v * 100) / 100;
}

/** Starts servers, runs `body`, and stops every server whatever happens. */
export async function withServers<T extends Server[], R>(starts: { [K in keyof T]: () => Promise<T[K]> }, body: (...servers: T) => Promise<R>): Promise<R> {
  const started: Server[] = [];
  try {
    for (const start of starts) started.push(await start());
    return await body(...(started as T));
  } finally {
    await Promise.all(started.map((s) => s.stop()));
  }
}

// ---- load generation -----------------------------------------------------------------------------

export interface LoadSpec {
  /** Path and query on the server. */
  path: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Every response body must contain this text; the others count as mismatches. */
  expect: string;
  /**
   * What bodies under load must contain instead, when it differs from `expect`: autocannon sees a
   * body as a lossy UTF-8 string, so of a gzipped answer only the bytes stored uncompressed can be
   * checked there; the check before the load (fetch, which decompresses) still reads `expect`.
   */
  loadExpect?: string;
  /** The Content-Encoding the check before the load must see (a gzipped answer's), if any. */
  encoding?: string;
  /** Headers added to each request in turn (many users' credentials, say), on top of `headers`. */
  rotateHeaders?: Record<string, string>[];
}

export interface LoadOptions {
  connections: number;
  pipelining: number;
  warmupSeconds: number;
  seconds: number;
}

export const DEFAULT_LOAD: LoadOptions = { connections: 50, pipelining: 1, warmupSeconds: 2, seconds: 8 };

export interface LoadResult {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  /**
   * Server CPU time (user + system) per answered request, in microseconds, where /proc tells it. Other
   * processes competing for the cores move req/s far more than this, so it is the steadier figure.
   */
  cpuMicros?: number;
  /** Non-2xx answers, socket errors, timeouts and bodies without `expect`: all must be 0. */
  bad: { non2xx: number; errors: number; timeouts: number; mismatches: number };
}

/**
 * Loads one endpoint of `server` from a separate process (so the load generator never shares an event
 * loop with a server): a warm-up whose figures are dropped, then the measurement. Throws if any answer
 * was bad, since a fast error is not a result.
 */
export async function load(server: Server, spec: LoadSpec, opts: LoadOptions = DEFAULT_LOAD): Promise<LoadResult> {
  const url = server.url + spec.path;
  const what = `${spec.method ?? 'GET'} ${url}`;
  await check(url, spec);
  const generate = async (seconds: number) => {
    const c = await startChild(selfArgs('load', JSON.stringify({ url, spec, connections: opts.connections, pipelining: opts.pipelining, seconds })), (m) => 'result' in m);
    await c.stop();
    const r = (c.lines.at(-1) as { result: LoadResult }).result;
    const bad = Object.entries(r.bad).filter(([, n]) => n > 0);
    if (bad.length) throw new Error(`${what}: bad answers under load: ${bad.map(([k, n]) => `${k}=${n}`).join(', ')}`);
    return r;
  };
  // Warm-up: lets V8 optimise the hot path and SQLite fill its page cache before anything is counted.
  if (opts.warmupSeconds > 0) await generate(opts.warmupSeconds);
  const cpuBefore = cpuTicks(server.pid);
  const r = await generate(opts.seconds);
  const cpuAfter = cpuTicks(server.pid);
  if (cpuBefore !== undefined && cpuAfter !== undefined && r.total > 0) r.cpuMicros = Math.round(((cpuAfter - cpuBefore) * 1e6) / CLOCK_TICKS / r.total);
  return r;
}

/** One request before the load, so a wrong URL or credential fails loudly with the answer shown. */
async function check(url: string, spec: LoadSpec): Promise<void> {
  const res = await fetch(url, { method: spec.method ?? 'GET', headers: { ...spec.headers, ...spec.rotateHeaders?.[0] }, body: spec.body });
  const text = await res.text();
  if (!res.ok || !text.includes(spec.expect)) {
    throw new Error(`${spec.method ?? 'GET'} ${url}: expected HTTP 2xx containing ${spec.expect}, got ${res.status} ${text.slice(0, 300)}`);
  }
  const encoding = res.headers.get('content-encoding') ?? undefined;
  if (encoding !== spec.encoding) throw new Error(`${spec.method ?? 'GET'} ${url}: expected content-encoding ${spec.encoding ?? 'none'}, got ${encoding ?? 'none'}`);
}

// USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK).
const CLOCK_TICKS = 100;

/**
 * CPU seconds (user + system) a process and its live descendants have used so far, from /proc (a
 * server such as NSD answers from a forked child); undefined off Linux.
 */
export function cpuSeconds(pid: number): number | undefined {
  const t = cpuTicks(pid);
  if (t === undefined) return undefined;
  let total = t;
  for (const child of childPids(pid)) total += (cpuSeconds(child) ?? 0) * CLOCK_TICKS;
  return total / CLOCK_TICKS;
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** utime + stime of a process from /proc, in clock ticks; undefined off Linux. */
function cpuTicks(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces, so count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

export function basicAuth(user: string, secret: string): string {
  return 'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64');
}

// ---- the Chat API --------------------------------------------------------------------------------

/** A form request to the Chat API (`/api/v1` + `path`); throws with the answer unless it succeeded. */
export async function chatCall(chatUrl: string, authorization: string | undefined, path: string, form: Record<string, string>, method = 'POST'): Promise<Record<string, unknown>> {
  const res = await fetch(`${chatUrl}/api/v1${path}`, {
    method,
    headers: { ...(authorization ? { authorization } : {}), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok || body.result !== 'success') throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

export interface ChatUser {
  id: number;
  email: string;
  authorization: string;
}

/**
 * Creates users `${prefix}${i}@bench.test` as the first-run owner, each with their API key (two password
 * hashes each, so `concurrency` keeps both cores busy).
 */
export async function createChatUsers(keel: KeelServer, prefix: string, count: number, concurrency = 1): Promise<ChatUser[]> {
  const owner = basicAuth(keel.chat.email, keel.chat.apiKey);
  const password = 'bench-pass-1';
  return inParallel(
    Array.from({ length: count }, (_, i) => `${prefix}${i}@bench.test`),
    concurrency,
    async (email, i) => {
      await chatCall(keel.chat.url, owner, '/users', { email, password, full_name: `User ${prefix} ${i}` });
      const k = (await chatCall(keel.chat.url, undefined, '/fetch_api_key', { username: email, password })) as { email: string; api_key: string; user_id: number };
      return { id: k.user_id, email: k.email, authorization: basicAuth(k.email, k.api_key) };
    },
  );
}

export function describeLoad(r: LoadResult): string {
  const cpu = r.cpuMicros !== undefined ? `, server CPU ${r.cpuMicros} us/req` : '';
  return `p50 ${r.p50} ms, p99 ${r.p99} ms${cpu}, ${r.total} requests`;
}

// ---- the child-process roles ---------------------------------------------------------------------

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

async function runLoad(arg: string): Promise<void> {
  const { url, spec, connections, pipelining, seconds } = JSON.parse(arg) as { url: string; spec: LoadSpec; connections: number; pipelining: number; seconds: number };
  // autocannon ships no types; this is the part of its API used here.
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let turn = 0;
  const rotate = spec.rotateHeaders;
  const r = await autocannon({
    url,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    body: spec.body,
    ...(rotate?.length
      ? {
          requests: [{ setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...rotate[turn++ % rotate.length] } }) }],
        }
      : {}),
    connections,
    pipelining,
    duration: seconds,
    verifyBody: (body: string) => body.includes(spec.loadExpect ?? spec.expect),
  });
  const result: LoadResult = {
    rps: r.requests.average,
    total: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    bad: { non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, mismatches: r.mismatches },
  };
  process.stdout.write(JSON.stringify({ result }) + '\n');
}

function runBareServer(): void {
  const server = http.createServer((_req, res) => {
    // Drain the body, as any real server must, then answer.
    _req.resume();
    _req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BARE_BODY) });
      res.end(BARE_BODY);
    });
  });
  // The same keep-alive as the Infra server, so neither closes connections mid-run.
  server.keepAliveTimeout = 65_000;
  server.listen({ host: '127.0.0.1', port: 0, backlog: 4096 }, () => {
    const a = server.address() as { port: number };
    process.stdout.write(JSON.stringify({ listening: { bare: `127.0.0.1:${a.port}` } }) + '\n');
  });
  process.once('SIGTERM', () => process.exit(0));
}

if (isMain(import.meta.url)) {
  const [role, arg] = process.argv.slice(2);
  if (role === 'load') await runLoad(arg);
  else if (role === 'bare-server') runBareServer();
  else throw new Error(`bench/lib.ts: unknown role ${role}`);
}

// The incus driver: real system containers through the Incus/LXD REST API on the daemon's unix socket
// (node:http with `socketPath`; the API is small enough that no client library is needed). One device
// is one container named by MachineSpec.name; the order's sizes become limits.*, its SSH keys,
// credentials, hostname and post-install script a cloud-config document cloud-init runs at first boot.
// Incus and LXD speak the same 1.0 API; the only difference the driver meets is the name of the
// cloud-init keys (cloud-init.* with the `cloud_init` API extension, user.* before it).

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { type CloudInit, DriverError, type MachineDriver, type MachineSpec, type MachineState } from './driver.js';
import type { Logger } from '../../platform/log.js';

/** Where Incus and LXD put their socket, in the order the driver looks for one. */
export const INCUS_SOCKETS = ['/var/lib/incus/unix.socket', '/var/lib/lxd/unix.socket', '/var/snap/lxd/common/lxd/unix.socket'];

/** The first socket of INCUS_SOCKETS that exists, or the first (so errors name a path). */
export function defaultIncusSocket(): string {
  return INCUS_SOCKETS.find((p) => existsSync(p)) ?? INCUS_SOCKETS[0];
}

export interface IncusOptions {
  socketPath?: string;
  /** The Incus project instances live in (default: the daemon's default project). */
  project?: string;
  /** How long one asynchronous operation (create, start, stop, delete) may take. */
  operationTimeoutMs?: number;
  /** How long a graceful stop waits for the guest before the step fails (retryable). */
  gracefulStopS?: number;
  /** Per HTTP request, for calls that answer at once. */
  requestTimeoutMs?: number;
  /**
   * How long start() waits for the guest's IPv4 on eth0 (DHCP, 1-3 s here), so the state read right
   * after a STARTUP holds the device's address; 0: not at all. Past it, start() still succeeds.
   */
  addressWaitMs?: number;
  log?: Logger;
}

/**
 * The driver factory's entry (drivers/index.ts, `--infra-driver incus`): the socket from
 * `--incus-socket`. The clock is not needed (steps take real time); the log hears of each step.
 */
export function createIncusDriver(options: { socketPath: string; log?: Logger; clock?: unknown }): MachineDriver {
  return new IncusDriver({ socketPath: options.socketPath, log: options.log });
}

/** One answer of the API: sync (metadata), async (an operation to wait on) or error. */
interface ApiResponse {
  type: 'sync' | 'async' | 'error';
  status_code?: number;
  error_code?: number;
  error?: string;
  operation?: string;
  metadata?: unknown;
}

interface RawResponse {
  status: number;
  body: Buffer;
}

interface InstanceStateBody {
  status: string;
  status_code: number;
  network?: Record<string, { addresses?: { family: string; address: string; scope: string }[] }> | null;
}

interface OperationBody {
  id: string;
  status: string;
  status_code: number;
  err?: string;
}

// Incus/LXD status codes (api.StatusCode): 102 Stopped, 103 Running, 110 Frozen; operations 200
// Success, 400 Failure, 401 Cancelled.
const RUNNING = 103;
const FROZEN = 110;
const OP_SUCCESS = 200;

/** Where the driver's own copy of the post-install script goes in the guest. */
const POST_INSTALL_PATH = '/var/lib/keel/post-install';

export class IncusDriver implements MachineDriver {
  readonly kind = 'incus' as const;
  readonly socketPath: string;
  private readonly project?: string;
  private readonly operationTimeoutMs: number;
  private readonly gracefulStopS: number;
  private readonly requestTimeoutMs: number;
  private readonly agent: http.Agent;
  private readonly log?: Logger;
  private readonly addressWaitMs: number;
  /** Whether the daemon has the cloud-init.* keys (read once from GET /1.0). */
  private cloudInitKeys?: Promise<boolean>;

  constructor(opts: IncusOptions = {}) {
    this.socketPath = opts.socketPath ?? defaultIncusSocket();
    this.project = opts.project;
    this.operationTimeoutMs = opts.operationTimeoutMs ?? 120_000;
    this.gracefulStopS = opts.gracefulStopS ?? 60;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.log = opts.log;
    this.addressWaitMs = opts.addressWaitMs ?? 30_000;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  }

  /** Real time: each step takes as long as the daemon's call, which the worker already waits for. */
  stepMs(): number {
    return 0;
  }

  create(spec: MachineSpec): Promise<void> {
    return this.timed('create', spec.name, () => this.createNow(spec));
  }

  private async createNow(spec: MachineSpec): Promise<void> {
    if (!spec.image) {
      throw new DriverError(`Operating system ${spec.operatingSystem} cannot run as a container (no image for it)`);
    }
    checkName(spec.name);
    // A create resumed after a crash finds the instance made the first time: it is the machine.
    if (await this.exists(spec.name)) return;
    const keys = await this.keyNames();
    const body = {
      name: spec.name,
      type: 'container',
      source: { type: 'image', alias: spec.image },
      config: present({ ...this.limits(spec), ...this.cloudInitConfig(spec, keys, undefined), 'user.keel.instance-id': randomUUID() }),
    };
    const res = await this.call('POST', '/1.0/instances', body, { allow: [404, 409] });
    if (res.status === 404) throw new DriverError(`Image ${spec.image} is not on the Incus host (${res.api.error ?? 'not found'})`);
    if (res.status === 409 || (res.api.type === 'error' && /already exists/i.test(res.api.error ?? ''))) return;
    try {
      await this.settle(res.api, `create ${spec.name}`);
    } catch (err) {
      // Two creates of one name racing: the loser's "already exists" means the machine is there.
      if (err instanceof DriverError && /already exists/i.test(err.message) && (await this.exists(spec.name))) return;
      if (err instanceof DriverError && /image.*not found|not found.*image|alias/i.test(err.message)) {
        throw new DriverError(`Image ${spec.image} is not on the Incus host (${err.message})`);
      }
      throw err;
    }
  }

  start(name: string, cloudInit?: CloudInit): Promise<void> {
    return this.timed('start', name, () => this.startNow(name, cloudInit));
  }

  private async startNow(name: string, cloudInit?: CloudInit): Promise<void> {
    const inst = await this.instance(name);
    const given = cloudInit && (cloudInit.userData || cloudInit.metaData || cloudInit.networkConfig) ? JSON.stringify(cloudInit) : undefined;
    // The same data again is a resumed step: already applied, cloud-init must not run twice for it.
    if (given && given !== inst.config['user.keel.cloud-init']) {
      // The transaction's cloud-init data joins the order's document, and a new instance id makes
      // cloud-init run again at the next boot (the image's templates write both before init starts).
      // A running machine is not restarted for it: STARTUP only powers on.
      const keys = await this.keyNames();
      await this.patch(name, {
        ...this.cloudInitConfig(specOf(inst.config), keys, cloudInit),
        'user.keel.instance-id': randomUUID(),
        'user.keel.cloud-init': given,
      });
    }
    if (!isRunning(inst.statusCode)) await this.changeState(name, { action: 'start', timeout: -1 });
    await this.awaitAddress(name);
  }

  /** Until the running machine shows an IPv4 (the device's address), within addressWaitMs. */
  private async awaitAddress(name: string): Promise<void> {
    const deadline = Date.now() + this.addressWaitMs;
    while (this.addressWaitMs > 0) {
      const st = await this.state(name);
      if (!st || st.power !== 'ONLINE' || st.ipv4.length) return;
      if (Date.now() >= deadline) {
        this.log?.warn('incus machine has no IPv4 yet', { machine: name, waitedMs: this.addressWaitMs });
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  stop(name: string, how: 'graceful' | 'force'): Promise<void> {
    return this.timed('stop', name, () => this.stopNow(name, how));
  }

  private async stopNow(name: string, how: 'graceful' | 'force'): Promise<void> {
    const inst = await this.instance(name);
    if (!isRunning(inst.statusCode)) return;
    if (how === 'force') {
      await this.changeState(name, { action: 'stop', force: true, timeout: -1 });
      return;
    }
    try {
      await this.changeState(name, { action: 'stop', force: false, timeout: this.gracefulStopS }, this.gracefulStopS * 1000 + 10_000);
    } catch (err) {
      // The daemon's words ("Failed shutting down instance, status is Running") say less than this.
      if (err instanceof DriverError && /shutting down|deadline|timed out|did not finish/i.test(err.message)) {
        throw new DriverError(`The machine did not shut down within ${this.gracefulStopS} s; a FORCESHUTDOWN cuts its power`, true);
      }
      throw err;
    }
  }

  reconfigure(spec: MachineSpec): Promise<void> {
    return this.timed('reconfigure', spec.name, () => this.reconfigureNow(spec));
  }

  private async reconfigureNow(spec: MachineSpec): Promise<void> {
    const inst = await this.instance(spec.name);
    const keys = await this.keyNames();
    const before = specOf(inst.config);
    let cloudInit: CloudInit | undefined;
    try {
      const saved = inst.config['user.keel.cloud-init'];
      if (saved) cloudInit = JSON.parse(saved) as CloudInit;
    } catch {
      cloudInit = undefined;
    }
    const config: Record<string, string | null> = { ...this.limits(spec), ...this.cloudInitConfig(spec, keys, cloudInit) };
    // New keys or credentials reach the guest through cloud-init, which runs again when the instance
    // id changes: at the next start (a running machine keeps its limits live, its users until then).
    if (JSON.stringify(before.sshKeys) !== JSON.stringify(spec.sshKeys) || JSON.stringify(before.credentials) !== JSON.stringify(spec.credentials)) {
      config['user.keel.instance-id'] = randomUUID();
    }
    await this.patch(spec.name, config);
  }

  destroy(name: string): Promise<void> {
    return this.timed('destroy', name, () => this.destroyNow(name));
  }

  private async destroyNow(name: string): Promise<void> {
    checkName(name);
    const inst = await this.instanceOrNull(name);
    if (!inst) return;
    // The API deletes stopped instances only; a cancelled device's machine is cut off, not shut down.
    if (isRunning(inst.statusCode)) {
      try {
        await this.changeState(name, { action: 'stop', force: true, timeout: -1 });
      } catch (err) {
        if (!(err instanceof DriverError && /not running|already stopped/i.test(err.message))) throw err;
      }
    }
    const res = await this.call('DELETE', this.instancePath(name), undefined, { allow: [404] });
    if (res.status === 404) return;
    try {
      await this.settle(res.api, `delete ${name}`);
    } catch (err) {
      if (err instanceof DriverError && /not found/i.test(err.message)) return;
      throw err;
    }
  }

  async state(name: string): Promise<MachineState | null> {
    checkName(name);
    const res = await this.call('GET', `${this.instancePath(name)}/state`, undefined, { allow: [404] });
    if (res.status === 404) return null;
    const st = this.sync<InstanceStateBody>(res.api, `state of ${name}`);
    const ipv4: string[] = [];
    const ipv6: string[] = [];
    for (const [iface, net] of Object.entries(st.network ?? {})) {
      if (iface === 'lo') continue;
      for (const a of net.addresses ?? []) {
        if (a.scope !== 'global') continue;
        if (a.family === 'inet') ipv4.push(a.address);
        else if (a.family === 'inet6') ipv6.push(a.address);
      }
    }
    // eth0 (the profile's NIC) first: the device's primary address.
    const eth0 = st.network?.eth0?.addresses?.find((a) => a.family === 'inet' && a.scope === 'global')?.address;
    if (eth0) ipv4.sort((a, b) => Number(b === eth0) - Number(a === eth0));
    return { power: isRunning(st.status_code) ? 'ONLINE' : 'OFFLINE', ipv4, ipv6 };
  }

  /**
   * A file inside the guest through the files API (null when it does not exist): not part of
   * MachineDriver; the conformance suite reads what cloud-init wrote with it.
   */
  async readFile(name: string, path: string): Promise<string | null> {
    checkName(name);
    const raw = await this.request('GET', `${this.instancePath(name)}/files?path=${encodeURIComponent(path)}${this.projectQuery('&')}`);
    if (raw.status === 404) return null;
    if (raw.status >= 400) {
      const api = parseApi(raw);
      // LXD answers a missing file with 404 or, on older versions, a 500 naming ENOENT.
      if (/no such file|not found/i.test(api.error ?? '')) return null;
      throw new DriverError(`Incus: reading ${path} in ${name} failed: ${api.error ?? `HTTP ${raw.status}`}`);
    }
    return raw.body.toString('utf8');
  }

  /** Whether the daemon answers, and what it is: a reason for skipping tests when it does not. */
  async describe(): Promise<{ server: string; version: string; cloudInitKeys: boolean }> {
    const res = await this.call('GET', '/1.0');
    const meta = this.sync<{ api_extensions?: string[]; environment?: { server?: string; server_version?: string } }>(res.api, 'server');
    return {
      server: meta.environment?.server ?? 'unknown',
      version: meta.environment?.server_version ?? 'unknown',
      cloudInitKeys: (meta.api_extensions ?? []).includes('cloud_init'),
    };
  }

  /** The instance's configuration keys (limits.*, user.keel.*): for tests and operators. */
  async config(name: string): Promise<Record<string, string>> {
    return (await this.instance(name)).config;
  }

  /** Whether an image alias is on the host (for a readable refusal before any order is taken). */
  async imageExists(alias: string): Promise<boolean> {
    const res = await this.call('GET', `/1.0/images/aliases/${encodeURIComponent(alias)}`, undefined, { allow: [404] });
    return res.status !== 404;
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }

  /** Each step's outcome and time in the log: what an operator reads when a transaction is slow. */
  private async timed(step: string, name: string, run: () => Promise<void>): Promise<void> {
    const t0 = Date.now();
    try {
      await run();
      this.log?.info('incus step done', { step, machine: name, ms: Date.now() - t0 });
    } catch (err) {
      this.log?.warn('incus step failed', { step, machine: name, ms: Date.now() - t0, error: (err as Error).message });
      throw err;
    }
  }

  // --- the instance's configuration --------------------------------------------------------------

  private limits(spec: MachineSpec): Record<string, string> {
    return {
      'limits.cpu': String(Math.max(1, Math.floor(spec.cpu))),
      'limits.memory': `${Math.max(64, Math.round(spec.memoryGB * 1024))}MiB`,
      // What the order asked for, kept with the machine so REFRESHCONFIG and a resumed start can
      // rebuild the cloud-init document without the store.
      'user.keel.spec': JSON.stringify(specRecord(spec)),
    };
  }

  private cloudInitConfig(spec: CloudInitSpec, cloudInitKeys: boolean, extra: CloudInit | undefined): Record<string, string | null> {
    const k = cloudInitKeys ? 'cloud-init' : 'user';
    const out: Record<string, string | null> = { [`${k}.user-data`]: userData(spec, extra?.userData) };
    out[`${k}.network-config`] = extra?.networkConfig ? extra.networkConfig : null;
    // Meta data is a free-form user key either way (templates add it to the NoCloud meta-data).
    out['user.meta-data'] = extra?.metaData ? extra.metaData : null;
    return out;
  }

  private keyNames(): Promise<boolean> {
    this.cloudInitKeys ??= this.describe().then(
      (d) => d.cloudInitKeys,
      (err) => {
        this.cloudInitKeys = undefined;
        throw err;
      },
    );
    return this.cloudInitKeys;
  }

  // --- instance calls ----------------------------------------------------------------------------

  private instancePath(name: string): string {
    return `/1.0/instances/${encodeURIComponent(name)}`;
  }

  private async exists(name: string): Promise<boolean> {
    return (await this.instanceOrNull(name)) !== null;
  }

  private async instanceOrNull(name: string): Promise<{ statusCode: number; config: Record<string, string> } | null> {
    checkName(name);
    const res = await this.call('GET', this.instancePath(name), undefined, { allow: [404] });
    if (res.status === 404) return null;
    const meta = this.sync<{ status_code: number; config?: Record<string, string> }>(res.api, `instance ${name}`);
    return { statusCode: meta.status_code, config: meta.config ?? {} };
  }

  private async instance(name: string): Promise<{ statusCode: number; config: Record<string, string> }> {
    const inst = await this.instanceOrNull(name);
    if (!inst) throw new DriverError(`No machine named ${name} on the Incus host`);
    return inst;
  }

  private async changeState(name: string, body: { action: string; force?: boolean; timeout: number }, waitMs?: number): Promise<void> {
    const res = await this.call('PUT', `${this.instancePath(name)}/state`, body);
    try {
      await this.settle(res.api, `${body.force ? 'force ' : ''}${body.action} ${name}`, waitMs);
    } catch (err) {
      // Both answers mean the machine is already where the step wants it.
      if (err instanceof DriverError && body.action === 'start' && /already running/i.test(err.message)) return;
      if (err instanceof DriverError && body.action === 'stop' && /already stopped|not running/i.test(err.message)) return;
      throw err;
    }
  }

  private async patch(name: string, config: Record<string, string | null>): Promise<void> {
    // PATCH merges config keys; a key set to "" is removed (null is not accepted by LXD 5.0).
    const body: Record<string, string> = {};
    for (const [k, v] of Object.entries(config)) body[k] = v ?? '';
    const res = await this.call('PATCH', this.instancePath(name), { config: body });
    await this.settle(res.api, `update ${name}`);
  }

  // --- the REST layer ----------------------------------------------------------------------------

  private projectQuery(sep: '?' | '&'): string {
    return this.project ? `${sep}project=${encodeURIComponent(this.project)}` : '';
  }

  /** A JSON call; statuses in `allow` come back for the caller to read, other errors throw. */
  private async call(method: string, path: string, body?: unknown, opts: { allow?: number[]; timeoutMs?: number } = {}): Promise<{ status: number; api: ApiResponse }> {
    const target = path.includes('?') ? `${path}${this.projectQuery('&')}` : `${path}${this.projectQuery('?')}`;
    const raw = await this.request(method, target, body, opts.timeoutMs);
    const api = parseApi(raw);
    if (opts.allow?.includes(raw.status)) return { status: raw.status, api };
    if (raw.status >= 400 || api.type === 'error') {
      throw new DriverError(`Incus: ${method} ${path} failed: ${api.error || `HTTP ${raw.status}`}`, raw.status >= 500 && raw.status !== 501);
    }
    return { status: raw.status, api };
  }

  private sync<T>(api: ApiResponse, what: string): T {
    if (api.type !== 'sync' || api.metadata == null) throw new DriverError(`Incus: unexpected answer for ${what}`);
    return api.metadata as T;
  }

  /** Waits for an asynchronous answer's operation; a sync answer is done already. */
  private async settle(api: ApiResponse, what: string, waitMs = this.operationTimeoutMs): Promise<void> {
    if (api.type === 'error') throw new DriverError(`Incus: ${what} failed: ${api.error ?? 'unknown error'}`);
    if (api.type !== 'async') return;
    const id = (api.metadata as { id?: string } | undefined)?.id ?? api.operation?.split('/').pop();
    if (!id) throw new DriverError(`Incus: ${what}: the answer names no operation`);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const left = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
      const res = await this.call('GET', `/1.0/operations/${encodeURIComponent(id)}/wait?timeout=${Math.min(left, 30)}`, undefined, {
        timeoutMs: Math.min(left, 30) * 1000 + 10_000,
        allow: [404],
      });
      // An operation that finished long ago is forgotten by the daemon: it cannot be told apart
      // from success here, and the step's effect is checked by its caller's next read.
      if (res.status === 404) return;
      const op = this.sync<OperationBody>(res.api, `operation of ${what}`);
      if (op.status_code === OP_SUCCESS) return;
      if (op.status_code >= 400) throw new DriverError(`Incus: ${what} failed: ${op.err || op.status}`);
      if (Date.now() >= deadline) {
        throw new DriverError(`Incus: ${what} did not finish within ${Math.round(waitMs / 1000)} s (operation ${id} is ${op.status})`, true);
      }
    }
  }

  private request(method: string, path: string, body?: unknown, timeoutMs = this.requestTimeoutMs): Promise<RawResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          socketPath: this.socketPath,
          agent: this.agent,
          method,
          path,
          // The daemon ignores the host; node needs one.
          host: 'incus',
          headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', (err) => reject(new DriverError(`Incus: ${method} ${path}: ${err.message}`, true)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
      req.on('error', (err: NodeJS.ErrnoException) => {
        const why =
          err.code === 'ENOENT' || err.code === 'ECONNREFUSED'
            ? `the Incus daemon is not reachable at ${this.socketPath} (${err.code})`
            : err.code === 'EACCES'
              ? `no permission to use the Incus socket ${this.socketPath}`
              : `Incus: ${method} ${path}: ${err.message}`;
        reject(new DriverError(why, true));
      });
      req.end(payload);
    });
  }
}

function parseApi(raw: RawResponse): ApiResponse {
  try {
    const parsed = JSON.parse(raw.body.toString('utf8')) as ApiResponse;
    if (parsed && typeof parsed === 'object' && typeof parsed.type === 'string') return parsed;
  } catch {
    // Not JSON: a proxy's page or a truncated answer; the status says what happened.
  }
  return { type: 'error', error: `HTTP ${raw.status}: ${raw.body.toString('utf8').slice(0, 200).trim() || 'empty answer'}`, error_code: raw.status };
}

/** A config without the keys a PATCH would remove (a new instance has none to remove). */
function present(config: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) if (v !== null) out[k] = v;
  return out;
}

function isRunning(code: number): boolean {
  return code === RUNNING || code === FROZEN;
}

/** Instance names are DNS labels for Incus: refuse others before the daemon does, readably. */
function checkName(name: string): void {
  if (!/^[a-zA-Z][a-zA-Z0-9-]{0,62}$/.test(name) || name.endsWith('-')) {
    throw new DriverError(`Machine name ${JSON.stringify(name)} is not a valid instance name (letters, digits and hyphens, up to 63)`);
  }
}

// --- cloud-init ------------------------------------------------------------------------------------

/**
 * A credential as MachineSpec carries it: the order's crypt(3) hash (`passwordHash`, what the worker
 * passes) or a plaintext `password` (tests, operators' own specs). Either shape of MachineSpec fits.
 */
interface Credential {
  username: string;
  password?: string;
  passwordHash?: string;
}

/** What the cloud-init document is made from: a MachineSpec's part, kept on the instance. */
export interface CloudInitSpec {
  hostname: string;
  sshKeys: string[];
  credentials: Credential[];
  postInstallScript?: string;
}

function specRecord(spec: CloudInitSpec): CloudInitSpec {
  return { hostname: spec.hostname, sshKeys: spec.sshKeys, credentials: spec.credentials, postInstallScript: spec.postInstallScript };
}

/** The spec an instance was made from, as far as cloud-init needs it (from user.keel.spec). */
function specOf(config: Record<string, string>): CloudInitSpec {
  const rec: CloudInitSpec = { hostname: '', sshKeys: [], credentials: [] };
  try {
    return { ...rec, ...(JSON.parse(config['user.keel.spec'] ?? '{}') as Partial<CloudInitSpec>) };
  } catch {
    // A machine made by hand: no keys, no users of ours.
    return rec;
  }
}

/** cloud-init's field for a credential's password, or none (a user with keys only). */
function passwordLine(c: Credential): string | null {
  const secret = c.passwordHash || c.password;
  if (!secret) return null;
  return secret.startsWith('$') ? `    hashed_passwd: ${yamlString(secret)}` : `    plain_text_passwd: ${yamlString(secret)}`;
}

/**
 * The order's cloud-config: hostname, each credential as a sudo user with the SSH keys (and the
 * distribution's default user with them too), the post-install script run once. A crypt(3) hash
 * (`$6$...`, as orders store) becomes hashed_passwd, anything else plain_text_passwd.
 * With the transaction's user data, a MIME multipart document: cloud-init runs both parts.
 */
export function userData(spec: CloudInitSpec, extra?: string): string {
  const lines: string[] = ['#cloud-config'];
  if (spec.hostname) {
    const short = spec.hostname.split('.')[0];
    lines.push(`hostname: ${yamlString(short)}`);
    if (spec.hostname.includes('.')) lines.push(`fqdn: ${yamlString(spec.hostname)}`);
    // /etc/hosts names the host too (sudo and `hostname -f` look it up).
    lines.push('preserve_hostname: false', 'manage_etc_hosts: true');
  }
  // The host keys are made once, at the first run; later runs (new keys, new user data) keep them.
  lines.push('ssh_deletekeys: false', 'disable_root: false');
  lines.push('users:', '  - default');
  for (const c of spec.credentials) {
    lines.push(`  - name: ${yamlString(c.username)}`);
    const pw = passwordLine(c);
    // Without a password the account stays locked for passwords (keys still log in).
    if (pw) lines.push('    lock_passwd: false', pw);
    if (c.username !== 'root') {
      lines.push('    shell: /bin/bash', '    sudo: "ALL=(ALL) NOPASSWD:ALL"');
    }
    if (spec.sshKeys.length) {
      lines.push('    ssh_authorized_keys:');
      for (const k of spec.sshKeys) lines.push(`      - ${yamlString(k)}`);
    }
  }
  if (spec.sshKeys.length) {
    lines.push('ssh_authorized_keys:');
    for (const k of spec.sshKeys) lines.push(`  - ${yamlString(k)}`);
  }
  if (spec.postInstallScript) {
    lines.push('write_files:', `  - path: ${POST_INSTALL_PATH}`, "    permissions: '0700'", '    encoding: b64');
    lines.push(`    content: ${Buffer.from(spec.postInstallScript).toString('base64')}`);
    // Once per machine, not per cloud-init run: a marker file says it ran.
    const run = spec.postInstallScript.startsWith('#!') ? POST_INSTALL_PATH : `sh ${POST_INSTALL_PATH}`;
    lines.push('runcmd:', `  - [sh, -c, ${yamlString(`[ -e ${POST_INSTALL_PATH}.done ] || { ${run}; touch ${POST_INSTALL_PATH}.done; }`)}]`);
  }
  const ours = `${lines.join('\n')}\n`;
  if (!extra) return ours;
  const boundary = `keel-${randomUUID()}`;
  const part = (text: string, merge: string) => {
    const type = partType(text);
    return `--${boundary}\nContent-Type: ${type}; charset="utf-8"\nMIME-Version: 1.0\n${merge}Content-Transfer-Encoding: base64\n\n${wrap(Buffer.from(text).toString('base64'))}\n`;
  };
  // cloud-init's default merge replaces lists: the caller's write_files or runcmd would drop ours
  // (the post-install script). So the caller's part comes first and ours merges into it: lists
  // appended, keys the caller set kept (their hostname wins over the order's).
  const appendLists = 'Merge-Type: list(append)+dict(no_replace,recurse_list)+str()\n';
  return `Content-Type: multipart/mixed; boundary="${boundary}"\nMIME-Version: 1.0\n\n${part(extra, '')}${part(ours, appendLists)}--${boundary}--\n`;
}

/** cloud-init's part types by their first line, as its own "#include"-style detection reads them. */
function partType(text: string): string {
  if (text.startsWith('#cloud-config')) return 'text/cloud-config';
  if (text.startsWith('#!')) return 'text/x-shellscript';
  if (text.startsWith('#cloud-boothook')) return 'text/cloud-boothook';
  if (text.startsWith('#include')) return 'text/x-include-url';
  if (text.startsWith('## template: jinja')) return 'text/jinja2';
  return 'text/plain';
}

function wrap(b64: string): string {
  return b64.replace(/.{1,76}/g, '$&\n').trimEnd();
}

/** A YAML double-quoted scalar (JSON's string syntax is valid YAML). */
function yamlString(s: string): string {
  return JSON.stringify(s);
}

// An Infra server built in this process over a fresh store on one engine, with rate limits off: for
// tests that look inside the core (its zone catalog, its database) while calling the API.
import type { EngineName } from './engines.js';
import { createStorage, storageArgs, type Storage } from './server.js';
import { type App, createApp } from '../../src/app.js';
import type { InfraServer } from '../../src/infra/transport/server.js';
import { buildConfig, type Config } from '../../src/config/config.js';
import { readOptions } from '../../src/config/env.js';
import type { Clock } from '../../src/platform/clock.js';
import { SimDriver, type SimOptions } from '../../src/infra/drivers/sim.js';
import type { ProvisioningWorker, WorkerHooks, WorkerOptions } from '../../src/infra/provisioning/worker.js';

export interface InProcessInfra {
  storage: Storage;
  ctx: App;
  app: InfraServer;
  /** The config the core was opened with, to open a second core over the same store. */
  config: Config;
  /** A command (POST json.php) as the bootstrap API user; the parsed envelope, whatever its code. */
  call(cmd: string, params?: Record<string, unknown>): Promise<Record<string, any>>;
  /** A REST request as the bootstrap API user (GET carries no body unless one is given); the parsed envelope. */
  rest(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: Record<string, unknown>): Promise<Record<string, any>>;
  /** The sim driver (instant unless opts.sim says otherwise): failNext() makes a step fail. */
  driver: SimDriver;
  /** The provisioning worker, without its timer: runDue() runs what the clock says is due. */
  worker: ProvisioningWorker;
  close(): Promise<void>;
}

export interface InProcessInfraOptions {
  clock?: Clock;
  sim?: SimOptions;
  worker?: Partial<WorkerOptions>;
  hooks?: WorkerHooks;
}

export async function inProcessInfra(engine: EngineName, opts: InProcessInfraOptions = {}): Promise<InProcessInfra> {
  const storage = await createStorage(engine);
  const config = buildConfig(readOptions([...storageArgs(storage), '--log-level', 'error', '--rate-limits', 'off'], {}).options);
  // Built by the composition root as `keel serve` builds it, with an instant sim driver and a worker
  // without its timer; the Infra listener is driven through inject().
  const ctx = await createApp(config, {
    clock: opts.clock,
    events: { sweepEveryMs: 0 },
    presence: { flushEveryMs: 0 },
    worker: { tickMs: 0, ...opts.worker, hooks: opts.hooks, sim: { speed: 'instant', ...opts.sim } },
  });
  const app = ctx.infraServer;
  if (!(ctx.driver instanceof SimDriver)) throw new Error('in-process Infra expects the sim driver');
  const driver = ctx.driver;
  const worker = ctx.worker;
  const auth = 'Basic ' + Buffer.from(`${ctx.created!.apiUuid}:${ctx.created!.apiSecret}`).toString('base64');
  return {
    storage,
    ctx,
    app,
    config,
    async call(cmd, params = {}) {
      const r = await app.inject({ method: 'POST', url: '/api/rest/v2.10/json.php', headers: { authorization: auth }, payload: JSON.stringify({ cmd, ...params }) });
      return JSON.parse(r.body);
    },
    driver,
    worker,
    async rest(method, path, body) {
      const r = await app.inject({ method, url: `/api/v2.9${path}`, headers: { authorization: auth }, ...(body ? { payload: JSON.stringify(body) } : {}) });
      return JSON.parse(r.body);
    },
    async close() {
      await worker.stop();
      await app.close();
      // The chat listener (never opened here) closes the event hub and writes presence.
      await ctx.chatServer.close();
      await ctx.close();
      await storage.dispose();
    },
  };
}

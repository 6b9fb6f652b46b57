// An Infra server built in this process (no listener), for tests that need to reach inside:
// a manual clock, or rows written straight into the store.
import { buildConfig } from '../../src/config/config.js';
import { readOptions } from '../../src/config/env.js';
import { createApp, type App } from '../../src/app.js';
import type { Clock } from '../../src/platform/clock.js';
import { createLogger, type Logger } from '../../src/platform/log.js';
import { storageArgs, type Storage } from './server.js';

export async function inProcessInfra(storage: Storage, opts: { clock?: Clock; args?: string[]; log?: Logger } = {}) {
  // API rate limits off unless the test sets --rate-limits (a manual clock never refills a budget).
  const args = opts.args ?? [];
  const config = buildConfig(readOptions([...storageArgs(storage), ...(args.includes('--rate-limits') ? [] : ['--rate-limits', 'off']), ...args], {}).options);
  // Built by the composition root as `keel serve` builds it; the Infra listener is driven through inject().
  const ctx: App = await createApp(config, { clock: opts.clock, log: opts.log ?? createLogger('error'), events: { sweepEveryMs: 0 }, presence: { flushEveryMs: 0 } });
  const app = ctx.infraServer;
  const basicHeader = 'Basic ' + Buffer.from(`${ctx.created!.apiUuid}:${ctx.created!.apiSecret}`).toString('base64');
  /** Runs a command-style request; headers default to the first API key's Basic credentials. */
  async function cmd(cmd: string, params: Record<string, unknown> = {}, headers: Record<string, string> = { authorization: basicHeader }) {
    const res = await app.inject({ method: 'POST', url: '/api/rest/v2.10/json.php', payload: JSON.stringify({ cmd, ...params }), headers: { 'content-type': 'application/json', ...headers } });
    return JSON.parse(res.body) as Record<string, any>;
  }
  return {
    ctx,
    app,
    cmd,
    async close() {
      await app.close();
      // The chat listener (never opened here) closes the event hub and writes presence.
      await ctx.chatServer.close();
      await ctx.close();
    },
  };
}

// A Chat server built in this process (inject(), or a listener when a test needs real
// sockets), for tests that need a manual clock or to reach the event hub. Requests are sent the
// way Zulip's Python client sends them, and every 2xx answer is checked against Zulip's OpenAPI.
import assert from 'node:assert/strict';
import { buildConfig } from '../../src/config/config.js';
import { readOptions } from '../../src/config/env.js';
import { createApp, type AppOptions } from '../../src/app.js';
import type { ChatHttpOptions } from '../../src/chat/http.js';
import { saveQueues } from '../../src/chat/events/persist.js';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger, type Logger } from '../../src/platform/log.js';
import { encodeParams } from './chat-client.js';
import { checkChatResponse } from './zulip-openapi.js';
import { storageArgs, type Storage } from './server.js';

export interface Reply {
  status: number;
  body: Record<string, any>;
}

/** A call that must succeed: asserts HTTP 200 (naming the call and the answer) and gives the body. */
export async function ok(c: InProcessClient, method: string, path: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const r = await c.call(method, path, params);
  assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

export interface InProcessClient {
  email: string;
  apiKey: string;
  call(method: string, path: string, params?: Record<string, unknown>): Promise<Reply>;
}

/**
 * `http` sets the listener's connection cap and timeouts (tests that listen on a real socket);
 * `rateLimits` is the --rate-limits value: off unless a test is about them (the manual clock stands
 * still, so budgets never refill); `log` is where the server logs (default: errors to stderr), for
 * tests that look at what it logs; `args` are more command-line options (--push-url ...), `app`
 * the app options a test injects (a push service, delete_topic's batch size and time budget).
 */
export async function inProcessChat(storage: Storage, options: ChatHttpOptions & { rateLimits?: string; log?: Logger; args?: string[]; app?: Pick<AppOptions, 'push' | 'topicDeletion'> } = {}) {
  const { rateLimits, log, args, app: appOptions, ...http } = options;
  const clock = new ManualClock(Date.UTC(2025, 0, 1));
  const config = buildConfig(readOptions([...storageArgs(storage), '--rate-limits', rateLimits ?? 'off', ...(args ?? [])], {}).options);
  const ctx = await createApp(config, {
    clock,
    log: log ?? createLogger('error'),
    // No real timer: the tests move the clock and call sweep() themselves.
    events: { sweepEveryMs: 0 },
    // Presence is written when a test calls flush() (or at close), never on a timer.
    presence: { flushEveryMs: 0 },
    http,
    chatSite: { url: 'http://chat.keel.test', rootDomain: 'chat.keel.test' },
    ...appOptions,
  });
  const { events, presence } = ctx;
  const app = ctx.chatServer;
  // As `keel serve` does: queues a previous close saved come back, with their restart event.
  await ctx.restoreQueues();

  function client(email: string, apiKey: string): InProcessClient {
    return {
      email,
      apiKey,
      async call(method, path, params = {}) {
        const form = encodeParams(params).toString();
        const url = `/api/v1${path}${method === 'GET' && form ? `?${form}` : ''}`;
        const res = await app.inject({
          method: method as 'GET',
          url,
          headers: {
            authorization: 'Basic ' + Buffer.from(`${email}:${apiKey}`).toString('base64'),
            ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
          },
          payload: method === 'GET' ? undefined : form,
        });
        const body = JSON.parse(res.body) as Record<string, any>;
        checkChatResponse(method, url, res.statusCode, body);
        return { status: res.statusCode, body };
      },
    };
  }

  const owner = client(ctx.chatCreated!.email, ctx.chatCreated!.apiKey);

  /** Creates a member (through the API, as an administrator would) and returns their client and id. */
  async function member(email: string, fullName: string): Promise<{ client: InProcessClient; id: number }> {
    const made = await owner.call('POST', '/users', { email, password: 'pass-word-1', full_name: fullName });
    if (made.status !== 200) throw new Error(JSON.stringify(made.body));
    const key = await app.inject({
      method: 'POST',
      url: '/api/v1/fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeParams({ username: email, password: 'pass-word-1' }).toString(),
    });
    const k = JSON.parse(key.body) as { email: string; api_key: string };
    return { client: client(k.email, k.api_key), id: made.body.user_id as number };
  }

  return {
    ctx,
    clock,
    events,
    presence,
    app,
    owner,
    client,
    member,
    async close() {
      // A test may have closed the listener already.
      await app.close().catch(() => {});
      await ctx.infraServer.close().catch(() => {});
      // As `keel serve` does at a graceful stop: the queues wait in the store for the next start.
      await saveQueues(events, ctx.chatDb, clock.now());
      await ctx.close();
    },
  };
}

// --rate-limits / KEEL_RATE_LIMITS as config.ts shapes them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildConfig } from '../../src/config/config.js';
import { readOptions, UsageError } from '../../src/config/env.js';
import { DEFAULT_RATE_LIMITS } from '../../src/config/rate-limits.js';

function limits(argv: string[], env: NodeJS.ProcessEnv = {}) {
  return buildConfig(readOptions(argv, env).options).rateLimits;
}

describe('rate limit options', () => {
  it("are on by default with Zulip's budgets", () => {
    const l = limits([]);
    assert.deepEqual(l, DEFAULT_RATE_LIMITS);
    assert.equal(l.api, true);
    assert.deepEqual(
      [l.chatUser, l.chatIp, l.passwordAccount],
      [
        { count: 200, windowSeconds: 60 },
        { count: 100, windowSeconds: 60 },
        { count: 5, windowSeconds: 1800 },
      ],
    );
  });

  it('turn the API budgets off by flag or environment, keeping the password budgets', () => {
    for (const l of [limits(['--rate-limits', 'off']), limits([], { KEEL_RATE_LIMITS: 'off' }), limits(['--rate-limits', 'OFF'])]) {
      assert.equal(l.api, false);
      assert.deepEqual(l.passwordAccount, DEFAULT_RATE_LIMITS.passwordAccount);
    }
    // The flag wins over the environment.
    assert.equal(limits(['--rate-limits', 'on'], { KEEL_RATE_LIMITS: 'off' }).api, true);
  });

  it('set any budget as NAME=COUNT/SECONDS', () => {
    const l = limits(['--rate-limits', 'off, chat-user=50/10,password-account=3/600']);
    assert.equal(l.api, false);
    assert.deepEqual(l.chatUser, { count: 50, windowSeconds: 10 });
    assert.deepEqual(l.passwordAccount, { count: 3, windowSeconds: 600 });
    assert.deepEqual(l.infraKey, DEFAULT_RATE_LIMITS.infraKey);
  });

  it('refuse anything else, naming the item and the accepted forms', () => {
    for (const bad of ['sometimes', 'chat-user=0/60', 'chat-user=10', 'chat-user=10/0', 'nope=1/1', 'chat-user=-1/60', '__proto__=1/1']) {
      assert.throws(
        () => limits(['--rate-limits', bad]),
        (err: Error) => {
          assert.ok(err instanceof UsageError);
          assert.match(err.message, /^--rate-limits must be on, off, or a comma-separated list/);
          assert.ok(err.message.endsWith(`got "${bad}"`), err.message);
          return true;
        },
      );
    }
  });
});

describe('trusted proxies option', () => {
  it('takes addresses and CIDR blocks by flag or environment, none by default, and refuses names', () => {
    const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => buildConfig(readOptions(argv, env).options);
    assert.deepEqual(config([]).trustedProxies, []);
    assert.deepEqual(config(['--trusted-proxies', '10.0.0.0/8,::1']).trustedProxies, ['10.0.0.0/8', '::1']);
    assert.deepEqual(config([], { KEEL_TRUSTED_PROXIES: '192.0.2.1' }).trustedProxies, ['192.0.2.1']);
    assert.throws(
      () => config(['--trusted-proxies', 'proxy.local']),
      (err: Error) => err instanceof UsageError && /^--trusted-proxies must be comma-separated IPv4 or IPv6 addresses or CIDR blocks \(10\.0\.0\.0\/8\), got "proxy\.local"$/.test(err.message),
    );
  });
});

// The --rate-limits option: API budgets on or off, and any budget's COUNT/SECONDS.
import { parseRule, type Rule } from '../platform/rate-limit.js';
import { UsageError } from './env.js';

export interface RateLimits {
  /** Off (--rate-limits off) for benchmarks and test harnesses: no API budgets, no X-RateLimit headers. */
  api: boolean;
  /** Chat: requests per authenticated user (Zulip's api_by_user). */
  chatUser: Rule;
  /** Chat: unauthenticated requests per client address (Zulip's api_by_ip). */
  chatIp: Rule;
  /** Infra: requests per API key (or per login, for a JWT from session.login). */
  infraKey: Rule;
  /** Infra: unauthenticated requests (session.login, openapi.json) per client address. */
  infraIp: Rule;
  /** Password attempts per account (Zulip's authenticate_by_username), on whatever `api` says. */
  passwordAccount: Rule;
  /** Password attempts per client address, on whatever `api` says. */
  passwordIp: Rule;
}

const NAMES = {
  'chat-user': 'chatUser',
  'chat-ip': 'chatIp',
  'infra-key': 'infraKey',
  'infra-ip': 'infraIp',
  'password-account': 'passwordAccount',
  'password-ip': 'passwordIp',
} as const satisfies Record<string, Exclude<keyof RateLimits, 'api'>>;

export const DEFAULT_RATE_LIMITS: RateLimits = {
  api: true,
  chatUser: { count: 200, windowSeconds: 60 },
  chatIp: { count: 100, windowSeconds: 60 },
  // Terraform polls every few seconds per resource, several resources at once; bulk DNS edits
  // send one request per record. 20 a second with bursts of 1,200 leaves those alone.
  infraKey: { count: 1200, windowSeconds: 60 },
  infraIp: { count: 100, windowSeconds: 60 },
  passwordAccount: { count: 5, windowSeconds: 1800 },
  passwordIp: { count: 30, windowSeconds: 1800 },
};

const USAGE = `--rate-limits must be on, off, or a comma-separated list of those and NAME=COUNT/SECONDS (NAME one of ${Object.keys(NAMES).join(', ')}; for example chat-user=200/60)`;

/** `on` | `off` | a list of those and NAME=COUNT/SECONDS, later items winning. */
export function parseRateLimits(value: string | undefined): RateLimits {
  const limits = { ...DEFAULT_RATE_LIMITS };
  for (const raw of (value ?? 'on').split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === 'on' || item === 'off') {
      limits.api = item === 'on';
      continue;
    }
    const eq = item.indexOf('=');
    const name = item.slice(0, eq) as keyof typeof NAMES;
    const rule = eq > 0 ? parseRule(item.slice(eq + 1)) : undefined;
    if (!Object.hasOwn(NAMES, name) || !rule) throw new UsageError(`${USAGE}, got "${raw.trim()}"`);
    limits[NAMES[name]] = rule;
  }
  return limits;
}

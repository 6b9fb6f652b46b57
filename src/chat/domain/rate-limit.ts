// Chat's rate limits, as Zulip has them: every API request, event polls included, is charged to
// its user (api_by_user, 200 a minute) or, without one, to its client address (api_by_ip, 100 a
// minute), and answered with X-RateLimit-Limit/-Remaining/-Reset; over budget, 429 RATE_LIMIT_HIT
// with retry-after.
// Password attempts at fetch_api_key have their own budgets (platform/rate-limit.ts PasswordBudgets),
// on even when the API budgets are off. In this process's memory (platform/rate-limit.ts).
import type { Clock } from '../../platform/clock.js';
import { addressKey, Budget, PasswordBudgets } from '../../platform/rate-limit.js';
import { TrustedProxies } from '../../platform/client-address.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { RateLimits } from '../../config/rate-limits.js';
import { rateLimited } from '../errors.js';

/** One API budget per user and one per address (for requests without a user). */
interface ApiBudgets {
  byUser: Budget;
  byAddress: Budget;
}

export class ChatLimits {
  readonly passwords: PasswordBudgets;
  private readonly clock: Clock;
  /** Undefined when the API budgets are off. */
  private readonly api: ApiBudgets | undefined;
  /**
   * Event polls (GET and DELETE /events) have budgets of their own, with the same rules: Zulip's
   * event server (Tornado) keeps its buckets in its own memory, apart from the other endpoints'.
   */
  private readonly polls: ApiBudgets | undefined;
  private readonly proxies: TrustedProxies;

  constructor(clock: Clock, limits: RateLimits, trustedProxies: readonly string[] = []) {
    this.clock = clock;
    this.proxies = new TrustedProxies(trustedProxies);
    this.passwords = new PasswordBudgets(clock, { account: limits.passwordAccount, address: limits.passwordIp });
    if (limits.api) {
      this.api = { byUser: new Budget(clock, limits.chatUser), byAddress: new Budget(clock, limits.chatIp) };
      this.polls = { byUser: new Budget(clock, limits.chatUser), byAddress: new Budget(clock, limits.chatIp) };
    }
  }

  /** The client's address: the TCP peer, or what a trusted proxy says in X-Forwarded-For. */
  client(peer: string, headers: IncomingHttpHeaders): string {
    return this.proxies.client(peer, headers['x-forwarded-for']);
  }

  /** Whether the request came over HTTPS (a trusted proxy's X-Forwarded-Proto): browser cookies are then Secure. */
  https(peer: string, headers: IncomingHttpHeaders): boolean {
    return this.proxies.https(peer, headers['x-forwarded-proto']);
  }

  /**
   * Charges one request (`path`: its endpoint's path, as defined) to its user, or to its address when there is none. Gives the X-RateLimit-*
   * headers for the answer (undefined when API budgets are off); over budget, throws the 429 with them.
   */
  charge(path: string, userId: number | undefined, ip: string): Record<string, string> | undefined {
    const budgets = path === EVENTS_PATH ? this.polls : this.api;
    if (!budgets) return undefined;
    const budget = userId === undefined ? budgets.byAddress : budgets.byUser;
    const key = userId === undefined ? addressKey(ip) : String(userId);
    const wait = budget.take(key);
    if (wait > 0) throw rateLimited({ retryAfter: wait, headers: limitHeaders(this.clock, { limit: budget.rule.count, wait }) });
    const s = budget.standing(key);
    return { 'x-ratelimit-limit': String(s.limit), 'x-ratelimit-remaining': String(s.remaining), 'x-ratelimit-reset': String(Math.floor(this.clock.now() / 1000 + s.resetSeconds)) };
  }
}

const EVENTS_PATH = '/events';

/** The X-RateLimit-* headers of a refusal: nothing left, and Reset (a Unix time) when the next request is let in, as Zulip gives it on a 429. */
export function limitHeaders(clock: Clock, refused: { limit: number; wait: number }): Record<string, string> {
  return { 'x-ratelimit-limit': String(refused.limit), 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(clock.now() / 1000 + refused.wait)) };
}

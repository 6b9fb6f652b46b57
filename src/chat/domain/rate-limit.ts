// Chat's rate limits, as Zulip has them: every API request is charged to its user (api_by_user,
// 200 a minute) or, without one, to its client address (api_by_ip, 100 a minute), and answered
// with X-RateLimit-Limit/-Remaining/-Reset; over budget, 429 RATE_LIMIT_HIT with retry-after.
// Password attempts at fetch_api_key have their own budgets (platform/rate-limit.ts PasswordBudgets),
// on even when the API budgets are off. In this process's memory (platform/rate-limit.ts).
import type { Clock } from '../../platform/clock.js';
import { addressKey, Budget, PasswordBudgets } from '../../platform/rate-limit.js';
import type { RateLimits } from '../../config/rate-limits.js';
import { rateLimited } from '../errors.js';

export class ChatLimits {
  readonly passwords: PasswordBudgets;
  private readonly byUser: Budget | undefined;
  private readonly byAddress: Budget | undefined;
  private readonly clock: Clock;

  constructor(clock: Clock, limits: RateLimits) {
    this.clock = clock;
    this.passwords = new PasswordBudgets(clock, { account: limits.passwordAccount, address: limits.passwordIp });
    if (limits.api) {
      this.byUser = new Budget(clock, limits.chatUser);
      this.byAddress = new Budget(clock, limits.chatIp);
    }
  }

  /**
   * Charges one request to its user, or to its address when there is none. Gives the X-RateLimit-*
   * headers for the answer (undefined when API budgets are off); over budget, throws the 429 with them.
   */
  charge(userId: number | undefined, ip: string): Record<string, string> | undefined {
    const budget = userId === undefined ? this.byAddress : this.byUser;
    if (!budget) return undefined;
    const key = userId === undefined ? addressKey(ip) : String(userId);
    const wait = budget.take(key);
    if (wait > 0) throw rateLimited(wait, limitHeaders(this.clock, { limit: budget.rule.count, wait }));
    const s = budget.standing(key);
    return { 'x-ratelimit-limit': String(s.limit), 'x-ratelimit-remaining': String(s.remaining), 'x-ratelimit-reset': String(Math.floor(this.clock.now() / 1000 + s.resetSeconds)) };
  }
}

/** The X-RateLimit-* headers of a refusal: nothing left, and Reset (a Unix time) when the next request is let in, as Zulip gives it on a 429. */
export function limitHeaders(clock: Clock, refused: { limit: number; wait: number }): Record<string, string> {
  return { 'x-ratelimit-limit': String(refused.limit), 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(clock.now() / 1000 + refused.wait)) };
}

// Infra's rate limits: every authenticated request is charged to its API key (or, with a JWT from
// session.login, to that login), every unauthenticated one to its client address; session.login's
// password attempts have their own budgets, on even when the API budgets are off. Over budget, the
// provider's envelope with code RATE_LIMIT, still HTTP 200 (the clients read the envelope only from
// a 200), and a Retry-After header. In this process's memory (platform/rate-limit.ts).
import type { Clock } from '../platform/clock.js';
import { addressKey, Budget, PasswordBudgets } from '../platform/rate-limit.js';
import { TrustedProxies } from '../platform/client-address.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { RateLimits } from '../config/rate-limits.js';
import { rateLimited } from './errors.js';

export class InfraLimits {
  readonly passwords: PasswordBudgets;
  private readonly byKey: Budget | undefined;
  private readonly byAddress: Budget | undefined;
  private readonly proxies: TrustedProxies;

  constructor(clock: Clock, limits: RateLimits, trustedProxies: readonly string[] = []) {
    this.proxies = new TrustedProxies(trustedProxies);
    this.passwords = new PasswordBudgets(clock, { account: limits.passwordAccount, address: limits.passwordIp });
    if (limits.api) {
      this.byKey = new Budget(clock, limits.infraKey);
      this.byAddress = new Budget(clock, limits.infraIp);
    }
  }

  /** The client's address: the TCP peer, or what a trusted proxy says in X-Forwarded-For. */
  client(peer: string, headers: IncomingHttpHeaders): string {
    return this.proxies.client(peer, headers['x-forwarded-for']);
  }

  /** Charges one request to its principal, or to its address when there is none; throws RATE_LIMIT over budget. */
  charge(principal: { kind: 'apiuser' | 'login'; id: number } | undefined, ip: string): void {
    const budget = principal ? this.byKey : this.byAddress;
    if (!budget) return;
    const wait = budget.take(principal ? (principal.kind === 'apiuser' ? `k${principal.id}` : `l${principal.id}`) : addressKey(ip));
    if (wait > 0) throw rateLimited(wait);
  }
}

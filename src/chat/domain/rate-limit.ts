// Budgets against password guessing: failed attempts counted in a sliding window per key (a
// username, an IP address). In-process: one node's memory, which is what a single Keel serves;
// several nodes behind a balancer each keep their own budget until the bus shares it.
import type { Clock } from '../../platform/clock.js';

export interface Budget { attempts: number; windowSeconds: number }

export class AttemptLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly clock: Clock;
  private readonly budgets: Record<string, Budget>;
  constructor(clock: Clock, budgets: Record<string, Budget>) {
    this.clock = clock;
    this.budgets = budgets;
  }

  private recent(kind: string, key: string): number[] {
    const budget = this.budgets[kind];
    const since = this.clock.now() - budget.windowSeconds * 1000;
    const id = `${kind}:${key}`;
    const kept = (this.failures.get(id) ?? []).filter((t) => t > since);
    if (kept.length) this.failures.set(id, kept);
    else this.failures.delete(id);
    return kept;
  }

  /** Seconds until one more attempt is allowed for every key given (0 = allowed now). */
  retryAfter(keys: Record<string, string>): number {
    let wait = 0;
    for (const [kind, key] of Object.entries(keys)) {
      const budget = this.budgets[kind];
      const times = this.recent(kind, key);
      if (times.length >= budget.attempts) {
        const oldest = times[times.length - budget.attempts];
        wait = Math.max(wait, (oldest + budget.windowSeconds * 1000 - this.clock.now()) / 1000);
      }
    }
    return wait;
  }

  recordFailure(keys: Record<string, string>): void {
    const now = this.clock.now();
    for (const [kind, key] of Object.entries(keys)) {
      const times = this.recent(kind, key);
      times.push(now);
      this.failures.set(`${kind}:${key}`, times);
    }
  }
}

/** Zulip's own budget for logins by username is 5 in 30 minutes; an IP gets more (shared NATs). */
export const LOGIN_BUDGETS: Record<string, Budget> = {
  username: { attempts: 5, windowSeconds: 1800 },
  ip: { attempts: 30, windowSeconds: 1800 },
};

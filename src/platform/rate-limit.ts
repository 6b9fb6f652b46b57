// Rate limits shared by both APIs: a budget of `count` units per `windowSeconds` for each key (a
// user, an API key, an IP address, an account name), in this process's memory. Several Keel nodes
// behind a balancer each keep their own budgets (a client may then get up to N times the limit).
//
// The rule is GCRA (the "generic cell rate algorithm"), as Zulip's in-memory limiter (the one its
// Tornado event server uses) keeps it: one number per key, the time at which its budget is whole
// again. A unit taken pushes that time on by window/count; a key may run ahead of the clock by at
// most one window. So a full budget can be spent at once (a burst of `count`), after which one unit
// comes back every window/count seconds. It costs one Map read and write a request, and a key whose
// time has passed holds nothing worth keeping, so old keys are dropped (see `sweep`).
import { isIPv6 } from 'node:net';
import type { Clock } from './clock.js';

export interface Rule {
  count: number;
  windowSeconds: number;
}

/** Where one key stands after a request: what the X-RateLimit-* headers say. */
export interface Standing {
  limit: number;
  remaining: number;
  /** Seconds until the whole budget is back. */
  resetSeconds: number;
}

/** Keys held at most by one budget: a flood of distinct keys (addresses, names) cannot grow it further. */
export const DEFAULT_MAX_KEYS = 100_000;

export class Budget {
  readonly rule: Rule;
  // Times are whole microseconds since the budget was made: window/count is rarely exact in floating
  // point, and a burst's `count` steps summed in floats can land a hair past the window (the burst
  // then loses its last unit). Integers add exactly, and stay safe for centuries of uptime.
  /** Microseconds one unit takes to come back (window/count, rounded). */
  private readonly interval: number;
  /** `count` intervals: the window as the comparisons see it (within count/2 us of the rule's). */
  private readonly window: number;
  /** Per key, the time at which its budget is whole again; absent or past = whole. */
  private readonly whole = new Map<string, number>();
  private readonly origin: number;
  private readonly clock: Clock;
  private readonly maxKeys: number;
  private nextSweep = 0;

  constructor(clock: Clock, rule: Rule, maxKeys = DEFAULT_MAX_KEYS) {
    this.clock = clock;
    this.rule = rule;
    this.maxKeys = maxKeys;
    this.interval = Math.max(1, Math.round((rule.windowSeconds * 1e6) / rule.count));
    this.window = this.interval * rule.count;
    this.origin = clock.now();
  }

  /** Keys held now (for tests of the memory bound). */
  get size(): number {
    return this.whole.size;
  }

  private now(): number {
    return Math.round((this.clock.now() - this.origin) * 1000);
  }

  /**
   * Takes one unit from the key's budget. Returns 0 when it was there, else the seconds until it
   * will be (and takes nothing: a refused request does not cost the client more time).
   */
  take(key: string): number {
    const now = this.now();
    const at = this.whole.get(key);
    const next = (at === undefined || at < now ? now : at) + this.interval;
    if (next > now + this.window) return (next - this.window - now) / 1e6;
    if (at === undefined) this.admit(now);
    this.whole.set(key, next);
    return 0;
  }

  /** Where the key stands now. */
  standing(key: string): Standing {
    const now = this.now();
    const at = this.whole.get(key);
    const ahead = at === undefined || at < now ? 0 : at - now;
    return { limit: this.rule.count, remaining: Math.floor((this.window - ahead) / this.interval), resetSeconds: ahead / 1e6 };
  }

  /** Gives back one unit taken (a login attempt that turned out right). */
  refund(key: string): void {
    const at = this.whole.get(key);
    if (at === undefined) return;
    const back = at - this.interval;
    if (back <= this.now()) this.whole.delete(key);
    else this.whole.set(key, back);
  }

  /** Gives the key its whole budget back (a successful login clears its account's failures, as in Zulip). */
  clear(key: string): void {
    this.whole.delete(key);
  }

  /** Room for one more key: past keys are dropped once a window, or at once when the map is full. */
  private admit(now: number): void {
    if (now < this.nextSweep && this.whole.size < this.maxKeys) return;
    this.sweep(now);
  }

  /**
   * Drops the keys whose budget is whole again (they hold nothing a fresh key would not). If still
   * full (a flood of live keys), the oldest tenth go too, by first use: a bound on memory matters more
   * than those keys' debt, which the flood itself was paying for with its own budget.
   */
  private sweep(now: number): void {
    this.nextSweep = now + this.window;
    for (const [key, at] of this.whole) if (at <= now) this.whole.delete(key);
    if (this.whole.size < this.maxKeys) return;
    let drop = this.whole.size - Math.floor(this.maxKeys * 0.9);
    for (const key of this.whole.keys()) {
      if (drop-- <= 0) break;
      this.whole.delete(key);
    }
  }
}

/**
 * The key for a client address: an IPv4-mapped IPv6 address counts as its IPv4 address, and an IPv6
 * address by its /64 (one host usually holds a whole /64, so its addresses are one client).
 */
export function addressKey(ip: string): string {
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice(7);
  if (!isIPv6(ip)) return ip;
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** "COUNT/SECONDS" (e.g. 200/60). */
export function parseRule(text: string): Rule | undefined {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(text.trim());
  if (!m) return undefined;
  const rule = { count: Number(m[1]), windowSeconds: Number(m[2]) };
  return rule.count >= 1 && rule.windowSeconds >= 1 ? rule : undefined;
}

/**
 * Budgets for password attempts, per account and per client address. Every attempt takes a unit
 * from both before the password is checked, so concurrent guesses cannot all slip in before the
 * first failure is counted; a right password gives the address its unit back and clears the
 * account's budget (as Zulip clears it), so what is left counts failures only.
 */
export class PasswordBudgets {
  private readonly account: Budget;
  private readonly address: Budget;

  constructor(clock: Clock, rules: { account: Rule; address: Rule }) {
    this.account = new Budget(clock, rules.account);
    this.address = new Budget(clock, rules.address);
  }

  /**
   * Before checking a password: undefined to go on (a unit taken from both), else how long to wait
   * and the limit of the budget that refused.
   */
  begin(account: string, ip: string): { wait: number; limit: number } | undefined {
    const address = addressKey(ip);
    const byAddress = this.address.take(address);
    if (byAddress > 0) return { wait: byAddress, limit: this.address.rule.count };
    const byAccount = this.account.take(account);
    if (byAccount === 0) return undefined;
    this.address.refund(address);
    return { wait: byAccount, limit: this.account.rule.count };
  }

  /** The password was right. */
  succeeded(account: string, ip: string): void {
    this.account.clear(account);
    this.address.refund(addressKey(ip));
  }
}

// IPv4 and IPv6 addresses as numbers (bigint), CIDR networks, and their canonical text: what
// network.ip.* needs to check a network, find overlaps and hand out the next free address.
import { isIPv4, isIPv6 } from 'node:net';

export type Family = 4 | 6;

export interface Cidr {
  family: Family;
  /** The network address (host bits zero). */
  base: bigint;
  prefix: number;
}

const BITS: Record<Family, number> = { 4: 32, 6: 128 };

export function addressBits(family: Family): number {
  return BITS[family];
}

/** The address as a number, or undefined when the text is not one (no zone ids, no brackets). */
export function parseAddress(text: string): { family: Family; value: bigint } | undefined {
  if (isIPv4(text)) {
    const octets = text.split('.').map(Number);
    // node accepts no leading zeros in IPv4 already; the value is the four octets.
    return { family: 4, value: octets.reduce((v, o) => (v << 8n) | BigInt(o), 0n) };
  }
  if (!isIPv6(text) || text.includes('%')) return undefined;
  // A dotted IPv4 tail (::ffff:192.0.2.1) is two groups: written as hex, it parses as the rest.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let hex = text;
  if (dotted) {
    const v4 = parseAddress(dotted[1])!.value;
    hex = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  let groups: string[];
  if (hex.includes('::')) {
    const [l, r] = hex.split('::');
    const left = l ? l.split(':') : [];
    const right = r ? r.split(':') : [];
    groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  } else {
    groups = hex.split(':');
  }
  return { family: 6, value: groups.reduce((v, g) => (v << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

/** Canonical text: dotted quad, or RFC 5952 (lower case, longest run of two or more zero groups as ::). */
export function formatAddress(family: Family, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

export type CidrProblem = 'shape' | 'address' | 'prefix' | 'hostBits';

/** "192.0.2.0/24" or "2001:db8::/48": the network, or why not. Host bits must be zero. */
export function parseCidr(text: string): Cidr | CidrProblem {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return 'shape';
  const a = parseAddress(m[1]);
  if (!a) return 'address';
  const prefix = Number(m[2]);
  if (prefix > BITS[a.family]) return 'prefix';
  const hostBits = BigInt(BITS[a.family] - prefix);
  if (a.value & ((1n << hostBits) - 1n)) return 'hostBits';
  return { family: a.family, base: a.value, prefix };
}

export function size(c: Cidr): bigint {
  return 1n << BigInt(BITS[c.family] - c.prefix);
}

export function contains(c: Cidr, family: Family, value: bigint): boolean {
  return family === c.family && value >= c.base && value < c.base + size(c);
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  return a.family === b.family && a.base < b.base + size(b) && b.base < a.base + size(a);
}

/**
 * The addresses a network hands to devices: all but the network address and, in IPv4, the
 * broadcast address (a /31 or /32 is refused before this is asked).
 */
export function hostRange(c: Cidr): { first: bigint; last: bigint } {
  const end = c.base + size(c) - 1n;
  return { first: c.base + 1n, last: c.family === 4 ? end - 1n : end };
}

export function formatCidr(c: Cidr): string {
  return `${formatAddress(c.family, c.base)}/${c.prefix}`;
}

// The client's address, for the per-address budgets: the TCP peer, unless the peer is a reverse proxy
// named in --trusted-proxies, whose X-Forwarded-For is then believed. Keel serves plain HTTP, so in
// production a TLS proxy usually stands in front; without this, every client would share the proxy's
// address, and one client's guesses would spend everyone's budget.
import { BlockList, isIP } from 'node:net';

export class TrustedProxies {
  private readonly list = new BlockList();
  private readonly any: boolean;

  /** `entries`: addresses and CIDR blocks (checked by config). */
  constructor(entries: readonly string[]) {
    this.any = entries.length > 0;
    for (const entry of entries) {
      const [address, bits] = entry.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(bits), type);
    }
  }

  private trusts(address: string): boolean {
    const v = isIP(address);
    if (v === 0) return false;
    // An IPv4 peer on a dual-stack socket reads ::ffff:a.b.c.d.
    if (v === 6 && address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) return this.list.check(address.slice(7), 'ipv4');
    return this.list.check(address, v === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * Whether the client reached Keel over HTTPS: only as a trusted proxy says in X-Forwarded-Proto
   * (Keel itself serves plain HTTP); the leftmost value is the client's own scheme.
   */
  https(peer: string, forwardedProto: string | string[] | undefined): boolean {
    if (!this.any || forwardedProto === undefined || !this.trusts(peer)) return false;
    const first = (Array.isArray(forwardedProto) ? forwardedProto.join(',') : forwardedProto).split(',')[0];
    return first.trim().toLowerCase() === 'https';
  }

  /**
   * The client's address. Through trusted proxies, X-Forwarded-For is read from the right (each
   * proxy appends the address it heard from): the first address no trusted proxy holds is the
   * client's. Anything a client wrote further left cannot change that. An entry that is no address
   * stops the walk at the proxy that passed it on.
   */
  client(peer: string, forwardedFor: string | string[] | undefined): string {
    if (!this.any || forwardedFor === undefined || !this.trusts(peer)) return peer;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i].trim();
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!this.trusts(hop)) return hop;
    }
    return client;
  }
}

/** Comma-separated addresses and CIDR blocks (IPv4 or IPv6); undefined when any entry is neither. */
export function parseTrustedProxies(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return [];
  const entries = value.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const v = isIP(address);
    if (v === 0 || extra !== undefined) return undefined;
    if (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > (v === 4 ? 32 : 128))) return undefined;
  }
  return entries;
}

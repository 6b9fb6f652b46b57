// Zones shared by the DNS tests: every record type, a wildcard beside existing names, an empty
// non-terminal, a delegation with glue, CNAME chains within and across zones, and a CNAME loop.
import type { Zone } from '../../src/zones/zone.js';

export const NS_DOMAIN = 'ns.keel.test';
export const NS_ADDRESSES = ['127.0.0.1', '127.0.0.2', '::1', '127.0.0.4'];

export function exampleZone(serial = 2024010101): Zone {
  return {
    name: 'example.com',
    serial,
    records: [
      { name: 'example.com', type: 'A', ttl: 300, data: '192.0.2.1' },
      { name: 'example.com', type: 'MX', ttl: 300, data: { preference: 10, exchange: 'mail.example.com' } },
      { name: 'example.com', type: 'MX', ttl: 300, data: { preference: 20, exchange: 'mail2.example.com' } },
      { name: 'example.com', type: 'TXT', ttl: 300, data: ['v=spf1 -all'] },
      { name: 'example.com', type: 'CAA', ttl: 300, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
      { name: 'example.com', type: 'NS', ttl: 300, data: 'ignored.example.net' },
      { name: 'www.example.com', type: 'A', ttl: 300, data: '192.0.2.10' },
      { name: 'www.example.com', type: 'A', ttl: 600, data: '192.0.2.11' },
      { name: 'www.example.com', type: 'AAAA', ttl: 300, data: '2001:db8::10' },
      { name: 'mail.example.com', type: 'A', ttl: 300, data: '192.0.2.25' },
      { name: 'alias.example.com', type: 'CNAME', ttl: 300, data: 'www.example.com' },
      { name: 'chain.example.com', type: 'CNAME', ttl: 300, data: 'alias.example.com' },
      { name: 'across.example.com', type: 'CNAME', ttl: 300, data: 'host.example.org' },
      { name: 'outside.example.com', type: 'CNAME', ttl: 300, data: 'somewhere.invalid' },
      { name: 'dangling.example.com', type: 'CNAME', ttl: 300, data: 'gone.deep.ent.example.com' },
      { name: 'loop1.example.com', type: 'CNAME', ttl: 300, data: 'loop2.example.com' },
      { name: 'loop2.example.com', type: 'CNAME', ttl: 300, data: 'loop1.example.com' },
      { name: '_sip._tcp.example.com', type: 'SRV', ttl: 300, data: { priority: 10, weight: 5, port: 5060, target: 'sip.example.com' } },
      { name: '1.2.0.192.in-addr.example.com', type: 'PTR', ttl: 300, data: 'www.example.com' },
      { name: 'long.example.com', type: 'TXT', ttl: 300, data: ['a'.repeat(300), 'short'] },
      { name: 'deep.ent.example.com', type: 'A', ttl: 300, data: '192.0.2.30' },
      { name: '*.example.com', type: 'A', ttl: 120, data: '192.0.2.99' },
      { name: '*.example.com', type: 'TXT', ttl: 120, data: ['wild'] },
      { name: '*.cn.example.com', type: 'CNAME', ttl: 120, data: 'www.example.com' },
      { name: 'sub.example.com', type: 'NS', ttl: 3600, data: 'ns1.sub.example.com' },
      { name: 'sub.example.com', type: 'NS', ttl: 3600, data: 'ns.elsewhere.net' },
      { name: 'ns1.sub.example.com', type: 'A', ttl: 3600, data: '192.0.2.53' },
      { name: 'ns1.sub.example.com', type: 'AAAA', ttl: 3600, data: '2001:db8::53' },
      { name: 'big.example.com', type: 'TXT', ttl: 300, data: Array.from({ length: 12 }, (_, i) => `${i}`.padEnd(200, 'x')) },
    ],
  };
}

export function orgZone(): Zone {
  return {
    name: 'example.org',
    serial: 7,
    records: [{ name: 'host.example.org', type: 'A', ttl: 300, data: '198.51.100.7' }],
  };
}

/** A zone big enough that its transfer needs several messages. */
export function bigZone(count = 3000): Zone {
  return {
    name: 'big.test',
    serial: 42,
    records: Array.from({ length: count }, (_, i) => ({ name: `host-${i}.big.test`, type: 'A' as const, ttl: 300, data: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` })),
  };
}

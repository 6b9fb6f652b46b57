// A hosted zone prepared for answering: owner names mapped to RRsets with record data already encoded,
// the set of every existing name (empty non-terminals included, for wildcards and NODATA), and the
// delegation points. Built once when a zone is put, so a query does map look-ups and byte copies only.
import dnsPacket from 'dns-packet';
import { isIPv4, isIPv6 } from 'node:net';
import type { Zone, ZoneRecord } from '../zones/zone.js';
import { TYPE, type Rdata } from './wire.js';

export interface RRset {
  type: number;
  /** RFC 2181 5.2: one TTL per RRset; the lowest of its records. */
  ttl: number;
  rdatas: Rdata[];
}

/** What ns1..ns4 are called and where they are; every zone's SOA and apex NS are made from it. */
export interface NameserverSettings {
  /** Lower case, no trailing dot. */
  domain: string;
  addresses: readonly string[];
}

/** SOA timers offered to secondaries (RFC 1912 ranges); minimum is also the negative-caching TTL cap. */
export const SOA_TIMERS = { ttl: 3600, refresh: 3600, retry: 600, expire: 1_209_600, minimum: 300 } as const;
export const NS_TTL = 3600;

export interface ZoneIndex {
  apex: string;
  serial: number;
  /** Lower-case owner name to RRsets by type code. */
  nodes: Map<string, Map<number, RRset>>;
  /** Every name that exists: owners and the empty non-terminals between them and the apex. */
  names: Set<string>;
  /** Owners below the apex that hold NS records: zone cuts. */
  cuts: Set<string>;
  soa: RRset;
  /** The SOA as put in negative answers: its TTL is min(SOA TTL, SOA minimum) (RFC 2308 3, 5). */
  negativeSoa: RRset;
  /** Records that could not be served, with the reason (logged by the server). */
  problems: string[];
}

const TYPE_CODES: Record<ZoneRecord['type'], number> = {
  A: TYPE.A,
  AAAA: TYPE.AAAA,
  CNAME: TYPE.CNAME,
  NS: TYPE.NS,
  PTR: TYPE.PTR,
  MX: TYPE.MX,
  TXT: TYPE.TXT,
  SRV: TYPE.SRV,
  CAA: TYPE.CAA,
};

export function nameserverNames(ns: NameserverSettings): string[] {
  return [1, 2, 3, 4].map((i) => `ns${i}.${ns.domain}`);
}

function validName(name: string): boolean {
  if (name.length > 253) return false;
  return name === '' || name.split('.').every((l) => l.length > 0 && Buffer.byteLength(l) <= 63);
}

function withinZone(name: string, apex: string): boolean {
  return apex === '' || name === apex || name.endsWith(`.${apex}`);
}

/** Encodes record data that holds no compressible name with dns-packet (skipping the 12-byte header, root owner and 10-byte RR head). */
function packedRdata(type: 'A' | 'AAAA' | 'TXT' | 'SRV' | 'CAA', data: unknown): Buffer {
  const msg = dnsPacket.encode({ type: 'response', answers: [{ type, name: '.', ttl: 0, data } as dnsPacket.Answer] });
  return Buffer.from(msg.subarray(12 + 1 + 10));
}

/** TXT strings longer than 255 bytes are split into several character-strings (RFC 1035 3.3.14). */
export function txtCharacterStrings(strings: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  for (const s of strings) {
    const bytes = Buffer.from(s, 'utf8');
    if (bytes.length === 0) out.push(bytes);
    for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  }
  return out.length ? out : [Buffer.alloc(0)];
}

function cleanTarget(name: string): string {
  return name.replace(/\.$/, '');
}

/** The record's data in wire parts; throws with a reason when it cannot be served. */
export function recordRdata(r: ZoneRecord): Rdata {
  switch (r.type) {
    case 'A':
      if (!isIPv4(r.data)) throw new Error(`"${r.data}" is not an IPv4 address`);
      return [packedRdata('A', r.data)];
    case 'AAAA':
      if (!isIPv6(r.data)) throw new Error(`"${r.data}" is not an IPv6 address`);
      return [packedRdata('AAAA', r.data)];
    case 'CNAME':
    case 'NS':
    case 'PTR': {
      const target = cleanTarget(r.data);
      if (!validName(target)) throw new Error(`"${r.data}" is not a domain name`);
      return [target];
    }
    case 'MX': {
      const target = cleanTarget(r.data.exchange);
      if (!validName(target)) throw new Error(`"${r.data.exchange}" is not a domain name`);
      const pref = Buffer.alloc(2);
      pref.writeUInt16BE(r.data.preference & 0xffff);
      return [pref, target];
    }
    case 'TXT': {
      const strings = txtCharacterStrings(r.data);
      const size = strings.reduce((n, s) => n + s.length + 1, 0);
      if (size > 65000) throw new Error('TXT data longer than a DNS message');
      const out = Buffer.alloc(size);
      let off = 0;
      for (const s of strings) {
        out[off] = s.length;
        s.copy(out, off + 1);
        off += s.length + 1;
      }
      return [out];
    }
    case 'SRV': {
      const target = cleanTarget(r.data.target);
      if (!validName(target)) throw new Error(`"${r.data.target}" is not a domain name`);
      // RFC 2782: the SRV target is never compressed, so it is packed here once.
      return [packedRdata('SRV', { ...r.data, target: target || '.' })];
    }
    case 'CAA':
      return [packedRdata('CAA', { flags: r.data.flags, tag: r.data.tag, value: r.data.value })];
  }
}

function addRecord(index: ZoneIndex, owner: string, type: number, ttl: number, rdata: Rdata, key: string, seen: Set<string>): void {
  if (seen.has(key)) return; // RFC 2181 5: an RRset holds no duplicates
  seen.add(key);
  let node = index.nodes.get(owner);
  if (!node) index.nodes.set(owner, (node = new Map()));
  const set = node.get(type);
  if (set) {
    set.rdatas.push(rdata);
    set.ttl = Math.min(set.ttl, ttl);
  } else node.set(type, { type, ttl, rdatas: [rdata] });
  for (let name = owner; ; ) {
    if (index.names.has(name)) break;
    index.names.add(name);
    if (name === index.apex) break;
    const dot = name.indexOf('.');
    name = dot < 0 ? '' : name.slice(dot + 1);
  }
}

interface Prepared {
  owner: string;
  validOwner: boolean;
  type: number | undefined;
  rdata?: Rdata;
  error?: string;
  key: string;
}

// What a record needs in every index of its zone, kept with the record: versions of a zone share the
// records they did not change (zone records are never changed in place), so a change re-encodes only its own.
// Module-level on purpose: a pure function of an immutable record, whichever catalog holds it.
const prepared = new WeakMap<ZoneRecord, Prepared>();

function prepare(r: ZoneRecord): Prepared {
  let p = prepared.get(r);
  if (p) return p;
  const owner = r.name.toLowerCase().replace(/\.$/, '');
  p = { owner, validOwner: validName(owner), type: TYPE_CODES[r.type], key: `${owner} ${r.type} ${JSON.stringify(r.data)}` };
  if (p.type !== undefined) {
    try {
      p.rdata = recordRdata(r);
    } catch (err) {
      p.error = (err as Error).message;
    }
  }
  prepared.set(r, p);
  return p;
}

/**
 * Indexes a zone. `apex` is the zone's name; `zone` may be absent for the nameserver domain, which is
 * served even when nobody hosts it. The SOA and apex NS come from the nameserver settings; in the
 * nameserver domain, ns1..ns4 get their addresses unless the zone gives them some.
 */
export function buildZoneIndex(apex: string, zone: Zone | undefined, ns: NameserverSettings): ZoneIndex {
  const serial = zone?.serial ?? 1;
  const soaFixed = Buffer.alloc(20);
  soaFixed.writeUInt32BE(serial >>> 0, 0);
  soaFixed.writeUInt32BE(SOA_TIMERS.refresh, 4);
  soaFixed.writeUInt32BE(SOA_TIMERS.retry, 8);
  soaFixed.writeUInt32BE(SOA_TIMERS.expire, 12);
  soaFixed.writeUInt32BE(SOA_TIMERS.minimum, 16);
  const soa: RRset = {
    type: TYPE.SOA,
    ttl: SOA_TIMERS.ttl,
    rdatas: [[`ns1.${ns.domain}`, apex ? `hostmaster.${apex}` : 'hostmaster', soaFixed]],
  };
  const index: ZoneIndex = {
    apex,
    serial,
    nodes: new Map(),
    names: new Set(),
    cuts: new Set(),
    soa,
    negativeSoa: { ...soa, ttl: Math.min(SOA_TIMERS.ttl, SOA_TIMERS.minimum) },
    problems: [],
  };
  const seen = new Set<string>();
  index.nodes.set(apex, new Map([[TYPE.SOA, soa]]));
  for (const target of nameserverNames(ns)) addRecord(index, apex, TYPE.NS, NS_TTL, [target], `${apex} NS ${target}`, seen);

  for (const r of zone?.records ?? []) {
    const p = prepare(r);
    if (!withinZone(p.owner, apex) || !p.validOwner) {
      index.problems.push(`${r.name} ${r.type}: the owner is not inside the zone ${apex}`);
      continue;
    }
    // The apex NS set and the SOA are the server's own (zone.ts); records of theirs would contradict it.
    if (p.owner === apex && r.type === 'NS') continue;
    if (p.type === undefined) {
      index.problems.push(`${r.name}: unsupported type ${String(r.type)}`);
      continue;
    }
    if (p.rdata === undefined) index.problems.push(`${r.name} ${r.type}: ${p.error}`);
    else addRecord(index, p.owner, p.type, r.ttl, p.rdata, p.key, seen);
  }

  if (apex === ns.domain) {
    nameserverNames(ns).forEach((name, i) => {
      const node = index.nodes.get(name);
      if (node?.has(TYPE.A) || node?.has(TYPE.AAAA) || node?.has(TYPE.CNAME)) return;
      const addr = ns.addresses[i % ns.addresses.length];
      const type = isIPv4(addr) ? 'A' : 'AAAA';
      addRecord(index, name, TYPE_CODES[type], NS_TTL, recordRdata({ name, type, ttl: NS_TTL, data: addr }), `${name} ${type} ${addr}`, seen);
    });
  }

  for (const [owner, node] of index.nodes) if (owner !== apex && node.has(TYPE.NS)) index.cuts.add(owner);
  return index;
}

// Authoritative resolution (RFC 1034 4.3.2, with RFC 2308 negative answers and RFC 4592 wildcards):
// given a name and type, which records go in which section, with which rcode and AA bit.
// It reads only the zone indexes it is given, never the network.
import { buildZoneIndex, type NameserverSettings, type RRset, type ZoneIndex } from './zone-index.js';
import type { ZoneCatalog } from '../zones/zone.js';
import { RCODE, TYPE } from './wire.js';

export interface Entry {
  /** Owner as written in the reply (the question's case where the owner is the question's name). */
  name: string;
  set: RRset;
}

export interface Resolution {
  rcode: number;
  aa: boolean;
  answer: Entry[];
  authority: Entry[];
  additional: Entry[];
  /** A delegation: the authority NS set and its glue are required, or the reply is truncated. */
  referral: boolean;
}

/** RFC 8482 answers ANY with one RRset; this picks the most useful one present. */
const ANY_PREFERENCE = [TYPE.CNAME, TYPE.SOA, TYPE.A, TYPE.AAAA, TYPE.MX, TYPE.TXT, TYPE.NS, TYPE.SRV, TYPE.CAA, TYPE.PTR];
const MAX_CHAIN = 12;

function parent(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 ? '' : name.slice(dot + 1);
}

/**
 * Every zone this server is authoritative for: the catalog's, plus the nameserver domain. Indexes are
 * rebuilt when the catalog reports a change; `generation` moves on each change so caches can drop.
 */
export class Authority {
  private readonly zones = new Map<string, ZoneIndex>();
  generation = 0;
  private readonly unsubscribe: () => void;
  readonly catalog: ZoneCatalog;
  readonly ns: NameserverSettings;
  private readonly onProblems: (zone: string, problems: string[]) => void;

  constructor(catalog: ZoneCatalog, ns: NameserverSettings, onProblems: (zone: string, problems: string[]) => void = () => {}) {
    this.catalog = catalog;
    this.ns = ns;
    this.onProblems = onProblems;
    for (const name of catalog.names()) this.rebuild(name);
    this.rebuild(ns.domain);
    this.unsubscribe = catalog.onChange((name) => this.rebuild(name));
  }

  close(): void {
    this.unsubscribe();
  }

  private rebuild(name: string): void {
    const zone = this.catalog.get(name);
    if (zone || name === this.ns.domain) {
      const index = buildZoneIndex(name, zone, this.ns);
      if (index.problems.length) this.onProblems(name, index.problems);
      this.zones.set(name, index);
    } else this.zones.delete(name);
    this.generation++;
  }

  /** The index of a zone by its exact name. */
  zone(name: string): ZoneIndex | undefined {
    return this.zones.get(name);
  }

  /** The closest enclosing zone of a lower-case name. */
  findZone(lower: string): ZoneIndex | undefined {
    for (let name = lower; ; name = parent(name)) {
      const z = this.zones.get(name);
      if (z) return z;
      if (name === '') return undefined;
    }
  }

  /** Resolves `name` (lower case `lower`) and `qtype`; the caller has checked the class is IN. */
  resolve(name: string, lower: string, qtype: number): Resolution {
    const res: Resolution = { rcode: RCODE.NOERROR, aa: true, answer: [], authority: [], additional: [], referral: false };
    let zone = this.findZone(lower);
    if (!zone) {
      res.rcode = RCODE.REFUSED;
      res.aa = false;
      return res;
    }
    const visited = new Set<string>();
    for (let hop = 0; ; hop++) {
      visited.add(lower);
      const cut = zone.cuts.size ? this.findCut(zone, lower) : undefined;
      if (cut !== undefined) {
        this.referral(zone, cut, res);
        return res;
      }
      let node = zone.nodes.get(lower);
      if (!node && !zone.names.has(lower)) {
        // RFC 4592: the wildcard at the closest encloser applies only to names that do not exist.
        let encloser = parent(lower);
        while (!zone.names.has(encloser)) encloser = parent(encloser);
        node = zone.nodes.get(encloser ? `*.${encloser}` : '*');
        if (!node) {
          res.rcode = RCODE.NXDOMAIN;
          res.authority.push(this.negativeSoa(zone));
          return res;
        }
      }
      if (!node) {
        res.authority.push(this.negativeSoa(zone)); // an empty non-terminal: NODATA
        return res;
      }
      if (qtype === TYPE.ANY) {
        const type = ANY_PREFERENCE.find((t) => node!.has(t));
        if (type === undefined) res.authority.push(this.negativeSoa(zone));
        else res.answer.push({ name, set: node.get(type)! });
        return res;
      }
      const set = node.get(qtype);
      if (set) {
        res.answer.push({ name, set });
        if (qtype === TYPE.NS && lower === zone.apex) this.addAddresses(set, res);
        return res;
      }
      const cname = node.get(TYPE.CNAME);
      if (!cname) {
        res.authority.push(this.negativeSoa(zone));
        return res;
      }
      res.answer.push({ name, set: cname });
      const target = cname.rdatas[0][0] as string;
      const targetLower = target.toLowerCase();
      const next = this.findZone(targetLower);
      // Follow the chain only through data this server holds, and never around a loop.
      if (!next || visited.has(targetLower) || hop + 1 >= MAX_CHAIN) return res;
      zone = next;
      name = target;
      lower = targetLower;
    }
  }

  /** The highest zone cut at or above `lower` (the first delegation met walking down from the apex). */
  private findCut(zone: ZoneIndex, lower: string): string | undefined {
    let found: string | undefined;
    for (let name = lower; name !== zone.apex && name !== ''; name = parent(name)) if (zone.cuts.has(name)) found = name;
    return found;
  }

  private referral(zone: ZoneIndex, cut: string, res: Resolution): void {
    const ns = zone.nodes.get(cut)!.get(TYPE.NS)!;
    // A referral is not authoritative data, unless an earlier CNAME in the answer was ours (RFC 1034 4.3.2).
    if (res.answer.length === 0) res.aa = false;
    res.referral = true;
    res.authority.push({ name: cut, set: ns });
    // Glue: addresses of the delegated servers, from inside this zone only (never from elsewhere).
    for (const rdata of ns.rdatas) {
      const target = (rdata[0] as string).toLowerCase();
      if (target !== zone.apex && !target.endsWith(`.${zone.apex}`)) continue;
      const node = zone.nodes.get(target);
      const a = node?.get(TYPE.A);
      const aaaa = node?.get(TYPE.AAAA);
      if (a) res.additional.push({ name: target, set: a });
      if (aaaa) res.additional.push({ name: target, set: aaaa });
    }
  }

  /** Addresses of the apex NS targets (ns1..ns4) when this server holds them: saves resolvers a query. */
  private addAddresses(ns: RRset, res: Resolution): void {
    for (const rdata of ns.rdatas) {
      const target = (rdata[0] as string).toLowerCase();
      const node = this.findZone(target)?.nodes.get(target);
      const a = node?.get(TYPE.A);
      const aaaa = node?.get(TYPE.AAAA);
      if (a) res.additional.push({ name: target, set: a });
      if (aaaa) res.additional.push({ name: target, set: aaaa });
    }
  }

  private negativeSoa(zone: ZoneIndex): Entry {
    return { name: zone.apex, set: zone.negativeSoa };
  }
}

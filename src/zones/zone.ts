// A hosted zone as the DNS server reads it, and the catalog that holds every zone in memory: neutral
// ground between the service that writes zones (infra, through a ZoneMirror) and the DNS server that
// answers from them. The Infra dns.* commands write zones to the database and then put the fresh Zone
// here, so an API change is answered by the DNS server as soon as the API call returns.

/** Record data in dns-packet's shapes, so answers are encoded without conversion. */
export type RecordData =
  | { type: 'A' | 'AAAA'; data: string }
  | { type: 'CNAME' | 'NS' | 'PTR'; data: string }
  | { type: 'MX'; data: { preference: number; exchange: string } }
  | { type: 'TXT'; data: string[] }
  | { type: 'SRV'; data: { priority: number; weight: number; port: number; target: string } }
  | { type: 'CAA'; data: { flags: number; tag: string; value: string } };

export type ZoneRecord = RecordData & {
  /** Absolute owner name, lower case, no trailing dot (for example "www.example.com", "*.example.com"). */
  name: string;
  ttl: number;
};

export interface Zone {
  /** Lower case, no trailing dot. */
  name: string;
  serial: number;
  /** Every record except SOA and the apex NS set, which the server makes from its configuration. */
  records: ZoneRecord[];
}

/** Every hosted zone, by name. */
export class ZoneCatalog {
  private readonly zones = new Map<string, Zone>();
  private readonly listeners = new Set<(zone: string) => void>();

  put(zone: Zone): void {
    this.zones.set(zone.name, zone);
    for (const l of this.listeners) l(zone.name);
  }

  remove(name: string): void {
    if (this.zones.delete(name)) for (const l of this.listeners) l(name);
  }

  get(name: string): Zone | undefined {
    return this.zones.get(name);
  }

  /** The closest enclosing hosted zone of a name, or undefined. */
  findFor(qname: string): Zone | undefined {
    let name = qname.toLowerCase().replace(/\.$/, '');
    for (;;) {
      const z = this.zones.get(name);
      if (z) return z;
      const dot = name.indexOf('.');
      if (dot < 0) return this.zones.get('');
      name = name.slice(dot + 1);
    }
  }

  names(): string[] {
    return [...this.zones.keys()];
  }

  /** Called after each change (for NOTIFY to secondaries). */
  onChange(listener: (zone: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

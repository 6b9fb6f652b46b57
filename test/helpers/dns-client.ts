// A small DNS client for tests, on dns-packet: queries over UDP and TCP, and zone transfers over TCP.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

export interface Addr {
  address: string;
  port: number;
}

export type QueryOptions = { id?: number; flags?: number; edns?: number | false; do?: boolean; class?: dnsPacket.RecordClass };

/** A query message; EDNS payload size 1232 unless `edns: false`. */
export function makeQuery(name: string, type: QueryType, o: QueryOptions = {}): Buffer {
  const additionals: dnsPacket.Answer[] = [];
  if (o.edns !== false) {
    additionals.push({ type: 'OPT', name: '.', udpPayloadSize: o.edns ?? 1232, extendedRcode: 0, ednsVersion: 0, flags: o.do ? dnsPacket.DNSSEC_OK : 0, flag_do: !!o.do, options: [] });
  }
  return dnsPacket.encode({
    type: 'query',
    id: o.id ?? Math.floor(Math.random() * 65536),
    flags: o.flags ?? 0,
    questions: [{ name, type: type as dnsPacket.RecordType, class: o.class ?? 'IN' }],
    additionals,
  });
}

/** dns-packet types the question type as a record type; ANY is a query-only type it still encodes. */
export type QueryType = dnsPacket.RecordType | 'ANY';

/** The data of a record (OPT records have none). */
export function rdataOf(a: dnsPacket.Answer): unknown {
  return 'data' in a ? a.data : undefined;
}

export function rcodeOf(p: dnsPacket.DecodedPacket): number {
  return (p.flags ?? 0) & 0xf;
}

/** Sends raw bytes over UDP and resolves with the raw reply, or null after `timeoutMs`. */
export function udpExchange(to: Addr, msg: Buffer, timeoutMs = 2000): Promise<Buffer | null> {
  const socket = dgram.createSocket(net.isIPv6(to.address) ? 'udp6' : 'udp4');
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.close();
      resolve(null);
    }, timeoutMs);
    socket.on('message', (reply) => {
      clearTimeout(timer);
      socket.close();
      resolve(reply);
    });
    socket.send(msg, to.port, to.address);
  });
}

export async function udpQuery(to: Addr, name: string, type: QueryType, o: QueryOptions = {}): Promise<{ packet: dnsPacket.DecodedPacket; raw: Buffer }> {
  const raw = await udpExchange(to, makeQuery(name, type, o));
  if (!raw) throw new Error(`no UDP answer for ${name} ${type}`);
  return { packet: dnsPacket.decode(raw), raw };
}

/** Opens a TCP connection and reads length-prefixed messages from it. */
export class TcpClient {
  readonly socket: net.Socket;
  private buffered: Buffer = Buffer.alloc(0);
  private readonly waiting: ((m: Buffer | null) => void)[] = [];
  private readonly messages: Buffer[] = [];
  closed = false;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 2 && this.buffered.length >= 2 + this.buffered.readUInt16BE(0)) {
        const len = this.buffered.readUInt16BE(0);
        const m = this.buffered.subarray(2, 2 + len);
        this.buffered = this.buffered.subarray(2 + len);
        const w = this.waiting.shift();
        if (w) w(m);
        else this.messages.push(m);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiting.splice(0)) w(null);
    });
  }

  static connect(to: Addr, localAddress?: string): Promise<TcpClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: to.address, port: to.port, localAddress }, () => resolve(new TcpClient(s)));
      s.once('error', reject);
    });
  }

  send(msg: Buffer): void {
    const head = Buffer.alloc(2);
    head.writeUInt16BE(msg.length);
    this.socket.write(Buffer.concat([head, msg]));
  }

  /** The next message, or null if the connection closed first or `timeoutMs` passed. */
  next(timeoutMs = 3000): Promise<Buffer | null> {
    const m = this.messages.shift();
    if (m) return Promise.resolve(m);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(done);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(null);
      }, timeoutMs);
      const done = (msg: Buffer | null) => {
        clearTimeout(timer);
        resolve(msg);
      };
      this.waiting.push(done);
    });
  }

  /** Resolves when the server closes the connection (true) or after `timeoutMs` (false). */
  waitClosed(timeoutMs: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

export async function tcpQuery(to: Addr, name: string, type: QueryType, o: QueryOptions = {}): Promise<dnsPacket.DecodedPacket> {
  const c = await TcpClient.connect(to);
  try {
    c.send(makeQuery(name, type, o));
    const raw = await c.next();
    if (!raw) throw new Error(`no TCP answer for ${name} ${type}`);
    return dnsPacket.decode(raw);
  } finally {
    c.close();
  }
}

/** Runs an AXFR and returns every message until the closing SOA (or the first error reply). */
export async function axfr(to: Addr, zone: string, localAddress?: string): Promise<dnsPacket.DecodedPacket[]> {
  const c = await TcpClient.connect(to, localAddress);
  try {
    c.send(makeQuery(zone, 'AXFR', { edns: false }));
    const out: dnsPacket.DecodedPacket[] = [];
    let soas = 0;
    for (;;) {
      const raw = await c.next(5000);
      if (!raw) throw new Error(`transfer of ${zone} ended early after ${out.length} messages`);
      const p = dnsPacket.decode(raw);
      out.push(p);
      if (rcodeOf(p) !== 0) return out;
      soas += (p.answers ?? []).filter((a) => a.type === 'SOA').length;
      if (soas >= 2) return out;
    }
  } finally {
    c.close();
  }
}

// NOTIFY (RFC 1996): tells every secondary that a zone changed, over UDP, retrying until each one
// acknowledges (a reply with the same id and opcode from that address) or the attempts run out.
import dgram from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Logger } from '../platform/log.js';
import type { Authority } from './answer.js';
import { FLAG, MessageWriter, OPCODE, SECTION, TYPE } from './wire.js';

export interface Secondary {
  host: string;
  port: number;
}

export interface NotifierOptions {
  authority: Authority;
  secondaries: readonly Secondary[];
  /** Local address to send from (the DNS listen host), so secondaries see the primary's address. */
  sourceHost: string;
  log: Logger;
  /** Time between attempts; RFC 1996 suggests a minute, tests use less. */
  retryMs?: number;
  attempts?: number;
}

interface Pending {
  zone: string;
  to: Secondary;
  id: number;
  attempt: number;
  timer: NodeJS.Timeout;
  message: Buffer;
}

function normalise(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export class Notifier {
  private readonly sockets = new Map<4 | 6, dgram.Socket>();
  private readonly pending = new Map<string, Pending>();
  private readonly writer = new MessageWriter();
  private readonly retryMs: number;
  private readonly attempts: number;
  private closed = false;
  private readonly o: NotifierOptions;

  constructor(o: NotifierOptions) {
    this.o = o;
    this.retryMs = o.retryMs ?? 5000;
    this.attempts = o.attempts ?? 5;
  }

  async start(): Promise<void> {
    for (const family of new Set(this.o.secondaries.map((s) => (isIPv6(s.host) ? 6 : 4) as 4 | 6))) {
      const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
      socket.on('error', (err) => this.o.log.warn('dns notify socket error', { error: err.message }));
      socket.on('message', (msg, rinfo) => this.onReply(msg, rinfo.address));
      const sameFamily = isIPv6(this.o.sourceHost) === (family === 6) && this.o.sourceHost !== '0.0.0.0' && this.o.sourceHost !== '::';
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind({ port: 0, address: sameFamily ? this.o.sourceHost : undefined }, () => {
          socket.off('error', reject);
          resolve();
        });
      });
      this.sockets.set(family, socket);
    }
  }

  /** Sends NOTIFY for a zone to every secondary; a newer change replaces a notification still pending. */
  notify(zoneName: string): void {
    if (this.closed) return;
    const zone = this.o.authority.zone(zoneName);
    if (!zone) return; // a removed zone: its secondaries learn from their next refresh
    for (const to of this.o.secondaries) {
      const key = `${zoneName}|${to.host}|${to.port}`;
      const old = this.pending.get(key);
      if (old) clearTimeout(old.timer);
      const id = Math.floor(Math.random() * 65536);
      // RFC 1996 3.7: an SOA in the answer section hints at the new serial.
      const w = this.writer.begin(id, (OPCODE.NOTIFY << 11) | FLAG.AA, 512);
      w.question(zone.apex, TYPE.SOA);
      w.rr(SECTION.ANSWER, zone.apex, TYPE.SOA, zone.soa.ttl, zone.soa.rdatas[0]);
      const p: Pending = { zone: zoneName, to, id, attempt: 0, timer: undefined as unknown as NodeJS.Timeout, message: w.finish() };
      this.pending.set(key, p);
      this.send(key, p);
    }
  }

  private send(key: string, p: Pending): void {
    if (this.closed || this.pending.get(key) !== p) return;
    if (p.attempt >= this.attempts) {
      this.pending.delete(key);
      this.o.log.warn('dns notify not acknowledged', { zone: p.zone, secondary: `${p.to.host}:${p.to.port}`, attempts: p.attempt });
      return;
    }
    p.attempt++;
    const socket = this.sockets.get(isIPv6(p.to.host) ? 6 : 4);
    socket?.send(p.message, p.to.port, p.to.host);
    p.timer = setTimeout(() => this.send(key, p), this.retryMs);
    p.timer.unref();
  }

  private onReply(msg: Buffer, from: string): void {
    if (msg.length < 12) return;
    const id = msg.readUInt16BE(0);
    const flags = msg.readUInt16BE(2);
    if (!(flags & FLAG.QR) || ((flags >> 11) & 0xf) !== OPCODE.NOTIFY) return;
    const address = normalise(from);
    for (const [key, p] of this.pending) {
      if (p.id !== id || normalise(p.to.host) !== address) continue;
      clearTimeout(p.timer);
      this.pending.delete(key);
      const rcode = flags & 0xf;
      // Any answer ends the retries: an error (NOTAUTH, REFUSED) will not change by repeating.
      if (rcode !== 0) this.o.log.warn('dns notify refused by secondary', { zone: p.zone, secondary: `${p.to.host}:${p.to.port}`, rcode });
      else this.o.log.debug('dns notify acknowledged', { zone: p.zone, secondary: `${p.to.host}:${p.to.port}` });
    }
  }

  /** Ids of notifications not yet acknowledged (for tests and shutdown logs). */
  pendingCount(): number {
    return this.pending.size;
  }

  close(): void {
    this.closed = true;
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}

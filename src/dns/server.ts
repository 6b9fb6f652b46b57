// The authoritative DNS server's sockets: UDP and TCP on one port, TCP framing (RFC 1035 4.2.2, RFC
// 7766) with limits against slow or hostile clients, zone transfers streamed with back-pressure, and
// NOTIFY to the secondaries on every zone change.
import dgram from 'node:dgram';
import net from 'node:net';
import type { Logger } from '../platform/log.js';
import { Authority } from './answer.js';
import { transferMessages } from './axfr.js';
import { Notifier, type Secondary } from './notify.js';
import { Responder } from './respond.js';
import type { ZoneCatalog } from '../zones/zone.js';

export interface DnsServerOptions {
  catalog: ZoneCatalog;
  listen: { host: string; port: number };
  /** ns1..ns4 live under this domain (lower case, no trailing dot). */
  nameserverDomain: string;
  /** Addresses of ns1..ns4 (cycled when fewer). */
  nameserverAddresses: readonly string[];
  /** Allowed to AXFR (by address) and sent NOTIFY (at their port). */
  secondaries?: readonly Secondary[];
  log: Logger;
  maxUdpPayload?: number;
  /** TCP connection limits; each one left out takes its value from TCP_DEFAULTS. */
  tcp?: Partial<TcpLimits>;
  notifyRetryMs?: number;
  notifyAttempts?: number;
}

export interface DnsAddress {
  address: string;
  port: number;
  family: string;
}

export interface DnsServer {
  udpAddress: DnsAddress;
  tcpAddress: DnsAddress;
  /** For tests: notifications to secondaries still waiting for an acknowledgement. */
  pendingNotifies(): number;
  close(): Promise<void>;
}

/**
 * Limits on TCP connections, the knobs RFC 7766 section 10 lists against clients that hold
 * connections open (it recommends no values).
 */
export interface TcpLimits {
  /** A connection with no message under way is closed after this long without traffic. */
  idleTimeoutMs: number;
  /** A message must arrive whole, length prefix to last byte, within this of its first byte. */
  messageTimeoutMs: number;
  /** Connections at once; past it a new one closes the longest-idle connection, or is refused when none is idle. */
  maxConnections: number;
  /**
   * Connections at once from one IPv4 address or IPv6 /64 (secondaries are exempt); past it the same
   * happens among that source's connections only, so one source cannot crowd out the others.
   */
  maxConnectionsPerSource: number;
}

/**
 * RFC 7766 6.2.3 recommends an idle timeout "on the order of seconds", and RFC 7828 notes servers
 * use such timeouts: 5 s. A query is one or two TCP segments, so a real client sends it whole within
 * a round trip or two; 2 s allows even a retransmission on a slow link. The per-source cap is far
 * above what a client should use (RFC 7766 6.2.2: a client keeps to few connections), as RFC 7766
 * asks of server limits, since many clients may share one address behind NAT; the total stays well
 * inside the default file descriptor limit. Idle connections are closed first when a cap is reached,
 * so held-open connections cannot keep a new query out.
 */
export const TCP_DEFAULTS: TcpLimits = { idleTimeoutMs: 5_000, messageTimeoutMs: 2_000, maxConnections: 512, maxConnectionsPerSource: 32 };

/** A TCP client that stops reading its replies is cut off past this much unsent data. */
const MAX_TCP_BACKLOG = 1 << 20;

function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** Who a connection counts against: its IPv4 address, or the /64 of its IPv6 address (one site's, usually). */
export function sourceOf(address: string): string {
  const a = normaliseAddress(address).split('%')[0];
  if (!net.isIPv6(a)) return a;
  const [head, tail] = a.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return (
    groups
      .slice(0, 4)
      .map((g) => parseInt(g, 16).toString(16))
      .join(':') + '::/64'
  );
}

/** One accepted TCP connection, as the limits see it. */
interface TcpConnection {
  socket: net.Socket;
  source: string;
  /** Exempt from the per-source cap (a secondary). */
  exempt: boolean;
  /** When it last became idle (a counter, so ties cannot happen); undefined while a message or transfer is under way. */
  idleSince: number | undefined;
}

/** The open connections, with the caps and the choice of which idle one to close. */
class TcpConnections {
  private readonly all = new Set<TcpConnection>();
  private readonly bySource = new Map<string, Set<TcpConnection>>();
  private tick = 0;
  private readonly limits: TcpLimits;

  constructor(limits: TcpLimits) {
    this.limits = limits;
  }

  /** Makes room for `c` by closing idle connections where a cap is reached; false when there is none to close. */
  admit(c: TcpConnection): boolean {
    const peers = this.bySource.get(c.source);
    if (!c.exempt && peers && peers.size >= this.limits.maxConnectionsPerSource && !this.closeIdlest(peers, (p) => !p.exempt)) return false;
    if (this.all.size >= this.limits.maxConnections && !this.closeIdlest(this.all, () => true)) return false;
    this.all.add(c);
    if (peers) peers.add(c);
    else this.bySource.set(c.source, new Set([c]));
    this.idle(c);
    return true;
  }

  idle(c: TcpConnection): void {
    c.idleSince = ++this.tick;
  }

  forget(c: TcpConnection): void {
    if (!this.all.delete(c)) return;
    const peers = this.bySource.get(c.source)!;
    peers.delete(c);
    if (peers.size === 0) this.bySource.delete(c.source);
  }

  closeAll(): void {
    for (const c of [...this.all]) c.socket.destroy();
  }

  private closeIdlest(among: Set<TcpConnection>, eligible: (c: TcpConnection) => boolean): boolean {
    let idlest: TcpConnection | undefined;
    for (const c of among) {
      if (c.idleSince !== undefined && eligible(c) && (idlest === undefined || c.idleSince < idlest.idleSince!)) idlest = c;
    }
    if (!idlest) return false;
    this.forget(idlest); // now: the socket's 'close' event comes later
    idlest.socket.destroy();
    return true;
  }
}

function bindUdp(host: string, port: number): Promise<dgram.Socket> {
  const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
  return new Promise((resolve, reject) => {
    socket.once('error', (err) => {
      socket.close();
      reject(err);
    });
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}

function listenTcp(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(err);
    server.once('error', fail);
    server.listen({ host, port, backlog: 1024, exclusive: true }, () => {
      server.off('error', fail);
      resolve();
    });
  });
}

export async function startDnsServer(o: DnsServerOptions): Promise<DnsServer> {
  const log = o.log;
  const secondaries = o.secondaries ?? [];
  const allowed = new Set(secondaries.map((s) => normaliseAddress(s.host)));
  const authority = new Authority(o.catalog, { domain: o.nameserverDomain, addresses: o.nameserverAddresses }, (zone, problems) =>
    log.warn('dns zone has records that cannot be served', { zone, problems: problems.slice(0, 20) }),
  );
  const responder = new Responder({
    authority,
    transferAllowed: (address) => allowed.has(normaliseAddress(address)),
    maxUdpPayload: o.maxUdpPayload,
  });
  const limits: TcpLimits = { ...TCP_DEFAULTS, ...o.tcp };
  const connections = new TcpConnections(limits);

  const tcp = net.createServer({ noDelay: true }, (socket) => {
    const address = socket.remoteAddress ?? '';
    const c: TcpConnection = { socket, source: sourceOf(address), exempt: allowed.has(normaliseAddress(address)), idleSince: undefined };
    if (!connections.admit(c)) {
      socket.destroy();
      return;
    }
    socket.on('close', () => connections.forget(c));
    serveTcpConnection(c, connections, responder, limits, log);
  });

  // Port 0 means "any free port", but UDP and TCP must share it: take UDP's and retry if TCP's is taken.
  let udp: dgram.Socket | undefined;
  for (let attempt = 0; ; attempt++) {
    udp = await bindUdp(o.listen.host, o.listen.port);
    try {
      await listenTcp(tcp, o.listen.host, udp.address().port);
      break;
    } catch (err) {
      udp.close();
      if (o.listen.port !== 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
    }
  }
  try {
    udp.setRecvBufferSize(4 << 20);
    udp.setSendBufferSize(4 << 20);
  } catch {
    // The kernel may cap buffer sizes; the defaults still work, only bursts suffer.
  }
  // Only now: a failed listen while looking for a shared free port is not an error worth logging.
  tcp.on('error', (err) => log.error('dns tcp server error', { error: err.message }));
  const udpSocket = udp;
  udpSocket.on('error', (err) => log.debug('dns udp error', { error: err.message }));
  udpSocket.on('message', (msg, rinfo) => {
    let reply: Buffer | null;
    try {
      reply = responder.udp(msg, rinfo.address);
    } catch (err) {
      log.error('dns udp query failed', { error: (err as Error).message });
      return;
    }
    if (reply && rinfo.port !== 0) udpSocket.send(reply, rinfo.port, rinfo.address);
  });

  const notifier = new Notifier({
    authority,
    secondaries,
    sourceHost: o.listen.host,
    log,
    retryMs: o.notifyRetryMs,
    attempts: o.notifyAttempts,
  });
  await notifier.start();
  // Subscribed after the Authority, whose listener rebuilds the index first, so NOTIFY carries the new serial.
  const unsubscribe = secondaries.length ? o.catalog.onChange((zone) => notifier.notify(zone)) : () => {};

  const u = udpSocket.address();
  const t = tcp.address() as net.AddressInfo;
  return {
    udpAddress: { address: u.address, port: u.port, family: u.family },
    tcpAddress: { address: t.address, port: t.port, family: t.family },
    pendingNotifies: () => notifier.pendingCount(),
    async close() {
      unsubscribe();
      notifier.close();
      authority.close();
      udpSocket.close();
      connections.closeAll();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/**
 * Reads length-prefixed messages from one connection and answers them in order. Partial messages are
 * kept until complete, each for at most the message timeout from when it began (later bytes do not
 * extend it, so a trickle cannot hold the connection); with no message under way the connection is
 * idle: closed after the idle timeout, and the first to go when a cap is reached.
 */
function serveTcpConnection(c: TcpConnection, connections: TcpConnections, responder: Responder, limits: TcpLimits, log: Logger): void {
  const socket = c.socket;
  let buffered: Buffer = Buffer.alloc(0);
  let busy = false;
  let messageTimer: NodeJS.Timeout | undefined;
  const from = socket.remoteAddress ?? '';

  // Any traffic restarts it; a message under way is bounded by messageTimer, a transfer by the client reading.
  socket.setTimeout(limits.idleTimeoutMs, () => socket.destroy());
  socket.on('error', () => {}); // resets and broken pipes end the connection; nothing to report
  socket.on('close', () => clearTimeout(messageTimer));
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    drain();
  });

  function drain(): void {
    let answered = false;
    while (!busy && !socket.destroyed && buffered.length >= 2) {
      const len = buffered.readUInt16BE(0);
      if (len < 12) {
        socket.destroy(); // no DNS message is this short: the stream is not DNS, or is out of step
        return;
      }
      if (buffered.length < len + 2) break;
      const msg = buffered.subarray(2, len + 2);
      buffered = buffered.subarray(len + 2);
      clearTimeout(messageTimer); // this message is whole; a next one starts its own time
      messageTimer = undefined;
      answered = true;
      answer(msg);
    }
    if (socket.destroyed) return;
    const partial = buffered.length > 0 && (buffered.length < 2 || buffered.length < buffered.readUInt16BE(0) + 2);
    if (!partial) {
      clearTimeout(messageTimer);
      messageTimer = undefined;
    } else if (messageTimer === undefined) {
      messageTimer = setTimeout(() => socket.destroy(), limits.messageTimeoutMs);
    }
    // Idle since its last answer: the longest-idle connection is the one closed first.
    if (buffered.length === 0 && !busy) {
      if (c.idleSince === undefined || answered) connections.idle(c);
    } else c.idleSince = undefined;
  }

  function write(message: Buffer): boolean {
    const head = Buffer.allocUnsafe(2);
    head.writeUInt16BE(message.length);
    socket.write(head);
    return socket.write(message);
  }

  function answer(msg: Buffer): void {
    let reply;
    try {
      reply = responder.tcp(msg, from);
    } catch (err) {
      log.error('dns tcp query failed', { error: (err as Error).message });
      socket.destroy();
      return;
    }
    if (!reply) return;
    if ('message' in reply) {
      write(reply.message);
      if (socket.writableLength > MAX_TCP_BACKLOG) socket.destroy();
      return;
    }
    // A transfer may be large: write a message, wait for the socket to drain, then make the next one.
    busy = true;
    socket.pause();
    const messages = transferMessages(reply.transfer.query, reply.transfer.raw, reply.transfer.zone);
    const pump = (): void => {
      if (socket.destroyed) return;
      socket.setTimeout(limits.idleTimeoutMs); // the client is reading: the transfer is activity
      for (;;) {
        let next: IteratorResult<Buffer>;
        try {
          next = messages.next();
        } catch (err) {
          // Runs from a 'drain' event: an exception here would take the process down.
          log.error('dns transfer failed', { zone: reply.transfer.zone.apex, error: (err as Error).message });
          socket.destroy();
          return;
        }
        if (next.done) {
          busy = false;
          socket.resume();
          drain();
          return;
        }
        if (!write(next.value)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
  }
}

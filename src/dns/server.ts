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
import type { ZoneCatalog } from './zone.js';

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
  /** A TCP connection with nothing to read, or a message arriving no faster, is closed after this. */
  tcpTimeoutMs?: number;
  maxTcpConnections?: number;
  notifyRetryMs?: number;
  notifyAttempts?: number;
}

export interface DnsAddress { address: string; port: number; family: string }

export interface DnsServer {
  udpAddress: DnsAddress;
  tcpAddress: DnsAddress;
  /** For tests: notifications to secondaries still waiting for an acknowledgement. */
  pendingNotifies(): number;
  close(): Promise<void>;
}

/** A TCP client that stops reading its replies is cut off past this much unsent data. */
const MAX_TCP_BACKLOG = 1 << 20;

function normaliseAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
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
  const tcpTimeoutMs = o.tcpTimeoutMs ?? 10_000;
  const maxConnections = o.maxTcpConnections ?? 512;
  const connections = new Set<net.Socket>();

  const tcp = net.createServer({ noDelay: true }, (socket) => {
    if (connections.size >= maxConnections) {
      socket.destroy();
      return;
    }
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    serveTcpConnection(socket, responder, tcpTimeoutMs, log);
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
    authority, secondaries, sourceHost: o.listen.host, log, retryMs: o.notifyRetryMs, attempts: o.notifyAttempts,
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
      for (const s of connections) s.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/**
 * Reads length-prefixed messages from one connection and answers them in order. Partial frames are
 * kept until complete; a frame must arrive within the timeout of its first byte, and an idle connection
 * is closed after the same time.
 */
function serveTcpConnection(socket: net.Socket, responder: Responder, timeoutMs: number, log: Logger): void {
  let buffered: Buffer = Buffer.alloc(0);
  let busy = false;
  let frameTimer: NodeJS.Timeout | undefined;
  const from = socket.remoteAddress ?? '';

  socket.setTimeout(timeoutMs, () => socket.destroy());
  socket.on('error', () => {}); // resets and broken pipes end the connection; nothing to report
  socket.on('close', () => clearTimeout(frameTimer));
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    drain();
  });

  function drain(): void {
    while (!busy && !socket.destroyed && buffered.length >= 2) {
      const len = buffered.readUInt16BE(0);
      if (len < 12) {
        socket.destroy(); // no DNS message is this short: the stream is not DNS, or is out of step
        return;
      }
      if (buffered.length < len + 2) break;
      const msg = buffered.subarray(2, len + 2);
      buffered = buffered.subarray(len + 2);
      answer(msg);
    }
    clearTimeout(frameTimer);
    frameTimer = undefined;
    if (buffered.length > 0 && !socket.destroyed) frameTimer = setTimeout(() => socket.destroy(), timeoutMs);
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
      socket.setTimeout(timeoutMs); // the client is reading: the transfer is activity
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

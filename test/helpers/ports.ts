// Free loopback ports for tests and benchmarks that start servers of their own (Knot, NSD).
import dgram from 'node:dgram';
import net from 'node:net';

/** A port free for both UDP and TCP on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  for (;;) {
    const tcp = net.createServer();
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
    const port = (tcp.address() as net.AddressInfo).port;
    const udp = dgram.createSocket('udp4');
    const ok = await new Promise<boolean>((r) => {
      udp.once('error', () => r(false));
      udp.bind(port, '127.0.0.1', () => r(true));
    });
    udp.close();
    await new Promise((r) => tcp.close(r));
    if (ok) return port;
  }
}

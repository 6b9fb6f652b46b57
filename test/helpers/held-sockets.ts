// Raw TCP connections that tests open and keep, to fill a server's connection cap, and a poll for
// a condition, for the tests of connection caps and timeouts.
import net from 'node:net';

/** A connection kept open and followed: whether the server has closed it, and what it sent. */
export interface Held {
  socket: net.Socket;
  closed: boolean;
  got: string;
}

/** Opens a connection to 127.0.0.1:port and, once connected, writes `send` if given. */
export function hold(port: number, send?: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const held: Held = { socket, closed: false, got: '' };
    socket.on('data', (c) => (held.got += c));
    socket.on('close', () => (held.closed = true));
    socket.on('error', () => {}); // a reset when the server closes it
    socket.once('connect', () => {
      if (send) socket.write(send);
      resolve(held);
    });
    socket.once('error', reject);
  });
}

/** Waits until `test()` holds, checking every 10 ms; throws naming `what` after `ms`. */
export async function until(what: string, test: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

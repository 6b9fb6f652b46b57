// Sends a large request body to an in-process listener and measures how much of it the server had
// read when it answered: the socket's bytesRead when the answer was flushed ('finish').
import type http from 'node:http';
import net from 'node:net';

export interface LargeBodyResult {
  /** The raw answer: status line, headers and body. */
  response: string;
  /** Bytes the server had read from the connection (headers included) when its answer was flushed. */
  readByServer: number | undefined;
  /** Bytes the client had written when the answer arrived (kernel buffers included). */
  sent: number;
}

/** Follows the server's answers: the bytes read on each connection (by client port) when the answer was flushed. */
export function watchAnswers(server: http.Server): Map<number, number> {
  const readAtAnswer = new Map<number, number>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    res.once('finish', () => readAtAnswer.set(socket.remotePort!, socket.bytesRead));
  });
  return readAtAnswer;
}

/**
 * Writes `head` (request line and headers, without the blank line), then a body of `size` bytes,
 * `prefix` and then `fill` (chunked when `chunked`), as fast as the connection takes them, until the
 * server answers.
 */
export function sendLargeBody(port: number, readAtAnswer: Map<number, number>, head: string, size: number, opts: { chunked?: boolean; fill?: number; prefix?: Buffer } = {}): Promise<LargeBodyResult> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const fill = Buffer.alloc(64 * 1024, opts.fill ?? 0x61);
    // The body's first chunk starts with the prefix.
    const first = Buffer.from(fill);
    opts.prefix?.copy(first);
    let sent = 0;
    let body = 0;
    let answered: number | undefined;
    let response = '';
    let localPort = 0;
    const pump = () => {
      while (answered === undefined && body < size && !socket.destroyed) {
        const chunk = body === 0 ? first : fill;
        const n = Math.min(chunk.length, size - body);
        body += n;
        const piece = opts.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), chunk.subarray(0, n), Buffer.from('\r\n')]) : chunk.subarray(0, n);
        sent += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (body >= size && opts.chunked && answered === undefined) socket.write('0\r\n\r\n');
    };
    socket.on('connect', () => {
      localPort = socket.localPort!;
      socket.write(`${head}\r\n\r\n`);
      pump();
    });
    socket.on('data', (c) => {
      answered ??= sent;
      response += c;
    });
    socket.on('error', () => {}); // a reset once the server has answered and closed
    socket.on('close', () => {
      if (!response) {
        reject(new Error(`no answer after ${sent} bytes sent`));
        return;
      }
      resolve({ response, readByServer: readAtAnswer.get(localPort), sent: answered ?? sent });
    });
    // Send `Connection: close` in `head` for an answer that keeps the connection.
    socket.setTimeout(15_000, () => socket.destroy());
  });
}

/** The JSON body of a raw answer. */
export function jsonBody(response: string): Record<string, any> {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, any>;
}

// Keel's own inject(), for tests: a request written as raw HTTP/1.1 into an in-memory connection
// handed to the listener's server, so that it goes through node's parser, the connection cap, the
// service's handler and the durable answer exactly as one from a socket does; the answer is read
// back from the same connection. (Options and answer have the shape light-my-request gave them.)
import type { IncomingHttpHeaders, Server } from 'node:http';
import { Duplex } from 'node:stream';

export interface InjectOptions {
  method?: string;
  url: string;
  headers?: Record<string, string | undefined>;
  payload?: string | Buffer;
}

export interface InjectResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: string;
  json(): unknown;
}

/** One end of an in-memory connection: what is written to it is read from the other end. */
class PipeEnd extends Duplex {
  other: PipeEnd | undefined;
  // What the listener reads of a socket (client address, rate limits).
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 0;

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.other?.push(chunk);
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.other?.push(null);
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    const other = this.other;
    this.other = undefined;
    if (other && !other.destroyed) {
      other.other = undefined;
      other.push(null);
      other.destroy();
    }
    done(err);
  }

  // What node's server asks of a socket; an in-memory connection has no timers or options.
  setTimeout(): this {
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }
}

function requestBytes(o: InjectOptions): Buffer {
  const method = (o.method ?? 'GET').toUpperCase();
  const headers: Record<string, string> = { host: 'localhost:80' };
  for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
  const payload = o.payload === undefined ? undefined : typeof o.payload === 'string' ? Buffer.from(o.payload) : o.payload;
  if (payload && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = String(payload.length);
  let head = `${method} ${o.url} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  const start = Buffer.from(`${head}\r\n`, 'latin1');
  return payload ? Buffer.concat([start, payload]) : start;
}

/** The answer's parts once it is whole: by its Content-Length, or its chunks, or the end of the connection. */
function parseAnswer(data: Buffer, ended: boolean): InjectResponse | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const statusCode = Number(lines[0].split(' ')[1]);
  const headers: IncomingHttpHeaders = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const had = headers[name];
    headers[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  let rest = data.subarray(end + 4);
  const length = headers['content-length'];
  if (typeof length === 'string') {
    if (rest.length < Number(length)) return undefined;
    rest = rest.subarray(0, Number(length));
  } else if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < eol + 2 + size) return undefined;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      at = eol + 4 + size;
    }
    rest = Buffer.concat(parts);
  } else if (!ended) {
    return undefined;
  }
  const body = rest.toString('utf8');
  return { statusCode, headers, body, json: () => JSON.parse(body) as unknown };
}

/** Runs one request on `server` through an in-memory connection and resolves with its answer. */
export function inject(server: Server, options: InjectOptions | string): Promise<InjectResponse> {
  const o = typeof options === 'string' ? { url: options } : options;
  const client = new PipeEnd();
  const socket = new PipeEnd();
  client.other = socket;
  socket.other = client;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    const settle = (ended: boolean) => {
      if (done) return;
      const answer = parseAnswer(Buffer.concat(chunks), ended);
      if (answer) {
        done = true;
        client.destroy();
        resolve(answer);
      } else if (ended) {
        done = true;
        client.destroy();
        reject(new Error(`inject ${o.method ?? 'GET'} ${o.url}: the connection closed without a whole answer`));
      }
    };
    client.on('data', (c: Buffer) => {
      chunks.push(c);
      settle(false);
    });
    client.on('end', () => settle(true));
    client.on('close', () => settle(true));
    server.emit('connection', socket);
    client.write(requestBytes(o));
  });
}

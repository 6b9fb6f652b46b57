// The HTTP listeners under the resource attacks of issue 12 (real `keel serve`, SQLite): large bodies
// without credentials (24 at once of 24 MB to Chat and of 9.5 MB, under its 10 MiB limit, to Infra):
// the server's RSS growth and how much each client got to send before the answer; then idle
// connections held past the connection cap (--max-connections) and a request sent after them.
import http from 'node:http';
import net from 'node:net';
import { note, rssMiB, startKeel, withServers, type Benchmark, type Figure, type KeelServer } from './lib.js';

const MB = 1024 * 1024;
const BODIES = 24;
const CAP = 1_000;
const IDLE = 3_000;

/** Sends `size` bytes (announced) without credentials; resolves with the status (0: no answer) and the bytes written before it. */
function unauthenticatedBody(url: string, size: number, contentType: string): Promise<{ status: number; sent: number }> {
  return new Promise((resolve) => {
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    let sent = 0;
    let done = false;
    const finish = (status: number) => {
      if (done) return;
      done = true;
      req.destroy();
      resolve({ status, sent });
    };
    const req = http.request(url, { method: 'POST', headers: { 'content-type': contentType, 'content-length': size }, agent: false }, (res) => {
      res.resume();
      finish(res.statusCode!);
    });
    req.on('error', () => finish(0));
    const pump = () => {
      while (!done && sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!done) req.end();
    };
    pump();
  });
}

/** RSS growth (peak during `work` minus before) of the server, sampled every 20 ms. */
async function rssGrowth(pid: number, work: () => Promise<unknown>): Promise<number> {
  const before = rssMiB(pid) ?? 0;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid) ?? 0)), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssMiB(pid) ?? 0) - before;
}

async function bodies(keel: KeelServer, what: string, url: string, size: number, contentType: string): Promise<Figure[]> {
  let results: { status: number; sent: number }[] = [];
  // Unmeasured: the first requests of a fresh server load and compile code, which its RSS shows.
  await Promise.all([unauthenticatedBody(url, size, contentType), unauthenticatedBody(url, size, contentType)]);
  const grew = await rssGrowth(keel.pid, async () => {
    results = await Promise.all(Array.from({ length: BODIES }, () => unauthenticatedBody(url, size, contentType)));
  });
  const statuses = [...new Set(results.map((r) => r.status))].join(', ');
  const sent = results.map((r) => r.sent).sort((a, b) => a - b);
  note(
    `${what}: ${BODIES} x ${(size / MB).toFixed(1)} MB without credentials answered ${statuses}; clients sent ${(sent[0] / MB).toFixed(1)}-${(sent.at(-1)! / MB).toFixed(1)} MB each before the answer (kernel buffers included); server RSS +${grew} MiB`,
  );
  return [{ name: `${what}-rss`, value: grew, unit: 'MiB RSS growth', atMost: 64, detail: `${BODIES} x ${(size / MB).toFixed(1)} MB, answered ${statuses}` }];
}

async function idleConnections(keel: KeelServer): Promise<Figure[]> {
  const { port } = new URL(keel.chatUrl);
  const sockets: net.Socket[] = [];
  let closed = 0;
  try {
    for (let i = 0; i < IDLE; i++) {
      const s = net.connect(Number(port), '127.0.0.1');
      s.on('error', () => {});
      s.on('close', () => closed++);
      sockets.push(s);
      await new Promise((r) => s.once('connect', r).once('error', r));
    }
    const started = Date.now();
    const status = await new Promise<number>((resolve) => {
      http
        .get(`${keel.chatUrl}/api/v1/server_settings`, { agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
        .on('error', () => resolve(0));
    });
    const ms = Date.now() - started;
    await new Promise((r) => setTimeout(r, 200));
    note(`${IDLE} idle connections against --max-connections ${CAP}: ${closed} closed by the server, ${IDLE - closed} held; then a request answered ${status} in ${ms} ms`);
    return [
      { name: 'idle-closed', value: closed, unit: `of ${IDLE} idle connections closed`, atLeast: IDLE - CAP },
      { name: 'answered', value: status === 200 ? 1 : 0, unit: 'request answered after them', atLeast: 1, detail: `${ms} ms` },
    ];
  } finally {
    for (const s of sockets) s.destroy();
  }
}

export const benchmark: Benchmark = {
  name: 'http-limits',
  summary: `${BODIES} large bodies without credentials to Chat and Infra (server RSS growth), ${IDLE.toLocaleString('en')} idle connections against a cap of ${CAP.toLocaleString('en')}`,
  async run() {
    return withServers([() => startKeel({ args: ['--max-connections', String(CAP)] })], async (keel) => [
      ...(await bodies(keel, 'chat', `${keel.chatUrl}/api/v1/messages`, 24 * MB, 'application/x-www-form-urlencoded')),
      ...(await bodies(keel, 'infra', `${keel.url}/api/rest/v2.10/json.php`, Math.floor(9.5 * MB), 'application/json')),
      ...(await idleConnections(keel)),
    ]);
  },
};

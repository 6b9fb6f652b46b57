// Upload and download throughput of a 20 MB file through Keel (POST /api/v1/user_uploads, multipart as
// Zulip's Python client sends it; GET /user_uploads/<path_id> with HTTP Basic) against a bare node:http
// server in the same run that streams the same bytes to a file (fsync'd, renamed into place, as Keel's
// file store does) and back from it. Figures: MB/s of each, the ratio Keel / bare, and server CPU
// seconds per upload and download (the machine is shared: CPU time is the steadier figure).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { basicAuth, cpuSeconds, isMain, note, rssMiB, startKeel, startRole, withServers, type Benchmark, type Figure, type Server } from './lib.js';

const FILE = fileURLToPath(import.meta.url);
const MB = 1_000_000;
const SIZE = 20 * MB;
const ROUNDS = 5;

/** The baseline process: PUT-like POST /upload streams the body to disk, GET /file streams it back. */
async function bareFileServer(dir: string): Promise<void> {
  let n = 0;
  const target = path.join(dir, 'file');
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      const temp = path.join(dir, `part-${n++}`);
      void (async () => {
        const out = fs.createWriteStream(temp);
        await pipeline(req, out);
        const h = await fsp.open(temp, 'r+');
        await h.sync();
        await h.close();
        await fsp.rename(temp, target);
        const body = JSON.stringify({ result: 'success', url: '/file' });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      })();
      return;
    }
    const st = fs.statSync(target);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
    fs.createReadStream(target).pipe(res);
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${port}` })}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

async function startBareFileServer(): Promise<Server & { dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-bench-bare-'));
  const c = await startRole(FILE, 'bare-file-server', dir, (m) => 'listening' in m);
  const url = String(c.lines.at(-1)!.listening);
  return {
    url,
    dir,
    pid: c.process.pid!,
    async stop() {
      await c.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One request; resolves with the status and the body (downloads count the bytes and drop them). */
function send(url: string, method: string, headers: Record<string, string | number>, body: Buffer[] | undefined, keep: boolean): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (keep) chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode!, bytes, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    for (const b of body ?? []) req.write(b);
    req.end();
  });
}

interface Measured {
  seconds: number;
  cpu: number;
}

/** Runs `once` ROUNDS times (after one unmeasured run), wall time and the server's CPU time. */
async function measure(pid: number, once: () => Promise<void>): Promise<Measured> {
  await once();
  const cpu0 = cpuSeconds(pid) ?? 0;
  const t0 = performance.now();
  for (let i = 0; i < ROUNDS; i++) await once();
  return { seconds: (performance.now() - t0) / 1000, cpu: (cpuSeconds(pid) ?? 0) - cpu0 };
}

const rate = (m: Measured) => Math.round(((SIZE * ROUNDS) / MB / m.seconds) * 10) / 10;
const cpuPer = (m: Measured) => Math.round((m.cpu / ROUNDS) * 1000) / 1000;

export const benchmark: Benchmark = {
  name: 'uploads',
  summary: `a ${SIZE / MB} MB file uploaded and downloaded ${ROUNDS} times through Keel and through a bare node:http server streaming it to and from disk`,
  async run() {
    const data = randomBytes(SIZE);
    return withServers([() => startKeel(), () => startBareFileServer()], async (keel, bare) => {
      const auth = basicAuth(keel.chat.email, keel.chat.apiKey);
      const boundary = 'benchboundary52c1';
      const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="bench.bin"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const multipartLength = head.length + data.length + tail.length;
      let url = '';
      const uploadOnce = async () => {
        const r = await send(
          `${keel.chatUrl}/api/v1/user_uploads`,
          'POST',
          { authorization: auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': multipartLength },
          [head, data, tail],
          true,
        );
        if (r.status !== 200) throw new Error(`upload answered ${r.status}: ${r.text}`);
        url = JSON.parse(r.text).url;
      };
      const downloadOnce = async () => {
        const r = await send(`${keel.chatUrl}${url}`, 'GET', { authorization: auth }, undefined, false);
        if (r.status !== 200 || r.bytes !== SIZE) throw new Error(`download answered ${r.status} with ${r.bytes} bytes`);
      };
      // Unmeasured: the first transfers load code and grow the heap to its working size.
      await uploadOnce();
      await downloadOnce();
      // The server's RSS while files stream through it: a file held whole would add its 20 MB.
      const rssBefore = rssMiB(keel.pid) ?? 0;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(keel.pid) ?? 0)), 10);
      const keelUpload = await measure(keel.pid, uploadOnce);
      const keelDownload = await measure(keel.pid, downloadOnce);
      clearInterval(sampler);
      const bareUpload = await measure(bare.pid, async () => {
        const r = await send(`${bare.url}/upload`, 'POST', { 'content-type': 'application/octet-stream', 'content-length': SIZE }, [data], true);
        if (r.status !== 200) throw new Error(`bare upload answered ${r.status}`);
      });
      const bareDownload = await measure(bare.pid, async () => {
        const r = await send(`${bare.url}/file`, 'GET', {}, undefined, false);
        if (r.bytes !== SIZE) throw new Error(`bare download gave ${r.bytes} bytes`);
      });
      note(
        `load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} on ${os.cpus().length} CPUs`,
      );
      const figures: Figure[] = [
        { name: 'bare-up', value: rate(bareUpload), unit: 'MB/s upload (bare node:http to disk)', detail: `server CPU ${cpuPer(bareUpload)} s/upload` },
        { name: 'keel-up', value: rate(keelUpload), unit: 'MB/s upload (POST /user_uploads)', baseline: 'bare-up', detail: `server CPU ${cpuPer(keelUpload)} s/upload` },
        { name: 'bare-down', value: rate(bareDownload), unit: 'MB/s download (bare node:http from disk)', detail: `server CPU ${cpuPer(bareDownload)} s/download` },
        { name: 'keel-down', value: rate(keelDownload), unit: 'MB/s download (GET /user_uploads/...)', baseline: 'bare-down', detail: `server CPU ${cpuPer(keelDownload)} s/download` },
        {
          name: 'keel-rss',
          value: rssPeak - rssBefore,
          unit: 'MiB server RSS growth over the transfers',
          atMost: SIZE / MB,
          detail: `${(ROUNDS + 1) * 2} transfers of ${SIZE / MB} MB after two unmeasured`,
        },
      ];
      return figures;
    });
  },
};

if (isMain(import.meta.url) && process.argv[2] === 'bare-file-server') void bareFileServer(process.argv[3]);

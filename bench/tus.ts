// Resumable uploads (/api/v1/tus, src/chat/tus.ts) against a real `keel serve` (SQLite): ten 100 MB
// uploads at once, each as tus-js-client sends one by default (POST creation, then one PATCH with the
// whole file, streamed), written with node:http here (tus-js-client is not installed). Reported: the
// server's RSS while idle, its peak and its steady level (the median of the samples taken while the
// ten bodies flowed), as ratios against the idle RSS of the same run; and the throughput (MB/s, the
// last byte's answer included, which stores the file as an attachment) against a bare node:http sink
// that writes the same ten bodies to disk in the same run. The server's CPU per uploaded MB too.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { basicAuth, cpuSeconds, isMain, note, rssMiB, startKeel, startRole, type Benchmark, type Figure } from './lib.js';

const FILE = fileURLToPath(import.meta.url);
const UPLOADS = 10;
const SIZE = 100 * 1024 * 1024;
const CHUNK = Buffer.alloc(1024 * 1024, 0x5a);

/** Sends `SIZE` bytes as the body of one request (1 MiB writes, respecting backpressure); resolves with the answer. */
function send(url: string, method: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: { ...headers, 'content-length': String(SIZE) } });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    let sent = 0;
    const pump = () => {
      while (sent < SIZE) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

async function tusUpload(chatUrl: string, authorization: string, i: number): Promise<void> {
  const tus = { 'tus-resumable': '1.0.0', authorization };
  const made = await fetch(`${chatUrl}/api/v1/tus`, {
    method: 'POST',
    headers: { ...tus, 'upload-length': String(SIZE), 'upload-metadata': `filename ${Buffer.from(`bench-${i}.bin`).toString('base64')}` },
  });
  if (made.status !== 201) throw new Error(`tus creation: ${made.status} ${await made.text()}`);
  const location = new URL(made.headers.get('location')!, `${chatUrl}/api/v1/tus`).href;
  const done = await send(location, 'PATCH', { ...tus, 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' });
  if (done.status !== 200 || !JSON.parse(done.body).url) throw new Error(`tus PATCH: ${done.status} ${done.body}`);
}

/** Samples a process's RSS every 50 ms while `work` runs. */
async function sampled(pid: number, work: () => Promise<void>): Promise<{ seconds: number; samples: number[] }> {
  const samples: number[] = [];
  const timer = setInterval(() => {
    const r = rssMiB(pid);
    if (r !== undefined) samples.push(r);
  }, 50);
  const t0 = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { seconds: (performance.now() - t0) / 1000, samples };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const mbPerSecond = (seconds: number) => Math.round((UPLOADS * SIZE) / 1e6 / seconds);

export const benchmark: Benchmark = {
  name: 'tus',
  summary: `${UPLOADS} parallel ${SIZE / 1024 / 1024} MiB tus uploads: server RSS (peak, steady vs idle) and throughput vs a bare node:http disk sink`,
  async run() {
    const figures: Figure[] = [];
    // The baseline: bare node:http writing each body to a file.
    const sink = await startRole(FILE, 'sink', '', (m) => 'listening' in m);
    try {
      const url = String(sink.lines.at(-1)!.listening);
      const bare = await sampled(sink.process.pid!, async () => {
        await Promise.all(Array.from({ length: UPLOADS }, () => send(url, 'POST', {})));
      });
      figures.push({ name: 'sink', value: mbPerSecond(bare.seconds), unit: 'MB/s', detail: `bare node:http writing to disk, peak RSS ${Math.max(...bare.samples)} MiB` });
    } finally {
      await sink.stop();
    }

    const keel = await startKeel({ args: ['--chat-max-upload-mib', '200'] });
    try {
      const authorization = basicAuth(keel.chat.email, keel.chat.apiKey);
      // Warm: one small upload through every step, then a settled idle reading.
      const warm = await fetch(`${keel.chat.url}/api/v1/tus`, { method: 'POST', headers: { 'tus-resumable': '1.0.0', authorization, 'upload-length': '0' } });
      if (warm.status !== 200) throw new Error(`tus warm-up: ${warm.status}`);
      await new Promise((r) => setTimeout(r, 2000));
      const idle = median(Array.from({ length: 5 }, () => rssMiB(keel.pid) ?? 0));
      const cpu0 = cpuSeconds(keel.pid) ?? 0;
      const run = await sampled(keel.pid, async () => {
        await Promise.all(Array.from({ length: UPLOADS }, (_, i) => tusUpload(keel.chat.url, authorization, i)));
      });
      const cpu = (cpuSeconds(keel.pid) ?? 0) - cpu0;
      const peak = Math.max(...run.samples);
      const steady = median(run.samples);
      note(
        `${run.samples.length} RSS samples over ${run.seconds.toFixed(1)} s; load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
      );
      figures.push(
        { name: 'idle', value: idle, unit: 'MiB RSS', detail: 'keel serve after start and one empty upload' },
        { name: 'peak', value: peak, unit: 'MiB RSS', baseline: 'idle', detail: `highest sample during ${UPLOADS} x 100 MiB at once` },
        { name: 'steady', value: steady, unit: 'MiB RSS', baseline: 'idle', detail: 'median sample during the uploads' },
        {
          name: 'tus',
          value: mbPerSecond(run.seconds),
          unit: 'MB/s',
          baseline: 'sink',
          detail: `${UPLOADS} x 100 MiB in ${run.seconds.toFixed(1)} s (staged, then copied into the file store and recorded); server CPU ${(cpu / ((UPLOADS * SIZE) / 1e6)).toFixed(4)} s/MB`,
        },
      );
    } finally {
      await keel.stop();
    }
    return figures;
  },
};

// The sink role: bare node:http writing every request body to a file, answering 200 at its end.
if (isMain(import.meta.url) && process.argv[2] === 'sink') {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-bench-sink-'));
  let n = 0;
  const server = http.createServer((req, res) => {
    const file = path.join(dir, String(n++));
    const out = createWriteStream(file);
    req.pipe(out);
    out.on('finish', () => {
      rmSync(file, { force: true });
      res.end('{}');
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${a.port}/` })}\n`);
  });
  process.on('SIGTERM', () => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

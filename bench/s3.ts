// The S3 endpoint's throughput (issue 17): PUT and GET of 1 MB and 64 MB objects through a real
// `keel serve` (SigV4 header auth with UNSIGNED-PAYLOAD, objects fsync'd into `<data dir>/s3`,
// metadata in SQLite), against a bare node:http server in its own process that streams the same
// bytes to a file (fsync'd too) and back. Figures are MB/s with the ratio to the bare server in the
// same run, and each server's CPU milliseconds per MB (from /proc), which a loaded machine disturbs less.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { cpuSeconds, isMain, note, startKeel, startRole, type Benchmark, type Figure } from './lib.js';

const FILE = fileURLToPath(import.meta.url);
const MB = 1024 * 1024;
const SIZES = [
  { name: '1mb', bytes: MB, count: 40 },
  { name: '64mb', bytes: 64 * MB, count: 4 },
];

interface Target {
  base: string;
  pid: number;
  sign?: SignatureV4;
}

async function send(t: Target, method: 'PUT' | 'GET', key: string, body?: Buffer): Promise<number> {
  const u = new URL(`${t.base}/bench/${key}`);
  let headers: Record<string, string> = { host: u.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...(body ? { 'content-length': String(body.length) } : {}) };
  if (t.sign) {
    const signed = await t.sign.sign({ method, protocol: 'http:', hostname: u.hostname, port: Number(u.port), path: u.pathname, query: {}, headers });
    headers = signed.headers as Record<string, string>;
  }
  return new Promise((resolve, reject) => {
    const req = http.request(u, { method, headers }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => (res.statusCode === 200 ? resolve(n) : reject(new Error(`${method} ${u} answered ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** MB/s of `count` sequential requests and the server's CPU ms per MB. */
async function measure(t: Target, method: 'PUT' | 'GET', size: { name: string; bytes: number; count: number }, body: Buffer): Promise<{ mbps: number; cpuMsPerMb: number }> {
  const cpu0 = cpuSeconds(t.pid) ?? 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < size.count; i++) {
    const n = await send(t, method, `${size.name}-${i}`, method === 'PUT' ? body : undefined);
    if (method === 'GET' && n !== size.bytes) throw new Error(`GET returned ${n} bytes, not ${size.bytes}`);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const mb = (size.bytes * size.count) / MB;
  const cpu = (cpuSeconds(t.pid) ?? 0) - cpu0;
  return { mbps: Math.round((mb / seconds) * 10) / 10, cpuMsPerMb: Math.round(((cpu * 1000) / mb) * 100) / 100 };
}

export const benchmark: Benchmark = {
  name: 's3',
  summary: 'S3 endpoint PUT/GET throughput of 1 MB and 64 MB objects vs bare node:http streaming the same bytes to and from a file',
  async run() {
    const keel = await startKeel();
    const bare = await startRole(FILE, 'bare', '', (m) => typeof m.port === 'number');
    try {
      const r = await fetch(`${keel.url}/api/rest/v2.10/json.php`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${keel.apiUuid}:${keel.apiSecret}`).toString('base64')}` },
        body: JSON.stringify({ cmd: 'storage.s3.credential.create', s3CredentialName: 'bench' }),
      });
      const cred = ((await r.json()) as { credential: { accessKey: string; secretKey: string } }).credential;
      const made = await fetch(`${keel.url}/api/rest/v2.10/json.php`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${keel.apiUuid}:${keel.apiSecret}`).toString('base64')}` },
        body: JSON.stringify({ cmd: 'storage.s3.bucket.create', s3BucketName: 'bench' }),
      });
      if (((await made.json()) as { code: string }).code !== 'OK') throw new Error('storage.s3.bucket.create failed');
      const sign = new SignatureV4({
        credentials: { accessKeyId: cred.accessKey, secretAccessKey: cred.secretKey },
        region: 'us-east-1',
        service: 's3',
        sha256: Hash.bind(null, 'sha256') as unknown as new () => InstanceType<typeof Hash>,
        uriEscapePath: false,
      });
      const k: Target = { base: keel.s3Url, pid: keel.pid, sign };
      const b: Target = { base: `http://127.0.0.1:${bare.lines.at(-1)!.port}`, pid: bare.process.pid! };
      const figures: Figure[] = [];
      for (const size of SIZES) {
        const body = Buffer.alloc(size.bytes, 0x5a);
        for (const method of ['PUT', 'GET'] as const) {
          const base = await measure(b, method, size, body);
          const got = await measure(k, method, size, body);
          const baseName = `bare-${method.toLowerCase()}-${size.name}`;
          figures.push({ name: baseName, value: base.mbps, unit: 'MB/s', detail: `server CPU ${base.cpuMsPerMb} ms/MB` });
          figures.push({ name: `s3-${method.toLowerCase()}-${size.name}`, value: got.mbps, unit: 'MB/s', baseline: baseName, detail: `server CPU ${got.cpuMsPerMb} ms/MB (bare ${base.cpuMsPerMb})` });
        }
      }
      note(
        `load average ${os
          .loadavg()
          .map((x) => x.toFixed(1))
          .join(' ')} on ${os.cpus().length} cores`,
      );
      return figures;
    } finally {
      await bare.stop();
      await keel.stop();
    }
  },
};

/** The baseline: PUT streams the body to a file (fsync'd, as Keel's store does), GET streams it back. */
function runBare(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-bench-s3-bare-'));
  process.on('SIGTERM', () => {
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(req.url ?? 'x'));
    if (req.method === 'PUT') {
      const fd = fs.openSync(file, 'w');
      const out = fs.createWriteStream('', { fd, autoClose: false });
      req.pipe(out);
      out.on('finish', () => {
        fs.fsync(fd, () => {
          fs.closeSync(fd);
          res.writeHead(200, { 'content-length': 0 });
          res.end();
        });
      });
      return;
    }
    const st = fs.statSync(file);
    res.writeHead(200, { 'content-length': st.size });
    fs.createReadStream(file).pipe(res);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`));
}

if (isMain(import.meta.url)) {
  const [role] = process.argv.slice(2);
  if (role === 'bare') runBare();
  else throw new Error(`bench/s3.ts: unknown role ${role}`);
}

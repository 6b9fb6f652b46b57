// DNS benchmarks against a real `keel serve`: queries per second measured by dnsperf against Keel and
// against NSD serving the same zone in the same run (dns-query), and record updates through the Infra
// API by 16 concurrent keep-alive clients, checked over DNS at the end (dns-update).
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { basicAuth, cpuSeconds, freePort, missingCommand, note, percentile, startKeel, withServers, withTempPostgres, type Benchmark, type Figure, type KeelServer, type Server } from './lib.js';

const ZONE = 'example.net';
const JSON_PHP = '/api/rest/v2.10/json.php';
const QUERY_SECONDS = 10;
const WARMUP_SECONDS = 2;
/** Keel is one process answering on one thread; NSD's best is several. Aim: 0.4 of one NSD server process. */
const QUERY_TARGET = 0.4;
const UPDATE_CLIENTS = 16;
const UPDATE_SECONDS = 10;
const UPDATE_TARGET = 1000;

// ---- the zone -------------------------------------------------------------------------------------

interface RecordSpec {
  lookup: string;
  type: string;
  data: string;
  ttl?: number;
}

/** A zone shaped like a small company's: mail, web, verification TXTs, a wildcard, a delegation, hosts. */
function zoneRecords(): RecordSpec[] {
  const r: RecordSpec[] = [
    { lookup: '', type: 'A', data: '192.0.2.1' },
    { lookup: '', type: 'AAAA', data: '2001:db8::1' },
    { lookup: '', type: 'MX', data: `10 mail.${ZONE}.` },
    { lookup: '', type: 'MX', data: `20 mail2.${ZONE}.` },
    { lookup: '', type: 'TXT', data: 'v=spf1 mx ip4:192.0.2.0/24 -all' },
    { lookup: '', type: 'TXT', data: 'google-site-verification=rXOxyZounnZasA8Z7oaD3c14JdjS9aKSWvsR1EbUSIQ' },
    { lookup: '', type: 'CAA', data: '0 issue "letsencrypt.org"' },
    { lookup: '', type: 'CAA', data: `0 iodef "mailto:security@${ZONE}"` },
    { lookup: 'www', type: 'A', data: '192.0.2.10' },
    { lookup: 'www', type: 'A', data: '192.0.2.11' },
    { lookup: 'www', type: 'AAAA', data: '2001:db8::10' },
    { lookup: 'mail', type: 'A', data: '192.0.2.20' },
    { lookup: 'mail', type: 'AAAA', data: '2001:db8::20' },
    { lookup: 'mail2', type: 'A', data: '192.0.2.21' },
    { lookup: 'smtp', type: 'CNAME', data: `mail.${ZONE}.` },
    { lookup: 'imap', type: 'CNAME', data: `mail.${ZONE}.` },
    { lookup: 'api', type: 'A', data: '192.0.2.30', ttl: 300 },
    { lookup: 'api', type: 'A', data: '192.0.2.31', ttl: 300 },
    { lookup: 'api', type: 'A', data: '192.0.2.32', ttl: 300 },
    { lookup: 'cdn', type: 'CNAME', data: `${ZONE}.cdn.cloudflare.net.` },
    { lookup: 'blog', type: 'CNAME', data: 'ghs.googlehosted.com.' },
    { lookup: '_dmarc', type: 'TXT', data: `v=DMARC1; p=reject; rua=mailto:dmarc@${ZONE}` },
    { lookup: '_acme-challenge', type: 'TXT', data: 'x8QmSy3gT4l0gFt9Ab3kY1pW2zv6cN7dRhJ5uE0oLqI' },
    { lookup: '_sip._tcp', type: 'SRV', data: `10 60 5060 sip.${ZONE}.` },
    { lookup: 'sip', type: 'A', data: '192.0.2.40' },
    { lookup: '*.apps', type: 'A', data: '192.0.2.50' },
    { lookup: 'sub', type: 'NS', data: `ns1.sub.${ZONE}.` },
    { lookup: 'ns1.sub', type: 'A', data: '192.0.2.60' },
  ];
  for (let i = 1; i <= 20; i++) r.push({ lookup: `host-${String(i).padStart(2, '0')}`, type: 'A', data: `198.51.100.${i}` });
  for (let i = 0; i < UPDATE_CLIENTS; i++) r.push({ lookup: dynLookup(i), type: 'A', data: `203.0.113.${i + 1}`, ttl: 60 });
  return r;
}

const dynLookup = (i: number) => `dyn-${String(i).padStart(2, '0')}`;

/** The question mix dnsperf loops over: mostly existing names, some NODATA, NXDOMAIN, wildcard, CNAME and referral. */
function queryMix(): string[] {
  const q: string[] = [];
  const add = (times: number, name: string, type: string) => {
    for (let i = 0; i < times; i++) q.push(`${name} ${type}`);
  };
  add(8, `www.${ZONE}`, 'A');
  add(4, `www.${ZONE}`, 'AAAA');
  add(4, ZONE, 'A');
  add(2, ZONE, 'AAAA');
  add(4, ZONE, 'MX');
  add(3, `mail.${ZONE}`, 'A');
  add(2, `smtp.${ZONE}`, 'A'); // CNAME inside the zone
  add(1, `cdn.${ZONE}`, 'A'); // CNAME out of the zone
  add(2, ZONE, 'TXT');
  add(2, `_dmarc.${ZONE}`, 'TXT');
  add(2, `api.${ZONE}`, 'A');
  add(1, `_sip._tcp.${ZONE}`, 'SRV');
  add(1, ZONE, 'CAA');
  add(1, ZONE, 'NS');
  add(1, ZONE, 'SOA');
  for (let i = 1; i <= 20; i++) add(1, `host-${String(i).padStart(2, '0')}.${ZONE}`, 'A');
  add(2, `www.${ZONE}`, 'MX'); // NODATA
  for (const w of ['shop', 'admin', 'eu-1', 'x.y']) add(2, `${w}.apps.${ZONE}`, 'A'); // wildcard
  add(1, `shop.apps.${ZONE}`, 'AAAA'); // wildcard NODATA
  add(1, `www.sub.${ZONE}`, 'A'); // referral
  for (let i = 0; i < 14; i++) add(1, `nx-${i}.${ZONE}`, i % 3 ? 'A' : 'AAAA'); // NXDOMAIN
  return q;
}

/** The zone through the API, as one `dns.domain.create`; answers the record ids by lookup (first of each). */
async function createZone(keel: KeelServer): Promise<Map<string, number>> {
  const res = await infraCall(keel, { cmd: 'dns.domain.create', name: ZONE, records: zoneRecords() });
  if (res.code !== 'OK') throw new Error(`dns.domain.create: ${JSON.stringify(res).slice(0, 400)}`);
  const list = await infraCall(keel, { cmd: 'dns.record.getall', name: ZONE, resWindow: 1000 });
  const data = (list.data ?? []) as { id: number; lookup: string }[];
  const ids = new Map<string, number>();
  for (const rec of data) if (!ids.has(rec.lookup)) ids.set(rec.lookup, rec.id);
  return ids;
}

async function infraCall(keel: KeelServer, body: Record<string, unknown>): Promise<{ code?: string; data?: unknown; message?: string }> {
  const res = await fetch(keel.url + JSON_PHP, {
    method: 'POST',
    headers: { authorization: basicAuth(keel.apiUuid, keel.apiSecret), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { code?: string };
}

// ---- DNS over UDP for the checks ------------------------------------------------------------------

interface DnsAt {
  host: string;
  port: number;
}

function query(at: DnsAt, name: string, type: string, timeoutMs = 1000): Promise<dnsPacket.DecodedPacket | null> {
  const socket = dgram.createSocket('udp4');
  const msg = dnsPacket.encode({ type: 'query', id: Math.floor(Math.random() * 65536), questions: [{ name, type: type as dnsPacket.RecordType }] });
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(null), timeoutMs);
    const done = (p: dnsPacket.DecodedPacket | null) => {
      clearTimeout(timer);
      socket.close();
      resolve(p);
    };
    socket.on('message', (reply) => done(dnsPacket.decode(reply)));
    socket.on('error', () => done(null));
    socket.send(msg, at.port, at.host);
  });
}

/** What a client sees, without what legitimately differs between servers: id, OPT, order, additional data. */
function comparable(p: dnsPacket.DecodedPacket): string {
  const norm = (rrs: dnsPacket.Answer[] | undefined) =>
    (rrs ?? [])
      .filter((r) => r.type !== 'OPT')
      .map((r) => JSON.stringify({ ...r, name: r.name.toLowerCase() }))
      .sort();
  // dns-packet's rcode lives in the low bits of `flags`.
  return JSON.stringify({ rcode: (p.flags ?? 0) & 0xf, aa: p.flag_aa, answers: norm(p.answers), authorities: norm(p.authorities) });
}

// ---- NSD ------------------------------------------------------------------------------------------

function zoneFileLine(r: RecordSpec): string {
  const owner = r.lookup === '' ? '@' : r.lookup;
  const data = r.type === 'TXT' ? `"${r.data.replace(/["\\]/g, '\\$&')}"` : r.data;
  return `${owner} ${r.ttl ?? 3600} IN ${r.type} ${data}`;
}

/** The zone file NSD serves: Keel's own SOA and apex NS (read from Keel), then the same records. */
async function zoneFile(keel: DnsAt): Promise<string> {
  const soaReply = await query(keel, ZONE, 'SOA');
  const nsReply = await query(keel, ZONE, 'NS');
  const soa = soaReply?.answers?.find((a) => a.type === 'SOA') as dnsPacket.SoaAnswer | undefined;
  const ns = (nsReply?.answers ?? []).filter((a) => a.type === 'NS') as dnsPacket.StringAnswer[];
  if (!soa || !ns.length) throw new Error(`Keel gave no SOA or NS for ${ZONE}`);
  const d = soa.data;
  return [
    `$ORIGIN ${ZONE}.`,
    `@ ${soa.ttl} IN SOA ${d.mname}. ${d.rname}. ${d.serial} ${d.refresh} ${d.retry} ${d.expire} ${d.minimum}`,
    ...ns.map((n) => `@ ${n.ttl} IN NS ${n.data}.`),
    ...zoneRecords().map(zoneFileLine),
    '',
  ].join('\n');
}

interface NsdServer extends Server {
  dns: DnsAt;
}

/** NSD in the foreground (-d) on a free loopback port, one server process, no rate limiting, all in a temp dir. */
async function startNsd(zoneText: string): Promise<NsdServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-bench-nsd-'));
  const port = await freePort();
  writeFileSync(path.join(dir, `${ZONE}.zone`), zoneText);
  writeFileSync(
    path.join(dir, 'nsd.conf'),
    `
server:
    ip-address: 127.0.0.1@${port}
    port: ${port}
    server-count: 1
    username: ""
    chroot: ""
    zonesdir: "${dir}"
    pidfile: "${dir}/nsd.pid"
    database: "${dir}/nsd.db"
    xfrdfile: "${dir}/xfrd.state"
    zonelistfile: "${dir}/zone.list"
    verbosity: 0
    rrl-ratelimit: 0
    rrl-whitelist-ratelimit: 0
    # Keel sends no NS set with positive answers (optional data); NSD then does the same work.
    minimal-responses: yes
remote-control:
    control-enable: no
zone:
    name: ${ZONE}
    zonefile: "${ZONE}.zone"
`,
  );
  const child = spawn('nsd', ['-d', '-c', path.join(dir, 'nsd.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (c) => (log += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const at = { host: '127.0.0.1', port };
  const deadline = Date.now() + 20_000;
  while (!(await query(at, ZONE, 'SOA', 300))?.answers?.length) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`nsd did not start serving ${ZONE}: ${log}`);
    }
  }
  return { url: `dns://127.0.0.1:${port}`, pid: child.pid!, dns: at, stop };
}

// ---- dnsperf --------------------------------------------------------------------------------------

interface Perf {
  qps: number;
  completed: number;
  lost: number;
  rcodes: string;
  cpuMicros?: number;
}

/**
 * dnsperf against one server, in one thread with 4 clients (so it takes one core and leaves the other
 * to the server), for `seconds`; with the server's CPU time per answered query.
 */
async function dnsperf(at: DnsAt, pid: number, file: string, seconds: number): Promise<Perf> {
  const cpuBefore = cpuSeconds(pid);
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('dnsperf', ['-s', at.host, '-p', String(at.port), '-d', file, '-T', '1', '-c', '4', '-q', '100', '-l', String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c) => (text += c));
    child.stderr.on('data', (c) => (text += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`dnsperf exited with ${code}: ${text}`))));
  });
  const cpuAfter = cpuSeconds(pid);
  const num = (label: RegExp) => Number(label.exec(out)?.[1] ?? NaN);
  const r: Perf = {
    qps: num(/Queries per second:\s+([\d.]+)/),
    completed: num(/Queries completed:\s+(\d+)/),
    lost: num(/Queries lost:\s+(\d+)/),
    rcodes: /Response codes:\s+(.*)/.exec(out)?.[1] ?? '',
  };
  if (!Number.isFinite(r.qps)) throw new Error(`could not read dnsperf's output: ${out}`);
  if (cpuBefore !== undefined && cpuAfter !== undefined && r.completed > 0) r.cpuMicros = Math.round((((cpuAfter - cpuBefore) * 1e6) / r.completed) * 10) / 10;
  return r;
}

function perfDetail(p: Perf): string {
  const cpu = p.cpuMicros !== undefined ? `server CPU ${p.cpuMicros} us/query, ` : '';
  return `${cpu}${p.completed} answered, ${p.lost} lost; ${p.rcodes}`;
}

const queryBenchmark: Benchmark = {
  name: 'dns-query',
  summary: `UDP queries/s measured by dnsperf: Keel vs NSD (one server process each) on the same zone, same run`,
  async run() {
    const noPerf = missingCommand('dnsperf', ['-h'], 'dnsperf');
    if (noPerf) {
      note(`skipped: ${noPerf}`);
      return [];
    }
    const noNsd = missingCommand('nsd', ['-v'], 'nsd');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-bench-dnsperf-'));
    const file = path.join(dir, 'queries.txt');
    const mix = queryMix();
    writeFileSync(file, mix.join('\n') + '\n');
    try {
      return await withServers([() => startKeel()], async (keel) => {
        await createZone(keel);
        const keelAt = keel.dns;
        let nsd: NsdServer | undefined;
        if (noNsd) note(`NSD figure skipped: ${noNsd}`);
        else nsd = await startNsd(await zoneFile(keelAt));
        try {
          note(`keel DNS at ${keelAt.host}:${keelAt.port}${nsd ? `, NSD 4 at ${nsd.dns.host}:${nsd.dns.port} (server-count 1, like Keel's single process; rrl off, minimal-responses)` : ''}`);
          note(
            `${mix.length} questions looped (${new Set(mix).size} distinct: names, NODATA, NXDOMAIN, wildcard, CNAME, referral); dnsperf -T 1 -c 4 -q 100, ${QUERY_SECONDS} s each after a ${WARMUP_SECONDS} s warm-up`,
          );
          if (nsd) {
            // Both must answer alike, or the ratio compares different work.
            const differ: string[] = [];
            for (const line of new Set(mix)) {
              const [name, type] = line.split(' ') as [string, string];
              const k = await query(keelAt, name, type);
              const n = await query(nsd.dns, name, type);
              if (!k || !n || comparable(k) !== comparable(n)) differ.push(`${line}: keel ${k ? comparable(k) : 'no answer'} / nsd ${n ? comparable(n) : 'no answer'}`);
            }
            if (differ.length) throw new Error(`Keel and NSD answer ${differ.length} questions differently, such as:\n${differ.slice(0, 3).join('\n')}`);
            note(`the ${new Set(mix).size} distinct questions get the same answers from both (rcode, AA, answer and authority sections)`);
          }
          // The baseline first, then Keel, each warmed up right before its measurement.
          let n: Perf | undefined;
          if (nsd) {
            await dnsperf(nsd.dns, nsd.pid, file, WARMUP_SECONDS);
            n = await dnsperf(nsd.dns, nsd.pid, file, QUERY_SECONDS);
            note(`nsd  ${Math.round(n.qps)} q/s`);
          }
          await dnsperf(keelAt, keel.pid, file, WARMUP_SECONDS);
          const k = await dnsperf(keelAt, keel.pid, file, QUERY_SECONDS);
          note(`keel ${Math.round(k.qps)} q/s`);
          const figures: Figure[] = [];
          if (n) figures.push({ name: 'nsd', value: Math.round(n.qps), unit: 'q/s', detail: perfDetail(n) });
          figures.push({ name: 'keel', value: Math.round(k.qps), unit: 'q/s', baseline: n ? 'nsd' : undefined, target: n ? QUERY_TARGET : undefined, detail: perfDetail(k) });
          // A fast server can be bounded by dnsperf (one core) rather than by itself, which flatters the
          // slower one; queries per CPU-second of the server depends neither on that nor on neighbours.
          if (n?.cpuMicros && k.cpuMicros) {
            figures.push({ name: 'nsd-cpu', value: Math.round(1e6 / n.cpuMicros), unit: 'q/CPU-s' });
            figures.push({ name: 'keel-cpu', value: Math.round(1e6 / k.cpuMicros), unit: 'q/CPU-s', baseline: 'nsd-cpu', target: QUERY_TARGET });
          }
          return figures;
        } finally {
          await nsd?.stop();
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

// ---- record updates through the API ----------------------------------------------------------------

interface UpdateRun {
  updates: number;
  failures: number;
  firstFailure?: string;
  seconds: number;
  latencies: number[];
  last: string[];
}

/**
 * `clients` loops, each changing its own A record with `dns.record.update` (flat form: id and the new
 * data) over keep-alive HTTP (fetch keeps connections alive), as fast as answers come back.
 */
async function updateLoad(keel: KeelServer, ids: number[], seconds: number, round: number): Promise<UpdateRun> {
  const authorization = basicAuth(keel.apiUuid, keel.apiSecret);
  const run: UpdateRun = { updates: 0, failures: 0, seconds, latencies: [], last: ids.map(() => '') };
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    ids.map(async (id, client) => {
      for (let n = 0; performance.now() < end; n++) {
        const value = `10.${round * 16 + client}.${(n >> 8) & 255}.${n & 255}`;
        const t0 = performance.now();
        let failure: string | undefined;
        try {
          const res = await fetch(keel.url + JSON_PHP, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ cmd: 'dns.record.update', id, data: value }),
          });
          const text = await res.text();
          if (!res.ok) failure = `HTTP ${res.status} ${text.slice(0, 200)}`;
          else if (!text.includes('"code":"OK"')) failure = text.slice(0, 200);
        } catch (err) {
          failure = (err as Error).message;
        }
        run.latencies.push(performance.now() - t0);
        if (failure) {
          run.failures++;
          run.firstFailure ??= failure;
        } else {
          run.updates++;
          run.last[client] = value;
        }
      }
    }),
  );
  run.seconds = (performance.now() - started) / 1000;
  run.latencies.sort((a, b) => a - b);
  return run;
}

/** Updates on one engine: a warm-up, the measurement, then every client's record asked over DNS. */
async function updateFigures(engine: string, keel: KeelServer): Promise<Figure[]> {
  const byLookup = await createZone(keel);
  const ids = Array.from({ length: UPDATE_CLIENTS }, (_, i) => byLookup.get(dynLookup(i))!);
  await updateLoad(keel, ids, WARMUP_SECONDS, 0);
  const cpuBefore = cpuSeconds(keel.pid);
  const r = await updateLoad(keel, ids, UPDATE_SECONDS, 1);
  const cpuAfter = cpuSeconds(keel.pid);
  // The API promises the DNS server answers the new state as soon as the call returns.
  let served = 0;
  const wrong: string[] = [];
  for (let i = 0; i < UPDATE_CLIENTS; i++) {
    const name = `${dynLookup(i)}.${ZONE}`;
    const reply = await query(keel.dns, name, 'A');
    const got = (reply?.answers ?? []).filter((a) => a.type === 'A').map((a) => (a as dnsPacket.StringAnswer).data);
    if (got.length === 1 && got[0] === r.last[i]) served++;
    else wrong.push(`${name}: DNS ${got.join(',') || 'nothing'}, last update ${r.last[i]}`);
  }
  if (wrong.length) throw new Error(`${engine}: DNS does not serve the last update:\n${wrong.join('\n')}`);
  const rate = Math.round(r.updates / r.seconds);
  const cpu = cpuBefore !== undefined && cpuAfter !== undefined && r.updates > 0 ? `, server CPU ${Math.round(((cpuAfter - cpuBefore) * 1e6) / r.updates)} us/update` : '';
  note(
    `${engine}: ${rate} updates/s, ${r.failures} failed, p50 ${percentile(r.latencies, 50).toFixed(2)} ms, p99 ${percentile(r.latencies, 99).toFixed(2)} ms; DNS serves the last value of all ${served} records`,
  );
  if (r.firstFailure) note(`${engine}: first failure: ${r.firstFailure}`);
  return [
    {
      name: engine,
      value: rate,
      unit: 'updates/s',
      atLeast: UPDATE_TARGET,
      detail: `p50 ${percentile(r.latencies, 50).toFixed(2)} ms, p99 ${percentile(r.latencies, 99).toFixed(2)} ms${cpu}, ${r.updates} updates, DNS answered the last value of ${served}/${UPDATE_CLIENTS} records`,
    },
    { name: `${engine}-failed`, value: r.failures, unit: 'failed', atMost: 0, detail: r.firstFailure ? `first: ${r.firstFailure}` : undefined },
  ];
}

const updateBenchmark: Benchmark = {
  name: 'dns-update',
  summary: `dns.record.update through the API by ${UPDATE_CLIENTS} concurrent keep-alive clients (SQLite, then PostgreSQL if reachable), checked over DNS`,
  async run() {
    note(`${UPDATE_CLIENTS} clients, each updating its own A record in a ${zoneRecords().length}-record zone, ${UPDATE_SECONDS} s after a ${WARMUP_SECONDS} s warm-up`);
    const figures = await withServers([() => startKeel()], (keel) => updateFigures('sqlite', keel));
    const pg = await withTempPostgres((databaseUrl) => withServers([() => startKeel({ databaseUrl })], (keel) => updateFigures('postgres', keel)));
    if ('skipped' in pg) note(`postgres skipped: ${pg.skipped}`);
    else figures.push(...pg.result);
    return figures;
  },
};

export const benchmarks: Benchmark[] = [queryBenchmark, updateBenchmark];

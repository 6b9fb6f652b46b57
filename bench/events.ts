// Long-poll delivery against a real `keel serve` (SQLite): 10,000 event queues with a GET /events
// parked on each, held by separate poll processes; messages sent one at a time to a channel that
// 1,000 of those queues receive. Measures send-to-answer latency at each receiving poll and the
// server's RSS with every poll parked and after the messages.
// Run directly (`node --import tsx bench/events.ts polls SPEC_FILE`), this file is a poll process.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  basicAuth,
  chatCall,
  cpuSeconds,
  createChatUsers,
  ensureFdLimit,
  fdLimit,
  inParallel,
  isMain,
  note,
  openFiles,
  percentile,
  rssMiB,
  startKeel,
  startRole,
  withServers,
  type Benchmark,
  type Child,
  type ChatUser,
  type Figure,
  type KeelServer,
} from './lib.js';

const FILE = fileURLToPath(import.meta.url);
const CHANNEL = 'bench-events';
/** Users subscribed to the channel, each with one queue that receives its messages. */
const RECEIVERS = 1_000;
/** Queues on the subscribed users filtered by event_types (`typing`, never sent here): offered each message, take none. */
const FILTERED_PER_RECEIVER = 4;
/** Users not subscribed, each with several message queues: never offered the channel's messages. */
const OUTSIDERS = 100;
const QUEUES_PER_OUTSIDER = 50;
const QUEUES = RECEIVERS * (1 + FILTERED_PER_RECEIVER) + OUTSIDERS * QUEUES_PER_OUTSIDER;
/** Poll processes; the polls are dealt out among them, receivers evenly. KEEL_BENCH_EVENTS_POLLERS changes it. */
const POLLERS = Number(process.env.KEEL_BENCH_EVENTS_POLLERS ?? 2);
const MESSAGES = 20;
/**
 * Unmeasured messages sent first. Right after start V8 is still compiling node:http's answer and
 * request paths: the first few messages' answer passes cost two to three times the CPU of later ones
 * (per-message p99 around 60 ms for the first four, 20-45 ms after). Like the HTTP benchmarks'
 * warm-up, these show the steady state; their figures are printed (`cold p99`), not hidden.
 */
const WARMUP = 5;
/** Pause between one message's last delivery and the next send. */
const SPACING_MS = 100;
/** A message not delivered everywhere by then counts as missing. */
const DELIVERY_TIMEOUT_MS = 5_000;
const P99_TARGET_MS = 50;
const RSS_TARGET_MIB = 300;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes. */
const wallMs = () => performance.timeOrigin + performance.now();

interface PollSpec {
  chatUrl: string;
  queues: { id: string; authorization: string; receives: boolean }[];
}

/** From a poll process to the benchmark. */
type PollerMessage =
  | { parked: number }
  | { delivered: number; count: number }
  | { report: { times: Record<number, number[]>; unexpected: number; errors: number; answers: number; heartbeats: number } };

export const benchmark: Benchmark = {
  name: 'events',
  summary: `${QUEUES.toLocaleString('en')} parked GET /events polls, ${MESSAGES} channel messages to ${RECEIVERS.toLocaleString('en')} of them: send-to-answer latency, RSS`,
  async run() {
    note(`open-files limit here ${JSON.stringify(fdLimit(process.pid) ?? 'unknown')} (ulimit -n); each side holds ${QUEUES.toLocaleString('en')} sockets`);
    return withServers([startKeel], async (keel) => {
      note(ensureFdLimit(keel.pid, QUEUES + 1_000, 'keel serve'));
      const owner = basicAuth(keel.chat.email, keel.chat.apiKey);
      const rssStart = rssMiB(keel.pid);
      const started = Date.now();
      const receivers = await createChatUsers(keel, 'member', RECEIVERS, 8);
      const outsiders = await createChatUsers(keel, 'outsider', OUTSIDERS, 8);
      // Each user costs two password hashes (argon2, memory-hard), whose allocations stay in the RSS.
      note(`${RECEIVERS + OUTSIDERS} users created in ${((Date.now() - started) / 1000).toFixed(1)} s; server RSS ${rssStart ?? '?'} MiB at start, ${rssMiB(keel.pid) ?? '?'} MiB now`);
      return measure(keel, owner, receivers, outsiders);
    });
  },
};

/**
 * The measurement proper, on a server whose users exist: `receivers` are subscribed to the channel
 * here, the queues registered and the polls parked.
 */
export async function measure(keel: KeelServer, owner: string, receivers: ChatUser[], outsiders: ChatUser[]): Promise<Figure[]> {
  await chatCall(keel.chat.url, owner, '/users/me/subscriptions', {
    subscriptions: JSON.stringify([{ name: CHANNEL }]),
    principals: JSON.stringify(receivers.map((u) => u.id)),
  });

  let started = Date.now();
  const wanted: { user: ChatUser; eventTypes: string[]; receives: boolean }[] = [];
  for (const user of receivers) {
    wanted.push({ user, eventTypes: ['message'], receives: true });
    for (let i = 0; i < FILTERED_PER_RECEIVER; i++) wanted.push({ user, eventTypes: ['typing'], receives: false });
  }
  for (const user of outsiders) for (let i = 0; i < QUEUES_PER_OUTSIDER; i++) wanted.push({ user, eventTypes: ['message'], receives: false });
  const queues = await inParallel(wanted, 16, async (w) => {
    const r = await chatCall(keel.chat.url, w.user.authorization, '/register', { event_types: JSON.stringify(w.eventTypes) });
    return { id: String(r.queue_id), authorization: w.user.authorization, receives: w.receives };
  });
  note(`${queues.length.toLocaleString('en')} queues registered in ${((Date.now() - started) / 1000).toFixed(1)} s; server RSS ${rssMiB(keel.pid)} MiB`);

  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-bench-events-'));
  const pollers: Child[] = [];
  try {
    started = Date.now();
    const fdsBefore = openFiles(keel.pid) ?? 0;
    // Deal the queues out so that each poll process holds its share of receivers.
    const slices: PollSpec[] = Array.from({ length: POLLERS }, () => ({ chatUrl: keel.chat.url, queues: [] }));
    queues.forEach((q, i) => slices[i % POLLERS]!.queues.push(q));
    for (const [i, slice] of slices.entries()) {
      const file = path.join(dir, `polls-${i}.json`);
      writeFileSync(file, JSON.stringify(slice));
      const c = await startRole(FILE, 'polls', file, (m) => m.started === true);
      note(ensureFdLimit(c.process.pid!, slice.queues.length + 1_000, `poll process ${i}`));
      c.process.send!('park');
      pollers.push(c);
    }
    await Promise.all(pollers.map((c) => nextMessage(c, (m) => 'parked' in m, 120_000)));
    // Every poll is written; wait for the server to hold all their sockets, then let it settle.
    const deadline = Date.now() + 60_000;
    while ((openFiles(keel.pid) ?? Infinity) < fdsBefore + QUEUES && Date.now() < deadline) await sleep(200);
    await sleep(2_000);
    const fds = openFiles(keel.pid);
    const rssParked = rssMiB(keel.pid);
    note(
      `${QUEUES.toLocaleString('en')} polls parked from ${POLLERS} processes in ${((Date.now() - started) / 1000).toFixed(1)} s; server holds ${fds ?? '?'} open files, RSS ${rssParked ?? '?'} MiB`,
    );

    // WARMUP unmeasured messages first: the code paths warm, and every receiver is shown to be parked.
    const expected = slices.map((s) => s.queues.filter((q) => q.receives).length);
    const sendTimes: number[] = [];
    const sendMs: number[] = [];
    const missing: string[] = [];
    let cpuBefore: number | undefined;
    let clientCpuBefore: number | undefined;
    const clientCpu = () => pollers.reduce((n, c) => n + (cpuSeconds(c.process.pid!) ?? NaN), 0);
    for (let i = 0; i < WARMUP + MESSAGES; i++) {
      // Server CPU from the first measured send to the last one's re-parked polls (the spacing
      // included); the poll processes' own CPU over the same span, to tell whether they weigh.
      if (i === WARMUP) {
        cpuBefore = cpuSeconds(keel.pid);
        clientCpuBefore = clientCpu();
      }
      const done = Promise.all(pollers.map((c) => nextMessage(c, (m) => 'delivered' in m && m.delivered === i, DELIVERY_TIMEOUT_MS).catch(() => undefined)));
      const t0 = wallMs();
      sendTimes[i] = t0;
      await chatCall(keel.chat.url, owner, '/messages', { type: 'stream', to: CHANNEL, topic: 'latency', content: `bench-${i} delivery check` });
      sendMs.push(wallMs() - t0);
      const got = await done;
      const count = got.reduce((n, m) => n + (m && 'delivered' in m ? m.count : 0), 0);
      if (got.some((m) => !m)) missing.push(`message ${i}: ${expected.reduce((a, b) => a + b, 0) - count} polls never answered`);
      await sleep(SPACING_MS);
    }
    const cpuAfter = cpuSeconds(keel.pid);
    const clientCpuMs = clientCpuBefore !== undefined ? Math.round(((clientCpu() - clientCpuBefore) * 1000) / MESSAGES) : NaN;
    const cpuPerMessage =
      cpuBefore !== undefined && cpuAfter !== undefined
        ? `, server CPU ${Math.round(((cpuAfter - cpuBefore) * 1000) / MESSAGES)} ms per message (1,000 answers and re-polls), poll processes ${clientCpuMs} ms`
        : '';
    const rssAfter = rssMiB(keel.pid);

    const reports = await Promise.all(
      pollers.map(async (c) => {
        const r = nextMessage(c, (m) => 'report' in m, 10_000);
        c.process.send!('report');
        return ((await r) as Extract<PollerMessage, { report: unknown }>).report;
      }),
    );
    const latencies: number[] = [];
    // From the first answer carrying a message to each other one: the fan-out alone, without the
    // send's own work before its commit (parsing, rendering, storing), which the sender waits for anyway.
    const spreads: number[] = [];
    const firstAnswers: number[] = [];
    const perMessageP99: number[] = [];
    let delivered = 0;
    const coldP99: number[] = [];
    for (let i = 0; i < WARMUP; i++) {
      coldP99.push(
        percentile(
          reports
            .flatMap((r) => r.times[i] ?? [])
            .map((t) => t - sendTimes[i]!)
            .sort((a, b) => a - b),
          99,
        ),
      );
    }
    for (let i = WARMUP; i < WARMUP + MESSAGES; i++) {
      const arrivals = reports.flatMap((r) => r.times[i] ?? []);
      const first = Math.min(...arrivals);
      const mine = arrivals.map((t) => t - sendTimes[i]!);
      delivered += mine.length;
      latencies.push(...mine);
      spreads.push(...arrivals.map((t) => t - first));
      firstAnswers.push(first - sendTimes[i]!);
      perMessageP99.push(
        percentile(
          mine.sort((a, b) => a - b),
          99,
        ),
      );
    }
    latencies.sort((a, b) => a - b);
    spreads.sort((a, b) => a - b);
    firstAnswers.sort((a, b) => a - b);
    const unexpected = reports.reduce((n, r) => n + r.unexpected, 0);
    const errors = reports.reduce((n, r) => n + r.errors, 0);
    const heartbeats = reports.reduce((n, r) => n + r.heartbeats, 0);
    const want = MESSAGES * RECEIVERS;
    note(`cold p99 (ms) of the ${WARMUP} warm-up messages, not counted: ${coldP99.join(' ')}`);
    note(`per-message p99 (ms): ${perMessageP99.join(' ')}`);
    note(
      `POST /messages answered in p50 ${percentile(
        sendMs.sort((a, b) => a - b),
        50,
      ).toFixed(1)} ms; ${heartbeats} heartbeats, ${errors} poll errors`,
    );
    note(`send to first answer p50 ${percentile(firstAnswers, 50)} ms; first answer to each other one (the fan-out) p50 ${percentile(spreads, 50)} ms, p99 ${percentile(spreads, 99)} ms`);
    if (missing.length || delivered !== want) throw new Error(`deliveries missing (${delivered} of ${want}): ${missing.join('; ')}`);
    if (unexpected) throw new Error(`${unexpected} deliveries reached queues that must not receive the channel's messages`);
    if (errors) throw new Error(`${errors} polls failed (socket errors or non-200 answers)`);
    const rounded = (ms: number) => Math.round(ms * 100) / 100;
    return [
      {
        name: 'p50',
        value: percentile(latencies, 50),
        unit: 'ms',
        detail: `send to answer, ${delivered.toLocaleString('en')} deliveries (${MESSAGES} x ${RECEIVERS}), max ${rounded(latencies.at(-1) ?? 0)} ms`,
      },
      { name: 'p99', value: percentile(latencies, 99), unit: 'ms', atMost: P99_TARGET_MS, detail: `${QUEUES.toLocaleString('en')} polls parked${cpuPerMessage}` },
      { name: 'delivered', value: delivered, unit: 'polls', atLeast: want, detail: `every receiving poll answered with each message, none elsewhere` },
      ...(rssParked !== undefined ? [{ name: 'rss', value: rssParked, unit: 'MiB', atMost: RSS_TARGET_MIB, detail: `server RSS with ${QUEUES.toLocaleString('en')} polls parked` }] : []),
      ...(rssAfter !== undefined ? [{ name: 'rss-after', value: rssAfter, unit: 'MiB', atMost: RSS_TARGET_MIB, detail: `after the ${WARMUP + MESSAGES} messages` }] : []),
    ] satisfies Figure[];
  } finally {
    await Promise.all(pollers.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The next IPC message from a poll process that `accept`s, or an error after `timeoutMs`. */
function nextMessage(c: Child, accept: (m: PollerMessage) => boolean, timeoutMs: number): Promise<PollerMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: PollerMessage) => {
      if (!accept(m)) return;
      clearTimeout(timer);
      c.process.off('message', onMessage);
      resolve(m);
    };
    const timer = setTimeout(() => {
      c.process.off('message', onMessage);
      reject(new Error(`poll process ${c.process.pid}: no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    c.process.on('message', onMessage);
  });
}

// ---- the poll process ----------------------------------------------------------------------------

/** One answer read off a socket, timed on arrival and looked at after the burst it came in. */
interface Arrival {
  q: PollSpec['queues'][number];
  status: number;
  body: Buffer;
  at: number;
  lastEventId: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * Parks one GET /events per queue over keep-alive sockets (one each), re-parks each poll with its
 * last_event_id as soon as it is answered, and notes when each answer carrying `bench-N` arrived.
 * The client is raw HTTP/1.1 on net sockets (requests written whole, answers framed by their
 * Content-Length), so that its own cost per answer stays small next to the server's on a shared
 * machine: an answer is timed when its last byte is read, and parsed only once the burst it
 * arrived in has been read (node:http's client costs several times as much per request).
 */
function runPolls(specFile: string): void {
  const spec = JSON.parse(readFileSync(specFile, 'utf8')) as PollSpec;
  const url = new URL(spec.chatUrl);
  const times: Record<number, number[]> = {};
  const receiving = spec.queues.filter((q) => q.receives).length;
  let unexpected = 0;
  let errors = 0;
  let answers = 0;
  let heartbeats = 0;
  let parked = 0;
  const send = (m: PollerMessage) => process.send!(m);
  const arrived: Arrival[] = [];

  /** Parses what arrived in this turn of the event loop, then re-parks every answered poll. */
  function afterBurst(): void {
    const batch = arrived.splice(0);
    const again: (() => void)[] = [];
    for (const a of batch) {
      answers++;
      let next = a.lastEventId;
      if (a.status !== 200) {
        errors++;
      } else {
        const body = JSON.parse(a.body.toString('utf8')) as { events: { id: number; type: string; message?: { content: string } }[] };
        for (const e of body.events) {
          next = Math.max(next, e.id);
          if (e.type === 'heartbeat') heartbeats++;
          const n = e.type === 'message' ? /bench-(\d+)/.exec(e.message?.content ?? '') : null;
          if (!n) continue;
          if (!a.q.receives) {
            unexpected++;
            continue;
          }
          const i = Number(n[1]);
          const list = (times[i] ??= []);
          list.push(a.at);
          if (list.length === receiving) send({ delivered: i, count: list.length });
        }
      }
      const conn = connections.get(a.q)!;
      again.push(() => conn.poll(next));
    }
    for (const poll of again) poll();
  }

  class Connection {
    private socket!: Socket;
    private chunks: Buffer[] = [];
    private lastEventId = -1;
    private readonly q: PollSpec['queues'][number];
    constructor(q: PollSpec['queues'][number]) {
      this.q = q;
      this.connect();
    }

    private connect(): void {
      this.chunks = [];
      this.socket = net.connect({ host: url.hostname, port: Number(url.port) });
      this.socket.setNoDelay(true);
      this.socket.on('data', (c: Buffer) => this.onData(c));
      this.socket.on('error', () => {});
      this.socket.on('close', () => {
        errors++;
        setTimeout(() => {
          this.connect();
          this.poll(this.lastEventId);
        }, 100);
      });
    }

    poll(lastEventId: number, onWritten?: () => void): void {
      this.lastEventId = lastEventId;
      this.socket.write(`GET /api/v1/events?queue_id=${this.q.id}&last_event_id=${lastEventId} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${this.q.authorization}\r\n\r\n`, onWritten);
    }

    private onData(c: Buffer): void {
      this.chunks.push(c);
      const buf = this.chunks.length === 1 ? c : Buffer.concat(this.chunks);
      const headEnd = buf.indexOf(HEADER_END);
      if (headEnd < 0) return;
      const head = buf.subarray(0, headEnd).toString('latin1');
      const size = /\r\ncontent-length: *(\d+)/i.exec(head);
      // The server frames every answer by its length; anything else is a failure of the benchmark.
      if (!size) throw new Error(`an answer without Content-Length: ${head}`);
      const end = headEnd + HEADER_END.length + Number(size[1]);
      if (buf.length < end) {
        this.chunks = [buf];
        return;
      }
      const at = wallMs();
      if (buf.length > end) throw new Error('bytes after an answer to the only request in flight');
      this.chunks = [];
      if (!arrived.length) setImmediate(afterBurst);
      arrived.push({ q: this.q, status: Number(head.slice(9, 12)), body: buf.subarray(headEnd + HEADER_END.length, end), at, lastEventId: this.lastEventId });
    }
  }
  const connections = new Map<PollSpec['queues'][number], Connection>();

  process.on('message', (cmd: string) => {
    if (cmd === 'park') {
      // In waves, so the connection burst stays within the server's listen backlog.
      const WAVE = 500;
      let i = 0;
      const wave = () => {
        const batch = spec.queues.slice(i, i + WAVE);
        i += batch.length;
        let left = batch.length;
        for (const q of batch) {
          const conn = new Connection(q);
          connections.set(q, conn);
          conn.poll(-1, () => {
            parked++;
            if (--left === 0) {
              if (i < spec.queues.length) wave();
              else send({ parked });
            }
          });
        }
      };
      wave();
    } else if (cmd === 'report') {
      send({ report: { times, unexpected, errors, answers, heartbeats } });
    }
  });
  process.stdout.write(JSON.stringify({ started: true }) + '\n');
}

if (isMain(import.meta.url)) {
  const [role, arg] = process.argv.slice(2);
  if (role === 'polls') runPolls(arg!);
  else throw new Error(`bench/events.ts: unknown role ${role}`);
}

// Scheduled messages: 1,000 due in the same second on a real `keel serve` (SQLite; PostgreSQL too
// when reachable). Reports the delivery lateness (from the due second to the message event reaching
// a long-polling client, an upper bound of the commit: p50/p99/max), the scheduler's messages/s
// against the same server's POST /messages sent one after another (the normal send path, the
// baseline), and the server's CPU time per delivered message.
import { basicAuth, chatCall, cpuSeconds, note, percentile, startKeel, withServers, withTempPostgres, inParallel, type Benchmark, type Figure, type KeelServer } from './lib.js';

const COUNT = 1000;
const CHANNEL = 'scheduled bench';

async function longPoll(url: string, auth: string, queueId: string, lastEventId: number): Promise<{ id: number; type: string; message?: { content: string } }[]> {
  const q = new URLSearchParams({ queue_id: queueId, last_event_id: String(lastEventId) });
  const res = await fetch(`${url}/api/v1/events?${q}`, { headers: { authorization: auth } });
  const body = (await res.json()) as { events?: { id: number; type: string; message?: { content: string } }[] };
  if (!res.ok || !body.events) throw new Error(`GET /events: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return body.events;
}

async function measure(keel: KeelServer, label: string): Promise<Figure[]> {
  const auth = basicAuth(keel.chat.email, keel.chat.apiKey);
  const url = keel.chat.url;
  await chatCall(url, auth, '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: CHANNEL }]) });
  const found = await fetch(`${url}/api/v1/get_stream_id?stream=${encodeURIComponent(CHANNEL)}`, { headers: { authorization: auth } });
  const channel = (await found.json()) as { stream_id: number };

  // Baseline: the normal send path, one message after another.
  let t0 = performance.now();
  for (let i = 0; i < 300; i++) await chatCall(url, auth, '/messages', { type: 'stream', to: String(channel.stream_id), topic: 'direct sends', content: `d${i}` });
  const sendRate = Math.round(300 / ((performance.now() - t0) / 1000));

  // 1,000 scheduled for one second, far enough ahead for the scheduling requests to finish first.
  const due = Math.floor(Date.now() / 1000) + 25;
  t0 = performance.now();
  await inParallel(
    Array.from({ length: COUNT }, (_, i) => i),
    16,
    (i) =>
      chatCall(url, auth, '/scheduled_messages', {
        type: 'stream',
        to: String(channel.stream_id),
        topic: 'due together',
        content: `s${i}`,
        scheduled_delivery_timestamp: String(due),
      }),
  );
  const scheduled = performance.now() - t0;
  if (Date.now() >= due * 1000) throw new Error(`scheduling ${COUNT} took ${(scheduled / 1000).toFixed(1)} s: past the due time`);
  note(`[${label}] ${COUNT} scheduled in ${(scheduled / 1000).toFixed(1)} s; due in ${((due * 1000 - Date.now()) / 1000).toFixed(1)} s`);

  const reg = await chatCall(url, auth, '/register', { event_types: JSON.stringify(['message']) });
  const queueId = String(reg.queue_id);
  let last = -1;
  const arrivals: number[] = [];
  const cpuBefore = cpuSeconds(keel.pid);
  while (arrivals.length < COUNT) {
    const events = await longPoll(url, auth, queueId, last);
    const at = Date.now();
    for (const e of events) {
      last = Math.max(last, e.id);
      if (e.type === 'message' && e.message?.content.startsWith('s')) arrivals.push(at);
    }
  }
  const cpuAfter = cpuSeconds(keel.pid);
  const dueMs = due * 1000;
  const lateness = arrivals.map((a) => a - dueMs).sort((a, b) => a - b);
  const spanS = (Math.max(...arrivals) - dueMs) / 1000;
  const rate = Math.round(COUNT / spanS);
  const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1000) / COUNT : undefined;
  note(`[${label}] lateness p50 ${percentile(lateness, 50)} ms, p99 ${percentile(lateness, 99)} ms, max ${lateness.at(-1)} ms; ${rate} messages/s; POST /messages ${sendRate}/s`);
  const p = label === 'sqlite' ? '' : 'pg-';
  return [
    { name: `${p}send`, value: sendRate, unit: 'msg/s', detail: 'POST /messages one after another (baseline)' },
    { name: `${p}sched`, value: rate, unit: 'msg/s', baseline: `${p}send`, detail: `${COUNT} due in one second, delivered by the scheduler` },
    { name: `${p}late50`, value: percentile(lateness, 50), unit: 'ms', detail: 'due second to message event, p50' },
    { name: `${p}late99`, value: percentile(lateness, 99), unit: 'ms', detail: 'p99' },
    { name: `${p}lateMax`, value: lateness.at(-1) ?? 0, unit: 'ms', detail: 'max' },
    ...(cpuMs !== undefined ? [{ name: `${p}cpu`, value: Math.round(cpuMs * 100) / 100, unit: 'ms CPU/msg', detail: 'server CPU per delivery (with the poller answers)' }] : []),
  ];
}

export const benchmark: Benchmark = {
  name: 'scheduled',
  summary: `${COUNT} scheduled messages due in the same second: delivery lateness p50/p99/max and messages/s (against POST /messages)`,
  async run() {
    const figures = await withServers([() => startKeel()], (keel) => measure(keel, 'sqlite'));
    const pg = await withTempPostgres((databaseUrl) => withServers([() => startKeel({ databaseUrl })], (keel) => measure(keel, 'postgres')));
    if ('skipped' in pg) note(`PostgreSQL skipped: ${pg.skipped}`);
    else figures.push(...pg.result);
    return figures;
  },
};

// Requests per second of an authenticated read (`apiuser.get`) through the Infra HTTP stack, command
// style and REST, against bare node:http measured in the same run: the cost of the HTTP layer (plain node:http), credentials,
// the API key lookup, kysely + SQLite and the envelope, as a ratio that survives a noisy machine.
import {
  BARE_BODY,
  basicAuth,
  DEFAULT_LOAD,
  describeLoad,
  load,
  note,
  startBareServer,
  startKeel,
  withServers,
  type Benchmark,
  type Figure,
  type LoadResult,
  type LoadSpec,
  type Server,
} from './lib.js';

const API = '/api/rest/v2.10';
// Ratio to bare node:http we aim for: the design budget for fastify alone was 0.72x, so half leaves
// room for one authenticated indexed read per request.
const TARGET = 0.5;
const OK = '"code":"OK"';

/**
 * The three loads take turns, ROUNDS times, rather than one long run each: the machine's speed drifts
 * from one minute to the next (other tenants of the host), and a drift during one long run would tilt
 * the ratio either way. Each figure pools its rounds (all its requests over all its seconds, the same
 * seconds for each); the per-round ratios are printed too, to show the spread.
 */
const ROUNDS = 3;
const ROUND_SECONDS = 4;

/** Several loads of one endpoint as one result: requests pooled, the median p50, the worst p99, CPU per request weighted by requests. */
function pooled(runs: LoadResult[]): LoadResult {
  const total = runs.reduce((n, r) => n + r.total, 0);
  const p50s = runs.map((r) => r.p50).sort((a, b) => a - b);
  const cpu = runs.every((r) => r.cpuMicros !== undefined) && total > 0 ? Math.round(runs.reduce((n, r) => n + r.cpuMicros! * r.total, 0) / total) : undefined;
  return {
    rps: runs.reduce((n, r) => n + r.rps, 0) / runs.length,
    total,
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...runs.map((r) => r.p99)),
    cpuMicros: cpu,
    bad: { non2xx: 0, errors: 0, timeouts: 0, mismatches: 0 },
  };
}

function figure(name: string, r: LoadResult, baseline?: string): Figure {
  return { name, value: Math.round(r.rps), unit: 'req/s', baseline, target: baseline ? TARGET : undefined, detail: describeLoad(r) };
}

export const benchmark: Benchmark = {
  name: 'infra-http',
  summary: 'apiuser.get over HTTP Basic, command style and REST, vs bare node:http',
  async run() {
    return withServers([startBareServer, startKeel], async (bare, keel) => {
      const authorization = basicAuth(keel.apiUuid, keel.apiSecret);
      // The first-run key's numeric id, so both styles read the same row by primary key.
      const me = await fetch(`${keel.url}${API}/apiusers/${keel.apiUuid}`, { headers: { authorization } });
      const id = ((await me.json()) as { data?: { id?: number } }).data?.id;
      if (typeof id !== 'number') throw new Error(`could not read the first API user's id from ${keel.url}`);

      note(`bare node:http at ${bare.url}, keel at ${keel.url}, apiuser id ${id}`);
      const loads: [string, Server, LoadSpec][] = [
        ['bare', bare, { path: '/', expect: BARE_BODY }],
        [
          'cmd',
          keel,
          {
            path: `${API}/json.php`,
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ cmd: 'apiuser.get', id }),
            expect: OK,
          },
        ],
        ['rest', keel, { path: `${API}/apiusers/${id}`, headers: { authorization }, expect: OK }],
      ];
      const runs = new Map<string, LoadResult[]>(loads.map(([name]) => [name, []]));
      for (let round = 1; round <= ROUNDS; round++) {
        const line: string[] = [];
        for (const [name, server, spec] of loads) {
          // Warm-up only before the first round: V8 optimises the hot path and SQLite fills its page cache.
          const r = await load(server, spec, { ...DEFAULT_LOAD, warmupSeconds: round === 1 ? DEFAULT_LOAD.warmupSeconds : 0, seconds: ROUND_SECONDS });
          runs.get(name)!.push(r);
          const base = runs.get('bare')![round - 1];
          line.push(name === 'bare' ? `bare ${Math.round(r.rps)} req/s` : `${name} ${(r.rps / base.rps).toFixed(2)}x`);
        }
        note(`round ${round}: ${line.join(', ')}`);
      }
      const [bareAll, cmdAll, restAll] = ['bare', 'cmd', 'rest'].map((name) => pooled(runs.get(name)!));
      return [figure('bare', bareAll), figure('cmd', cmdAll, 'bare'), figure('rest', restAll, 'bare')];
    });
  },
};

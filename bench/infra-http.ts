// Requests per second of an authenticated read (`apiuser.get`) through the Infra HTTP stack, command
// style and REST, against bare node:http measured in the same run: the cost of the HTTP layer (plain node:http), credentials,
// the API key lookup, kysely + SQLite and the envelope, as a ratio that survives a noisy machine.
import { BARE_BODY, basicAuth, describeLoad, load, note, startBareServer, startKeel, withServers, type Benchmark, type Figure, type LoadResult } from './lib.js';

const API = '/api/rest/v2.10';
// Ratio to bare node:http we aim for: the design budget for fastify alone was 0.72x, so half leaves
// room for one authenticated indexed read per request.
const TARGET = 0.5;
const OK = '"code":"OK"';

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
      // The baseline runs in the same minute as what it is compared with, so noise hits both alike.
      const bareRun = await load(bare, { path: '/', expect: BARE_BODY });
      note(`bare ${Math.round(bareRun.rps)} req/s`);
      const cmdRun = await load(keel, {
        path: `${API}/json.php`,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ cmd: 'apiuser.get', id }),
        expect: OK,
      });
      note(`cmd  ${Math.round(cmdRun.rps)} req/s`);
      const restRun = await load(keel, { path: `${API}/apiusers/${id}`, headers: { authorization }, expect: OK });
      note(`rest ${Math.round(restRun.rps)} req/s`);
      return [figure('bare', bareRun), figure('cmd', cmdRun, 'bare'), figure('rest', restRun, 'bare')];
    });
  },
};

// Presence pings per second against a real `keel serve` (SQLite) with many users pinging at once, the
// way every Zulip client does each minute: POST /users/me/presence with status=active and
// new_user_input, answered with the whole realm's presence (legacy email-keyed form), and the same
// ping with ping_only. Every real client asks for gzip (python-requests sends "gzip, deflate", as here),
// so the full answers are gzipped, their shared part compressed once per realm version
// (platform/http/gzip-pieces.ts); "full-plain" is the same ping without it, for information.
// Compared with bare node:http in the same run; the server's RSS after the load.
import { BARE_BODY, chatCall, createChatUsers, describeLoad, load, note, rssMiB, startBareServer, startKeel, withServers, type Benchmark, type Figure, type LoadResult } from './lib.js';

const USERS = 200;
// Each ping is one authenticated request (an indexed user read) plus a map update; the full answer
// also carries 200 users' presence (34 KB legacy, 13 KB modern), spliced from the realm's text made
// once per realm version (src/chat/domain/presence-answers.ts). Every ping here lands within 55 s of
// the user's last, so no record moves and every answer shares one text: a realm where each ping moves
// a record makes the text again for each answer (one user's part, then the join). The ratio we aim
// for, as for other authenticated requests.
const TARGET = 0.3;

function figure(name: string, r: LoadResult, baseline?: string): Figure {
  return { name, value: Math.round(r.rps), unit: 'req/s', baseline, target: baseline ? TARGET : undefined, detail: describeLoad(r) };
}

export const benchmark: Benchmark = {
  name: 'presence',
  summary: `POST /users/me/presence from ${USERS} users at once (full answer and ping_only), vs bare node:http`,
  async run() {
    return withServers([startBareServer, startKeel], async (bare, keel) => {
      const users = (await createChatUsers(keel, 'user', USERS)).map((u) => ({ authorization: u.authorization }));
      // Everyone online first, so each full answer carries all of them.
      for (const u of users) await chatCall(keel.chat.url, u.authorization, '/users/me/presence', { status: 'active', ping_only: 'true' });
      // The chat listener, with the server's pid so the load reports its CPU per request.
      const chat = { url: keel.chat.url, pid: keel.pid, stop: async () => {} };
      const rssBefore = rssMiB(keel.pid);
      note(`bare node:http at ${bare.url}, keel chat at ${keel.chat.url}, ${USERS} users, RSS ${rssBefore ?? '?'} MiB before`);
      const bareRun = await load(bare, { path: '/', expect: BARE_BODY });
      note(`bare ${Math.round(bareRun.rps)} req/s`);
      // `expect` is checked before the load through fetch, which decompresses, so on the whole answer
      // (with the content-encoding said); under load autocannon sees a gzipped body as lossy UTF-8,
      // where only the request's own values, stored uncompressed after the shared part, can be read:
      // `loadExpect` is one of them (present in the plain answers too).
      const spec = (body: string, expect: string, gzip: boolean, loadExpect?: string) => ({
        path: '/api/v1/users/me/presence',
        method: 'POST' as const,
        // fetch (the check) asks for gzip unless told otherwise: the plain phase says identity, which
        // is answered exactly as no Accept-Encoding is.
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-encoding': gzip ? 'gzip, deflate' : 'identity' },
        body,
        expect,
        loadExpect,
        encoding: gzip && loadExpect ? 'gzip' : undefined,
        rotateHeaders: users,
      });
      const fullBody = 'status=active&new_user_input=true';
      const full = await load(chat, spec(fullBody, 'user199@bench.test', true, '"presence_last_update_id"'), { connections: USERS, pipelining: 1, warmupSeconds: 2, seconds: 8 });
      note(`full ${Math.round(full.rps)} req/s`);
      const slim = await load(chat, spec('status=active&new_user_input=true&last_update_id=-1', `"${users.length}":{"active_timestamp"`, true, '"presence_last_update_id"'), {
        connections: USERS,
        pipelining: 1,
        warmupSeconds: 1,
        seconds: 8,
      });
      note(`modern ${Math.round(slim.rps)} req/s`);
      const ping = await load(chat, spec('status=active&ping_only=true', '"zephyr_mirror_active":false', true), { connections: USERS, pipelining: 1, warmupSeconds: 1, seconds: 8 });
      note(`ping_only ${Math.round(ping.rps)} req/s`);
      const plain = await load(chat, spec(fullBody, 'user199@bench.test', false), { connections: USERS, pipelining: 1, warmupSeconds: 1, seconds: 8 });
      note(`full-plain ${Math.round(plain.rps)} req/s`);
      const rss = rssMiB(keel.pid);
      return [
        figure('bare', bareRun),
        figure('full', full, 'bare'),
        figure('modern', slim, 'bare'),
        figure('ping', ping, 'bare'),
        // Without a target: what a client that asks for no compression gets, for information.
        { ...figure('full-plain', plain, 'bare'), target: undefined },
        ...(rss !== undefined ? [{ name: 'rss', value: rss, unit: 'MiB', detail: `server RSS after the load (${rssBefore ?? '?'} MiB before)` }] : []),
      ];
    });
  },
};

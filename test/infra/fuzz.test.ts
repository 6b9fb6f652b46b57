// Random and mutated requests to every Infra command, in both styles (json.php by POST and GET, and
// REST), with bad credentials, bodies, paths and query strings. No answer may be a 5xx or FAULT
// "Internal server error", nothing may be logged at error level, and a refused request must change
// nothing in the store. Seeded: KEEL_FUZZ_SEED (default below) picks the requests, KEEL_FUZZ_RUNS how
// many per engine; the seed is printed so a failure can be replayed.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, it } from 'node:test';
import type { TObject, TSchema } from 'typebox';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessInfra } from '../helpers/in-process.js';
import { allCommands } from '../../src/infra/commands/index.js';
import { createLogger } from '../../src/platform/log.js';
import { prng } from '../helpers/prng.js';

const SEED = Number(process.env.KEEL_FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.KEEL_FUZZ_RUNS ?? 700);
console.log(`# infra fuzz: seed ${SEED}, ${RUNS} requests per engine (KEEL_FUZZ_SEED, KEEL_FUZZ_RUNS)`);

const COMMANDS = allCommands();
const LONG = 'x'.repeat(100_000);

/** Values no parameter should choke on. */
const NASTY: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1,
  1.5,
  -0.5,
  1e12,
  2 ** 53,
  2 ** 64,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  '',
  ' ',
  '0',
  '1',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '+5',
  ' 5 ',
  'NaN',
  'Infinity',
  '-Infinity',
  'null',
  'undefined',
  'true',
  '18446744073709551617',
  '99999999999999999999999999999999',
  '9'.repeat(400),
  'a\u0000b',
  '\u0000',
  '\ud800',
  '\udfff x',
  'é',
  '😀',
  'x'.repeat(300),
  LONG,
  '%',
  '%zz',
  '%00',
  '../..',
  '__proto__',
  'constructor',
  "'; drop table api_users; --",
  '*',
  'apiuser.*',
  'ACTIVE',
  'DISABLED',
  'active',
  'TXT',
  'A',
  '@',
  'example.com',
  'a..b',
  '-bad-.example',
  [],
  [null],
  [1, 2],
  ['*'],
  [[[]]],
  ['a\u0000'],
  {},
  { a: 1 },
  { 0: {} },
  JSON.parse('{"__proto__":{"polluted":true}}'),
  { toString: 1 },
];

/** Keys a request might carry besides the schema's: casing games, prototype names, credentials. */
const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'ID', 'DOMAINID', 'domainid', 'APIUUID', 'APISECRET', 'cmd', 'k\u0000', ''];

interface State {
  apiUserIds: number[];
  uuids: string[];
  domainIds: number[];
  recordIds: number[];
  zones: string[];
}

await forEachEngine('infra fuzz', (engine) => {
  let storage: Storage;
  let infra: Awaited<ReturnType<typeof inProcessInfra>>;
  const errors: string[] = [];

  before(async () => {
    storage = await createStorage(engine);
    const log = createLogger('debug', (line) => {
      if (JSON.parse(line).level === 'error') errors.push(line);
    });
    infra = await inProcessInfra(storage, { log });
  });
  after(async () => {
    await infra?.close();
    await storage?.dispose();
  });

  /** Everything a command could change, as text. */
  async function snapshot(): Promise<{ text: string; state: State }> {
    const db = infra.ctx.db.kysely;
    const [apiUsers, domains, records, customers, logins, floors] = await Promise.all([
      db.selectFrom('api_users').selectAll().orderBy('id').execute(),
      db.selectFrom('dns_domains').selectAll().orderBy('id').execute(),
      db.selectFrom('dns_records').selectAll().orderBy('id').execute(),
      db.selectFrom('customers').selectAll().orderBy('id').execute(),
      db.selectFrom('logins').selectAll().orderBy('id').execute(),
      db.selectFrom('dns_serial_floors').selectAll().orderBy('name').execute(),
    ]);
    return {
      text: JSON.stringify([apiUsers, domains, records, customers, logins, floors]),
      state: {
        apiUserIds: apiUsers.map((u) => Number(u.id)),
        uuids: apiUsers.map((u) => u.uuid),
        domainIds: domains.map((d) => Number(d.id)),
        recordIds: records.map((r) => Number(r.id)),
        zones: domains.map((d) => d.name),
      },
    };
  }

  it(`answers every random and mutated request without a 5xx, an internal error or a change when refused (seed ${SEED})`, async () => {
    const rnd = prng(engine === 'postgres' ? SEED ^ 0x5bd1e995 : SEED);
    const int = (n: number) => Math.floor(rnd() * n);
    const pickOf = <T>(list: readonly T[]): T => list[int(list.length)];
    const chance = (p: number) => rnd() < p;

    const created = infra.ctx.created!;
    const ownerBasic = 'Basic ' + Buffer.from(`${created.apiUuid}:${created.apiSecret}`).toString('base64');
    const login = await infra.cmd('session.login', { username: created.username, password: created.password, jwt: 1 }, {});
    const ownerBearer = `Bearer ${login.token}`;
    // Something to aim at: zones with records, and a weaker key.
    for (const name of ['fuzz-one.example', 'fuzz-two.example']) {
      const zone = await infra.cmd('dns.domain.create', { name }, { authorization: ownerBearer });
      assert.equal(zone.code, 'OK', JSON.stringify(zone));
      await infra.cmd(
        'dns.record.create',
        {
          domainId: zone.data.id,
          data: [
            { type: 'A', lookup: 'www', data: '192.0.2.1' },
            { type: 'TXT', lookup: 't', data: 'v' },
          ],
        },
        { authorization: ownerBearer },
      );
    }
    const weak = await infra.cmd('apiuser.create', { name: 'weak', permissions: ['apiuser.update', 'dns.*'] }, { authorization: ownerBearer });
    const weakBasic = 'Basic ' + Buffer.from(`${weak.apiuser.uuid}:${weak.apiuser.secret}`).toString('base64');

    function goodValue(schema: TSchema | undefined, name: string, state: State): unknown {
      const lower = name.toLowerCase();
      if (lower === 'id') return chance(0.5) ? pickOf([...state.apiUserIds, ...state.domainIds, ...state.recordIds, 1]) : pickOf(state.uuids);
      if (lower === 'domainid') return pickOf(state.domainIds.length ? state.domainIds : [1]);
      if (lower === 'name') return chance(0.5) ? pickOf(state.zones.length ? state.zones : ['fuzz.example']) : `fuzz ${int(1000)}.example`;
      if (lower === 'permissions') return pickOf([['apiuser.get'], 'dns.*', ['*'], []]);
      if (lower === 'data' && chance(0.4)) {
        // Records whose fields are plausible or nasty, as a list or a map.
        const record = () =>
          Object.fromEntries(
            ['type', 'lookup', 'data', 'ttl', 'priority', 'weight', 'port', 'caaflag', 'caatag', 'domainId', 'id', 'name']
              .filter(() => chance(0.6))
              .map((k) => [k, chance(0.5) ? goodValue(undefined, k, state) : pickOf(NASTY)]),
          );
        const list = Array.from({ length: 1 + int(3) }, record);
        return chance(0.5) ? list : Object.fromEntries(list.map((r, i) => [chance(0.5) ? String(i) : String(pickOf(state.recordIds.length ? state.recordIds : [1])), r]));
      }
      if (lower === 'caatag') return pickOf(['issue', 'issuewild', 'iodef']);
      if (['priority', 'weight', 'port', 'caaflag'].includes(lower)) return int(20);
      if (lower === 'data')
        return pickOf(['192.0.2.7', [{ type: 'TXT', lookup: 'f', data: 'x' }], { 0: { type: 'A', lookup: 'a', data: '192.0.2.9', domainId: pickOf(state.domainIds.length ? state.domainIds : [1]) } }]);
      if (lower === 'type') return pickOf(['A', 'TXT', 'MX', 'CAA', 'SRV', 'AAAA', 'CNAME']);
      if (lower === 'lookup') return pickOf(['www', '@', '', '_acme-challenge', 'deep.er']);
      if (lower === 'ttl') return pickOf([60, 300, 3600, '120']);
      if (lower === 'status') return pickOf(['ACTIVE', 'DISABLED']);
      const s = (schema ?? {}) as Record<string, unknown>;
      if (s.type === 'integer' || s.type === 'number') return int(30);
      if (s.type === 'boolean') return chance(0.5);
      if (s.type === 'string') return `v${int(100)}`;
      return pickOf(NASTY);
    }

    /** The command's parameters: plausible ones, then a few of them (or extra keys) made nasty. */
    function params(schema: TObject, state: State): Record<string, unknown> {
      const out: Record<string, unknown> = {};
      const props = Object.entries(schema.properties as Record<string, TSchema>);
      for (const [name, prop] of props) if (chance(0.6)) out[name] = goodValue(prop, name, state);
      const mutations = int(3);
      for (let i = 0; i < mutations; i++) {
        const key = chance(0.8) && props.length ? pickOf(props)[0] : pickOf(EXTRA_KEYS);
        const cased = chance(0.2) ? key.toUpperCase() : key;
        Object.defineProperty(out, cased, { value: pickOf(NASTY), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }

    function auth(): Record<string, string> {
      const roll = rnd();
      if (roll < 0.45) return { authorization: ownerBearer };
      if (roll < 0.6) return { authorization: ownerBasic };
      if (roll < 0.7) return { authorization: weakBasic };
      return pickOf<Record<string, string>>([
        {},
        { authorization: 'Basic !!!not base64!!!' },
        { authorization: 'Basic ' + Buffer.from('\u0000:\u0000').toString('base64') },
        { authorization: 'Basic ' + Buffer.from(`${created.apiUuid}\u0000:x`).toString('base64') },
        { authorization: 'Basic ' + Buffer.from([0xff, 0xfe, 0x3a, 0xc3, 0x28]).toString('base64') },
        { authorization: 'Basic ' + Buffer.from(`${'u'.repeat(5000)}:${'s'.repeat(5000)}`).toString('base64') },
        { authorization: 'Basic' },
        { authorization: 'Bearer' },
        { authorization: 'Bearer not.a.jwt' },
        { authorization: 'Bearer ' + 'A'.repeat(8000) },
        { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJsb2dpbjoxIn0.' },
        { authorization: 'Negotiate abc' },
        { cookie: 'JWTSESSIONID=%E0%A4%A' },
        { cookie: 'JWTSESSIONID=%' },
        { cookie: 'JWTSESSIONID=%00' },
        { cookie: 'JWTSESSIONID=' },
        { cookie: 'JWTSESSIONID=' + encodeURIComponent(login.token) + '; JWTSESSIONID=%zz' },
        { cookie: '=;;;=JWTSESSIONID' },
      ]);
    }

    /** A value as it would appear in a URL: usually encoded, sometimes raw and broken. */
    function urlText(v: unknown): string {
      if (chance(0.2)) return pickOf(['%', '%zz', '%E0%A4%A', '%00', '..', '%2e%2e', '\\', '%2F', 'a%20b', '%ud800']);
      const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
      return encodeURIComponent(text.length > 2000 ? text.slice(0, 2000) : (text as unknown as { isWellFormed(): boolean }).isWellFormed() ? text : 'x');
    }

    function query(p: Record<string, unknown>): string {
      const parts: string[] = [];
      for (const [k, v] of Object.entries(p)) {
        if (Array.isArray(v) && chance(0.5)) for (const item of v) parts.push(`${urlText(k)}[]=${urlText(item)}`);
        else parts.push(`${urlText(k)}=${urlText(v)}`);
      }
      if (chance(0.1)) parts.push(pickOf(['&&&', '=', '%=%', 'a=1&a=2&a=3', '__proto__[]=x', 'constructor=1']));
      return parts.join('&');
    }

    function body(p: Record<string, unknown>): string {
      if (chance(0.08)) {
        return pickOf([
          '{',
          '[]',
          '"text"',
          '42',
          'null',
          '{"a":1e999}',
          '{"a":"\\ud800"}',
          '{"a":"\\u0000"}',
          '{"a":"\\x"}',
          '['.repeat(50_000) + ']'.repeat(50_000),
          '{"a":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}',
          '\u0000',
          '{"cmd":"apiuser.getall",}',
          '{"__proto__":{"permissions":["*"]}}',
          `{"cmd":"apiuser.update","id":1,"newSecret":true,"active":null}`,
        ]);
      }
      return JSON.stringify(p);
    }

    let { text: before, state } = await snapshot();
    const seen = new Map<string, number>();
    for (let run = 0; run < RUNS; run++) {
      const command = pickOf(COMMANDS);
      const p = params(command.params, state);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...auth() };
      let method: string;
      let url: string;
      let payload: string | undefined;
      const style = rnd();
      if (style < 0.4) {
        method = pickOf(['POST', 'POST', 'PUT', 'DELETE']);
        url = '/api/rest/v2.10/json.php';
        payload = body({ cmd: chance(0.95) ? command.cmd : pickOf(NASTY), ...p });
      } else if (style < 0.55) {
        method = 'GET';
        url = `/api/v2.9/json.php?${query({ cmd: command.cmd, ...p })}`;
      } else {
        method = command.rest.method;
        const rest = { ...p };
        let path = command.rest.path.replace(/\{(\w+)\}/g, (_, name: string) => {
          const v = rest[name] ?? goodValue(undefined, name, state);
          delete rest[name];
          return urlText(v);
        });
        if (chance(0.1)) path = path.replace(/s(\/|$)/, '$1');
        const q = method === 'GET' || chance(0.3) ? query(rest) : '';
        url = `/api/rest/v2.10${path}${q ? '?' + q : ''}`;
        if (method !== 'GET' || chance(0.3)) payload = body(rest);
      }
      const res = await infra.app.inject({ method: method as 'GET', url, headers, payload });
      const what = `#${run} ${method} ${url.slice(0, 300)} ${(payload ?? '').slice(0, 300)} ${JSON.stringify(headers).slice(0, 200)}`;
      assert.ok(res.statusCode < 500, `HTTP ${res.statusCode} for ${what}`);
      let answer: { code?: unknown; message?: unknown };
      try {
        answer = JSON.parse(res.body);
      } catch {
        assert.fail(`not JSON (${res.body.slice(0, 200)}) for ${what}`);
      }
      assert.ok(['OK', 'ERROR', 'FAULT', 'ACCESS_DENIED'].includes(answer.code as string), `code ${answer.code} for ${what}`);
      assert.notEqual(answer.message, 'Internal server error', `internal error for ${what}`);
      assert.deepEqual(errors, [], `logged at error level for ${what}`);
      const after = await snapshot();
      if (answer.code !== 'OK') assert.equal(after.text, before, `refused (${res.body.slice(0, 300)}) yet changed the store: ${what}`);
      before = after.text;
      state = after.state;
      const key = `${answer.code}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    console.log(`# ${engine}: answers by code ${JSON.stringify(Object.fromEntries(seen))}`);
    // A fuzzer that only ever hit one wall would prove little.
    for (const code of ['OK', 'FAULT', 'ACCESS_DENIED', 'ERROR']) assert.ok((seen.get(code) ?? 0) > 0, `no ${code} answer in ${RUNS} requests`);
  });

  it(`answers raw request targets the URL parser refuses without an internal error (seed ${SEED})`, async () => {
    const rnd = prng(SEED);
    await infra.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (infra.app.server.address() as net.AddressInfo).port;
    const targets = [
      'http://[::1/api/rest/v2.10/apiusers',
      'http://x:99999/api/rest/v2.10/json.php',
      'http://%zz/api',
      'http://x:-1/',
      'https://[zz]/api',
      '//x/api/rest/v2.10/apiusers',
      '*',
      '/api/rest/v2.10/apiusers/%E0%A4%A',
      '/api/rest/v2.10/apiusers/..%2f..%2f',
      '/api/rest/v2.10/\\..\\apiusers',
      '/api/rest/v2.10/./../apiusers',
      '/api/rest/v2.10/json.php?cmd=%zz&&=&%',
    ];
    // And mutations: a character of a target replaced by one of those parsers stumble on.
    const odd = ['[', ']', '%', ':', '\\', '@', '#', '?', '.', '%2e', '%00', '%ff'];
    for (let i = 0; i < 60; i++) {
      const base = targets[Math.floor(rnd() * targets.length)];
      const at = Math.floor(rnd() * base.length);
      targets.push(base.slice(0, at) + odd[Math.floor(rnd() * odd.length)] + base.slice(at + 1));
    }
    const basic = 'Basic ' + Buffer.from(`${infra.ctx.created!.apiUuid}:${infra.ctx.created!.apiSecret}`).toString('base64');
    for (const target of targets) {
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic}\r\nConnection: close\r\n\r\n`));
        let got = '';
        socket.on('data', (c) => (got += c));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(reply)?.[1]);
      assert.ok(status > 0 && status < 500, `HTTP ${status} for ${JSON.stringify(target)}`);
      assert.ok(!reply.includes('Internal server error'), `internal error for ${JSON.stringify(target)}`);
      assert.deepEqual(errors, [], `logged at error level for ${JSON.stringify(target)}`);
    }
  });
});

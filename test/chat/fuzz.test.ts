// Fuzzes every Chat endpoint (the list comes from the endpoint definitions) over real sockets with
// random and mutated requests: wrong types, huge integers, NUL bytes, long strings, malformed JSON in
// JSON-typed fields, bad % escapes in paths, queries and forms, malformed multipart bodies, bad Basic
// headers, and concurrent identical creates. No client input may get a 5xx or be logged at error
// level; every answer is Zulip's JSON envelope, and the server answers normally afterwards.
// Seeded (KEEL_FUZZ_SEED, printed) and bounded (KEEL_FUZZ_REQUESTS requests per engine).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, type Storage } from '../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../helpers/in-process-chat.js';
import { allEndpoints } from '../../src/chat/endpoints/index.js';
import { createLogger } from '../../src/platform/log.js';
import { prng } from '../helpers/prng.js';

const SEED = Number(process.env.KEEL_FUZZ_SEED ?? 1224);
const REQUESTS = Number(process.env.KEEL_FUZZ_REQUESTS ?? 1500);
const WORKERS = 6;
console.log(`# chat fuzz: seed ${SEED} (KEEL_FUZZ_SEED), ${REQUESTS} requests per engine (KEEL_FUZZ_REQUESTS)`);

interface Schema {
  type?: string;
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  enum?: unknown[];
  const?: unknown;
}

interface FuzzRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
  what: string;
}
interface Answer {
  status: number;
  text: string;
}

/** Ids that exist in the fixture, so that some requests get past the lookups. */
interface Fixture {
  ids: number[];
  channel: string;
  ownerAuth: string;
  memberAuth: string;
}

const HUGE_INTS = [
  '100000000000000000000000000',
  '-9223372036854775809',
  '9223372036854775808',
  '9007199254740993',
  '18446744073709551616',
  '1e400',
  '-1e400',
  '1e308',
  '2147483648',
  '-1',
  '0',
  '1.5',
  '0x10',
];
const NUL_TEXTS = [
  'a\u0000b',
  '\u0000',
  'stream\u0000',
  '"a\\u0000b"',
  '["x\\u0000"]',
  '{"name":"\\u0000"}',
  '[{"name":"a\\u0000"}]',
  '[{"operator":"stream","operand":"a\\u0000"}]',
  '{"a\\u0000":1}',
];
const BAD_JSON = [
  '[',
  '{',
  '{"a":',
  '[1,',
  '"unterminated',
  'nul',
  'tru',
  '[1]]',
  '{"a":1,}',
  "['a']",
  '['.repeat(5000),
  '['.repeat(50_000) + ']'.repeat(50_000),
  `{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}`,
  '[{"name":',
];
const WRONG_TYPES = ['true', 'null', '{}', '[]', '""', '"str"', 'abc', '[null]', '[[1]]', '[{}]', '{"x":[1]}', '[true]', '-0', ''];
const LONG_TEXTS = ['x'.repeat(70_000), 'é'.repeat(20_000), '😀'.repeat(5_000), '%'.repeat(1000)];
const PATH_SEGMENTS = ['%zz', '%', '%E0%A4%A', '%00', 'a%00b', '%C0%AF', '%FF', '%ED%A0%80', '99999999999999999999999', '-1', '0', 'me', 'x'.repeat(3000), '%25', 'a@b', '%F0%9F%98%80'];
const QUERY_NOISE = ['%zz=1', 'a=%', 'b=%E0%A4%A', '%=%', 'c=%00', '&&&', '=x', 'client=%00', 'client=%zz'];

function b64(s: string | Buffer): string {
  return (typeof s === 'string' ? Buffer.from(s) : s).toString('base64');
}

const BAD_AUTH = [
  'Basic',
  'Basic !!!!',
  `Basic ${b64('no-colon')}`,
  `Basic ${b64('a:b:c')}`,
  `Basic ${b64('\u0000@example.com:key')}`,
  `Basic ${b64('alice@example.com:k\u0000')}`,
  `Basic ${b64(Buffer.from([0xff, 0xfe, 0x3a, 0x00, 0xc0]))}`,
  'Bearer abc',
  `Basic ${'A'.repeat(10_000)}`,
  `Basic ${b64(`${'x'.repeat(300)}@e.com:key`)}`,
  'Basic  ',
  `Basic ${b64(':')}`,
  `Basic ${b64('%zz@example.com:%00')}`,
  'Digest x',
  `basic ${b64('a:b')} extra`,
];

// Every endpoint but those that end the fuzzer's own credentials: with the owner's key, replacing
// that key or deactivating the realm would lock the fuzzer out (credentials-revoke.test.ts and
// realm-deactivation.test.ts cover them). A document endpoint (GET /openapi.json) answers outside
// Zulip's envelope by design and takes no parameters: test/chat/openapi.test.ts covers it.
const LOCKING_OUT = new Set(['/users/me/api_key/regenerate', '/realm/deactivate']);
const FUZZED_ENDPOINTS = allEndpoints().filter((e) => !LOCKING_OUT.has(e.path) && !e.document);

class Fuzzer {
  private readonly rand: () => number;
  private readonly fixture: Fixture;
  constructor(rand: () => number, fixture: Fixture) {
    this.rand = rand;
    this.fixture = fixture;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)];
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  word(): string {
    return this.pick(['fuzz', 'garden', 'stream', 'Ünïcode', 'a b', '', ' ', 'newest', 'oldest', '#', '@**x**', this.fixture.channel, 'x'.repeat(61)]);
  }

  /** A value of roughly the declared type (often one the lookups accept). */
  validish(s: Schema, depth = 0): unknown {
    if (s.const !== undefined) return s.const;
    if (s.enum) return this.pick(s.enum);
    if (s.anyOf?.length) return this.validish(this.pick(s.anyOf), depth);
    switch (s.type) {
      case 'integer':
        return this.chance(0.8) ? this.pick(this.fixture.ids) : this.pick([-1, 0, 2 ** 31, 2 ** 53 - 1, -(2 ** 53) + 1]);
      case 'number':
        return this.pick([0, 1.5, 1e12, -3]);
      case 'boolean':
        return this.chance(0.5);
      case 'string':
        return this.word();
      case 'array':
        return depth > 3 ? [] : Array.from({ length: Math.floor(this.rand() * 3) }, () => this.validish(s.items ?? {}, depth + 1));
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(s.properties ?? {})) if (depth < 3 && this.chance(0.8)) out[k] = this.validish(v, depth + 1);
        return out;
      }
      default:
        return this.pick([1, 'x', true, null, [], {}]);
    }
  }

  /** The text sent for a parameter: encoded as Zulip's clients encode it, or broken on purpose. */
  paramText(s: Schema): string {
    const r = this.rand();
    if (r < 0.3) {
      const v = this.validish(s);
      return typeof v === 'string' ? v : JSON.stringify(v);
    }
    if (r < 0.42) return this.pick(HUGE_INTS);
    if (r < 0.52) return this.pick(NUL_TEXTS);
    if (r < 0.62) return this.pick(BAD_JSON);
    if (r < 0.74) return this.pick(WRONG_TYPES);
    if (r < 0.78) return this.pick(LONG_TEXTS);
    // A valid-ish JSON value with one part mutated: a huge integer or a NUL byte inside.
    const v = JSON.stringify(this.validish(s) ?? null);
    return v.replace(/-?\d+/, this.pick(['99999999999999999999999', '-9223372036854775809', '1e999', '9007199254740993'])).replace(/"([^"]*)"/, this.chance(0.5) ? '"$1\\u0000"' : '"$1"');
  }

  pathFor(template: string): string {
    return template.replace(/\{[^}]+\}/g, () => {
      const r = this.rand();
      if (r < 0.5) return String(this.pick(this.fixture.ids));
      if (r < 0.6) return encodeURIComponent(this.word());
      return this.pick(PATH_SEGMENTS);
    });
  }

  auth(): string | undefined {
    const r = this.rand();
    if (r < 0.45) return this.fixture.memberAuth;
    if (r < 0.65) return this.fixture.ownerAuth;
    if (r < 0.75) return undefined;
    return this.pick(BAD_AUTH);
  }

  multipart(fields: [string, string][]): { type: string; body: Buffer } {
    const boundary = `----keelfuzz${Math.floor(this.rand() * 1e9)}`;
    const parts = fields.map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('');
    const good = `${parts}--${boundary}--\r\n`;
    const r = this.rand();
    if (r < 0.25) return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.from(good) };
    // Broken: truncated, no boundary parameter, another boundary, garbage part headers, a file part, no name.
    const broken = [
      { type: `multipart/form-data; boundary=${boundary}`, body: good.slice(0, Math.floor(good.length * this.rand())) },
      { type: 'multipart/form-data', body: good },
      { type: 'multipart/form-data; boundary=', body: good },
      { type: `multipart/form-data; boundary=${boundary}x`, body: good },
      { type: `multipart/form-data; boundary=${boundary}`, body: `--${boundary}\r\nGarbage\r\n\r\nx\r\n--${boundary}--\r\n` },
      { type: `multipart/form-data; boundary=${boundary}`, body: `--${boundary}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${boundary}--\r\n` },
      {
        type: `multipart/form-data; boundary=${boundary}`,
        body: `--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`,
      },
      { type: `multipart/form-data; boundary=${boundary}`, body: `--${boundary}\r\nContent-Disposition: form-data; name="a\u0000"\r\n\r\nx\u0000\r\n--${boundary}--\r\n` },
      { type: `multipart/form-data; boundary=${boundary}`, body: 'not multipart at all' },
      {
        type: `multipart/form-data; boundary=${boundary}`,
        body: Array.from({ length: 1200 }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`).join('') + `--${boundary}--\r\n`,
      },
      { type: `multipart/mixed; boundary=${boundary}`, body: good },
    ];
    const b = this.pick(broken);
    return { type: b.type, body: Buffer.from(b.body) };
  }

  request(): FuzzRequest {
    const endpoints = FUZZED_ENDPOINTS;
    const e = this.pick(endpoints);
    const props = Object.entries((e.params as unknown as { properties: Record<string, Schema> }).properties);
    const pathParams = new Set([...e.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]));
    const fields: [string, string][] = [];
    for (const [name, schema] of props) {
      if (pathParams.has(name)) continue;
      if (this.chance(0.6)) fields.push([name, this.paramText(schema)]);
    }
    if (this.chance(0.1)) fields.push([this.pick(['client', 'unknown\u0000', 'x'.repeat(200)]), this.pick(NUL_TEXTS.concat(['ZulipFuzz']))]);
    // Now and then the wrong method for the path.
    const method = this.chance(0.05) ? this.pick(['GET', 'POST', 'PATCH', 'DELETE', 'PUT']) : e.method;
    let target = `/api/v1${this.pathFor(e.path)}`;
    const headers: Record<string, string> = { 'user-agent': this.pick(['ZulipFuzz/1.0', 'x'.repeat(500), '']) };
    const auth = this.auth();
    if (auth !== undefined) headers.authorization = auth;
    if (this.chance(0.03)) headers.host = this.pick(['%zz.chat.keel.test', `${'a'.repeat(70)}.chat.keel.test`, 'nosuch.chat.keel.test', '[::1', '']);
    const form = new URLSearchParams(fields).toString();
    let body: Buffer | undefined;
    let how = 'query';
    if (method === 'GET' && !this.chance(0.05)) {
      const noise = this.chance(0.15) ? `${form ? '&' : ''}${this.pick(QUERY_NOISE)}` : '';
      if (form || noise) target += `?${form}${noise}`;
    } else {
      const r = this.rand();
      if (r < 0.5) {
        how = 'form';
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = Buffer.from(form);
      } else if (r < 0.62) {
        how = 'broken form';
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = Buffer.from(`${form}&${this.pick(QUERY_NOISE)}&${this.pick(QUERY_NOISE)}`);
      } else if (r < 0.87) {
        how = 'multipart';
        const m = this.multipart(fields);
        headers['content-type'] = m.type;
        body = m.body;
      } else if (r < 0.94) {
        how = 'json';
        headers['content-type'] = this.pick(['application/json', 'text/plain', 'application/octet-stream']);
        body = Buffer.from(this.chance(0.5) ? JSON.stringify(Object.fromEntries(fields)) : this.pick(BAD_JSON));
      } else {
        how = 'bad content-type';
        headers['content-type'] = this.pick([
          'application/x-www-form-urlencoded; charset=nonesuch',
          'multipart/form-data; boundary="unterminated',
          ';;;',
          'application/x-www-form-urlencoded; charset=utf-16',
        ]);
        body = Buffer.from(form);
      }
    }
    return { method, target, headers, body, what: `${e.method} ${e.path} (${how})` };
  }
}

/**
 * Sends a request on a kept-alive connection; if that connection was reset (the server closes one
 * whose request body it did not read, and the agent may have reused it meanwhile), once more on a
 * fresh one. 'unsendable': node:http would not write it (nothing reached the server).
 */
async function send(agent: http.Agent, base: URL, r: FuzzRequest): Promise<Answer | 'timeout' | 'reset' | 'unsendable'> {
  const first = await sendOnce(agent, base, r);
  return first === 'reset' ? sendOnce(false, base, r) : first;
}

function sendOnce(agent: http.Agent | false, base: URL, r: FuzzRequest): Promise<Answer | 'timeout' | 'reset' | 'unsendable'> {
  return new Promise((resolve) => {
    let req: http.ClientRequest;
    try {
      req = http.request(
        { host: base.hostname, port: base.port, method: r.method, path: r.target, headers: r.body ? { ...r.headers, 'content-length': String(r.body.length) } : r.headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', () => resolve('reset'));
        },
      );
    } catch {
      resolve('unsendable');
      return;
    }
    // Generous: on a loaded machine an answer may wait seconds for the store's flush; a hang waits forever.
    req.setTimeout(30_000, () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', () => resolve('reset'));
    req.end(r.body);
  });
}

await forEachEngine('chat fuzz', (engine) => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;
  let base: URL;
  let owner: InProcessClient, ownerId: number;
  let member: InProcessClient, memberId: number;
  let messageId: number, channelId: number;
  const errorLogs: string[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });

  before(async () => {
    storage = await createStorage(engine);
    // Everything the server logs at error level is kept: a client's request must never be one.
    const log = createLogger('warn', (line) => {
      if (JSON.parse(line).level === 'error') errorLogs.push(line);
    });
    chat = await inProcessChat(storage, { log });
    await chat.app.listen({ host: '127.0.0.1', port: 0 });
    base = new URL(`http://127.0.0.1:${(chat.app.server.address() as AddressInfo).port}`);
    owner = chat.owner;
    ownerId = (await ok(owner, 'GET', '/users/me')).user_id;
    ({ client: member, id: memberId } = await chat.member('member@example.com', 'Member'));
    const sub = await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'fuzz' }], principals: [ownerId, memberId] });
    assert.ok(sub);
    channelId = (await ok(owner, 'GET', '/get_stream_id', { stream: 'fuzz' })).stream_id;
    messageId = (await ok(member, 'POST', '/messages', { type: 'stream', to: 'fuzz', topic: 'seeds', content: 'hello' })).id;
  });
  after(async () => {
    agent.destroy();
    await chat?.close();
    await storage?.dispose();
  });

  const basic = (c: InProcessClient) => `Basic ${b64(`${c.email}:${c.apiKey}`)}`;

  it('answers concurrent identical creates (and writes racing on one unique key) exactly as the sequential duplicate, one of them succeeding', async () => {
    // A channel and a message of their own, made before any fuzzing.
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'race-home' }], principals: [ownerId, memberId] });
    const homeId = (await ok(owner, 'GET', '/get_stream_id', { stream: 'race-home' })).stream_id as number;
    const homeMessage = (await ok(member, 'POST', '/messages', { type: 'stream', to: 'race-home', topic: 'start', content: 'go' })).id as number;
    interface Call {
      who: InProcessClient;
      method: string;
      path: string;
      params: Record<string, unknown>;
    }
    const identical: Call[] = [
      { who: owner, method: 'POST', path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'race-channel' }] } },
      { who: owner, method: 'POST', path: '/users', params: { email: 'racer@example.com', password: 'pass-word-1', full_name: 'Racer' } },
      { who: owner, method: 'POST', path: '/bots', params: { full_name: 'Race Bot', short_name: 'racebot' } },
      { who: owner, method: 'POST', path: '/user_groups/create', params: { name: 'racers', description: 'fast', members: [ownerId] } },
      { who: owner, method: 'POST', path: '/realm/filters', params: { pattern: '#(?P<id>[0-9]+)', url_template: 'https://example.com/{id}' } },
      { who: owner, method: 'POST', path: '/default_streams', params: { stream_id: homeId } },
      { who: member, method: 'POST', path: '/users/me/alert_words', params: { alert_words: ['racy'] } },
      { who: member, method: 'POST', path: `/messages/${homeMessage}/reactions`, params: { emoji_name: 'smile' } },
      { who: member, method: 'POST', path: `/users/me/muted_users/${ownerId}`, params: {} },
      { who: member, method: 'POST', path: '/user_topics', params: { stream_id: homeId, topic: 'race', visibility_policy: 1 } },
      { who: member, method: 'PATCH', path: '/users/me/subscriptions/muted_topics', params: { stream_id: homeId, topic: 'race-muted', op: 'add' } },
      { who: member, method: 'POST', path: '/users/me/subscriptions', params: { subscriptions: [{ name: 'race-channel' }] } },
      { who: member, method: 'POST', path: '/messages', params: { type: 'stream', to: 'race-home', topic: 'a brand new topic', content: 'first!' } },
      { who: member, method: 'POST', path: '/messages/flags', params: { messages: [homeMessage], op: 'add', flag: 'starred' } },
      { who: member, method: 'POST', path: '/users/me/status', params: { status_text: 'racing' } },
      { who: member, method: 'PATCH', path: '/settings', params: { enter_sends: true } },
      { who: member, method: 'POST', path: '/drafts', params: { drafts: [{ type: 'stream', to: [homeId], topic: 'd', content: 'draft', timestamp: 1 }] } },
    ];
    // Different requests that meet on one unique key: renames to one name, one member or subgroup added twice.
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'rename-a' }, { name: 'rename-b' }] });
    const renameA = (await ok(owner, 'GET', '/get_stream_id', { stream: 'rename-a' })).stream_id as number;
    const renameB = (await ok(owner, 'GET', '/get_stream_id', { stream: 'rename-b' })).stream_id as number;
    const groupA = (await ok(owner, 'POST', '/user_groups/create', { name: 'group-a', description: 'a', members: [ownerId] })).group_id as number;
    const groupB = (await ok(owner, 'POST', '/user_groups/create', { name: 'group-b', description: 'b', members: [ownerId] })).group_id as number;
    // A public channel the member is not in: starring its message adds the member's (historical) row.
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'race-public' }] });
    const publicMessage = (await ok(owner, 'POST', '/messages', { type: 'stream', to: 'race-public', topic: 't', content: 'x' })).id as number;
    const sameKey: Call[][] = [
      [
        { who: owner, method: 'PATCH', path: `/streams/${renameA}`, params: { new_name: 'renamed' } },
        { who: owner, method: 'PATCH', path: `/streams/${renameB}`, params: { new_name: 'Renamed' } },
      ],
      [
        { who: owner, method: 'PATCH', path: `/user_groups/${groupA}`, params: { name: 'one name' } },
        { who: owner, method: 'PATCH', path: `/user_groups/${groupB}`, params: { name: 'one name' } },
      ],
      [
        { who: owner, method: 'POST', path: `/user_groups/${groupA}/members`, params: { add: [memberId] } },
        { who: owner, method: 'POST', path: `/user_groups/${groupA}/members`, params: { add: [memberId] } },
      ],
      [
        { who: owner, method: 'POST', path: `/user_groups/${groupB}/subgroups`, params: { add: [groupA] } },
        { who: owner, method: 'POST', path: `/user_groups/${groupB}/subgroups`, params: { add: [groupA] } },
      ],
      [
        { who: owner, method: 'POST', path: '/users', params: { email: 'twin@example.com', password: 'pass-word-1', full_name: 'Twin' } },
        { who: owner, method: 'POST', path: '/users', params: { email: 'TWIN@example.com', password: 'pass-word-2', full_name: 'Other twin' } },
      ],
      [
        { who: member, method: 'POST', path: '/messages/flags', params: { messages: [publicMessage], op: 'add', flag: 'starred' } },
        { who: member, method: 'POST', path: '/messages/flags', params: { messages: [publicMessage], op: 'add', flag: 'read' } },
      ],
    ];
    // Ten at once of each identical create; five of each request of the others.
    const races: Call[][] = [...identical.map((c) => Array.from({ length: 10 }, () => c)), ...sameKey.map((calls) => calls.flatMap((c) => [c, c, c, c, c]))];
    const summary = (r: { status: number; body: Record<string, any> }) => JSON.stringify([r.status, r.body.code, r.body.msg]);
    const problems: string[] = [];
    let sent = 0;
    let fiveHundreds = 0;
    for (const calls of races) {
      const answers = await Promise.all(calls.map((c) => c.who.call(c.method, c.path, c.params)));
      sent += answers.length;
      fiveHundreds += answers.filter((a) => a.status >= 500).length;
      const label = [...new Set(calls.map((c) => `${c.method} ${c.path}`))].join(' + ');
      if (!answers.some((a) => a.status === 200)) problems.push(`${label}: none succeeds: ${answers.map(summary)}`);
      // Each request sent again on its own afterwards: what a losing racer must have answered.
      const again = new Map<Call, string>();
      for (const c of new Set(calls)) {
        again.set(c, summary(await c.who.call(c.method, c.path, c.params)));
        sent++;
      }
      const odd = answers.map((a, i) => [a, again.get(calls[i])!] as const).filter(([a, seq]) => a.status !== 200 && summary(a) !== seq);
      if (odd.length) problems.push(`${label}: ${odd.length} of ${answers.length} answer ${summary(odd[0][0])} where the sequential duplicate answers ${odd[0][1]}`);
    }
    console.log(`# chat fuzz [${engine}]: ${sent} racing creates, ${fiveHundreds} answered 5xx`);
    for (const p of problems) console.log(`#   ${p}`);
    assert.deepEqual(problems, []);
    assert.equal(
      errorLogs.length,
      0,
      `logged at error level: ${errorLogs
        .slice(0, 3)
        .map((l) => l.slice(0, 300))
        .join('\n')}`,
    );
  });

  it("answers random and mutated requests to every endpoint without a 5xx, in Zulip's envelope, logging none at error level", async () => {
    const fuzzer = new Fuzzer(prng(SEED), { ids: [ownerId, memberId, messageId, channelId, 1, 2, 3], channel: 'fuzz', ownerAuth: basic(owner), memberAuth: basic(member) });
    const requests = Array.from({ length: REQUESTS }, () => fuzzer.request());
    const byClass = new Map<string, number>();
    const failures: string[] = [];
    const notEnvelope: string[] = [];
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (next < requests.length) {
          const r = requests[next++];
          const a = await send(agent, base, r);
          const cls = typeof a === 'string' ? a : `${Math.floor(a.status / 100)}xx`;
          byClass.set(cls, (byClass.get(cls) ?? 0) + 1);
          if (typeof a === 'string') {
            // All of it: enough to send the same request again by hand.
            if (a !== 'unsendable')
              console.log(
                `#   ${a}: ${r.what}: ${r.method} ${r.target.slice(0, 200)} headers ${JSON.stringify(Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, v.length > 100 ? `${v.slice(0, 20)}... (${v.length} chars)` : v])))} body (${r.body?.length ?? 0} bytes) ${JSON.stringify(r.body?.toString('utf8').slice(0, 300) ?? '')}`,
              );
            continue;
          }
          const sample = `${a.status} ${r.what}: ${r.method} ${r.target.slice(0, 200)} ${r.body?.toString('utf8').slice(0, 200) ?? ''} -> ${a.text.slice(0, 200)}`;
          if (a.status >= 500) failures.push(sample);
          let body: { result?: unknown } | undefined;
          try {
            body = JSON.parse(a.text);
          } catch {
            body = undefined;
          }
          // 431 included: node's HTTP parser refuses a header section over its limit, answered in the envelope too.
          if (body?.result !== 'success' && body?.result !== 'error') notEnvelope.push(sample);
        }
      }),
    );
    console.log(`# chat fuzz [${engine}]: ${requests.length} requests in ${Date.now() - started} ms: ${JSON.stringify(Object.fromEntries([...byClass].sort()))}`);
    for (const f of failures.slice(0, 20)) console.log(`#   ${f.replace(/\n/g, '\\n')}`);
    // What the server logged at error level, by its first lines (the cause of each 5xx).
    const causes = new Map<string, number>();
    for (const line of errorLogs) {
      const entry = JSON.parse(line) as { msg: string; error?: string };
      const cause = String(entry.error ?? entry.msg)
        .split('\n')
        .slice(0, 2)
        .join(' | ')
        .slice(0, 200);
      causes.set(cause, (causes.get(cause) ?? 0) + 1);
    }
    for (const [cause, n] of causes) console.log(`#   logged ${n} x: ${cause}`);
    assert.equal(byClass.get('timeout') ?? 0, 0, 'no request hangs');
    assert.equal(byClass.get('reset') ?? 0, 0, 'no connection is dropped without an answer');
    assert.equal(failures.length, 0, `${failures.length} answers were 5xx (listed above)`);
    assert.equal(notEnvelope.length, 0, `not Zulip's JSON envelope: ${notEnvelope.slice(0, 5).join('\n')}`);
    assert.equal(
      errorLogs.length,
      0,
      `logged at error level: ${errorLogs
        .slice(0, 3)
        .map((l) => l.slice(0, 300))
        .join('\n')}`,
    );
  });

  it('still answers normally afterwards', async () => {
    assert.equal((await ok(owner, 'GET', '/users/me')).user_id, ownerId);
    // A channel of its own: the fuzzing may have changed who may post to the others.
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'after the fuzz' }] });
    const sent = await ok(owner, 'POST', '/messages', { type: 'stream', to: 'after the fuzz', topic: 'after', content: 'still here' });
    const got = await ok(owner, 'GET', `/messages/${sent.id}`);
    assert.equal(got.message.content, '<p>still here</p>');
    const viaSocket = await send(agent, base, { method: 'GET', target: '/api/v1/users/me', headers: { authorization: basic(owner) }, what: 'check' });
    assert.ok(typeof viaSocket !== 'string' && viaSocket.status === 200, JSON.stringify(viaSocket));
  });
});

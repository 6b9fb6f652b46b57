// Chat on SQLite against a real `keel serve` holding 1,000 users and 100,000 messages: messages sent
// per second to a channel with 100 subscribers and to one with 10, GET /messages (the 100 newest of a
// topic) per second, searches per second, and the server's RSS; with bare node:http in the same run.
//
// The realm is seeded in this process through the store and the domain's own write functions (one
// transaction per few thousand messages), before `keel serve` opens it: through the API, 1,000
// POST /users cost an argon2 hash each and 100,000 POST /messages would take minutes, measuring the
// seeding rather than the server. The seed goes through the same code the server uses to store a
// message, so it has the shape the server would have written.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BARE_BODY, describeLoad, load, note, rssKiB, startBareServer, startKeel, withServers, type Benchmark, type Figure, type LoadResult, type Server } from './lib.js';
import { buildConfig } from '../src/config/config.js';
import { readOptions } from '../src/config/env.js';
import { openCore } from '../src/app.js';
import type { Database } from '../src/platform/db/database.js';
import type { ChatTables, ChatUser } from '../src/chat/tables.js';
import { theRealm } from '../src/chat/domain/realm.js';
import { createUser, userByEmail } from '../src/chat/domain/users.js';
import { createStream, subscribe } from '../src/chat/domain/channels.js';
import { renderMessage } from '../src/chat/domain/markdown.js';
import { ROLE } from '../src/chat/domain/roles.js';
import { directRecipient, storeMessage } from '../src/chat/domain/messages.js';
import { realmAlertWords } from '../src/chat/domain/alert-words.js';

const USERS = 1000;
const MESSAGES = Number(process.env.KEEL_BENCH_CHAT_MESSAGES ?? 100_000);
/** Where the seeded messages go: most to the two measured channels, the rest direct between pairs. */
const BIG_SHARE = 0.4;
const SMALL_SHARE = 0.4;
const BIG_TOPICS = 40;
const SMALL_TOPICS = 20;
const SEED_BATCH = 2000;
/** The word searched for: in about one message in ten, as a common word is. */
const COMMON = 'release';
const SEND_TARGET = 1000;
const FETCH_TARGET = 3000;
/** Issue 14: searches of a common word (one message in ten) over 145,000 messages. */
const SEARCH_TARGET = 3000;
const FETCH_SIZE = 100;
const SEARCH_SIZE = 50;

const WORDS = (
  'the a to of and in is it that for on with as this was at by be from or an are not have we you they will can ' +
  'deploy server build test branch merge review ticket customer invoice meeting lunch coffee docs api client queue ' +
  'latency cache index query table schema backup restore monitor alert page incident fix patch bug feature design ' +
  'plan sprint demo slides budget hiring office remote laptop network router firewall certificate domain zone record'
).split(' ');

/** A deterministic generator, so every run seeds the same realm. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(rand: () => number): string {
  const n = 6 + Math.floor(rand() * 14);
  const words = Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]);
  if (rand() < 0.1) words.splice(Math.floor(rand() * n), 0, COMMON);
  return words.join(' ');
}

interface Seeded {
  dataDir: string;
  users: { id: number; email: string; apiKey: string }[];
  bigId: number;
  smallId: number;
  seconds: number;
}

export async function seed(): Promise<Seeded> {
  const started = Date.now();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'keel-bench-chat-'));
  const config = buildConfig(readOptions(['--data-dir', dataDir]).options);
  const ctx = await openCore(config);
  const db = ctx.chatDb as Database<ChatTables>;
  try {
    const realm = (await theRealm(db.kysely))!;
    const owner = (await userByEmail(db.kysely, realm.id, ctx.chatCreated!.email))!;
    const users: Seeded['users'] = [{ id: owner.id, email: owner.email, apiKey: ctx.chatCreated!.apiKey }];
    const people: ChatUser[] = [owner];
    const nowMs = Date.now();
    await db.transaction(async (trx) => {
      for (let i = 1; i < USERS; i++) {
        // No password: an argon2 hash per user would be most of the seeding time, and nobody logs in.
        const made = await createUser(trx, realm.id, { email: `user${i}@bench.example`, fullName: `Bench User ${i}`, password: null, role: ROLE.member }, nowMs, ctx.apiKeySeal);
        users.push({ id: made.user.id, email: made.user.email, apiKey: made.apiKey });
        people.push(made.user);
      }
    });
    const nowSeconds = Math.floor(nowMs / 1000);
    const { big, small } = await db.transaction(async (trx) => {
      const big = await createStream(trx, realm.id, owner, { name: 'big', description: '100 subscribers', inviteOnly: false }, nowSeconds);
      const small = await createStream(trx, realm.id, owner, { name: 'small', description: '10 subscribers', inviteOnly: false }, nowSeconds);
      for (let i = 0; i < 100; i++) await subscribe(trx, people[i].id, big.id);
      for (let i = 0; i < 10; i++) await subscribe(trx, people[i].id, small.id);
      return { big, small };
    });
    const rand = rng(42);
    const pick = (n: number) => Math.floor(rand() * n);
    const bigSubs = people.slice(0, 100).map((u) => u.id);
    const smallSubs = people.slice(0, 10).map((u) => u.id);
    const dateStart = nowSeconds - MESSAGES;
    const alertWords = await realmAlertWords(db.kysely, realm.id);
    for (let done = 0; done < MESSAGES; done += SEED_BATCH) {
      await db.transaction(async (trx) => {
        for (let i = done; i < Math.min(MESSAGES, done + SEED_BATCH); i++) {
          const content = sentence(rand);
          const o = { content, rendered: renderMessage(content).html, client: 'bench', readBySender: true, nowSeconds: dateStart + i, alertWords };
          const r = rand();
          if (r < BIG_SHARE) {
            const sender = people[pick(100)];
            await storeMessage(trx, realm.id, sender, big.recipient_id, big.id, `topic ${pick(BIG_TOPICS)}`, bigSubs, o);
          } else if (r < BIG_SHARE + SMALL_SHARE) {
            const sender = people[pick(10)];
            await storeMessage(trx, realm.id, sender, small.recipient_id, small.id, `topic ${pick(SMALL_TOPICS)}`, smallSubs, o);
          } else {
            const a = people[pick(USERS)];
            const b = people[pick(USERS)];
            const ids = [a.id, b.id];
            await storeMessage(trx, realm.id, a, await directRecipient(trx, ids), null, '', ids, o);
          }
        }
      });
    }
    return { dataDir, users, bigId: big.id, smallId: small.id, seconds: (Date.now() - started) / 1000 };
  } finally {
    await ctx.close();
  }
}

function auth(u: { email: string; apiKey: string }): string {
  return 'Basic ' + Buffer.from(`${u.email}:${u.apiKey}`).toString('base64');
}

function rate(name: string, r: LoadResult, atLeast?: number): Figure {
  return { name, value: Math.round(r.rps), unit: 'req/s', baseline: 'bare', atLeast, detail: describeLoad(r) };
}

function mib(pid: number): number {
  return Math.round((rssKiB(pid) ?? 0) / 1024);
}

const OK = '"result":"success"';

export const benchmark: Benchmark = {
  name: 'chat',
  summary: `Chat on SQLite with ${USERS} users and ${MESSAGES} messages: sends/s (100 and 10 subscribers), fetches/s, searches/s, RSS`,
  async run() {
    const s = await seed();
    note(
      `seeded ${USERS} users, channels of 100 and 10 subscribers, ${MESSAGES} messages (${BIG_SHARE * 100}% / ${SMALL_SHARE * 100}% to them, the rest direct) in ${s.seconds.toFixed(1)} s, in-process`,
    );
    const chatOf = (k: Server & { chatUrl?: string }) => ({ ...k, url: k.chatUrl! });
    return withServers([startBareServer, () => startKeel({ dataDir: s.dataDir })], async (bare, keel) => {
      const chat = chatOf(keel);
      const sender = s.users[1];
      const reader = s.users[2];
      const sendBody = (to: number) =>
        new URLSearchParams({ type: 'stream', to: String(to), topic: 'bench sends', content: 'Load test message: the quick brown fox jumps over the lazy dog.' }).toString();
      const send = (to: number) => ({
        path: '/api/v1/messages',
        method: 'POST' as const,
        expect: '"id":',
        headers: { authorization: auth(sender), 'content-type': 'application/x-www-form-urlencoded' },
        body: sendBody(to),
      });
      const fetchQuery = new URLSearchParams({
        anchor: 'newest',
        num_before: String(FETCH_SIZE),
        num_after: '0',
        narrow: JSON.stringify([
          { operator: 'channel', operand: s.bigId },
          { operator: 'topic', operand: 'topic 7' },
        ]),
      });
      const searchQuery = new URLSearchParams({
        anchor: 'newest',
        num_before: String(SEARCH_SIZE),
        num_after: '0',
        narrow: JSON.stringify([{ operator: 'search', operand: COMMON }]),
      });
      const get = (query: URLSearchParams) => ({ path: `/api/v1/messages?${query}`, headers: { authorization: auth(reader) }, expect: OK });

      // What one fetch and one search return, so the figures say what was measured.
      const probe = async (q: URLSearchParams) =>
        ((await (await fetch(`${chat.url}/api/v1/messages?${q}`, { headers: { authorization: auth(reader) } })).json()) as { messages: unknown[] }).messages.length;
      note(`a fetch returns ${await probe(fetchQuery)} messages, a search for "${COMMON}" ${await probe(searchQuery)}`);
      const rssSeeded = mib(keel.pid);

      const bareRun = await load(bare, { path: '/', expect: BARE_BODY });
      note(`bare   ${Math.round(bareRun.rps)} req/s`);
      const big = await load(chat, send(s.bigId));
      note(`send-100 ${Math.round(big.rps)} req/s`);
      const small = await load(chat, send(s.smallId));
      note(`send-10 ${Math.round(small.rps)} req/s`);
      const fetched = await load(chat, get(fetchQuery));
      note(`fetch  ${Math.round(fetched.rps)} req/s`);
      const searched = await load(chat, get(searchQuery));
      note(`search ${Math.round(searched.rps)} req/s`);
      const rssAfter = mib(keel.pid);
      return [
        { name: 'bare', value: Math.round(bareRun.rps), unit: 'req/s', detail: describeLoad(bareRun) },
        rate('send-100', big, SEND_TARGET),
        rate('send-10', small),
        rate('fetch', fetched, FETCH_TARGET),
        rate('search', searched, SEARCH_TARGET),
        { name: 'rss-seed', value: rssSeeded, unit: 'MiB', detail: `after start and one fetch and search, ${USERS} users, ${MESSAGES} messages` },
        { name: 'rss-load', value: rssAfter, unit: 'MiB', detail: `after the load (${big.total + small.total} more messages)` },
      ];
    });
  },
};

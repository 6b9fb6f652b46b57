// In-process microbenchmarks of the db layer's fast paths (bench/fast/, src/platform/db/fast/README.md):
// each times a fast path against the plain path it replaces, interleaved in one run, and reports the
// fast path's rate as a ratio of the plain one. Also the SQLite store they share.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { Database } from '../src/platform/db/database.js';
import { openSqlite } from '../src/platform/db/sqlite.js';
import type { Figure } from './lib.js';

/** One operation of a path; `i` counts up, for varying arguments. A promise is awaited before the next. */
export type Op = (i: number) => unknown;

export interface CompareOptions {
  plain: Op;
  fast: Op;
  /** What one operation is, for the figures' unit ("reads", "pages"). */
  unit: string;
  /**
   * Operations per event-loop turn: after this many the loop yields (setImmediate), as a server's
   * turn ends after the requests it read, so what lives for one turn (a read snapshot) ends as often.
   */
  perTurn?: number;
  /** Timed rounds of each path, alternating, and each round's length. */
  rounds?: number;
  roundMs?: number;
  detail?: string;
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs `op` for about `ms` milliseconds; operations per second. */
async function rate(op: Op, ms: number, perTurn: number): Promise<number> {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let k = 0; k < perTurn; k++, n++) {
      const r = op(n);
      if (r instanceof Promise) await r;
    }
    await yieldTurn();
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * The plain path's rate (the baseline) and the fast path's, medians of rounds taken in turn (plain,
 * fast, plain, ...) after a warm-up of each, so both see the same machine.
 */
export async function compare(o: CompareOptions): Promise<Figure[]> {
  const rounds = o.rounds ?? 7;
  const roundMs = o.roundMs ?? 300;
  const perTurn = o.perTurn ?? 20;
  await rate(o.plain, roundMs, perTurn);
  await rate(o.fast, roundMs, perTurn);
  const plain: number[] = [];
  const fast: number[] = [];
  for (let r = 0; r < rounds; r++) {
    plain.push(await rate(o.plain, roundMs, perTurn));
    fast.push(await rate(o.fast, roundMs, perTurn));
  }
  const p = median(plain);
  const f = median(fast);
  const us = (perSecond: number) => `${(1e6 / perSecond).toFixed(2)} us each`;
  return [
    { name: 'plain', value: Math.round(p), unit: `${o.unit}/s`, detail: us(p) },
    { name: 'fast', value: Math.round(f), unit: `${o.unit}/s`, baseline: 'plain', detail: o.detail ? `${us(f)}; ${o.detail}` : us(f) },
  ];
}

/** The table the SQLite benchmarks read: nine columns, as an API user or a message row has. */
export interface Item {
  id: number;
  realm_id: number;
  name: string;
  email: string;
  role: number;
  active: number;
  created: string;
  note: string;
  score: number;
}
export interface BenchTables {
  items: Item;
}

export const ITEM_COUNT = 10_000;

/**
 * A SQLite store as `keel serve` opens it (openSqlite: WAL, the fast paths), in a temporary
 * directory, with ITEM_COUNT rows in `items`; also a second raw better-sqlite3 connection to the
 * same file, configured the same way, for benchmarks of one mechanism on its own.
 */
export async function withSqlite<R>(body: (store: Database<BenchTables>, raw: BetterSqlite3.Database) => Promise<R>): Promise<R> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-bench-fast-'));
  const file = path.join(dir, 'bench.sqlite');
  const store = openSqlite<BenchTables>(file);
  let raw: BetterSqlite3.Database | undefined;
  try {
    await sql`create table items (id integer primary key, realm_id integer not null, name text not null, email text not null, role integer not null, active integer not null, created text not null, note text not null, score real not null)`.execute(
      store.kysely,
    );
    await sql`create index items_realm on items (realm_id, id)`.execute(store.kysely);
    await store.transaction(async (trx) => {
      for (let i = 1; i <= ITEM_COUNT; i += 500) {
        const rows = Array.from({ length: 500 }, (_, k) => ({
          id: i + k,
          realm_id: (i + k) % 10,
          name: `user ${i + k}`,
          email: `user${i + k}@example.com`,
          role: (i + k) % 4,
          active: 1,
          created: new Date(1_700_000_000_000 + (i + k) * 1000).toISOString(),
          note: 'x'.repeat(40),
          score: (i + k) / 7,
        }));
        await trx.insertInto('items').values(rows).execute();
      }
    });
    raw = new BetterSqlite3(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.pragma('busy_timeout = 5000');
    return await body(store, raw);
  } finally {
    raw?.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An id of `items` for the i-th operation, spread over the table. */
export function itemId(i: number): number {
  return ((i * 7919) % ITEM_COUNT) + 1;
}

// `npm run bench [-- name ...]`: runs every benchmark module in bench/ and bench/fast/ (or the ones named;
// `fast` names all of bench/fast/, the db fast paths' microbenchmarks), prints each
// figure with its ratio against the baseline measured in the same run, then a summary. Ratios are
// reported, never asserted: the exit status is non-zero only when a benchmark crashed.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Benchmark, Figure } from './lib.js';

const DIR = path.dirname(fileURLToPath(import.meta.url));
const NOT_BENCHMARKS = new Set(['run.ts', 'lib.ts', 'micro.ts']);
/** Folders of bench/ whose modules are benchmarks too; a folder's name runs all of its own. */
const GROUPS = ['fast'];

/** A benchmark with the folder it came from (none for bench/ itself). */
interface Found {
  benchmark: Benchmark;
  group?: string;
}

async function discover(): Promise<Found[]> {
  const out: Found[] = [];
  for (const group of [undefined, ...GROUPS]) {
    const dir = group ? path.join(DIR, group) : DIR;
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !NOT_BENCHMARKS.has(f))
      .sort();
    for (const f of files) {
      // A module exports one `benchmark`, or several related ones as `benchmarks`.
      const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { benchmark?: Benchmark; benchmarks?: Benchmark[] };
      const found = [...(mod.benchmark ? [mod.benchmark] : []), ...(mod.benchmarks ?? [])];
      if (!found.length) throw new Error(`bench/${group ? `${group}/` : ''}${f} exports no \`benchmark\` or \`benchmarks\``);
      out.push(...found.map((benchmark) => ({ benchmark, group })));
    }
  }
  return out;
}

function ratioOf(f: Figure, all: Figure[]): number | undefined {
  const base = f.baseline && all.find((b) => b.name === f.baseline);
  return base && base.value > 0 ? f.value / base.value : undefined;
}

function describe(f: Figure, all: Figure[]): string {
  const ratio = ratioOf(f, all);
  let line = `${f.name.padEnd(8)} ${String(f.value).padStart(9)} ${f.unit}`;
  if (ratio !== undefined) {
    line += `  ${ratio.toFixed(2)}x ${f.baseline}`;
    if (f.target !== undefined) line += ratio >= f.target ? ` (target ${f.target}x: met)` : ` (target ${f.target}x: BELOW)`;
  } else if (!f.baseline && all.some((o) => o.baseline === f.name)) {
    line += '  (baseline)';
  }
  const bound = absoluteTarget(f);
  if (bound) line += ` (target ${bound.text}: ${bound.met ? 'met' : 'BELOW'})`;
  return f.detail ? `${line}  [${f.detail}]` : line;
}

function absoluteTarget(f: Figure): { text: string; met: boolean } | undefined {
  if (f.atLeast !== undefined) return { text: `>= ${f.atLeast}`, met: f.value >= f.atLeast };
  if (f.atMost !== undefined) return { text: `<= ${f.atMost}`, met: f.value <= f.atMost };
  return undefined;
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const found = await discover();
  const all = found.map((f) => f.benchmark);
  const named = (f: Found, w: string) => f.benchmark.name === w || f.group === w;
  const unknown = wanted.filter((w) => !found.some((f) => named(f, w)));
  if (unknown.length) {
    console.error(`unknown benchmark ${unknown.join(', ')} (have: ${[...GROUPS, ...all.map((b) => b.name)].join(', ')})`);
    return 2;
  }
  const chosen = wanted.length ? found.filter((f) => wanted.some((w) => named(f, w))).map((f) => f.benchmark) : all;
  const summary: string[] = [];
  let crashed = 0;
  for (const b of chosen) {
    console.log(`\n== ${b.name}: ${b.summary}`);
    const started = Date.now();
    try {
      const figures = await b.run();
      for (const f of figures) console.log(`  ${describe(f, figures)}`);
      for (const f of figures) {
        const r = ratioOf(f, figures);
        if (r !== undefined) summary.push(`${b.name}/${f.name}: ${r.toFixed(2)}x ${f.baseline}${f.target !== undefined && r < f.target ? ` (below ${f.target}x)` : ''}`);
        const bound = absoluteTarget(f);
        if (bound) summary.push(`${b.name}/${f.name}: ${f.value} ${f.unit}${bound.met ? '' : ` (target ${bound.text} missed)`}`);
      }
      console.log(`  (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    } catch (err) {
      crashed++;
      console.log(`  CRASHED: ${(err as Error).stack ?? err}`);
      summary.push(`${b.name}: CRASHED`);
    }
  }
  console.log(`\n== summary (${chosen.length} benchmark${chosen.length === 1 ? '' : 's'}, ${crashed} crashed)`);
  for (const s of summary) console.log(`  ${s}`);
  return crashed ? 1 : 0;
}

process.exitCode = await main();

#!/usr/bin/env node
// Builds dist/ (type-checking the whole tree), then runs every *.test.ts under test/ with node's test
// runner (Node 20 does not expand globs itself). Extra arguments are passed through (for example a
// single file); those runs build without the type check, as they always skipped it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from './build.js';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const args = process.argv.slice(2);
const files = args.length ? args : find('test');
// Black-box tests run the compiled `keel` (bin/keel.js runs dist/), so every run builds first: the
// whole suite after the full type check (the same tsc run), a few files after an emit without it.
const built = build({ check: !args.length });
if (built !== 0) {
  console.error(built === 2 ? 'type check failed' : 'build failed');
  process.exit(1);
}
// The spec reporter for people, and TAP to a file whose totals give the closing summary line.
const tmp = mkdtempSync(path.join(os.tmpdir(), 'keel-tap-'));
const tap = path.join(tmp, 'results.tap');
const run = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-timeout=600000',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tap}`,
    ...files,
  ],
  { stdio: 'inherit' },
);
const totals = { pass: 0, fail: 0, skipped: 0 };
try {
  for (const m of readFileSync(tap, 'utf8').matchAll(/^# (pass|fail|skipped) (\d+)$/gm)) totals[m[1]] = Number(m[2]);
} catch {
  // No TAP file: the runner itself failed; its status below says so.
}
rmSync(tmp, { recursive: true, force: true });
console.log(`tests: ${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped`);
process.exit(run.status ?? 1);

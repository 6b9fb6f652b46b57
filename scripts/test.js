#!/usr/bin/env node
// Runs the type check, then every *.test.ts under test/ with node's test runner (Node 20 does not
// expand globs itself). Extra arguments are passed through (for example a single file).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

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
if (!args.length) {
  const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit'], { stdio: 'inherit' });
  if (tsc.status !== 0) {
    console.error('type check failed');
    process.exit(1);
  }
}
const run = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);

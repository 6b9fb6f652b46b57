#!/usr/bin/env node
// Compiles src/ (with test/ and bench/, type-checked in the same tsc run) into dist/, which `keel`
// runs. `--no-check` emits without the type check (the test runner's choice when given files).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

/**
 * Runs tsc on tsconfig.json (incremental: its state is dist/.tsbuildinfo, so deleting dist/ starts
 * afresh). Returns tsc's exit status: 0 clean, 2 type errors but everything emitted, other failed.
 */
export function build({ check = true } = {}) {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  if (!existsSync(tsc)) {
    // An install without devDependencies (npm ci --omit=dev) runs `prepare` too: it can only use a
    // dist/ built beforehand.
    const ready = existsSync(path.join(dist, 'src/main.js'));
    console.error(`build: typescript is not installed (an install without devDependencies)${ready ? '; keeping the dist/ already built' : ': build dist/ with them installed'}`);
    return ready ? 0 : 1;
  }
  const args = [tsc, '-p', root, ...(check ? [] : ['--noCheck'])];
  const started = new Date();
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  pruneOrphans(dist, root);
  // tsc leaves its own state file untouched when nothing changed, so `keel` dates the build by this,
  // stamped with the start: a source saved while tsc ran may not be in the build.
  if (run.status === 0 || run.status === 2) {
    const stamp = path.join(dist, '.built');
    writeFileSync(stamp, `${started.toISOString()}\n`);
    utimesSync(stamp, started, started);
  }
  return run.status ?? 1;
}

// tsc never deletes what it emitted for a source file that is gone (a moved or renamed module), so
// dist/ would keep code that no source holds any more.
function pruneOrphans(dir, sourceDir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const out = path.join(dir, name);
    const src = path.join(sourceDir, name);
    if (statSync(out).isDirectory()) {
      if (!existsSync(src)) rmSync(out, { recursive: true, force: true });
      else pruneOrphans(out, src);
    } else if (name.endsWith('.js') && !existsSync(src.replace(/\.js$/, '.ts'))) {
      rmSync(out, { force: true });
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const status = build({ check: !process.argv.includes('--no-check') });
  if (status !== 0) console.error(status === 2 ? 'build: type errors (dist/ was written anyway)' : 'build failed');
  process.exit(status);
}

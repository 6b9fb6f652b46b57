// The fast paths' README stays the one list of them: every module in src/platform/db/fast/ is named
// in its table, and every benchmark the README names exists in bench/fast/ (and the other way round).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const FAST = path.join(ROOT, 'src/platform/db/fast');
const BENCH = path.join(ROOT, 'bench/fast');
const readme = readFileSync(path.join(FAST, 'README.md'), 'utf8');
const table = readme.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('|--'));

it('names every fast-path module in the README table', () => {
  for (const f of readdirSync(FAST).filter((n) => n.endsWith('.ts'))) {
    assert.ok(
      table.some((row) => row.includes(`\`${f}\``)),
      `${f} is not in src/platform/db/fast/README.md's table`,
    );
  }
});

it('has each microbenchmark the README names, and names each one there is', () => {
  const named = new Set([...readme.matchAll(/`bench\/fast\/([a-z-]+\.ts)`/g)].map((m) => m[1]));
  const present = new Set(readdirSync(BENCH).filter((n) => n.endsWith('.ts')));
  assert.deepEqual([...named].sort(), [...present].sort());
});

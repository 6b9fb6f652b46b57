// bin/keel.js, the installed command: it runs the compiled dist/, says how to build when there is
// none, and warns when the sources changed after the last build. Each case runs a copy of bin/keel.js
// in a temporary tree of its own, so the checkout's real dist/ is never touched.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const made: string[] = [];
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'keel-bin-'));
  made.push(root);
  mkdirSync(path.join(root, 'bin'));
  copyFileSync('bin/keel.js', path.join(root, 'bin/keel.js'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

function keel(root: string, args: string[]) {
  return spawnSync(process.execPath, [path.join(root, 'bin/keel.js'), ...args], { encoding: 'utf8' });
}

// Stands in for the compiled program: proves which main ran and with what arguments.
const MAIN = 'export async function main(args) { process.stdout.write(JSON.stringify(args)); return 7; }\n';

function age(root: string, name: string, secondsAgo: number): void {
  const when = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(path.join(root, name), when, when);
}

describe('bin/keel.js', () => {
  it('says to run the build when dist/ is missing, and fails', () => {
    const root = tree({ 'src/main.ts': '' });
    const run = keel(root, ['serve']);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /compiled program is missing .*dist\/src\/main\.js.*npm run build/);
    assert.equal(run.stdout, '');
  });

  it("runs dist/src/main.js with the command's arguments and exits with its code", () => {
    const root = tree({ 'dist/src/main.js': MAIN, 'dist/.built': '', 'src/main.ts': '' });
    age(root, 'src/main.ts', 60);
    const run = keel(root, ['admin', '--json']);
    assert.equal(run.status, 7);
    assert.equal(run.stdout, '["admin","--json"]');
    assert.equal(run.stderr, '');
  });

  it('warns, naming the file, when a source changed after the last build, and still runs', () => {
    const root = tree({ 'dist/src/main.js': MAIN, 'dist/.built': '', 'src/main.ts': '', 'src/chat/x.ts': '' });
    age(root, 'dist/.built', 60);
    age(root, 'src/main.ts', 120);
    const run = keel(root, ['help']);
    assert.equal(run.status, 7);
    assert.match(run.stderr, /src\/chat\/x\.ts changed after the last build: run `npm run build`/);
  });
});

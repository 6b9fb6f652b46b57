#!/usr/bin/env node
// The `keel` command: runs the compiled program in dist/ (`npm run build`; `npm install` builds too).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = new URL('../dist/src/main.js', import.meta.url);

if (!existsSync(entry)) {
  process.stderr.write(`keel: the compiled program is missing (${fileURLToPath(entry)}): run \`npm run build\` in ${root}\n`);
  process.exit(1);
}
warnIfStale();
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));

// A checkout whose sources changed after the last build would run the old code without a word.
// Looking costs one stat per source file (a few milliseconds); an install without src/ skips it.
function warnIfStale() {
  let built;
  try {
    built = statSync(new URL('../dist/.built', import.meta.url)).mtimeMs;
  } catch {
    return;
  }
  const newer = newestSource(fileURLToPath(new URL('../src', import.meta.url)), built);
  if (newer) process.stderr.write(`keel: ${newer} changed after the last build: run \`npm run build\` to run the new code\n`);
}

function newestSource(dir, than) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  for (const e of entries) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      const found = newestSource(p, than);
      if (found) return found;
    } else if (e.name.endsWith('.ts') && statSync(p).mtimeMs > than) {
      return p;
    }
  }
  return undefined;
}

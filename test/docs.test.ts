// The docs against the code: every option, KEEL_* variable, rate-limit budget and Infra command is
// documented as the code has it, and every relative link in the README and docs/ leads somewhere.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { OPTIONS, SECRET_KEY_ENV } from '../src/config/env.js';
import { DEFAULT_RATE_LIMITS } from '../src/config/rate-limits.js';
import { allCommands } from '../src/infra/commands/index.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

function filesUnder(dir: string, ends: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...filesUnder(rel, ends));
    else if (ends.some((e) => name.endsWith(e))) out.push(rel);
  }
  return out;
}

/** The cells of each table row of a Markdown text, without the backticks around them. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-| ]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim().replace(/^`(.*)`$/, '$1')),
    );
}

/** KEEL_* names a file reads: written as a string or as process.env.NAME (constants named KEEL_* are not variables). */
function variablesIn(files: string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    for (const m of read(file).matchAll(/(?:['"`]|process\.env\.)(KEEL_[A-Z0-9_]+)/g)) names.add(m[1]);
  }
  return names;
}

it('documents every option of keel with its variable and default, and no option that does not exist', () => {
  const rows = tableRows(read('docs/configuration.md')).filter((r) => r[0].startsWith('--'));
  const documented = new Map(rows.map((r) => [r[0], r]));
  for (const [name, option] of Object.entries(OPTIONS)) {
    const row = documented.get(`--${name}`);
    assert.ok(row, `docs/configuration.md has no row for --${name}`);
    assert.equal(row[1], option.env, `--${name}: variable`);
    assert.equal(row[2], 'default' in option ? option.default : '', `--${name}: default`);
  }
  const known = new Set([...Object.keys(OPTIONS).map((n) => `--${n}`), '--json', '--help']);
  for (const flag of documented.keys()) assert.ok(known.has(flag), `docs/configuration.md documents ${flag}, which keel does not have`);
});

it('documents every KEEL_* variable the server, the tests and the benchmarks read', () => {
  const configuration = read('docs/configuration.md');
  const server = variablesIn(filesUnder('src', ['.ts']));
  assert.ok(server.has(SECRET_KEY_ENV) && server.has('KEEL_DATA_DIR'), 'the scan finds the variables src/ reads');
  for (const name of server) assert.ok(configuration.includes(`\`${name}\``), `docs/configuration.md does not mention ${name}`);
  const testing = read('docs/testing.md');
  const harness = variablesIn([...filesUnder('test', ['.ts']), ...filesUnder('bench', ['.ts']), ...filesUnder('scripts', ['.js', '.ts'])]);
  assert.ok(harness.has('KEEL_TEST_POSTGRES_URL'), 'the scan finds the variables the tests read');
  for (const name of harness) {
    if (server.has(name)) continue;
    assert.ok(testing.includes(`\`${name}\``), `docs/testing.md does not mention ${name}`);
  }
});

it('documents every rate-limit budget with its default', () => {
  const rows = new Map(tableRows(read('docs/configuration.md')).map((r) => [r[0], r]));
  for (const [key, rule] of Object.entries(DEFAULT_RATE_LIMITS)) {
    if (key === 'api') continue;
    const name = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const row = rows.get(name);
    assert.ok(row, `docs/configuration.md has no row for the budget ${name}`);
    const { count, windowSeconds } = rule as { count: number; windowSeconds: number };
    assert.equal(row[1], `${count}/${windowSeconds}`, `${name}: default`);
  }
});

it('lists every Infra command with its REST path, and no command the server does not serve', () => {
  const rows = tableRows(read('docs/infra-api.md')).filter((r) => /^[a-z][a-z0-9]*(\.[a-z0-9]+)+$/.test(r[0]));
  const documented = new Map(rows.map((r) => [r[0], r[1]]));
  const served = allCommands();
  assert.ok(served.length > 0);
  for (const command of served) {
    assert.ok(documented.has(command.cmd), `docs/infra-api.md does not list ${command.cmd}`);
    if (command.rest) assert.equal(documented.get(command.cmd), `${command.rest.method} ${command.rest.path}`, `${command.cmd}: REST path`);
  }
  const names = new Set(served.map((c) => c.cmd));
  for (const cmd of documented.keys()) assert.ok(names.has(cmd), `docs/infra-api.md lists ${cmd}, which is not served`);
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

const GENERATED_CHAT_API = 'docs/chat-api.md';

function linksOf(files: string[]): { from: string; target: string; hash: string }[] {
  const links = [];
  for (const from of files) {
    const text = read(from).replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(m[1])) continue;
      const [file, hash = ''] = m[1].split('#');
      links.push({ from, target: file ? path.normalize(path.join(path.dirname(from), file)) : from, hash });
    }
  }
  return links;
}

const docFiles = ['README.md', ...filesUnder('docs', ['.md'])];

it('has relative links in the README and docs/ that lead to a file and heading that exist', () => {
  const links = linksOf(docFiles).filter((l) => l.target !== GENERATED_CHAT_API);
  assert.ok(links.length > 20, 'the link scan finds the docs links');
  for (const { from, target, hash } of links) {
    assert.ok(existsSync(path.join(ROOT, target)), `${from} links to ${target}, which does not exist`);
    if (!hash || !target.endsWith('.md')) continue;
    const headings = [
      ...read(target)
        .replace(/```[\s\S]*?```/g, '')
        .matchAll(/^#+ (.*)$/gm),
    ].map((m) => anchor(m[1]));
    assert.ok(headings.includes(hash), `${from} links to ${target}#${hash}, a heading ${target} does not have`);
  }
});

it('links to the generated Chat API reference, which exists', () => {
  assert.ok(existsSync(path.join(ROOT, GENERATED_CHAT_API)), `${GENERATED_CHAT_API} is missing: npm run docs generates it`);
  assert.ok(linksOf(docFiles).some((l) => l.target === GENERATED_CHAT_API));
});

it('keeps the README under 15 KB', () => {
  assert.ok(statSync(path.join(ROOT, 'README.md')).size < 15 * 1024);
});

// A lint-like check: Chat's error texts live only in src/chat/errors/catalog.ts. It fails when code
// elsewhere under src/chat builds a ChatError itself, declares an entry, or writes an error body's
// message as a literal, and when a catalog entry is used nowhere (a text no client can get).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import * as catalog from '../../../src/chat/errors/catalog.js';

const ROOT = path.resolve(import.meta.dirname, '../../../src/chat');
const ERRORS_DIR = path.join(ROOT, 'errors');

function sources(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) return p === ERRORS_DIR ? [] : sources(p);
      return name.endsWith('.ts') ? [p] : [];
    });
}

/** The source with comments blanked, so a comment quoting an old call does not count. */
const code = (file: string) =>
  readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

const RULES: [RegExp, string][] = [
  [/new\s+ChatError\s*\(/, 'builds a ChatError: call a catalog entry'],
  [/defineError\s*\(/, 'declares an error outside the catalog'],
  [/\bmsg\s*:\s*(['"`])(?!\1)/, 'writes an error message literal into a body'],
];

describe('error texts outside the Chat catalog', () => {
  const files = sources(ROOT);

  it('finds the Chat sources', () => assert.ok(files.length > 50, `only ${files.length} files`));

  it('are written nowhere under src/chat but src/chat/errors/', () => {
    const found: string[] = [];
    for (const file of files) {
      const lines = code(file).split('\n');
      lines.forEach((line, i) => {
        for (const [rule, why] of RULES) if (rule.test(line)) found.push(`${path.relative(ROOT, file)}:${i + 1} ${why}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, []);
  });

  it('the rules catch what they are for', () => {
    const caught = (line: string) => RULES.some(([rule]) => rule.test(line));
    assert.ok(caught("throw new ChatError('BAD_REQUEST', 'Nope');"));
    assert.ok(caught("export const x = defineError({ code: 'BAD_REQUEST', message: 'Nope' });"));
    assert.ok(caught("send(reply, 404, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });"));
    assert.ok(!caught("const body = { result: 'success', msg: '', ...result };"));
    assert.ok(!caught('throw channelNameMissing({ name });'));
  });

  it('use every catalog entry somewhere', () => {
    const all = files.map(code).join('\n');
    const unused = Object.keys(catalog).filter((name) => !new RegExp(`\\b${name}\\b`).test(all));
    assert.deepEqual(unused, []);
  });
});

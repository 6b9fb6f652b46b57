// The layering in biome.jsonc (platform imports neither chat nor infra; chat and infra never import each
// other; dns imports neither; zones is neutral ground): Biome lints a scratch tree of one-import
// modules with the project's own configuration, and each forbidden import must be refused and each
// allowed one pass. `npm run lint` applies the same rules to the real tree.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const BIOME = path.resolve('node_modules/.bin/biome');

// Every way a module can pull in another: each must count.
const FORMS: Record<string, (spec: string) => string> = {
  import: (spec) => `import { x } from '${spec}';\nexport const y = x;\n`,
  'import type': (spec) => `import type { X } from '${spec}';\nexport const y: X | undefined = undefined;\n`,
  're-export': (spec) => `export { x } from '${spec}';\n`,
  'dynamic import': (spec) => `export const y = () => import('${spec}');\n`,
};

// [the importing folder, the imported module as written there, allowed?]
const CASES: [string, string, boolean][] = [
  ['src/platform/http', '../../chat/errors.js', false],
  ['src/platform/http', '../../infra/errors.js', false],
  ['src/platform', '../dns/server.js', false],
  ['src/platform', '../zones/catalog.js', false],
  ['src/platform/db', '../clock.js', true],
  ['src/chat', '../infra/errors.js', false],
  ['src/chat/domain', '../../infra/commands/dns.js', false],
  ['src/chat/endpoints', '../../dns/server.js', false],
  ['src/chat/endpoints', '../../platform/http/router.js', true],
  ['src/infra', '../chat/errors.js', false],
  ['src/infra/commands', '../../chat/domain/users.js', false],
  ['src/infra/commands', '../../zones/catalog.js', true],
  ['src/infra', '../dns/server.js', true],
  ['src/dns', '../infra/dns-zones.js', false],
  ['src/dns', '../chat/errors.js', false],
  ['src/dns', '../zones/catalog.js', true],
  ['src/dns', '../platform/log.js', true],
  ['src/zones', '../infra/errors.js', false],
  ['src/zones', '../dns/zone-index.js', false],
  ['src/zones', '../chat/tables.js', false],
  ['src/zones', '../platform/clock.js', true],
];

const root = mkdtempSync(path.join(os.tmpdir(), 'keel-layering-'));
after(() => rmSync(root, { recursive: true, force: true }));

interface Diagnostic {
  category: string;
  location: { path: string };
}

function lintScratchTree(): Map<string, string[]> {
  copyFileSync('biome.jsonc', path.join(root, 'biome.jsonc'));
  const files: string[] = [];
  CASES.forEach(([dir, spec], i) => {
    for (const [form, text] of Object.entries(FORMS)) {
      const file = `${dir}/case-${i}-${form.replace(' ', '-')}.ts`;
      mkdirSync(path.join(root, dir), { recursive: true });
      writeFileSync(path.join(root, file), text(spec));
      files.push(file);
    }
  });
  const run = spawnSync(BIOME, ['lint', '--vcs-enabled=false', '--colors=off', '--reporter=json', '--max-diagnostics=none', 'src'], { cwd: root, encoding: 'utf8' });
  assert.ok(run.stdout, `biome printed nothing: ${run.stderr}`);
  const byFile = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const d of (JSON.parse(run.stdout) as { diagnostics: Diagnostic[] }).diagnostics) {
    const list = byFile.get(d.location.path);
    assert.ok(list, `a diagnostic for a file the test did not write: ${d.location.path} ${d.category}`);
    list.push(d.category);
  }
  return byFile;
}

describe('the layering rules in biome.jsonc', () => {
  const found = lintScratchTree();
  CASES.forEach(([dir, spec, allowed], i) => {
    it(`${dir} ${allowed ? 'may' : 'may not'} import ${spec}`, () => {
      for (const form of Object.keys(FORMS)) {
        const categories = found.get(`${dir}/case-${i}-${form.replace(' ', '-')}.ts`);
        if (allowed) assert.deepEqual(categories, [], `${form}: ${categories}`);
        else assert.deepEqual(categories, ['lint/style/noRestrictedImports'], `${form} was not refused`);
      }
    });
  });
});

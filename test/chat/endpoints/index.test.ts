// Registration: every endpoint definition in src/chat/endpoints/ is in allEndpoints() (a definition
// left out would be neither served nor documented), and none is registered twice.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { it } from 'node:test';
import { allEndpoints, ENDPOINT_AREAS } from '../../../src/chat/endpoints/index.js';
import type { Endpoint } from '../../../src/chat/endpoint.js';

const DIR = new URL('../../../src/chat/endpoints/', import.meta.url);

/** What a definition looks like, whatever name it is exported under. */
function isDefinition(v: unknown): v is Endpoint {
  if (!v || typeof v !== 'object') return false;
  const e = v as Partial<Endpoint>;
  return typeof e.method === 'string' && typeof e.path === 'string' && typeof e.handler === 'function' && typeof e.params === 'object';
}

/** Every exported definition of every module in the folder, by where it is exported. */
async function exportedDefinitions(): Promise<Map<Endpoint, string>> {
  const found = new Map<Endpoint, string>();
  for (const file of readdirSync(DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const mod = (await import(new URL(file, DIR).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) if (isDefinition(value) && !found.has(value)) found.set(value, `${file} ${name}`);
  }
  return found;
}

it('registers every endpoint definition exported from src/chat/endpoints/', async () => {
  const registered = new Set(allEndpoints());
  const found = await exportedDefinitions();
  assert.ok(found.size >= registered.size, `found ${found.size} definitions, fewer than the ${registered.size} registered: the search is broken`);
  const missing = [...found].filter(([e]) => !registered.has(e)).map(([e, where]) => `${where} (${e.method} ${e.path})`);
  assert.deepEqual(missing, [], 'defined but not registered in allEndpoints() (src/chat/endpoints/index.ts)');
});

it('registers each definition once, in one area', () => {
  const seen = new Map<Endpoint, string>();
  const twice: string[] = [];
  for (const area of ENDPOINT_AREAS) {
    for (const e of area.endpoints) {
      if (seen.has(e)) twice.push(`${e.method} ${e.path} in ${seen.get(e)} and ${area.name}`);
      seen.set(e, area.name);
    }
  }
  assert.deepEqual(twice, []);
});

it('finds a definition that is not registered', async () => {
  // The check above would pass vacuously if it found nothing: one definition left out is caught.
  const registered = new Set(allEndpoints().slice(1));
  const found = await exportedDefinitions();
  const missing = [...found.keys()].filter((e) => !registered.has(e));
  assert.deepEqual(missing, [allEndpoints()[0]]);
});

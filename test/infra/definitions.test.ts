// The Infra command definitions as a whole: every one registered, every parameter with a real schema
// (none that takes anything), and the DNS record dialects brought into their canonical shape by each
// command's normalise step, as RackCorp's clients send them (../shared/reference/infra-clients.md 3.3).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Value from 'typebox/value';
import type { TSchema } from 'typebox';
import type { Command } from '../../src/infra/command.js';
import { allCommands } from '../../src/infra/commands/index.js';
import { checkParams } from '../../src/infra/params.js';
import { openApiDocument } from '../../src/infra/openapi.js';
import { shapeOf } from '../../src/infra/dns-input.js';

const COMMANDS_DIR = path.resolve(import.meta.dirname, '../../src/infra/commands');

/** Keywords that constrain a value: a schema node with none of them takes anything. */
const CONSTRAINING = ['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'properties', 'items', '$ref', 'not'];

/** Where a schema takes any value at all (Type.Unknown, Type.Any, or an empty schema), as JSON paths. */
function openPlaces(schema: TSchema, at = '$'): string[] {
  const node = schema as Record<string, unknown>;
  const kind = node['~kind'];
  if (kind === 'Unknown' || kind === 'Any' || !CONSTRAINING.some((k) => k in node)) return [at];
  const out: string[] = [];
  for (const [name, prop] of Object.entries((node.properties ?? {}) as Record<string, TSchema>)) out.push(...openPlaces(prop, `${at}.${name}`));
  if (node.items && typeof node.items === 'object') out.push(...openPlaces(node.items as TSchema, `${at}[]`));
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    (node[key] as TSchema[] | undefined)?.forEach((b, i) => out.push(...openPlaces(b, `${at}<${key} ${i}>`)));
  }
  if (node.additionalProperties && typeof node.additionalProperties === 'object') out.push(...openPlaces(node.additionalProperties as TSchema, `${at}{*}`));
  return out;
}

describe('Infra command definitions', () => {
  const commands = allCommands();

  it('give every parameter a real schema: nothing that takes any value, in what is checked or what is documented', () => {
    const open = commands.flatMap((c) => [...openPlaces(c.params).map((p) => `${c.cmd} params ${p}`), ...(c.normalise ? openPlaces(c.normalise.input).map((p) => `${c.cmd} input ${p}`) : [])]);
    assert.deepEqual(open, []);
    // The finder itself sees what it must refuse.
    assert.deepEqual(openPlaces({ type: 'object', properties: { a: {}, b: { type: 'string' } } } as unknown as TSchema), ['$.a']);
    assert.deepEqual(openPlaces({ anyOf: [{ type: 'string' }, { '~kind': 'Any' }] } as unknown as TSchema), ['$<anyOf 1>']);
  });

  it('are all registered: every command a file under src/infra/commands defines is in allCommands()', () => {
    const registered = new Set(commands.map((c) => c.cmd));
    assert.equal(registered.size, commands.length, 'no name twice');
    const files = readdirSync(COMMANDS_DIR).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
    const index = readFileSync(path.join(COMMANDS_DIR, 'index.ts'), 'utf8');
    let defined = 0;
    for (const file of files) {
      const text = readFileSync(path.join(COMMANDS_DIR, file), 'utf8');
      assert.ok(index.includes(`'./${file.replace(/\.ts$/, '.js')}'`), `index.ts imports ${file}`);
      const names = [...text.matchAll(/\bcmd:\s*'([^']+)'/g)].map((m) => m[1]);
      assert.equal(names.length, (text.match(/\bdefineCommand\(/g) ?? []).length, `${file}: each definition names its cmd as a literal`);
      for (const name of names) assert.ok(registered.has(name), `${name} (${file}) is defined but not registered in allCommands()`);
      defined += names.length;
    }
    assert.equal(defined, commands.length, 'every registered command is defined in a file of src/infra/commands');
  });

  it('document what a client may send, not the canonical shape, where the two differ', () => {
    const doc = openApiDocument(commands) as any;
    const create = doc.paths['/dns/records'].post.requestBody.content['application/json'].schema.properties;
    assert.ok(
      create.data.anyOf.some((b: any) => b.type === 'array'),
      'a list of records',
    );
    assert.ok(
      create.data.anyOf.some((b: any) => b.type === 'object' && b.additionalProperties),
      'a map of records',
    );
    assert.ok(
      create.data.anyOf.some((b: any) => b.type === 'string'),
      "the flat form's value",
    );
    assert.ok(create.ttl && create.lookup && create.type, "the flat form's fields");
    assert.equal(create.records, undefined, 'the canonical list is not a parameter');
    assert.ok(!JSON.stringify(doc).includes('"type":"null"'), 'OpenAPI 3.0 says nullable, not type null');
  });

  it('is a valid OpenAPI 3.0 document', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const validator = new Validator();
    const result = await validator.validate(openApiDocument(commands) as Parameters<typeof validator.validate>[0]);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
    assert.equal(validator.version, '3.0');
  });
});

describe('the DNS record dialects', () => {
  const byName = new Map(allCommands().map((c) => [c.cmd, c]));
  const run = (cmd: string, input: Record<string, unknown>) => {
    const c = byName.get(cmd) as Command;
    assert.ok(c.normalise, `${cmd} has a normalise step`);
    assert.ok(Value.Check(c.normalise.input, input), `${cmd}: the documented input takes ${JSON.stringify(input)}`);
    const out = checkParams(c.params, structuredClone(input), c.normalise) as Record<string, any>;
    return { out, shape: shapeOf(out) };
  };

  it("turns every client's dns.record.create into one list of records", () => {
    const acme = run('dns.record.create', { name: 'example.com', type: 'TXT', lookup: '_acme-challenge.www', data: 'token', ttl: 300 });
    assert.deepEqual(acme.out.records, [{ type: 'TXT', lookup: '_acme-challenge.www', data: 'token', ttl: 300, name: 'example.com' }]);
    assert.deepEqual(acme.shape.at, ['']);
    assert.equal(acme.out.data, undefined);
    const legoJ = run('dns.record.create', { data: { 0: { id: 0, lookup: '_acme-challenge', type: 'TXT', data: 't', ttl: 120, domainId: 7 } } });
    assert.deepEqual(legoJ.out.records, [{ type: 'TXT', lookup: '_acme-challenge', data: 't', ttl: 120, domainId: 7 }]);
    assert.deepEqual(legoJ.shape.at, ['data.0.']);
    const py = run('dns.record.create', { data: { 0: { type: 'A', lookup: 'www', data: '192.0.2.1', domainid: 7, domainId: 7, domainID: 7, ttl: 120 } } });
    assert.deepEqual(py.out.records, [{ type: 'A', lookup: 'www', data: '192.0.2.1', ttl: 120, domainId: 7 }]);
    const legoL = run('dns.record.create', {
      data: [
        { type: 'TXT', lookup: 'a', domainid: '7', data: 'x', ttl: '120' },
        { TYPE: 'TXT', Lookup: 'b', data: 'y', domainid: 7 },
      ],
    });
    assert.deepEqual(legoL.out.records, [
      { type: 'TXT', lookup: 'a', data: 'x', ttl: '120', domainId: '7' },
      { type: 'TXT', lookup: 'b', data: 'y', domainId: 7 },
    ]);
    assert.deepEqual(legoL.shape.at, ['data.0.', 'data.1.']);
    const one = run('dns.record.create', { domainId: 7, data: { type: 'TXT', lookup: 'c', data: 'z' } });
    assert.deepEqual(one.shape.at, ['data.']);
  });

  it('gives each dns.record.update change its record id', () => {
    const py = run('dns.record.update', { data: { 12: { id: 12, data: 'new' }, 13: { data: 'other' } } });
    assert.deepEqual(py.out.records, [
      { id: 12, data: 'new' },
      { id: '13', data: 'other' },
    ]);
    const flat = run('dns.record.update', { id: 12, data: 'new', ttl: 300 });
    assert.deepEqual(flat.out.records, [{ id: 12, data: 'new', ttl: 300 }]);
    const list = run('dns.record.update', { data: [{ id: 12, ttl: 600 }] });
    assert.deepEqual(list.out.records, [{ id: 12, ttl: 600 }]);
  });

  it('reads dns.record.delete by id, by a list or map of ids, or by match', () => {
    assert.deepEqual(run('dns.record.delete', { id: 5 }).out.records, [{ id: 5 }]);
    assert.deepEqual(run('dns.record.delete', { data: { 5: {}, 6: { id: 6 } } }).out.records, [{ id: '5' }, { id: 6 }]);
    assert.deepEqual(run('dns.record.delete', { data: [5, { id: 6 }] }).out.records, [{ id: 5 }, { id: 6 }]);
    const acme = run('dns.record.delete', { name: 'example.com', type: 'TXT', lookup: '_acme-challenge', data: 'token' });
    assert.equal(acme.out.records, undefined);
    assert.equal(acme.out.data, 'token');
  });

  it("names a bad value inside a record as the request did, with the rule's words", () => {
    const c = byName.get('dns.record.create') as Command;
    const refuse = (input: Record<string, unknown>) => {
      try {
        checkParams(c.params, input, c.normalise);
      } catch (err) {
        return { message: (err as Error).message, fields: (err as { fields?: unknown }).fields };
      }
      assert.fail(`accepted ${JSON.stringify(input)}`);
    };
    assert.deepEqual(refuse({ domainId: 1, data: [{ type: 'A', lookup: 'x', data: '192.0.2.1', ttl: [300] }] }), {
      message: 'Invalid parameter data.0.ttl: must be an integer from 60 to 604800',
      fields: { 'data.0.ttl': 'must be an integer from 60 to 604800' },
    });
    assert.deepEqual(refuse({ domainId: 1, type: 'A', lookup: 'x', data: '192.0.2.1', ttl: { s: 1 } }), {
      message: 'Invalid parameter ttl: must be an integer from 60 to 604800',
      fields: { ttl: 'must be an integer from 60 to 604800' },
    });
    assert.deepEqual(refuse({ domainId: { id: 1 }, type: 'A', lookup: 'x', data: '192.0.2.1' }).fields, { domainId: 'must be a domain id' });
  });
});

// checkParams: which conversions are kept (those real clients need, see
// ../shared/reference/infra-clients.md), which are refused (a FAULT naming the field, never a
// default), the default bounds, and the fast path answering exactly as the full one.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { TObject } from 'typebox';
import Value from 'typebox/value';
import { Type } from 'typebox';
import { allCommands } from '../../src/infra/commands/index.js';
import { checkParams, DEPTH_LIMIT, RES_WINDOW_MAX, STRING_LIMIT } from '../../src/infra/params.js';

function outcome(schema: TObject, input: Record<string, unknown>): unknown {
  try {
    return checkParams(schema, structuredClone(input));
  } catch (err) {
    const e = err as { code?: string; fields?: Record<string, string> };
    return { refused: e.code, fields: e.fields };
  }
}

const schema = Type.Object({
  n: Type.Optional(Type.Integer({ minimum: 0 })),
  x: Type.Optional(Type.Number()),
  b: Type.Optional(Type.Boolean()),
  s: Type.Optional(Type.String()),
  list: Type.Optional(Type.Array(Type.String())),
  either: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
});
const ok = (input: Record<string, unknown>) => checkParams(schema, structuredClone(input));
const refusedField = (input: Record<string, unknown>): string | undefined => {
  try {
    checkParams(schema, structuredClone(input));
  } catch (err) {
    const e = err as { code: string; fields?: Record<string, string> };
    assert.equal(e.code, 'FAULT');
    return Object.keys(e.fields ?? {})[0];
  }
  return undefined;
};

it('keeps the conversions clients need: digits for numbers, true/false/1/0 text for booleans, one text for a list', () => {
  assert.deepEqual(ok({ n: '42', x: '-1.5', b: 'TRUE', list: 'ACTIVE', either: '7' }), { n: 42, x: -1.5, b: true, list: ['ACTIVE'], either: '7' });
  assert.deepEqual(ok({ b: 'false' }), { b: false });
  assert.deepEqual(ok({ b: '1' }), { b: true });
  assert.deepEqual(ok({ b: '0' }), { b: false });
  assert.deepEqual(ok({ n: '9007199254740991' }), { n: 9007199254740991 });
  assert.deepEqual(ok({ list: ['a', 'b'] }), { list: ['a', 'b'] });
});

it('refuses every other conversion with a FAULT naming the field: null, empty text, fractions, exponents, spaces, numbers as text', () => {
  for (const [field, value] of [
    ['b', null],
    ['b', 1],
    ['b', 0],
    ['b', 'yes'],
    ['b', ''],
    ['b', []],
    ['n', null],
    ['n', ''],
    ['n', ' 5'],
    ['n', '+5'],
    ['n', '5.0'],
    ['n', 1.5],
    ['n', '1e3'],
    ['n', '0x10'],
    ['n', 'NaN'],
    ['n', 'Infinity'],
    ['n', true],
    ['n', [5]],
    ['n', { n: 5 }],
    ['n', -1],
    ['x', ''],
    ['x', '1e3'],
    ['x', null],
    ['s', 5],
    ['s', null],
    ['s', true],
    ['s', ['a']],
    ['s', {}],
    ['list', null],
    ['list', 5],
    ['list', [5]],
    ['list', { 0: 'a' }],
    ['either', null],
    ['either', 1.5],
    ['either', []],
  ] as const) {
    assert.equal(refusedField({ [field]: value }), field, `${field}: ${JSON.stringify(value)}`);
  }
});

it('bounds every integer to 2^53 and every string to STRING_LIMIT unless the schema says less', () => {
  assert.equal(refusedField({ n: 2 ** 53 }), 'n');
  assert.equal(refusedField({ n: 1e20 }), 'n');
  assert.equal(refusedField({ n: '18446744073709551617' }), 'n');
  assert.equal(refusedField({ x: -1e300 }), 'x');
  assert.equal(refusedField({ s: 'a'.repeat(STRING_LIMIT + 1) }), 's');
  assert.deepEqual(ok({ s: 'a'.repeat(STRING_LIMIT) }), { s: 'a'.repeat(STRING_LIMIT) });
  const get = allCommands().find((c) => c.cmd === 'apiuser.getall')!.params;
  assert.deepEqual(outcome(get, { resWindow: 1e12 }), { refused: 'FAULT', fields: { resWindow: `must be at most ${RES_WINDOW_MAX}` } });
  assert.equal((checkParams(get, { resWindow: RES_WINDOW_MAX }) as { resWindow: number }).resWindow, RES_WINDOW_MAX);
  const upd = allCommands().find((c) => c.cmd === 'apiuser.update')!.params;
  assert.deepEqual(outcome(upd, { id: 1, name: 'x'.repeat(100_000) }), { refused: 'FAULT', fields: { name: 'must be at most 200 characters long' } });
});

it('refuses NUL, lone surrogates and deep nesting anywhere, schema-less parameters included', () => {
  const command = allCommands().find((c) => c.cmd === 'dns.record.create')!;
  const create = command.params;
  assert.deepEqual(outcome(schema, { s: 'a\0b' }), { refused: 'FAULT', fields: { s: 'must not contain NUL characters' } });
  assert.deepEqual(outcome(create, { data: [{ type: 'TXT', data: 'x\0' }] }), { refused: 'FAULT', fields: { data: 'must not contain NUL characters' } });
  assert.deepEqual(outcome(create, { data: { 'k\0': {} } }), { refused: 'FAULT', fields: { data: 'must not contain NUL characters' } });
  assert.equal((outcome(schema, { s: 'a\ud800' }) as { refused: string }).refused, 'FAULT');
  assert.deepEqual(ok({ s: 'a\ud83d\ude00' }), { s: 'a\ud83d\ude00' });
  // As JSON.parse makes it from a 200 KB body (structuredClone would overflow the stack on it).
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
  assert.throws(
    () => checkParams(create, { data: deep }, command.normalise),
    (e: any) => e.code === 'FAULT' && e.fields.data === `is nested more than ${DEPTH_LIMIT} levels deep`,
  );
  // Within the limit, the nesting is left to the record rules (the normalise step finds no record object in it).
  assert.doesNotThrow(() => checkParams(create, { data: JSON.parse('['.repeat(DEPTH_LIMIT - 1) + ']'.repeat(DEPTH_LIMIT - 1)) }, command.normalise));
});

/** A valid value for each schema, the same with every top-level value as a string, and some misfits. */
function samples(schema: TObject): Record<string, unknown>[] {
  const valid = Value.Create(schema) as Record<string, unknown>;
  const strings = Object.fromEntries(Object.entries(valid).map(([k, v]) => [k, typeof v === 'object' ? v : String(v)]));
  const out = [{}, valid, strings, { ...valid, extra: 'kept' }];
  for (const name of Object.keys(schema.properties)) {
    out.push({ ...valid, [name]: 7 }, { ...valid, [name]: '7' }, { ...valid, [name]: 'true' }, { ...valid, [name]: [] }, { ...valid, [name]: null });
  }
  return out;
}

it('answers on the fast path (values already of the right types) exactly as on the full path', () => {
  let compared = 0;
  for (const command of allCommands()) {
    // The full path, forced: a default nested below the top level keeps a schema off the fast one.
    const slow = Type.Object({ ...command.params.properties, forceFull: Type.Optional(Type.Object({ q: Type.Optional(Type.Integer({ default: 1 })) })) });
    for (const input of samples(command.params)) {
      assert.deepEqual(outcome(command.params, input), outcome(slow, input), `${command.cmd} ${JSON.stringify(input)}`);
      compared++;
    }
  }
  assert.ok(compared > 100);
});

it('fills top-level defaults on the fast path', () => {
  const get = allCommands().find((c) => c.cmd === 'apiuser.get')!;
  assert.deepEqual(checkParams(get.params, { id: 3 }), { id: 3, resStart: 0, resWindow: 20 });
  assert.deepEqual(checkParams(get.params, { id: '3', resWindow: '5' }), { id: '3', resStart: 0, resWindow: 5 });
});

it('matches names apart from case: the exact spelling first, else the first variant in the request', () => {
  const schema = Type.Object({ customerId: Type.Integer(), id: Type.Optional(Type.Integer()) });
  assert.deepEqual(checkParams(schema, { CUSTOMERID: 4, customerid: 5 }), { CUSTOMERID: 4, customerid: 5, customerId: 4 });
  assert.deepEqual(checkParams(schema, { customerid: 5, customerId: 6 }), { customerid: 5, customerId: 6 });
  assert.deepEqual(checkParams(schema, { customerId: 1, ID: '2' }), { customerId: 1, ID: '2', id: 2 });
  assert.throws(() => checkParams(schema, { customer_id: 1 }), /Missing parameter customerId/);
});

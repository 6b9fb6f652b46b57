// checkParams skips Value.Default/Convert when the values already have the right types: its answers
// must be exactly those of the full Default + Convert + Check path, for every command.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { TObject } from 'typebox';
import Value from 'typebox/value';
import { Type } from 'typebox';
import { allCommands } from '../../src/infra/commands/index.js';
import { checkParams } from '../../src/infra/params.js';

function reference(schema: TObject, input: Record<string, unknown>): unknown {
  const value = Value.Convert(schema, Value.Default(schema, structuredClone(input)));
  return Value.Check(schema, value) ? value : 'refused';
}

function ours(schema: TObject, input: Record<string, unknown>): unknown {
  try {
    return checkParams(schema, structuredClone(input));
  } catch {
    return 'refused';
  }
}

/** A valid value for each schema, the same with every top-level value as a string, and some misfits. */
function samples(schema: TObject): Record<string, unknown>[] {
  const valid = Value.Create(schema) as Record<string, unknown>;
  const strings = Object.fromEntries(Object.entries(valid).map(([k, v]) => [k, typeof v === 'object' ? v : String(v)]));
  const out = [{}, valid, strings, { ...valid, extra: 'kept' }];
  for (const name of Object.keys(schema.properties)) out.push({ ...valid, [name]: 7 }, { ...valid, [name]: '7' }, { ...valid, [name]: 'true' }, { ...valid, [name]: [] });
  return out;
}

it('answers exactly as Value.Default + Convert + Check for every command', () => {
  let compared = 0;
  for (const command of allCommands()) {
    for (const input of samples(command.params)) {
      assert.deepEqual(ours(command.params, input), reference(command.params, input), `${command.cmd} ${JSON.stringify(input)}`);
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

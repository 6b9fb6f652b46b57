// The Go-type checker the Infra tests use (test/helpers/go-types.ts): it must refuse what Go's
// encoding/json refuses to decode into the clients' structs, or those tests could not fail.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { goTypeProblems, Nullable, Optional, type GoShape } from '../helpers/go-types.js';

it('tells ints, strings, bools and numeric strings apart as Go does', () => {
  assert.deepEqual(goTypeProblems(5, 'int'), []);
  assert.equal(goTypeProblems(5.5, 'int').length, 1, 'a fraction is no int');
  assert.equal(goTypeProblems('5', 'int').length, 1, 'a string is no int');
  assert.equal(goTypeProblems(5, 'string').length, 1, 'a number is no string');
  assert.equal(goTypeProblems(1, 'bool').length, 1);
  assert.deepEqual(goTypeProblems('17', 'numstr'), []);
  assert.deepEqual(goTypeProblems(17, 'numstr'), []);
  assert.equal(goTypeProblems('', 'numstr').length, 1, 'blank fails json.Number.Int64');
  assert.equal(goTypeProblems(null, 'string').length, 1);
  assert.deepEqual(goTypeProblems(null, Nullable('string')), []);
});

it('checks lists, objects, optional keys and maps', () => {
  const shape: GoShape = { id: 'int', tags: ['string'], note: 'string?', sub: Optional({ x: 'int' }), extra: { known: 'int', '*': 'string' } };
  assert.deepEqual(goTypeProblems({ id: 1, tags: ['a'], extra: { known: 2, other: 'x' } }, shape), []);
  assert.deepEqual(goTypeProblems({ id: 1, tags: null, extra: {} }, shape), ['$.tags: expected a list, got null', '$.extra.known: missing']);
  assert.deepEqual(goTypeProblems({ id: 1, tags: [2], note: 3, sub: { x: '1' }, extra: { known: 1, other: 5 } }, shape), [
    '$.tags[0]: expected a string, got number 2',
    '$.note: expected a string, got number 3',
    '$.sub.x: expected an int (a JSON number without a fraction), got the string "1"',
    '$.extra.other: expected a string, got number 5',
  ]);
});

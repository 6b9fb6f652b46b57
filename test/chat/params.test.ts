// Unit tests of parameter decoding: form text decoded by each parameter's declared type.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import Type from 'typebox';
import { decodeParams } from '../../src/chat/params.js';
import { ChatError } from '../../src/chat/errors.js';

const schema = Type.Object({
  content: Type.String(),
  flag: Type.Boolean({ default: false }),
  count: Type.Optional(Type.Integer()),
  to: Type.Optional(Type.Union([Type.Integer(), Type.Array(Type.Integer()), Type.Array(Type.String()), Type.String()])),
  subs: Type.Optional(Type.Array(Type.Object({ name: Type.String() }))),
});

function fails(raw: Record<string, string>): ChatError {
  try {
    decodeParams(schema, raw);
  } catch (err) {
    if (err instanceof ChatError) return err;
    throw err;
  }
  assert.fail('expected an error');
}

it('keeps strings as sent and JSON-decodes the other types', () => {
  const { values, ignored } = decodeParams(schema, { content: '[1]', flag: 'true', count: '7', subs: '[{"name":"a"}]', extra: 'x', client: 'me' });
  assert.deepEqual(values, { content: '[1]', flag: true, count: 7, subs: [{ name: 'a' }] });
  assert.deepEqual(ignored, ['extra'], 'the client name is read by the transport, not ignored');
});

it('fills defaults and reports missing required parameters as Zulip does', () => {
  assert.deepEqual(decodeParams(schema, { content: 'x' }).values, { content: 'x', flag: false });
  const e = fails({});
  assert.deepEqual([e.code, e.message, e.extra.var_name], ['REQUEST_VARIABLE_MISSING', "Missing 'content' argument", 'content']);
});

it('takes JSON when it fits a union with a string, and the raw text otherwise', () => {
  const to = (v: string) => decodeParams(schema, { content: 'x', to: v }).values.to;
  assert.equal(to('general'), 'general');
  assert.equal(to('12'), 12);
  assert.deepEqual(to('[9,10]'), [9, 10]);
  assert.deepEqual(to('["a@x.com"]'), ['a@x.com']);
  assert.equal(to('a@x.com, b@y.com'), 'a@x.com, b@y.com');
  assert.equal(to('true'), 'true', 'JSON that fits no branch is the text itself');
  // Text is taken as JSON only when it parses whole, white space as JSON defines it included.
  assert.deepEqual(to('\t[9]'), [9], 'JSON white space before the value');
  assert.equal(to('\u00a0[9]'), '\u00a0[9]', 'not JSON white space: the text itself');
  assert.equal(to('topic'), 'topic');
  assert.equal(to('-'), '-');
  assert.equal(to(''), '');
});

it('names the parameter and the problem for bad values', () => {
  assert.equal(fails({ content: 'x', flag: 'yes' }).message, 'flag is not a boolean');
  assert.equal(fails({ content: 'x', count: '1.5' }).message, 'count is not an integer');
  assert.equal(fails({ content: 'x', subs: 'nope' }).message, 'subs is not valid JSON');
  assert.equal(fails({ content: 'x', subs: '{"name":"a"}' }).message, 'subs is not a list');
  assert.equal(fails({ content: 'x', subs: '[{"name":5}]' }).message, 'subs[0]["name"] is not a string');
  assert.equal(fails({ content: 'x', subs: '[{}]' }).message, 'subs[0]["name"] field is missing');
  assert.equal(fails({ content: 'x', flag: 'yes' }).extra.var_name, 'flag');
});

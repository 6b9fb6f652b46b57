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
  assert.equal(fails({ content: 'x', flag: 'yes' }).message, 'flag is not valid JSON');
  assert.equal(fails({ content: 'x', flag: '1' }).message, 'flag is not a boolean');
  assert.equal(fails({ content: 'x', count: '1.5' }).message, 'count is not an integer');
  assert.equal(fails({ content: 'x', subs: 'nope' }).message, 'subs is not valid JSON');
  assert.equal(fails({ content: 'x', subs: '{"name":"a"}' }).message, 'subs is not a list');
  assert.equal(fails({ content: 'x', subs: '[{"name":5}]' }).message, 'subs[0]["name"] is not a string');
  assert.equal(fails({ content: 'x', subs: '[{}]' }).message, 'subs[0]["name"] field is missing');
  assert.equal(fails({ content: 'x', flag: 'yes' }).extra.var_name, 'flag');
});

it('refuses a NUL byte in any text parameter, naming it, whether sent raw or JSON-escaped', () => {
  // PostgreSQL cannot store U+0000: refused here for every parameter, on both engines.
  const cases: Record<string, string>[] = [
    { content: 'a\u0000b' },
    { content: 'x', to: 'gen\u0000eral' },
    { content: 'x', to: '["a\\u0000"]' },
    { content: 'x', subs: '[{"name":"a\\u0000"}]' },
    { content: 'x', subs: '[{"name":"a","\\u0000":1}]' },
  ];
  for (const raw of cases) {
    const e = fails(raw);
    const name = Object.keys(raw).at(-1)!;
    assert.deepEqual([e.status, e.code, e.message, e.extra.var_name], [400, 'BAD_REQUEST', `${name} must not contain null bytes`, name], JSON.stringify(raw));
  }
  const client = fails({ content: 'x', client: 'me\u0000' });
  assert.equal(client.message, 'client must not contain null bytes');
  // A backslash followed by the letters u0000 is no NUL byte.
  assert.deepEqual(decodeParams(schema, { content: 'x', to: '["a\\\\u0000"]' }).values.to, ['a\\u0000']);
});

it('refuses integers beyond the safe integers (and 64 bits), naming the parameter', () => {
  for (const big of ['9007199254740993', '99999999999999999999999', '-9223372036854775809', '18446744073709551616', '1e300']) {
    const e = fails({ content: 'x', count: big });
    assert.deepEqual([e.status, e.code, e.message, e.extra.var_name], [400, 'BAD_REQUEST', `Bad value for 'count': ${big}`, 'count'], big);
  }
  assert.equal(fails({ content: 'x', subs: '[{"name":"a"}]', count: '[1]' }).message, 'count is not an integer');
  const nested = Type.Object({ ids: Type.Array(Type.Integer()) });
  assert.throws(() => decodeParams(nested, { ids: '[1, 2, 123456789012345678901]' }), /Bad value for 'ids'/);
  // The largest safe integers are integers still; a long value is shortened in the message.
  assert.equal(decodeParams(schema, { content: 'x', count: '9007199254740991' }).values.count, 9007199254740991);
  assert.equal(decodeParams(schema, { content: 'x', count: '-9007199254740991' }).values.count, -9007199254740991);
  assert.equal(fails({ content: 'x', count: '9'.repeat(100) }).message, `Bad value for 'count': ${'9'.repeat(40)}...`);
  // A union that admits a string takes the text as sent: a channel or topic may be named so.
  assert.equal(decodeParams(schema, { content: 'x', to: '99999999999999999999999' }).values.to, '99999999999999999999999');
});

it('refuses JSON nested deeper than any parameter needs, rather than overflowing the stack', () => {
  const loose = Type.Object({ value: Type.Unknown() });
  const deep = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);
  assert.deepEqual(decodeParams(loose, { value: deep(5) }).values.value, [[[[[1]]]]]);
  for (const n of [40, 100_000]) {
    const e = (() => {
      try {
        decodeParams(loose, { value: deep(n) });
      } catch (err) {
        return err as ChatError;
      }
      assert.fail('expected an error');
    })();
    assert.deepEqual([e.status, e.message, e.extra.var_name], [400, 'value is nested too deeply', 'value']);
  }
});

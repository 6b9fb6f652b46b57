// Answers spliced from JSON text (platform/db/fast/json-text.ts) read exactly as JSON.stringify of the values.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { JsonText, serializeWithText } from '../../../../src/platform/db/fast/json-text.js';

it('splices JSON text at the top level as JSON.stringify would write the value', () => {
  const messages = [
    { id: 1, content: '<p>"quoted" \u2028 é</p>', flags: ['read'] },
    { id: 2, flags: [] },
  ];
  const spliced = serializeWithText({ result: 'success', msg: '', messages: new JsonText(JSON.stringify(messages)), skipped: undefined, anchor: 5 });
  assert.ok(Buffer.isBuffer(spliced));
  assert.equal(spliced.toString(), JSON.stringify({ result: 'success', msg: '', messages, anchor: 5 }));
  assert.deepEqual(JSON.parse(spliced.toString()).messages, messages);
});

it('splices JSON text given in UTF-8 pieces, first, last or between other members', () => {
  const pieces = new JsonText([Buffer.from('[{"a":"é'), Buffer.from('"},'), Buffer.from('2]')]);
  assert.equal(pieces.text, '[{"a":"é"},2]');
  assert.equal(serializeWithText({ list: pieces }).toString(), '{"list":[{"a":"é"},2]}');
  assert.equal(serializeWithText({ gone: undefined, list: pieces, n: 1 }).toString(), '{"list":[{"a":"é"},2],"n":1}');
  assert.equal(serializeWithText({ a: 'x', list: pieces, other: new JsonText('[]') }).toString(), '{"a":"x","list":[{"a":"é"},2],"other":[]}');
});

it('leaves a body without JSON text to JSON.stringify, and JSON text elsewhere still serializes', () => {
  const body = { a: [1, { b: null }], c: 'x', d: undefined };
  assert.equal(serializeWithText(body), JSON.stringify(body));
  assert.equal(serializeWithText({}), '{}');
  assert.equal(JSON.stringify({ nested: { list: new JsonText('[1,"two"]') } }), '{"nested":{"list":[1,"two"]}}');
});

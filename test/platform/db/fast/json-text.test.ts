// Answers spliced from JSON text (platform/db/fast/json-text.ts) read exactly as JSON.stringify of the values.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { JsonText, serializeAsPieces, serializeWithText } from '../../../../src/platform/db/fast/json-text.js';

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

it('leaves large JSON text uncopied in the pieces, joins the small ones, and reads as serializeWithText', () => {
  const big = new JsonText(JSON.stringify({ k: 'x'.repeat(10_000) }));
  const body = { result: 'success', msg: '', presences: big, server_timestamp: 1.5, small: new JsonText('[1]') };
  const pieces = serializeAsPieces(body);
  assert.ok(Array.isArray(pieces));
  assert.equal(pieces.length, 3, 'head, the big text, the small rest joined');
  assert.equal(pieces[1], big.parts[0], 'the cached bytes themselves, not a copy');
  assert.equal(Buffer.concat(pieces).toString(), serializeWithText(body).toString());
  assert.equal(Buffer.concat(pieces).toString(), JSON.stringify({ result: 'success', msg: '', presences: { k: 'x'.repeat(10_000) }, server_timestamp: 1.5, small: [1] }));
  assert.equal(serializeAsPieces({ a: 1 }), '{"a":1}');
});

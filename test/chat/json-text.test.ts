// Answers spliced from JSON text (chat/json-text.ts) read exactly as JSON.stringify of the values.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { JsonText, stringifyWithText } from '../../src/chat/json-text.js';

it('splices JSON text at the top level as JSON.stringify would write the value', () => {
  const messages = [{ id: 1, content: '<p>"quoted" \u2028 é</p>', flags: ['read'] }, { id: 2, flags: [] }];
  const spliced = stringifyWithText({ result: 'success', msg: '', messages: new JsonText(JSON.stringify(messages)), skipped: undefined, anchor: 5 });
  assert.equal(spliced, JSON.stringify({ result: 'success', msg: '', messages, anchor: 5 }));
  assert.deepEqual(JSON.parse(spliced).messages, messages);
});

it('leaves a body without JSON text to JSON.stringify, and JSON text elsewhere still serializes', () => {
  const body = { a: [1, { b: null }], c: 'x', d: undefined };
  assert.equal(stringifyWithText(body), JSON.stringify(body));
  assert.equal(stringifyWithText({}), '{}');
  assert.equal(JSON.stringify({ nested: { list: new JsonText('[1,"two"]') } }), '{"nested":{"list":[1,"two"]}}');
});

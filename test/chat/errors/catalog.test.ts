// Pins the Chat error catalog: every entry is complete, fills every placeholder, declares the
// fields it adds, and one text never means two codes; the texts Zulip 10.2 answers for the cases
// issue 13 names are pinned here too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as catalog from '../../../src/chat/errors/catalog.js';
import { ChatError, type ErrorEntry } from '../../../src/chat/errors.js';

const entries = Object.entries(catalog) as [string, ErrorEntry<Record<string, unknown>>][];

/** Arguments for any entry: each named placeholder gets a recognisable value, any other argument a list (usable as text, number or list). */
function sampleArgs(template: string): Record<string, unknown> {
  const named = Object.fromEntries([...template.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], `<${m[1]}>`]));
  return new Proxy(named, { get: (t, k: string) => (k in t ? t[k] : ['v']) });
}

describe('the Chat error catalog', () => {
  it('holds entries, and nothing else', () => {
    assert.ok(entries.length > 150, `only ${entries.length} entries`);
    for (const [name, entry] of entries) assert.equal(typeof entry, 'function', name);
  });

  it('gives every entry a code, an HTTP error status and a message template', () => {
    for (const [name, entry] of entries) {
      assert.match(entry.code, /^[A-Z][A-Z_]*[A-Z]$/, name);
      assert.ok(Number.isInteger(entry.status) && entry.status >= 400 && entry.status <= 599, `${name}: ${entry.status}`);
      assert.ok(entry.template.trim().length > 0, name);
    }
  });

  it('fills every placeholder and adds exactly the fields it declares', () => {
    for (const [name, entry] of entries) {
      const err = (entry as (a: unknown) => ChatError)(sampleArgs(entry.template));
      assert.ok(err instanceof ChatError, name);
      assert.equal(err.message, entry.template.replace(/\{(\w+)\}/g, '<$1>'), name);
      assert.doesNotMatch(err.message, /\{\w+\}/, name);
      assert.deepEqual([err.code, err.status], [entry.code, entry.status], name);
      assert.deepEqual(Object.keys(err.extra).sort(), [...entry.fields].sort(), name);
      for (const field of ['result', 'msg', 'code']) assert.ok(!entry.fields.includes(field), `${name} overwrites ${field}`);
    }
  });

  it('never gives one text two codes', () => {
    const codeOf = new Map<string, string>();
    for (const [name, entry] of entries) {
      const seen = codeOf.get(entry.template);
      assert.ok(seen === undefined || seen === entry.code, `${name}: "${entry.template}" is both ${seen} and ${entry.code}`);
      codeOf.set(entry.template, entry.code);
    }
  });

  it('answers the texts and codes Zulip 10.2 answers for the cases issue 13 names', () => {
    const wire = (e: ChatError) => [e.status, e.code, e.message, e.extra];
    assert.deepEqual(wire(catalog.notAuthorizedToSend({ name: 'secret' })), [400, 'BAD_REQUEST', "Not authorized to send to channel 'secret'", {}]);
    assert.deepEqual(wire(catalog.channelsDoNotExist({ names: 'a, b' })), [400, 'BAD_REQUEST', 'Channel(s) (a, b) do not exist', {}]);
    assert.deepEqual(wire(catalog.missingAnchor()), [400, 'BAD_REQUEST', "Missing 'anchor' argument.", {}]);
    assert.deepEqual(wire(catalog.badEventQueueId({ queue_id: 'q1' })), [400, 'BAD_EVENT_QUEUE_ID', 'Bad event queue ID: q1', { queue_id: 'q1' }]);
    assert.deepEqual(wire(catalog.insufficientPermission()), [400, 'BAD_REQUEST', 'Insufficient permission', {}]);
    assert.deepEqual(wire(catalog.notAllowedForGuests()), [400, 'BAD_REQUEST', 'Not allowed for guest users', {}]);
    assert.deepEqual(wire(catalog.paramNotJson({ name: 'to', var_name: 'to' })), [400, 'BAD_REQUEST', 'to is not valid JSON', { var_name: 'to' }]);
    assert.deepEqual(wire(catalog.paramNotInList({ name: 'emojiset', var_name: 'emojiset' })), [
      400,
      'BAD_REQUEST',
      'Invalid emojiset: Value error, Not in the list of possible values',
      { var_name: 'emojiset' },
    ]);
  });

  it('carries the 429 retry-after in the body (seconds) and the header (whole seconds, rounded up)', () => {
    const err = catalog.rateLimited({ retryAfter: 1.25, headers: { 'x-ratelimit-limit': '10' } });
    assert.deepEqual([err.status, err.extra, err.headers], [429, { 'retry-after': 1.25 }, { 'x-ratelimit-limit': '10', 'retry-after': '2' }]);
  });
});

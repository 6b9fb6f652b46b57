// Unit tests: which recipients a rendered message's mentions flag.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { renderMessage, type MarkdownContext } from '../../../src/chat/domain/markdown.js';
import { mentionFlagger } from '../../../src/chat/domain/mentions.js';
import { FLAG } from '../../../src/chat/domain/flags.js';

const ctx: MarkdownContext = {
  usersByName: new Map([['ann', [{ id: 1, full_name: 'Ann' }]]]),
  usersById: new Map([[1, { id: 1, full_name: 'Ann' }]]),
  groups: new Map([['ops', { id: 50, name: 'ops', memberIds: [2, 3] }]]),
  channels: new Map(),
};

it('flags members of a mentioned group, and nobody for a silent one', () => {
  const f = mentionFlagger(renderMessage('@*ops* and @**Ann**', ctx), ctx);
  assert.deepEqual(
    [1, 2, 3, 4].map((id) => f(id, new Set())),
    [FLAG.mentioned, FLAG.mentioned, FLAG.mentioned, 0],
  );
  const quiet = mentionFlagger(renderMessage('@_*ops*', ctx), ctx);
  assert.equal(quiet(2, new Set()), 0);
});

it('gives @**topic** only to topic participants and @**all** to everyone', () => {
  const topic = mentionFlagger(renderMessage('@**topic**', ctx), ctx);
  assert.deepEqual([topic(1, new Set([1])), topic(2, new Set([1]))], [FLAG.topic_wildcard_mentioned, 0]);
  const all = mentionFlagger(renderMessage('@**all**', ctx), ctx);
  assert.equal(all(9, new Set()), FLAG.stream_wildcard_mentioned);
});

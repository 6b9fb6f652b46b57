// Keel's Markdown measured against Zulip's own fixtures: prints the share rendered exactly as Zulip
// renders them and the names that differ, and fails when the share drops below the floor (raise the
// floor as rendering gets closer; it never goes down).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EMPTY_CONTEXT, renderMarkdown, type MarkdownContext } from '../../../src/chat/domain/markdown.js';
import { expectedLinkify, loadZulipMarkdownFixtures } from '../../helpers/zulip-markdown-fixtures.js';

/** The share of fixtures (regular and linkify together) that must render exactly as Zulip's, in percent. */
const FLOOR_PERCENT = 90;

// Zulip's test realm, as far as the fixtures use it: Zoe is user 7, the realm is http://zulip.testserver.
const zoe = { id: 7, full_name: 'Zoe' };
const ZULIP_TEST_REALM: MarkdownContext = {
  ...EMPTY_CONTEXT,
  usersByName: new Map([['zoe', [zoe]]]),
  usersById: new Map([[7, zoe]]),
  realmUrl: 'http://zulip.testserver',
};

const fixtures = loadZulipMarkdownFixtures();

it("renders Zulip's Markdown fixtures as Zulip does, at least the floor's share", { skip: typeof fixtures === 'string' ? fixtures : false }, () => {
  if (typeof fixtures === 'string') return;
  const failed: string[] = [];
  let passed = 0;
  const check = (name: string, input: string, expected: string, ctx: MarkdownContext) => {
    let got: string;
    try {
      got = renderMarkdown(input, ctx);
    } catch (e) {
      got = `(threw ${(e as Error).message})`;
    }
    if (got === expected) passed++;
    else failed.push(name);
  };
  for (const f of fixtures.regular_tests) check(f.name, f.input, f.expected_output, { ...ZULIP_TEST_REALM, translateEmoticons: f.translate_emoticons === true });
  fixtures.linkify_tests.forEach((f, i) => check(`linkify[${i}] ${JSON.stringify(f[0]).slice(0, 60)}`, f[0], expectedLinkify(f), ZULIP_TEST_REALM));
  const total = fixtures.regular_tests.length + fixtures.linkify_tests.length;
  const percent = (100 * passed) / total;
  console.log(`Zulip Markdown fixtures: ${passed}/${total} (${percent.toFixed(1)}%) render as Zulip's; floor ${FLOOR_PERCENT}%`);
  console.log(`differing: ${failed.join(', ')}`);
  assert.ok(percent >= FLOOR_PERCENT, `${percent.toFixed(1)}% of Zulip's Markdown fixtures render as Zulip's, below the floor of ${FLOOR_PERCENT}%`);
});

// Unit tests of linkifiers: Python patterns read as Zulip reads them, RFC 6570 templates filled from
// named groups, Zulip's match boundaries, processing order, and where the renderer applies them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkLinkifier, compileLinkifiers, LINKIFY_BUDGET_MS, linkifyText, topicLinks } from '../../../src/chat/domain/linkifiers.js';
import { EMPTY_CONTEXT, renderMarkdown } from '../../../src/chat/domain/markdown.js';
import { ChatError } from '../../../src/chat/errors.js';

const issues = checkLinkifier('#(?P<id>[0-9]+)', 'https://github.com/zulip/zulip/issues/{id}');
// Timings: the best of three runs, after one that warms up the JIT (the machine may be busy).
function bestOf3(run: () => unknown): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    run();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}
const link = (href: string, text: string) => `<a href="${href}">${text}</a>`;

it("links a named group through the URL template, only at Zulip's word boundaries", () => {
  assert.deepEqual(linkifyText('fix #12, see (#7)', [issues]), [
    { text: 'fix ' },
    { text: '#12', href: 'https://github.com/zulip/zulip/issues/12' },
    { text: ', see (' },
    { text: '#7', href: 'https://github.com/zulip/zulip/issues/7' },
    { text: ')' },
  ]);
  // Not after a word character, not before one.
  assert.deepEqual(linkifyText('a#12 #12b', [issues]), [{ text: 'a#12 #12b' }]);
});

it('percent-encodes simple expansions and keeps reserved characters in {+var} and {#var}', () => {
  const l = checkLinkifier('ticket:(?P<q>[^ ]+)', 'https://t.example/search?q={q}&raw={+q}{#q}');
  assert.equal(linkifyText('ticket:a/b?c é', [l])[0].href, 'https://t.example/search?q=a%2Fb%3Fc&raw=a/b?c#a/b?c');
  const u = checkLinkifier('wiki:(?P<page>\\S+)', 'https://w.example/{page}');
  assert.equal(linkifyText('wiki:Café', [u])[0].href, 'https://w.example/Caf%C3%A9');
});

it("applies linkifiers in order: an earlier one's match is not linked again", () => {
  const repo = checkLinkifier('(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)', 'https://github.com/{org}/{repo}/pull/{id}');
  assert.deepEqual(
    linkifyText('zulip/docs#3 #4', [repo, issues]).map((p) => p.href),
    ['https://github.com/zulip/docs/pull/3', undefined, 'https://github.com/zulip/zulip/issues/4'],
  );
  const other = checkLinkifier('#(?P<n>[0-9]+)', 'https://tracker.example/{n}');
  assert.deepEqual(
    linkifyText('#4', [other, issues]).map((p) => p.href),
    ['https://tracker.example/4'],
  );
  assert.deepEqual(
    linkifyText('#4', [issues, other]).map((p) => p.href),
    ['https://github.com/zulip/zulip/issues/4'],
  );
});

it('refuses patterns and templates Zulip refuses, in its words and under its field', () => {
  const bad = (pattern: string, template: string, msg: string, field: string) => {
    assert.throws(
      () => checkLinkifier(pattern, template),
      (e: unknown) => {
        assert.ok(e instanceof ChatError && e.code === 'BAD_REQUEST', String(e));
        assert.deepEqual([e.message, e.extra.errors], [msg, { [field]: [msg] }]);
        return true;
      },
    );
  };
  // RE2's refusals, in the words of the C++ RE2 that Zulip compiles with (the first two are Zulip's own tests).
  bad('(foo', 'https://x/', 'Bad regular expression: missing ): (foo', '__all__');
  bad('ZUL-(?P<id>\\d????)', 'https://x/{id}', 'Bad regular expression: bad repetition operator: ????', '__all__');
  bad('#(?P<id>[0-9]+', 'https://x/{id}', 'Bad regular expression: missing ): #(?P<id>[0-9]+', '__all__');
  bad('(a)\\1', 'https://x/', 'Bad regular expression: invalid escape sequence: \\1', '__all__');
  bad('(?P<id>a)(?P=id)', 'https://x/{id}', 'Bad regular expression: invalid perl operator: (?P', '__all__');
  bad('x(?=y)', 'https://x/', 'Bad regular expression: invalid perl operator: (?=', '__all__');
  bad('x(?!y)', 'https://x/', 'Bad regular expression: invalid perl operator: (?!', '__all__');
  bad('(?<=y)x', 'https://x/', 'Bad regular expression: invalid perl operator: (?<=', '__all__');
  bad('(?<!y)x', 'https://x/', 'Bad regular expression: invalid perl operator: (?<!', '__all__');
  bad('(?x)abc', 'https://x/', 'Bad regular expression: invalid perl operator: (?x', '__all__');
  bad('\\Zabc', 'https://x/', 'Bad regular expression: invalid escape sequence: \\Z', '__all__');
  bad('(?P<a-b>x)', 'https://x/', 'Bad regular expression: invalid named capture group: (?P<a-b>', '__all__');
  bad('x{1001}', 'https://x/', 'Bad regular expression: invalid repetition size: {1001}', '__all__');
  bad('[z-a]', 'https://x/', 'Bad regular expression: invalid character class range: z-a', '__all__');
  bad('[ab', 'https://x/', 'Bad regular expression: missing ]: [ab', '__all__');
  bad('a)', 'https://x/', 'Bad regular expression: unexpected ): a)', '__all__');
  bad('a**', 'https://x/', 'Bad regular expression: bad repetition operator: **', '__all__');
  bad('*a', 'https://x/', 'Bad regular expression: no argument for repetition operator: *', '__all__');
  bad('a\\', 'https://x/', 'Bad regular expression: trailing \\', '__all__');
  // A program too big to match quickly is refused as the C++ RE2 refuses one over its memory budget.
  bad('(?:\\pL{1000}|\\pN{1000}){1000}', 'https://x/', 'Bad regular expression: pattern too large - compile failed', '__all__');
  bad('\\pL{1000}\\pN{1000}\\pL{1000}', 'https://x/', 'Bad regular expression: pattern too large - compile failed', '__all__');
  bad('a*', 'https://x/', 'Bad regular expression: the pattern matches the empty string', '__all__');
  bad('', 'https://x/', 'This field cannot be blank.', 'pattern');
  bad('#(?P<id>[0-9]+)', 'https://x/{nope}', "Group 'nope' in URL template is not present in linkifier pattern.", '__all__');
  bad('#(?P<id>[0-9]+)-(?P<b>[0-9])-(?P<a>[0-9])', 'https://x/{id}', "Group 'a' in linkifier pattern is not present in URL template.", '__all__');
  bad('#(?P<id>[0-9]+)', 'https://x/{id', 'Invalid URL template.', 'url_template');
  bad('#(?P<id>[0-9]+)', 'https://x/{?id}', 'Invalid URL template.', 'url_template');
  bad('#(?P<id>[0-9]+)', 'javascript:alert({id})', 'Invalid URL template.', 'url_template');
  bad('#(?P<id>[0-9]+)', 'not a url {id}', 'Invalid URL template.', 'url_template');
  // Zulip checks the template's syntax before the pattern.
  bad('(foo', 'https://x/{id', 'Invalid URL template.', 'url_template');
});

it('accepts RE2 syntax Zulip accepts: flags, \\Q...\\E, both named-group spellings, Unicode classes', () => {
  const texts = (l: ReturnType<typeof checkLinkifier>, text: string) =>
    linkifyText(text, [l])
      .filter((p) => p.href)
      .map((p) => [p.text, p.href]);
  assert.deepEqual(texts(checkLinkifier('(?i)bug(?P<n>[0-9]+)', 'https://b.example/{n}'), 'BUG7 bug8'), [
    ['BUG7', 'https://b.example/7'],
    ['bug8', 'https://b.example/8'],
  ]);
  // An unclosed \Q quotes to the end of the pattern only, not into the boundaries around it.
  assert.deepEqual(texts(checkLinkifier('\\Q[x]', 'https://q.example/'), 'a [x] b'), [['[x]', 'https://q.example/']]);
  assert.deepEqual(texts(checkLinkifier('(?<n>[0-9]+)!', 'https://n.example/{n}'), 'go 12!'), [['12!', 'https://n.example/12']]);
  assert.deepEqual(texts(checkLinkifier('\\p{Greek}+', 'https://g.example/'), 'in αβγ.'), [['αβγ', 'https://g.example/']]);
});

it('matches where Zulip does: after Unicode spaces, and before anything but a letter or digit', () => {
  const hrefs = (text: string) =>
    linkifyText(text, [issues])
      .filter((p) => p.href)
      .map((p) => p.text);
  assert.deepEqual(hrefs('#1\u00a0#2\u2003#3 #4_ #5é #6٣ "#7" <#8>'), ['#1', '#2', '#3', '#4', '#7', '#8']);
  // Adjacent matches share a boundary character.
  assert.deepEqual(hrefs('#1,#2 #3'), ['#1', '#2', '#3']);
});

it('matches in time linear in the text, whatever the pattern', () => {
  const l = checkLinkifier('(a+)+b', 'https://a.example/');
  for (const n of [30, 2000, 10000]) {
    const text = 'a'.repeat(n) + 'c b'; // the b defeats a search for the literal first
    assert.deepEqual(linkifyText(text, [l]), [{ text }]);
    const ms = bestOf3(() => linkifyText(text, [l]));
    console.log(`# (a+)+b on ${n + 1} characters: ${ms.toFixed(2)} ms`);
    assert.ok(ms < 100, `${ms} ms`);
  }
  assert.deepEqual(
    linkifyText('a'.repeat(40) + 'b', [l]).map((p) => p.href),
    ['https://a.example/'],
  );
});

it('bounds what a message built against the linkifiers costs: pattern size when saved, time when rendering', () => {
  // Real linkifiers fit: Zulip's own seven-group test pattern, a 30-project alternation.
  checkLinkifier(
    'FOO_(?P<id>[a-f]{5});(?P<zone>[a-f]);(?P<domain>[a-z]+);(?P<location>[a-z]+);(?P<name>[a-z]{2,8});(?P<chapter>[0-9]{2,3});(?P<fragment>[a-z]{2,8})',
    'https://zone_{zone}.example/{domain}/{location}/{id}/{name}/{chapter}/{fragment}',
  );
  checkLinkifier(`(?P<key>${Array.from({ length: 30 }, (_, i) => `PRJ${i}`).join('|')})-(?P<id>[0-9]+)`, 'https://t.example/{key}-{id}');
  // A program big enough to make the NFA slow is not.
  assert.throws(() => checkLinkifier('(?:a|b)*a(?:a|b){300}z', 'https://x/'), /^Error: Bad regular expression: pattern too large - compile failed$/);
  const cases: [string, string][] = [
    ['(?:a|b)*a(?:a|b){200}z', 'ab'.repeat(4999) + ' z'], // the NFA at its widest, all along a 10,000-character line
    ['#\\d+(?:.*x)?', '#1 '.repeat(3333)], // every match looks ahead to the end of the line
  ];
  for (const [pattern, text] of cases) {
    const l = checkLinkifier(pattern, 'https://x.example/');
    const ctx = { ...EMPTY_CONTEXT, linkifiers: [l, l, l, l] };
    const html = renderMarkdown(text, ctx);
    const ms = bestOf3(() => renderMarkdown(text, ctx));
    console.log(`# ${pattern} x4 on ${text.length} characters: ${ms.toFixed(1)} ms (budget ${LINKIFY_BUDGET_MS} ms)`);
    assert.ok(ms < LINKIFY_BUDGET_MS + 200, `${ms} ms`);
    assert.ok(html.startsWith('<p>'));
  }
  // Within the budget, the matches are linked; past it, the rest of the message stays plain.
  const many = renderMarkdown('#1 '.repeat(3333), { ...EMPTY_CONTEXT, linkifiers: [checkLinkifier('#\\d+(?:.*x)?', 'https://x.example/')] });
  assert.ok(many.startsWith('<p><a href="https://x.example/"'), many.slice(0, 80));
  assert.ok(many.endsWith('#1 </p>'), 'the trailing space stays, as in Zulip');
});

it('compiles stored linkifiers once, leaving out those RE2 refuses (saved under the old rules)', () => {
  const stored = [
    { id: 1, pattern: '(?P<x>a)(?P=x)', url_template: 'https://x.example/{x}' },
    { id: 2, pattern: 'T-(?P<n>[0-9]+)', url_template: 'https://t.example/{n}' },
  ];
  const first = compileLinkifiers(stored);
  assert.equal(first.length, 1);
  assert.deepEqual(
    linkifyText('T-5 aa', first).map((p) => p.href),
    ['https://t.example/5', undefined],
  );
  assert.equal(compileLinkifiers(stored)[0], first[0], 'the same compiled pattern, not compiled again');
});

it('renders linkifier links in text, not in code or inside links', () => {
  const ctx = { ...EMPTY_CONTEXT, linkifiers: [issues] };
  const href = 'https://github.com/zulip/zulip/issues/5';
  assert.equal(renderMarkdown('see #5', ctx), `<p>see ${link(href, '#5')}</p>`);
  assert.equal(renderMarkdown('**#5** `#5`', ctx), `<p><strong>${link(href, '#5')}</strong> <code>#5</code></p>`);
  assert.equal(renderMarkdown('[about #5](https://e.example)', ctx), `<p>${link('https://e.example', 'about #5')}</p>`);
  assert.equal(renderMarkdown('see #5'), '<p>see #5</p>', 'no linkifiers, no links');
});

it("finds a topic's links: linkifier matches and bare URLs, in order", () => {
  assert.deepEqual(topicLinks('see https://a.example/x?y=1, then #8', [issues]), [
    { text: 'https://a.example/x?y=1', url: 'https://a.example/x?y=1' },
    { text: '#8', url: 'https://github.com/zulip/zulip/issues/8' },
  ]);
  assert.deepEqual(topicLinks('plain topic', [issues]), []);
});

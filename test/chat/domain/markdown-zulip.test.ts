// Markdown's common cases as Zulip renders them (issue 14 item 9): links, code, lists, quotes.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { EMPTY_CONTEXT, renderMarkdown, renderMessage, type MarkdownContext } from '../../../src/chat/domain/markdown.js';
import { sanitizeUrl } from '../../../src/chat/domain/markdown/links.js';

const ann = { id: 4, full_name: 'Ann Lee' };
const ctx: MarkdownContext = {
  ...EMPTY_CONTEXT,
  usersByName: new Map([['ann lee', [ann]]]),
  usersById: new Map([[4, ann]]),
  groups: new Map([['ops', { id: 9, name: 'ops', memberIds: [4] }]]),
  realmUrl: 'https://chat.example.com',
};

it('links carry no target or title, and text-less links show their URL', () => {
  assert.equal(renderMarkdown('[a](https://e.org/x) https://e.org'), '<p><a href="https://e.org/x">a</a> <a href="https://e.org">https://e.org</a></p>');
  assert.equal(renderMarkdown('[](https://e.org/x) [  ](https://e.org/y)'), '<p><a href="https://e.org/x">https://e.org/x</a> <a href="https://e.org/y">https://e.org/y</a></p>');
  assert.equal(renderMarkdown('[a **b** :c:](https://e.org)'), '<p><a href="https://e.org">a **b** :c:</a></p>', "a link's text shows as typed");
  assert.equal(renderMarkdown('[site](e.org) [me](a@b.org) [call](tel:+1555)'), '<p><a href="http://e.org">site</a> <a href="mailto:a@b.org">me</a> <a href="tel:+1555">call</a></p>');
  assert.equal(renderMarkdown('[x](javascript:alert(1)) [y](itms://a.com)'), '<p>[x](javascript:alert(1)) [y](itms://a.com)</p>');
});

it("makes links to the realm's own narrows and uploads relative", () => {
  assert.equal(renderMarkdown('[said](https://chat.example.com/#narrow/channel/3-a/near/9)', ctx), '<p><a href="#narrow/channel/3-a/near/9">said</a></p>');
  assert.equal(renderMarkdown('https://chat.example.com/#narrow/dm/4', ctx), '<p><a href="#narrow/dm/4">https://chat.example.com/#narrow/dm/4</a></p>');
  assert.equal(renderMarkdown('[f](https://chat.example.com/user_uploads/2/a.txt)', ctx), '<p><a href="user_uploads/2/a.txt">f</a></p>');
  assert.equal(renderMarkdown('[h](https://chat.example.com/help)', ctx), '<p><a href="https://chat.example.com/help">h</a></p>', 'other pages stay absolute');
  assert.equal(renderMarkdown('[o](https://other.example.com/#narrow/x)', ctx), '<p><a href="https://other.example.com/#narrow/x">o</a></p>');
});

it('autolinks bare domains with a known top-level domain, addresses and URLs, as Zulip does', () => {
  assert.equal(renderMarkdown('go to views.org please'), '<p>go to <a href="http://views.org">views.org</a> please</p>');
  assert.equal(renderMarkdown('readme.md, views.py and a.commandstuff()'), '<p>readme.md, views.py and a.commandstuff()</p>');
  assert.equal(renderMarkdown('mail a@b.com.'), '<p>mail <a href="mailto:a@b.com">a@b.com</a>.</p>');
  assert.equal(renderMarkdown('(see http://w.org/wiki/Qt_(framework))'), '<p>(see <a href="http://w.org/wiki/Qt_(framework)">http://w.org/wiki/Qt_(framework)</a>)</p>');
  assert.equal(renderMarkdown('x:e.com x/e.com **e.com**'), '<p>x:<a href="http://e.com">e.com</a> x/e.com <strong>e.com</strong></p>');
  assert.equal(renderMarkdown('`e.com` http://e.com/a_b_c'), '<p><code>e.com</code> <a href="http://e.com/a_b_c">http://e.com/a_b_c</a></p>');
});

it('follows sanitize_url: schemes Zulip allows, http:// for bare hosts, relative paths kept', () => {
  assert.equal(sanitizeUrl('https://e.org/a?b#c'), 'https://e.org/a?b#c');
  assert.equal(sanitizeUrl('e.org/a b'), 'http://e.org/a%20b');
  assert.equal(sanitizeUrl('/user_uploads/1/x'), '/user_uploads/1/x');
  assert.equal(sanitizeUrl('#narrow/dm/4'), '#narrow/dm/4');
  assert.equal(sanitizeUrl('a@b.org'), 'mailto:a@b.org');
  assert.equal(sanitizeUrl('javascript:alert(1)'), null);
  assert.equal(sanitizeUrl('data:text/html,x'), null);
});

it('renders 4-space indented code and canonicalises fence languages by Pygments names', () => {
  assert.equal(renderMarkdown('text\n\n    x = 1\n    y = 2'), '<p>text</p>\n<div class="codehilite"><pre><span></span><code>x = 1\ny = 2\n</code></pre></div>');
  const lang = (fence: string) => /data-code-language="([^"]*)"/.exec(renderMarkdown(`${fence}\ncode\n\`\`\``))?.[1];
  assert.equal(lang('``` py2'), 'Python 2.x');
  assert.equal(lang('```js'), 'JavaScript');
  assert.equal(lang('```{.c++}'), 'C++');
  assert.equal(lang('```Shell'), 'Bash');
  assert.equal(lang('```InventedLanguage'), 'inventedlanguage');
  assert.equal(lang('```'), undefined);
  assert.equal(renderMarkdown('````\n```\ninner\n````'), '<div class="codehilite"><pre><span></span><code>```\ninner\n</code></pre></div>', 'only the same fence closes');
});

it('nests lists by 2 spaces and makes one list of mixed bullets', () => {
  assert.equal(renderMarkdown('* a\n  * b\n  * c\n* d'), '<ul>\n<li>a<ul>\n<li>b</li>\n<li>c</li>\n</ul>\n</li>\n<li>d</li>\n</ul>');
  assert.equal(renderMarkdown('1. a\n2. b\n  3. c'), '<ol>\n<li>a</li>\n<li>b<ol start="3">\n<li>c</li>\n</ol>\n</li>\n</ol>');
  assert.equal(renderMarkdown('* one\n- two\n+ three'), '<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>');
  assert.equal(renderMarkdown('Items:\n* one\n* two'), '<p>Items:</p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>', 'a list hangs off a paragraph');
  assert.equal(renderMarkdown('Steps:\n3. c\n4. d'), '<p>Steps:</p>\n<ol start="3">\n<li>c</li>\n<li>d</li>\n</ol>');
  assert.equal(renderMarkdown('```\ntext\n* not a list\n```'), '<div class="codehilite"><pre><span></span><code>text\n* not a list\n</code></pre></div>');
});

it('renders mentions inside quotes silent and does not count them', () => {
  const quoted = renderMessage('@_**Ann Lee|4** [said](https://chat.example.com/#narrow/channel/3-a/topic/t/near/7):\n```quote\nhi @**Ann Lee** and @*ops* @**all**\n```', ctx);
  assert.equal(
    quoted.html,
    '<p><span class="user-mention silent" data-user-id="4">Ann Lee</span> <a href="#narrow/channel/3-a/topic/t/near/7">said</a>:</p>\n' +
      '<blockquote>\n<p>hi <span class="user-mention silent" data-user-id="4">Ann Lee</span> and <span class="user-group-mention silent" data-user-group-id="9">ops</span> ' +
      '<span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>\n</blockquote>',
  );
  assert.deepEqual([quoted.mentionedUserIds, quoted.mentionedGroupIds, quoted.streamWildcard], [[], [], false]);
  const arrow = renderMessage('> @**Ann Lee** wrote\n\n@**Ann Lee** thanks', ctx);
  assert.equal(
    arrow.html,
    '<blockquote>\n<p><span class="user-mention silent" data-user-id="4">Ann Lee</span> wrote</p>\n</blockquote>\n<p><span class="user-mention" data-user-id="4">@Ann Lee</span> thanks</p>',
  );
  assert.deepEqual(arrow.mentionedUserIds, [4], 'the mention outside the quote counts');
  assert.deepEqual(renderMessage('a@**Ann Lee**', ctx).mentionedUserIds, [], 'a mention must not follow a word');
});

it("renders a deactivated user's mention silent, and shows a link's text as typed", () => {
  const gone = { id: 5, full_name: 'Old Timer', isActive: false };
  const withGone = { ...ctx, usersByName: new Map([['old timer', [gone]]]), usersById: new Map([[5, gone]]) };
  const r = renderMessage('@**Old Timer** @**Old Timer|5**', withGone);
  assert.equal(r.html, '<p><span class="user-mention silent" data-user-id="5">Old Timer</span> <span class="user-mention silent" data-user-id="5">Old Timer</span></p>');
  assert.deepEqual(r.mentionedUserIds, []);
  assert.equal(renderMarkdown('[💩 *x*](https://e.org) 💩').replace(/<span aria-label[^>]*>:[a-z_]+:<\/span>/, 'EMOJI'), '<p><a href="https://e.org">💩 *x*</a> EMOJI</p>');
});

it("renders the realm's custom emoji before Unicode ones, and Zulip's own :zulip:", () => {
  const withEmoji = { ...ctx, realmEmoji: new Map([['party_parrot', '/user_avatars/2/emoji/images/7.gif']]) };
  assert.equal(
    renderMarkdown(':party_parrot: :zulip:', withEmoji),
    '<p><img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/images/7.gif" title="party parrot"> <img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>',
  );
  assert.equal(renderMarkdown(':party_parrot:'), '<p>:party_parrot:</p>', 'not without the realm emoji');
});

it("keeps a paragraph's spaces and reads times as Zulip does, in UTC whatever the server's zone", () => {
  assert.equal(renderMarkdown('test  \n  next '), '<p>test  <br>\n  next </p>');
  const zone = process.env.TZ;
  process.env.TZ = 'America/New_York';
  try {
    assert.equal(renderMarkdown('<time:31 Dec 2017>'), '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017</time></p>');
    assert.equal(renderMarkdown('<time:Jun 5th 2017, 10:30PM>'), '<p><time datetime="2017-06-05T22:30:00Z">Jun 5th 2017, 10:30PM</time></p>');
    assert.equal(renderMarkdown('<time:2017-06-05T22:30>'), '<p><time datetime="2017-06-05T22:30:00Z">2017-06-05T22:30</time></p>');
    assert.equal(renderMarkdown('<time:2017-06-05T22:30:00-04:00>'), '<p><time datetime="2017-06-06T02:30:00Z">2017-06-05T22:30:00-04:00</time></p>');
  } finally {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  }
});

it('keeps code spans as typed, with their spaces and without backslash escapes', () => {
  assert.equal(renderMarkdown('` a ` ``b`c`` `<&nbsp;>`'), '<p><code> a </code> <code>b`c</code> <code>&lt;&amp;nbsp;&gt;</code></p>');
  assert.equal(renderMarkdown('I ~~ like ~~ it, ***both***'), '<p>I <del> like </del> it, <strong><em>both</em></strong></p>');
});

it('renders KaTeX (0.16, the version Zulip clients ship CSS for) and leaves money alone', () => {
  const html = renderMarkdown('$$x^2$$ costs $5 to $$$');
  assert.match(html, /^<p><span class="katex"><span class="katex-mathml"><math xmlns="http:\/\/www.w3.org\/1998\/Math\/MathML"><semantics>/);
  assert.match(html, /costs \$5 to \$\$\$<\/p>$/);
});

it('bounds nested quote blocks and renders pathological input quickly', () => {
  const deep = renderMarkdown('```quote\n'.repeat(3000));
  assert.ok(deep.split('<blockquote>').length - 1 <= 9, 'nesting is bounded');
  for (const text of ['(('.repeat(4500), 'a.'.repeat(4900), '**a '.repeat(2500), '```quote\n'.repeat(1100), '  * a\n'.repeat(1600), 'http://a.com/x '.repeat(600)]) {
    const started = performance.now();
    renderMarkdown(text);
    assert.ok(performance.now() - started < 5000, `${JSON.stringify(text.slice(0, 12))}... renders in under 5 s`);
  }
});

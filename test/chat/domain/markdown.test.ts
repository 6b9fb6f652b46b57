// Unit tests of Zulip's Markdown rules as Keel renders them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isMeMessage, renderMarkdown, renderMessage, type MarkdownContext } from '../../../src/chat/domain/markdown.js';

it('wraps paragraphs and turns one newline into <br>', () => {
  assert.equal(renderMarkdown('hello'), '<p>hello</p>');
  assert.equal(renderMarkdown('one\ntwo'), '<p>one<br>\ntwo</p>');
  assert.equal(renderMarkdown('one\n\ntwo'), '<p>one</p>\n<p>two</p>');
});

it('escapes raw HTML instead of passing it through', () => {
  assert.equal(renderMarkdown('<b>x</b> & <script>alert(1)</script>'), '<p>&lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;</p>');
});

it('uses * for emphasis and ** for strong, never _', () => {
  assert.equal(renderMarkdown('**foo**'), '<p><strong>foo</strong></p>');
  assert.equal(renderMarkdown('*em*'), '<p><em>em</em></p>');
  assert.equal(renderMarkdown('_x_ and __y__ and snake_case_name'), '<p>_x_ and __y__ and snake_case_name</p>');
  assert.equal(renderMarkdown('~~gone~~'), '<p><del>gone</del></p>');
});

it('renders inline code and fenced code in the codehilite wrapper', () => {
  assert.equal(renderMarkdown('use `a < b`'), '<p>use <code>a &lt; b</code></p>');
  assert.equal(
    renderMarkdown('```python\nprint("<hi>\'")\n```'),
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code>print(&quot;&lt;hi&gt;&#39;&quot;)\n</code></pre></div>',
  );
  assert.equal(renderMarkdown('```\nplain\n```'), '<div class="codehilite"><pre><span></span><code>plain\n</code></pre></div>');
});

it('makes code blocks from 4-space indentation, not headings from underlines', () => {
  assert.equal(renderMarkdown('    indented <b>'), '<div class="codehilite"><pre><span></span><code>indented &lt;b&gt;\n</code></pre></div>');
  assert.equal(renderMarkdown('  two spaces'), '<p>two spaces</p>');
  assert.equal(renderMarkdown('Title\n---'), '<p>Title</p>\n<hr>');
});

it('links bare URLs and Markdown links without target or title, as Zulip does', () => {
  assert.equal(renderMarkdown('see http://foo.com'), '<p>see <a href="http://foo.com">http://foo.com</a></p>');
  assert.equal(renderMarkdown('[docs](https://example.com/a)'), '<p><a href="https://example.com/a">docs</a></p>');
  assert.equal(renderMarkdown('[docs](https://e.com "About")'), '<p><a href="https://e.com" title="About">docs</a></p>', 'a title only when the link gives one');
  assert.equal(renderMarkdown('[x](javascript:alert(1))'), '<p>[x](javascript:alert(1))</p>');
});

const hamlet = { id: 4, full_name: 'King Hamlet' };
const ctx: MarkdownContext = {
  usersByName: new Map([
    ['king hamlet', [hamlet]],
    [
      'twin',
      [
        { id: 7, full_name: 'Twin' },
        { id: 8, full_name: 'Twin' },
      ],
    ],
  ]),
  usersById: new Map([
    [4, hamlet],
    [7, { id: 7, full_name: 'Twin' }],
    [8, { id: 8, full_name: 'Twin' }],
  ]),
  groups: new Map([['support', { id: 9, name: 'support', memberIds: [4] }]]),
  channels: new Map([
    ['general', { id: 3, name: 'general' }],
    ['big room', { id: 5, name: 'Big Room' }],
  ]),
};

it('renders user, silent, wildcard and group mentions and reports who is mentioned', () => {
  const r = renderMessage('@**King Hamlet** @_**Twin|8** @**all** @**topic** @*support* @_*support* @**Nobody** @**Twin**', ctx);
  assert.equal(
    r.html,
    '<p><span class="user-mention" data-user-id="4">@King Hamlet</span> <span class="user-mention silent" data-user-id="8">Twin</span> ' +
      '<span class="user-mention channel-wildcard-mention" data-user-id="*">@all</span> <span class="topic-mention">@topic</span> ' +
      '<span class="user-group-mention" data-user-group-id="9">@support</span> <span class="user-group-mention silent" data-user-group-id="9">support</span> ' +
      '@<strong>Nobody</strong> @<strong>Twin</strong></p>',
  );
  assert.deepEqual([r.mentionedUserIds, r.mentionedGroupIds, r.streamWildcard, r.topicWildcard], [[4], [9], true, true]);
  assert.deepEqual(renderMessage('@**everyone** @**channel**', ctx).streamWildcard, true);
  const quiet = renderMessage('@_**all** `@**King Hamlet**` @**Hamlet|4**', ctx);
  assert.deepEqual([quiet.mentionedUserIds, quiet.streamWildcard], [[], false]);
  assert.match(quiet.html, /<code>@\*\*King Hamlet\*\*<\/code>/);
});

it('links channels, topics and messages with Zulip narrow URLs', () => {
  assert.equal(renderMarkdown('#**general**', ctx), '<p><a class="stream" data-stream-id="3" href="/#narrow/channel/3-general">#general</a></p>');
  assert.equal(renderMarkdown('#**big room>a.b c**', ctx), '<p><a class="stream-topic" data-stream-id="5" href="/#narrow/channel/5-Big-Room/topic/a.2Eb.20c">#Big Room &gt; a.b c</a></p>');
  assert.equal(renderMarkdown('#**general>hi@42**', ctx), '<p><a class="message-link" href="/#narrow/channel/3-general/topic/hi/near/42">#general &gt; hi @ 💬</a></p>');
  assert.equal(renderMarkdown('#**nowhere**', ctx), '<p>#<strong>nowhere</strong></p>');
});

it('renders emoji by name and Unicode emoji with Zulip names', () => {
  // Zulip's table: :smile: is U+1F642; U+1F604 is :big_smile:.
  const smile = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';
  const bigSmile = '<span aria-label="big smile" class="emoji emoji-1f604" role="img" title="big smile">:big_smile:</span>';
  assert.equal(renderMarkdown(':smile: 😄 :no_such_emoji:'), `<p>${smile} ${bigSmile} :no_such_emoji:</p>`);
  assert.match(renderMarkdown(':+1:'), /class="emoji emoji-1f44d"/);
});

it('renders quotes, spoilers, lists, tables, strikethrough and headings', () => {
  assert.equal(renderMarkdown('> a\nb'), '<blockquote>\n<p>a<br>\nb</p>\n</blockquote>');
  assert.equal(renderMarkdown('```quote\n**q**\n```'), '<blockquote>\n<p><strong>q</strong></p>\n</blockquote>');
  assert.equal(
    renderMarkdown('```spoiler Title\nhidden\n```'),
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>Title</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>hidden</p>\n</div></div>',
  );
  assert.equal(renderMarkdown('- a\n- b'), '<ul>\n<li>a</li>\n<li>b</li>\n</ul>');
  assert.equal(
    renderMarkdown('|a|b|\n|-|:-:|\n|1|2|'),
    '<table>\n<thead>\n<tr>\n<th>a</th>\n<th style="text-align: center;">b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td style="text-align: center;">2</td>\n</tr>\n</tbody>\n</table>',
  );
  assert.equal(renderMarkdown('# head\n#nohead'), '<h1>head</h1>\n<p>#nohead</p>');
  assert.equal(renderMarkdown('<https://x.org>'), '<p>&lt;<a href="https://x.org">https://x.org</a>&gt;</p>', 'no <url> autolinks: the brackets stay');
});

it('does not resolve reference-style links', () => {
  assert.equal(renderMarkdown('[x]: /a\n[x]'), '<p>[x]: /a<br>\n[x]</p>');
});

it('renders <time:...> and TeX with KaTeX', () => {
  assert.equal(renderMarkdown('<time:2020-08-13T16:00:00+00:00>'), '<p><time datetime="2020-08-13T16:00:00Z">2020-08-13T16:00:00+00:00</time></p>');
  assert.equal(renderMarkdown('<time:1496701800>'), '<p><time datetime="2017-06-05T22:30:00Z">1496701800</time></p>');
  assert.equal(renderMarkdown('<time:soon>'), '<p><span class="timestamp-error">Invalid time format: soon</span></p>');
  assert.match(renderMarkdown('$$x^2$$'), /^<p><span class="katex"><span class="katex-mathml"><math/);
  assert.equal(renderMarkdown('$$\\frac$$'), '<p><span class="tex-error">$$\\frac$$</span></p>');
  assert.match(renderMarkdown('```math\n\\int x\n```'), /^<p><span class="katex-display"><span class="katex">/);
  assert.match(renderMarkdown('```tex\n\\pi\n```'), /^<div class="codehilite" data-code-language="TeX">/, 'tex and latex fences are code, only math is displayed');
});

it('recognises /me messages', () => {
  assert.equal(isMeMessage('/me waves'), true);
  assert.equal(isMeMessage('/me waves\nmore'), false);
  assert.equal(isMeMessage('hi /me'), false);
});

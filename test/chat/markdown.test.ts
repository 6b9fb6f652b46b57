// Unit tests of Zulip's Markdown rules as Keel renders them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { renderMarkdown } from '../../src/chat/domain/markdown.js';

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
    renderMarkdown('```python\nprint("<hi>")\n```'),
    '<div class="codehilite" data-code-language="python"><pre><span></span><code>print(&quot;&lt;hi&gt;&quot;)\n</code></pre></div>',
  );
  assert.equal(renderMarkdown('```\nplain\n```'), '<div class="codehilite"><pre><span></span><code>plain\n</code></pre></div>');
});

it('does not make code blocks from indentation or headings from underlines', () => {
  assert.equal(renderMarkdown('    indented'), '<p>indented</p>');
  assert.equal(renderMarkdown('Title\n---'), '<p>Title</p>\n<hr>');
});

it('links bare URLs and Markdown links, opening in a new tab with the URL as title', () => {
  assert.equal(renderMarkdown('see http://foo.com'), '<p>see <a href="http://foo.com" target="_blank" title="http://foo.com">http://foo.com</a></p>');
  assert.equal(renderMarkdown('[docs](https://example.com/a)'), '<p><a href="https://example.com/a" target="_blank" title="https://example.com/a">docs</a></p>');
  assert.equal(renderMarkdown('[x](javascript:alert(1))'), '<p>[x](javascript:alert(1))</p>');
});

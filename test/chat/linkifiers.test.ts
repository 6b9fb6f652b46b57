// Unit tests of linkifiers: Python patterns read as Zulip reads them, RFC 6570 templates filled from
// named groups, Zulip's match boundaries, processing order, and where the renderer applies them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkLinkifier, linkifyText, topicLinks } from '../../src/chat/domain/linkifiers.js';
import { EMPTY_CONTEXT, renderMarkdown } from '../../src/chat/domain/markdown.js';
import { ChatError } from '../../src/chat/errors.js';

const issues = checkLinkifier('#(?P<id>[0-9]+)', 'https://github.com/zulip/zulip/issues/{id}');
const link = (href: string, text: string) => `<a href="${href}" target="_blank" title="${href}">${text}</a>`;

it('links a named group through the URL template, only at Zulip\'s word boundaries', () => {
  assert.deepEqual(linkifyText('fix #12, see (#7)', [issues]), [
    { text: 'fix ' }, { text: '#12', href: 'https://github.com/zulip/zulip/issues/12' }, { text: ', see (' },
    { text: '#7', href: 'https://github.com/zulip/zulip/issues/7' }, { text: ')' },
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

it('applies linkifiers in order: an earlier one\'s match is not linked again', () => {
  const repo = checkLinkifier('(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)', 'https://github.com/{org}/{repo}/pull/{id}');
  assert.deepEqual(linkifyText('zulip/docs#3 #4', [repo, issues]).map((p) => p.href), ['https://github.com/zulip/docs/pull/3', undefined, 'https://github.com/zulip/zulip/issues/4']);
  const other = checkLinkifier('#(?P<n>[0-9]+)', 'https://tracker.example/{n}');
  assert.deepEqual(linkifyText('#4', [other, issues]).map((p) => p.href), ['https://tracker.example/4']);
  assert.deepEqual(linkifyText('#4', [issues, other]).map((p) => p.href), ['https://github.com/zulip/zulip/issues/4']);
});

it('refuses patterns and templates Zulip refuses, naming the field', () => {
  const bad = (pattern: string, template: string, msg: RegExp, field: string) => {
    assert.throws(() => checkLinkifier(pattern, template), (e: unknown) =>
      e instanceof ChatError && e.code === 'BAD_REQUEST' && msg.test(e.message) && field in (e.extra.errors as object));
  };
  bad('#(?P<id>[0-9]+', 'https://x/{id}', /^Bad regular expression: /, 'pattern');
  bad('\\Aabc', 'https://x/', /^Bad regular expression: bad escape \\A$/, 'pattern');
  bad('(?i)abc', 'https://x/', /^Bad regular expression: /, 'pattern');
  bad('a*', 'https://x/', /matches the empty string/, 'pattern');
  bad('', 'https://x/', /^Bad regular expression: /, 'pattern');
  bad('#(?P<id>[0-9]+)', 'https://x/{nope}', /^Group 'nope' in URL template is not present in linkifier pattern\.$/, 'url_template');
  bad('#(?P<id>[0-9]+)', 'https://x/{id', /^Invalid URL template\.$/, 'url_template');
  bad('#(?P<id>[0-9]+)', 'https://x/{?id}', /^Invalid URL template\.$/, 'url_template');
  bad('#(?P<id>[0-9]+)', 'javascript:alert({id})', /^Invalid URL template\.$/, 'url_template');
  bad('#(?P<id>[0-9]+)', 'not a url {id}', /^Invalid URL template\.$/, 'url_template');
});

it('renders linkifier links in text, not in code or inside links', () => {
  const ctx = { ...EMPTY_CONTEXT, linkifiers: [issues] };
  const href = 'https://github.com/zulip/zulip/issues/5';
  assert.equal(renderMarkdown('see #5', ctx), `<p>see ${link(href, '#5')}</p>`);
  assert.equal(renderMarkdown('**#5** `#5`', ctx), `<p><strong>${link(href, '#5')}</strong> <code>#5</code></p>`);
  assert.equal(renderMarkdown('[about #5](https://e.example)', ctx), `<p>${link('https://e.example', 'about #5')}</p>`);
  assert.equal(renderMarkdown('see #5'), '<p>see #5</p>', 'no linkifiers, no links');
});

it('finds a topic\'s links: linkifier matches and bare URLs, in order', () => {
  assert.deepEqual(topicLinks('see https://a.example/x?y=1, then #8', [issues]), [
    { text: 'https://a.example/x?y=1', url: 'https://a.example/x?y=1' },
    { text: '#8', url: 'https://github.com/zulip/zulip/issues/8' },
  ]);
  assert.deepEqual(topicLinks('plain topic', [issues]), []);
});

// Zulip's Markdown dialect, on markdown-it: one newline is a line break, raw HTML is shown as text,
// `_x_` is not emphasis (only `*x*` and `**x**` are), indented (4-space) code blocks, no underlined
// headings, reference links or backslash escapes, Zulip's fences (code in its codehilite wrapper
// with Pygments' language name, quote, spoiler and math blocks), lists nested by 2 spaces, links
// without target or title (the realm's own made relative), bare URLs, domains and addresses
// linked. On top: mentions (silent inside quotes), channel/topic/message links, emoji, <time:...>
// and $$TeX$$. The rules live in markdown/; mentions and links need names from the store: the
// caller loads a MarkdownContext first (domain/mentions.ts).
import MarkdownIt from 'markdown-it';
import { emojiByChars, emojiPattern } from './emoji.js';
import { LinkifyBudget, linkifyText } from './linkifiers.js';
import { EMPTY_CONTEXT, type MarkdownContext, type RenderEnv } from './markdown/context.js';
import { codeLanguageName, zulipFence } from './markdown/fences.js';
import { autolink, channelLink, codeSpan, emoji, emojiSpan, emoticon, emphasis, escapeAttr, escapeText, inlineTex, mention, strikethrough, tex, text, time } from './markdown/inline.js';
import { relativeToRealm, sanitizeUrl } from './markdown/links.js';
import { newline, paragraph } from './markdown/paragraphs.js';
import { mergeBulletLists, prepareLists, restoreListStarts } from './markdown/lists.js';

export { EMPTY_CONTEXT, type LinkChannel, type MarkdownContext, type MentionGroup, type MentionUser } from './markdown/context.js';
export { channelNarrowUrl, encodeHashComponent, parseTimeSyntax, topicNarrowUrl } from './markdown/inline.js';

/** What rendering found that changes flags: who is mentioned, not counting silent mentions. */
export interface Rendered {
  html: string;
  mentionedUserIds: number[];
  mentionedGroupIds: number[];
  streamWildcard: boolean;
  topicWildcard: boolean;
}

const md = new MarkdownIt({ html: false, breaks: true, linkify: false, typographer: false });
// Zulip has neither setext headings, inline images, reference-style links (a `[x]: url` line stays
// text), <url> autolinks nor backslash escapes; its own fences, code spans, emphasis and
// strikethrough replace markdown-it's (below).
md.disable(['lheading', 'image', 'reference', 'autolink', 'escape', 'linkify', 'fence', 'emphasis', 'strikethrough']);
md.block.ruler.before('code', 'zulip_fence', zulipFence, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });

type BlockRule = Parameters<typeof md.block.ruler.at>[1];
const blockRules = (md.block.ruler as unknown as { __rules__: { name: string; fn: BlockRule }[] }).__rules__;
const blockquote = blockRules.find((r) => r.name === 'blockquote')!.fn;
// Quote markers with nothing after them, up to a blank line, are text in Zulip, not an empty quote.
md.block.ruler.at(
  'blockquote',
  (state, startLine, endLine, silent) => {
    let line = startLine;
    while (line < endLine && !state.isEmpty(line) && /^\s{0,3}>\s*$/.test(state.src.slice(state.bMarks[line], state.eMarks[line]))) line++;
    if (line > startLine && (line >= endLine || state.isEmpty(line))) return false;
    return blockquote(state, startLine, endLine, silent);
  },
  { alt: ['paragraph', 'reference', 'blockquote', 'list'] },
);

// Links: Zulip's URL rules decide what may be linked and how (see links.ts); no percent-encoding.
md.normalizeLink = (url) => sanitizeUrl(url.trim()) ?? '';
md.validateLink = (url) => url !== '';
md.normalizeLinkText = (url) => url;

md.block.ruler.at('paragraph', paragraph);
md.inline.ruler.at('text', text);
md.inline.ruler.at('newline', newline);
md.inline.ruler.before('text', 'zulip_autolink', autolink);
md.inline.ruler.at('backticks', codeSpan);
md.inline.ruler.before('linkify', 'zulip_emphasis', emphasis);
md.inline.ruler.before('linkify', 'zulip_strikethrough', strikethrough);
md.inline.ruler.before('linkify', 'zulip_mention', mention);
md.inline.ruler.before('linkify', 'zulip_channel_link', channelLink);
md.inline.ruler.before('linkify', 'zulip_emoticon', emoticon);
md.inline.ruler.before('linkify', 'zulip_emoji', emoji);
md.inline.ruler.before('linkify', 'zulip_time', time);
md.inline.ruler.before('linkify', 'zulip_math', inlineTex);

type InlineRule = Parameters<typeof md.inline.ruler.at>[1];
const inlineRules = (md.inline.ruler as unknown as { __rules__: { name: string; fn: InlineRule }[] }).__rules__;
const markdownLink = inlineRules.find((r) => r.name === 'link')!.fn;
// A link's text is shown as typed in Zulip (no emphasis, emoji or links inside it).
md.inline.ruler.at('link', (state, silent) => {
  const start = state.pos;
  const before = state.tokens.length;
  if (!markdownLink(state, silent)) return false;
  if (silent) return true;
  const labelEnd = state.md.helpers.parseLinkLabel(state, start, true);
  let open = before;
  while (open < state.tokens.length && state.tokens[open].type !== 'link_open') open++;
  const label = new state.Token('text', '', 0);
  label.content = state.src.slice(start + 1, labelEnd);
  state.tokens.splice(open + 1, state.tokens.length - open - 2, label);
  return true;
});

// Which inline content sits in a quote, so that mentions there render silent.
md.core.ruler.at('inline', (state) => {
  const env = state.env as RenderEnv;
  const base = env.inQuote;
  let depth = 0;
  for (const token of state.tokens) {
    if (token.type === 'blockquote_open') depth++;
    else if (token.type === 'blockquote_close') depth--;
    else if (token.type === 'inline') {
      env.inQuote = base + depth;
      state.md.inline.parse(token.content, state.md, state.env, token.children!);
    }
  }
  env.inQuote = base;
});

md.core.ruler.after('inline', 'zulip_lists', (state) => {
  mergeBulletLists(state);
  restoreListStarts(state, (state.env as RenderEnv).listStarts);
});

// Linkifiers turn their patterns in plain text (not in code, and not inside a link already) into
// links, as the earlier rules left it.
md.core.ruler.after('inline', 'zulip_linkifiers', (state) => {
  const linkifiers = (state.env as RenderEnv).ctx?.linkifiers;
  if (!linkifiers?.length) return;
  const budget = (state.env as RenderEnv).linkifyBudget;
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const out: typeof block.children = [];
    let inLink = 0;
    for (const t of block.children) {
      if (t.type === 'link_open') inLink++;
      else if (t.type === 'link_close') inLink--;
      if (t.type !== 'text' || inLink > 0) {
        out.push(t);
        continue;
      }
      const pieces = linkifyText(t.content, linkifiers, budget);
      if (pieces.length === 1 && pieces[0].href === undefined) {
        out.push(t);
        continue;
      }
      for (const piece of pieces) {
        if (piece.href === undefined) {
          out.push(Object.assign(new state.Token('text', '', 0), { content: piece.text }));
          continue;
        }
        const open = new state.Token('link_open', 'a', 1);
        open.attrs = [['href', piece.href]];
        out.push(open, Object.assign(new state.Token('text', '', 0), { content: piece.text }), new state.Token('link_close', 'a', -1));
      }
    }
    block.children = out;
  }
});

// Every link to the realm's own narrows or uploads becomes relative; a link without text shows its URL.
md.core.ruler.after('zulip_linkifiers', 'zulip_link_targets', (state) => {
  const realmUrl = (state.env as RenderEnv).ctx?.realmUrl;
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const children = block.children;
    for (let i = 0; i < children.length; i++) {
      if (children[i].type !== 'link_open') continue;
      const href = relativeToRealm(String(children[i].attrGet('href') ?? ''), realmUrl);
      children[i].attrSet('href', href);
      let close = i + 1;
      while (close < children.length && children[close].type !== 'link_close') close++;
      const inner = children.slice(i + 1, close);
      if (inner.every((t) => t.type === 'text' && t.content.trim() === '')) {
        children.splice(i + 1, close - i - 1, Object.assign(new state.Token('text', '', 0), { content: href }));
      }
    }
  }
});

// Unicode emoji typed as characters become the same spans as :name:, as Zulip stores them (not in
// a link's text, which Zulip shows as typed).
md.core.ruler.after('inline', 'zulip_unicode_emoji', (state) => {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const out: typeof block.children = [];
    let inLink = 0;
    for (const t of block.children) {
      if (t.type === 'link_open') inLink++;
      else if (t.type === 'link_close') inLink--;
      if (t.type !== 'text' || inLink > 0 || !/[^\x00-\x7f]/.test(t.content)) {
        out.push(t);
        continue;
      }
      let last = 0;
      for (const m of t.content.matchAll(emojiPattern())) {
        const found = emojiByChars(m[0]);
        if (!found) continue;
        if (m.index! > last) out.push(Object.assign(new state.Token('text', '', 0), { content: t.content.slice(last, m.index) }));
        out.push(Object.assign(new state.Token('html_inline', '', 0), { content: emojiSpan(found.name, found.code) }));
        last = m.index! + m[0].length;
      }
      if (last === 0) out.push(t);
      else if (last < t.content.length) out.push(Object.assign(new state.Token('text', '', 0), { content: t.content.slice(last) }));
    }
    block.children = out;
  }
});

/** Code as Pygments writes it (quotes and apostrophes escaped too). */
function escapeCode(s: string): string {
  return escapeAttr(s).replace(/'/g, '&#39;');
}

function codeBlock(content: string, lang: string | undefined): string {
  const attr = lang ? ` data-code-language="${escapeAttr(codeLanguageName(lang))}"` : '';
  return `<div class="codehilite"${attr}><pre><span></span><code>${escapeCode(content)}</code></pre></div>\n`;
}

function renderInner(content: string, env: RenderEnv): string {
  const starts = env.listStarts;
  env.listStarts = undefined;
  env.nesting++;
  try {
    return md.render(content, env).replace(/\n+$/, '');
  } finally {
    env.listStarts = starts;
    env.nesting--;
  }
}

// Quote and spoiler blocks nested deeper than this show their content verbatim: each level renders
// its content again, so the depth bounds a message's rendering time (and the stack it needs).
const MAX_BLOCK_NESTING = 8;

md.renderer.rules.fence = (tokens, idx, _options, renderEnv) => {
  const token = tokens[idx];
  const env = renderEnv as RenderEnv;
  const lang = token.info;
  if ((lang === 'quote' || lang === 'quoted' || lang === 'spoiler') && env.nesting >= MAX_BLOCK_NESTING) return codeBlock(token.content, undefined);
  switch (lang) {
    case 'quote':
    case 'quoted': {
      env.inQuote++;
      try {
        return `<blockquote>\n${renderInner(token.content, env)}\n</blockquote>\n`;
      } finally {
        env.inQuote--;
      }
    }
    case 'spoiler': {
      const title = (token.meta as { header?: string } | null)?.header?.trim();
      const header = title ? `<p>${md.renderInline(title, env)}</p>\n` : '';
      return `<div class="spoiler-block"><div class="spoiler-header">\n${header}</div><div class="spoiler-content" aria-hidden="true">\n${renderInner(token.content, env)}\n</div></div>\n`;
    }
    case 'math':
      // Each paragraph of a math block is one displayed formula.
      return token.content
        .replace(/\n$/, '')
        .split('\n\n')
        .map((p) => {
          const html = tex(p, true);
          return html ? `<p>${html}</p>\n` : `<p><span class="tex-error">${escapeAttr(p).replace(/'/g, '&#x27;')}</span></p>\n`;
        })
        .join('');
  }
  return codeBlock(token.content, lang || undefined);
};

md.renderer.rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content, undefined);
md.renderer.rules.code_inline = (tokens, idx) => `<code>${escapeText(tokens[idx].content)}</code>`;
md.renderer.rules.text = (tokens, idx) => escapeText(tokens[idx].content);
md.renderer.rules.s_open = () => '<del>';
md.renderer.rules.s_close = () => '</del>';

// A list nested in a tight item follows the item's text directly, as Zulip writes it.
for (const list of ['bullet_list_open', 'ordered_list_open'] as const) {
  md.renderer.rules[list] = (tokens, idx, options, _env, self) => {
    const html = self.renderToken(tokens, idx, options);
    return idx > 0 && tokens[idx - 1].type === 'paragraph_close' && tokens[idx - 1].hidden ? html.replace(/^\n/, '') : html;
  };
}

// Zulip's table cells spell alignment as `text-align: center;`.
for (const cell of ['th_open', 'td_open'] as const) {
  md.renderer.rules[cell] = (tokens, idx, options, _env, self) => {
    const style = tokens[idx].attrGet('style');
    if (style) tokens[idx].attrSet('style', String(style).replace(/^text-align:(\w+)$/, 'text-align: $1;'));
    return self.renderToken(tokens, idx, options);
  };
}

/** Renders a message and reports its (non-silent) mentions. */
export function renderMessage(content: string, ctx: MarkdownContext = EMPTY_CONTEXT): Rendered {
  const { source, starts } = prepareLists(content.replace(/\r\n?/g, '\n'));
  const env: RenderEnv = { ctx, linkifyBudget: new LinkifyBudget(), users: new Set(), groups: new Set(), streamWildcard: false, topicWildcard: false, inQuote: 0, nesting: 0, listStarts: starts };
  const html = md.render(source, env).replace(/\n+$/, '');
  return { html, mentionedUserIds: [...env.users], mentionedGroupIds: [...env.groups], streamWildcard: env.streamWildcard, topicWildcard: env.topicWildcard };
}

/** The HTML Zulip would store as rendered_content for this Markdown (no trailing newline). */
export function renderMarkdown(content: string, ctx: MarkdownContext = EMPTY_CONTEXT): string {
  return renderMessage(content, ctx).html;
}

/** Zulip's /me messages: content starting with "/me " on a single line. */
export function isMeMessage(content: string): boolean {
  return content.startsWith('/me ') && !content.includes('\n');
}

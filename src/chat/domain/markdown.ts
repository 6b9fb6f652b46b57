// Zulip's Markdown dialect, on markdown-it: one newline is a line break, raw HTML is shown as text,
// `_x_` is not emphasis (only `*x*` and `**x**` are), no indented code blocks, underlined headings
// or reference links, fenced code in Zulip's codehilite wrapper, links that open in a new tab with
// their URL as title, ~~x~~ as <del>, bare URLs linked. On top: quote, spoiler and math fences,
// mentions (users, groups, wildcards), channel/topic/message links, emoji, <time:...> and $$TeX$$.
// Mentions and links need names from the store: the caller loads a MarkdownContext first
// (domain/mentions.ts) because markdown-it's rules are synchronous.
import MarkdownIt from 'markdown-it';
import katex from 'katex';
import { emojiByChars, emojiByName, emojiPattern } from './emoji.js';
import { LinkifyBudget, linkifyText, type CompiledLinkifier } from './linkifiers.js';

export interface MentionUser {
  id: number;
  full_name: string;
}
export interface MentionGroup {
  id: number;
  name: string;
  memberIds: number[];
}
export interface LinkChannel {
  id: number;
  name: string;
}

/** The names a message may refer to, looked up before rendering. */
export interface MarkdownContext {
  /** Active users by lowercased full name (several when names clash). */
  usersByName: Map<string, MentionUser[]>;
  usersById: Map<number, MentionUser>;
  /** User groups by name, with their members including subgroups'. */
  groups: Map<string, MentionGroup>;
  /** Channels by lowercased name. */
  channels: Map<string, LinkChannel>;
  /** The realm's linkifiers, in their processing order. */
  linkifiers?: CompiledLinkifier[];
}

export const EMPTY_CONTEXT: MarkdownContext = { usersByName: new Map(), usersById: new Map(), groups: new Map(), channels: new Map() };

/** What rendering found that changes flags: who is mentioned, not counting silent mentions. */
export interface Rendered {
  html: string;
  mentionedUserIds: number[];
  mentionedGroupIds: number[];
  streamWildcard: boolean;
  topicWildcard: boolean;
}

// A type alias (not an interface) so it fits markdown-it's open Env record.
type RenderEnv = {
  ctx: MarkdownContext;
  /** The linkifiers' time on this message (quote and spoiler blocks render separately, on the same budget). */
  linkifyBudget: LinkifyBudget;
  users: Set<number>;
  groups: Set<number>;
  streamWildcard: boolean;
  topicWildcard: boolean;
};

const md = new MarkdownIt({ html: false, breaks: true, linkify: true, typographer: false });
// Zulip has neither indented code (4 spaces keep text as text), setext headings, inline images nor
// reference-style links (a `[x]: url` line stays text).
md.disable(['code', 'lheading', 'image', 'reference']);
// linkify-it would make mailto: links of bare addresses; Zulip leaves them as text.
md.linkify.set({ fuzzyEmail: false });

type InlineRule = Parameters<typeof md.inline.ruler.at>[1];
type InlineState = Parameters<InlineRule>[0];
const rules = (md.inline.ruler as unknown as { __rules__: { name: string; fn: InlineRule }[] }).__rules__;
const emphasis = rules.find((r) => r.name === 'emphasis')!.fn;
// An underscore never opens emphasis in Zulip (snake_case words and _x_ stay as typed).
md.inline.ruler.at('emphasis', (state, silent) => (state.src.charCodeAt(state.pos) === 0x5f /* _ */ ? false : emphasis(state, silent)));

const escapeHtml = md.utils.escapeHtml;

/** Zulip's URL fragment encoding: percent-encoding with `.` in place of `%` (and `.` itself as .2E). */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/\./g, '%2E')
    .replace(/%/g, '.');
}

export function channelNarrowUrl(c: LinkChannel): string {
  return `/#narrow/channel/${encodeHashComponent(`${c.id}-${c.name.replace(/ /g, '-')}`)}`;
}

export function topicNarrowUrl(c: LinkChannel, topic: string): string {
  return `${channelNarrowUrl(c)}/topic/${encodeHashComponent(topic)}`;
}

function pushHtml(state: InlineState, html: string): void {
  const token = state.push('html_inline', '', 0);
  token.content = html;
}

function envOf(state: { env: unknown }): RenderEnv {
  return state.env as RenderEnv;
}

const WILDCARDS = new Map([
  ['all', 'stream'],
  ['everyone', 'stream'],
  ['channel', 'stream'],
  ['stream', 'stream'],
  ['topic', 'topic'],
]);

// @**Name**, @**Name|id**, @_**Name** (silent), @**all** and friends, @*group*, @_*group*.
md.inline.ruler.before('linkify', 'zulip_mention', (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */) return false;
  const m = /^@(_?)(?:\*\*([^*\n]+?)\*\*|\*([^*\n]+?)\*)/.exec(state.src.slice(state.pos));
  if (!m) return false;
  const env = envOf(state);
  const quiet = m[1] === '_';
  const cls = quiet ? ' silent' : '';
  const at = quiet ? '' : '@';
  let html: string | undefined;
  if (m[2] !== undefined) {
    const text = m[2];
    const wildcard = WILDCARDS.get(text);
    if (wildcard) {
      html = wildcard === 'topic' ? `<span class="topic-mention${cls}">${at}${text}</span>` : `<span class="user-mention channel-wildcard-mention${cls}" data-user-id="*">${at}${text}</span>`;
      if (!silent && !quiet) {
        if (wildcard === 'topic') env.topicWildcard = true;
        else env.streamWildcard = true;
      }
    } else {
      const pipe = /^(.*)\|(\d+)$/.exec(text);
      let user: MentionUser | undefined;
      if (pipe) {
        user = env.ctx.usersById.get(Number(pipe[2]));
        // With a name before the id, both must agree, as Zulip checks.
        if (user && pipe[1] !== '' && pipe[1].toLowerCase() !== user.full_name.toLowerCase()) user = undefined;
      } else {
        const named = env.ctx.usersByName.get(text.toLowerCase()) ?? [];
        // An ambiguous name mentions nobody: the sender has to add |id.
        if (named.length === 1) user = named[0];
      }
      if (!user) return false;
      html = `<span class="user-mention${cls}" data-user-id="${user.id}">${at}${escapeHtml(user.full_name)}</span>`;
      if (!silent && !quiet) env.users.add(user.id);
    }
  } else {
    const group = env.ctx.groups.get(m[3]!);
    if (!group) return false;
    html = `<span class="user-group-mention${cls}" data-user-group-id="${group.id}">${at}${escapeHtml(group.name)}</span>`;
    if (!silent && !quiet) env.groups.add(group.id);
  }
  if (!silent) pushHtml(state, html);
  state.pos += m[0].length;
  return true;
});

// #**channel**, #**channel>topic**, #**channel>topic@message_id**.
md.inline.ruler.before('linkify', 'zulip_channel_link', (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */) return false;
  const m = /^#\*\*([^*\n]+?)\*\*/.exec(state.src.slice(state.pos));
  if (!m) return false;
  const inner = m[1];
  const gt = inner.indexOf('>');
  const channel = envOf(state).ctx.channels.get((gt < 0 ? inner : inner.slice(0, gt)).toLowerCase());
  if (!channel) return false;
  if (!silent) {
    const name = escapeHtml(channel.name);
    if (gt < 0) {
      pushHtml(state, `<a class="stream" data-stream-id="${channel.id}" href="${channelNarrowUrl(channel)}">#${name}</a>`);
    } else {
      let topic = inner.slice(gt + 1);
      const near = /^(.*)@(\d+)$/.exec(topic);
      if (near) {
        topic = near[1];
        pushHtml(state, `<a class="message-link" href="${topicNarrowUrl(channel, topic)}/near/${near[2]}">#${name} &gt; ${escapeHtml(topic)} @ 💬</a>`);
      } else {
        pushHtml(state, `<a class="stream-topic" data-stream-id="${channel.id}" href="${topicNarrowUrl(channel, topic)}">#${name} &gt; ${escapeHtml(topic)}</a>`);
      }
    }
  }
  state.pos += m[0].length;
  return true;
});

function emojiSpan(name: string, code: string): string {
  return `<span aria-label="${escapeHtml(name.replace(/_/g, ' '))}" class="emoji emoji-${code}" role="img" title="${escapeHtml(name.replace(/_/g, ' '))}">:${escapeHtml(name)}:</span>`;
}

// :name: for the Unicode emoji Zulip knows by that name; unknown names stay as typed.
md.inline.ruler.before('linkify', 'zulip_emoji', (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  const m = /^:([a-z0-9_+-]+):/.exec(state.src.slice(state.pos));
  if (!m) return false;
  const emoji = emojiByName(m[1]);
  if (!emoji) return false;
  if (!silent) pushHtml(state, emojiSpan(emoji.name, emoji.code));
  state.pos += m[0].length;
  return true;
});

/** ISO 8601 or UNIX seconds, as Zulip's <time:...> accepts; null when unreadable. */
export function parseTimeSyntax(text: string): Date | null {
  const t = text.trim();
  const ms = /^-?\d+(\.\d+)?$/.test(t) ? Number(t) * 1000 : Date.parse(t);
  return Number.isFinite(ms) ? new Date(ms) : null;
}

md.inline.ruler.before('linkify', 'zulip_time', (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x3c /* < */) return false;
  const m = /^<time:([^>\n]+)>/.exec(state.src.slice(state.pos));
  if (!m) return false;
  if (!silent) {
    const when = parseTimeSyntax(m[1]);
    pushHtml(
      state,
      when ? `<time datetime="${when.toISOString().replace(/\.\d{3}Z$/, 'Z')}">${escapeHtml(m[1])}</time>` : `<span class="timestamp-error">Invalid time format: ${escapeHtml(m[1])}</span>`,
    );
  }
  state.pos += m[0].length;
  return true;
});

function tex(source: string, displayMode: boolean): string | null {
  try {
    return katex.renderToString(source, { displayMode, throwOnError: true });
  } catch {
    return null;
  }
}

// $$TeX$$ inline; TeX that KaTeX cannot read is shown as typed in a tex-error span.
md.inline.ruler.before('linkify', 'zulip_math', (state, silent) => {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x24 || src.charCodeAt(pos + 1) !== 0x24) return false;
  const end = src.indexOf('$$', pos + 2);
  if (end < 0 || end === pos + 2) return false;
  if (!silent) {
    const source = src.slice(pos + 2, end);
    const html = tex(source, false);
    pushHtml(state, html ?? `<span class="tex-error">${escapeHtml(`$$${source}$$`)}</span>`);
  }
  state.pos = end + 2;
  return true;
});

// Linkifiers turn their patterns in plain text (not in code, and not inside a link already) into
// links, as the earlier rules left it; each link renders like any other (target, title).
md.core.ruler.after('linkify', 'zulip_linkifiers', (state) => {
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

// Unicode emoji typed as characters become the same spans as :name:, as Zulip stores them.
md.core.ruler.after('linkify', 'zulip_unicode_emoji', (state) => {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const out: typeof block.children = [];
    for (const t of block.children) {
      if (t.type !== 'text' || !/[^\x00-\x7f]/.test(t.content)) {
        out.push(t);
        continue;
      }
      let last = 0;
      for (const m of t.content.matchAll(emojiPattern())) {
        const emoji = emojiByChars(m[0]);
        if (!emoji) continue;
        if (m.index! > last) out.push(Object.assign(new state.Token('text', '', 0), { content: t.content.slice(last, m.index) }));
        out.push(Object.assign(new state.Token('html_inline', '', 0), { content: emojiSpan(emoji.name, emoji.code) }));
        last = m.index! + m[0].length;
      }
      if (last === 0) out.push(t);
      else if (last < t.content.length) out.push(Object.assign(new state.Token('text', '', 0), { content: t.content.slice(last) }));
    }
    block.children = out;
  }
});

md.renderer.rules.fence = (tokens, idx, _options, env) => {
  const token = tokens[idx];
  const [lang = ''] = token.info.trim().split(/\s+/);
  switch (lang.toLowerCase()) {
    case 'quote':
      return `<blockquote>\n${renderInner(token.content, env as unknown as RenderEnv)}\n</blockquote>\n`;
    case 'spoiler': {
      const title = token.info.trim().slice(lang.length).trim();
      const header = title ? `<p>${md.renderInline(title, env)}</p>\n` : '';
      return `<div class="spoiler-block"><div class="spoiler-header">\n${header}</div><div class="spoiler-content" aria-hidden="true">\n${renderInner(token.content, env as unknown as RenderEnv)}\n</div></div>\n`;
    }
    case 'math':
    case 'tex':
    case 'latex': {
      // Each paragraph of a math block is one displayed formula.
      const parts = token.content
        .split(/\n\s*\n/)
        .map((p) => p.trim())
        .filter(Boolean);
      return parts
        .map((p) => {
          const html = tex(p, true);
          return html ? `<p>${html}</p>\n` : `<p><span class="tex-error">${escapeHtml(p)}</span></p>\n`;
        })
        .join('');
    }
  }
  const attr = lang ? ` data-code-language="${escapeHtml(lang)}"` : '';
  return `<div class="codehilite"${attr}><pre><span></span><code>${escapeHtml(token.content)}</code></pre></div>\n`;
};

function renderInner(content: string, env: RenderEnv): string {
  return md.render(content, env).replace(/\n+$/, '');
}

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  const href = token.attrGet('href') ?? '';
  token.attrSet('target', '_blank');
  token.attrSet('title', href);
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.s_open = () => '<del>';
md.renderer.rules.s_close = () => '</del>';

/** Renders a message and reports its (non-silent) mentions. */
export function renderMessage(content: string, ctx: MarkdownContext = EMPTY_CONTEXT): Rendered {
  const env: RenderEnv = { ctx, linkifyBudget: new LinkifyBudget(), users: new Set(), groups: new Set(), streamWildcard: false, topicWildcard: false };
  const html = md.render(content, env).replace(/\n+$/, '');
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

// Zulip's table cells spell alignment as `text-align: center;`.
for (const cell of ['th_open', 'td_open'] as const) {
  md.renderer.rules[cell] = (tokens, idx, options, _env, self) => {
    const style = tokens[idx].attrGet('style');
    if (style) tokens[idx].attrSet('style', String(style).replace(/^text-align:(\w+)$/, 'text-align: $1;'));
    return self.renderToken(tokens, idx, options);
  };
}

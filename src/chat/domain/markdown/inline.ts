// Zulip's inline syntax as markdown-it rules: mentions (silent inside quotes), channel, topic and
// message links, emoji and emoticons, <time:...>, $$TeX$$, code spans, emphasis, strikethrough and
// the bare links Zulip makes. Zulip's rules are regular expressions applied in turn; these follow
// their conditions (what may come before and after, what the content may hold) left to right.
import katex from 'katex';
import type { StateInline } from 'markdown-it';
import { emojiByName } from '../emoji.js';
import { envOf, type MentionUser } from './context.js';
import { matchWebLink } from './links.js';

type InlineState = StateInline;
type InlineRule = (state: StateInline, silent: boolean) => boolean;

/** Text as Zulip's serialiser writes it: only &, < and > are escaped. */
export function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value: quotes too. */
export function escapeAttr(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

// The patterns, matched in place (sticky) so that no rule copies the rest of the text.
const MENTION = /@(_?)(?:\*\*([^*\n]+?)\*\*|\*([^*\n]+?)\*)/y;
const CHANNEL_LINK = /#\*\*([^*\n]+?)\*\*/y;
const EMOJI_NAME = /:([\p{L}\p{N}\p{M}_+-]+):/uy;
const TIME = /<time:([^>\n]*?)>/y;
const TEX = /\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)/y;
const STRONG_EM = /\*\*\*(?!\s)([^*^\n]+)(?<!\s)\*\*\*/y;
const STRONG = /\*\*([^\n]+?)\*\*/y;
const EM = /\*(?!\s)([^*^\n]+)(?<!\s)\*/y;
const DEL = /~~([^~\n]+?)~~(?!~)/y;

/** The pattern's match at the rule's position, within the text the rule may look at. */
function execAt(pattern: RegExp, state: InlineState): RegExpExecArray | null {
  pattern.lastIndex = state.pos;
  const m = pattern.exec(state.src);
  return m && m.index + m[0].length <= state.posMax ? m : null;
}

function pushHtml(state: InlineState, html: string): void {
  const token = state.push('html_inline', '', 0);
  token.content = html;
}

/** Encodes a narrow URL component as Zulip does: percent-encoding with `.` in place of `%`. */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/\./g, '%2E')
    .replace(/%/g, '.');
}

export function channelNarrowUrl(c: { id: number; name: string }): string {
  return `/#narrow/channel/${encodeHashComponent(`${c.id}-${c.name.replace(/ /g, '-')}`)}`;
}

export function topicNarrowUrl(c: { id: number; name: string }, topic: string): string {
  return `${channelNarrowUrl(c)}/topic/${encodeHashComponent(topic)}`;
}

// Mentions and channel links start after the start, a space or one of '"({[/< (Zulip's BEFORE_MENTION_ALLOWED_REGEX).
function mentionMayStartAt(src: string, pos: number): boolean {
  return pos === 0 || /[\s'"({[/<]/u.test(src[pos - 1]);
}

const WILDCARDS = new Map([
  ['all', 'stream'],
  ['everyone', 'stream'],
  ['channel', 'stream'],
  ['stream', 'stream'],
  ['topic', 'topic'],
]);

// @**Name**, @**Name|id**, @_**Name** (silent), @**all** and friends, @*group*, @_*group*. Inside a
// quote every mention is silent, as Zulip rewrites quoted mentions, so a quote-reply notifies nobody.
export const mention: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */ || !mentionMayStartAt(state.src, state.pos)) return false;
  const m = execAt(MENTION, state);
  if (!m) return false;
  const env = envOf(state);
  const quiet = m[1] === '_' || env.inQuote > 0;
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
        const active = named.filter((u) => u.isActive !== false);
        // An ambiguous name mentions nobody: the sender has to add |id.
        if (active.length === 1) user = active[0];
        else if (named.length === 1) user = named[0];
      }
      if (!user) return false;
      // A deactivated user is mentioned silently: the name links, nobody is notified.
      const quietUser = quiet || user.isActive === false;
      html = `<span class="user-mention${quietUser ? ' silent' : ''}" data-user-id="${user.id}">${quietUser ? '' : '@'}${escapeText(user.full_name)}</span>`;
      if (!silent && !quietUser) env.users.add(user.id);
    }
  } else {
    const group = env.ctx.groups.get(m[3]!);
    if (!group) return false;
    html = `<span class="user-group-mention${cls}" data-user-group-id="${group.id}">${at}${escapeText(group.name)}</span>`;
    if (!silent && !quiet) env.groups.add(group.id);
  }
  if (!silent) pushHtml(state, html);
  state.pos += m[0].length;
  return true;
};

// #**channel**, #**channel>topic**, #**channel>topic@message_id**.
export const channelLink: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !mentionMayStartAt(state.src, state.pos)) return false;
  const m = execAt(CHANNEL_LINK, state);
  if (!m) return false;
  const inner = m[1];
  const gt = inner.indexOf('>');
  const channel = envOf(state).ctx.channels.get((gt < 0 ? inner : inner.slice(0, gt)).toLowerCase());
  if (!channel) return false;
  if (!silent) {
    const name = escapeText(channel.name);
    if (gt < 0) {
      pushHtml(state, `<a class="stream" data-stream-id="${channel.id}" href="${channelNarrowUrl(channel)}">#${name}</a>`);
    } else {
      let topic = inner.slice(gt + 1);
      const near = /^(.*)@(\d+)$/.exec(topic);
      if (near) {
        topic = near[1];
        pushHtml(state, `<a class="message-link" href="${topicNarrowUrl(channel, topic)}/near/${near[2]}">#${name} &gt; ${escapeText(topic)} @ 💬</a>`);
      } else {
        pushHtml(state, `<a class="stream-topic" data-stream-id="${channel.id}" href="${topicNarrowUrl(channel, topic)}">#${name} &gt; ${escapeText(topic)}</a>`);
      }
    }
  }
  state.pos += m[0].length;
  return true;
};

export function emojiSpan(name: string, code: string): string {
  const title = escapeAttr(name.replace(/_/g, ' '));
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${escapeText(name)}:</span>`;
}

// :name: for the realm's custom emoji, Zulip's own :zulip: and the Unicode emoji Zulip knows by that
// name, in that order; unknown names stay as typed.
export const emoji: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  const m = execAt(EMOJI_NAME, state);
  if (!m) return false;
  let html: string;
  const custom = envOf(state).ctx.realmEmoji?.get(m[1]);
  if (custom !== undefined) {
    html = `<img alt=":${escapeAttr(m[1])}:" class="emoji" src="${escapeAttr(custom)}" title="${escapeAttr(m[1].replace(/_/g, ' '))}">`;
  } else if (m[1] === 'zulip') {
    html = '<img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip">';
  } else {
    const found = emojiByName(m[1]);
    if (!found) return false;
    html = emojiSpan(m[1], found.code);
  }
  if (!silent) pushHtml(state, html);
  state.pos += m[0].length;
  return true;
};

// Zulip's emoticons and the emoji they become, for senders with translate_emoticons on.
const EMOTICONS = new Map([
  [':)', 'smile'],
  ['(:', 'smile'],
  [':(', 'frown'],
  ['<3', 'heart'],
  [':|', 'neutral'],
  [':/', 'confused'],
  [';)', 'wink'],
  [':D', 'grinning'],
  [':o', 'open_mouth'],
  [':O', 'open_mouth'],
  [':p', 'stuck_out_tongue'],
  [':P', 'stuck_out_tongue'],
]);
// An emoticon stands alone: after the start, a space or punctuation, and before the same or the end.
const AROUND_EMOTICON = /[\s!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/u;

export const emoticon: InlineRule = (state, silent) => {
  if (!envOf(state).ctx.translateEmoticons) return false;
  const { src, pos } = state;
  const name = EMOTICONS.get(src.slice(pos, pos + 2));
  if (!name) return false;
  if (pos > 0 && !AROUND_EMOTICON.test(src[pos - 1])) return false;
  if (pos + 2 < src.length && !AROUND_EMOTICON.test(src[pos + 2])) return false;
  const found = emojiByName(name);
  if (!found) return false;
  if (!silent) pushHtml(state, emojiSpan(name, found.code));
  state.pos += 2;
  return true;
};

// An explicit zone: Z, an offset, or a zone name at the end.
const HAS_ZONE = /(?:[zZ]|[+-]\d\d:?\d\d|\b(?:UTC|GMT|[ECMP][SD]T))$/;

/**
 * ISO 8601, dates as people write them ("Jun 5th 2017, 10:30PM") or UNIX seconds, as Zulip's
 * <time:...> accepts; a time without a zone is UTC, as Zulip takes it. Null when unreadable.
 */
export function parseTimeSyntax(text: string): Date | null {
  let t = text.trim();
  let ms: number;
  if (/^-?\d+(\.\d+)?$/.test(t)) ms = Number(t) * 1000;
  else {
    t = t.replace(/(\d)(?:st|nd|rd|th)\b/gi, '$1').replace(/(\d)([ap]m)\b/gi, '$1 $2');
    ms = HAS_ZONE.test(t) ? Date.parse(t) : Date.parse(/^\d{4}-\d\d-\d\dT/.test(t) ? `${t}Z` : `${t} UTC`);
  }
  if (!Number.isFinite(ms)) return null;
  const when = new Date(ms);
  // Years outside 1..9999 are out of Zulip's (Python's) range.
  return when.getUTCFullYear() >= 1 && when.getUTCFullYear() <= 9999 ? when : null;
}

export const time: InlineRule = (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 0x3c /* < */) return false;
  const m = execAt(TIME, state);
  if (!m) return false;
  if (!silent) {
    const when = parseTimeSyntax(m[1]);
    pushHtml(
      state,
      when ? `<time datetime="${when.toISOString().replace(/\.\d{3}Z$/, 'Z')}">${escapeText(m[1])}</time>` : `<span class="timestamp-error">Invalid time format: ${escapeText(m[1])}</span>`,
    );
  }
  state.pos += m[0].length;
  return true;
};

/** KaTeX's HTML for the TeX, or null when KaTeX cannot read it. */
export function tex(source: string, displayMode: boolean): string | null {
  try {
    return katex.renderToString(source, { displayMode, throwOnError: true });
  } catch {
    return null;
  }
}

const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}\p{M}_]/u.test(c);

// $$TeX$$ inline, on Zulip's terms: not touching a word or a third $, no newline inside, not
// starting with _ or $ (so $$$ and $$_$$ stay text). TeX KaTeX cannot read shows in a tex-error span.
export const inlineTex: InlineRule = (state, silent) => {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x24 || src.charCodeAt(pos + 1) !== 0x24) return false;
  if (isWordChar(src[pos - 1]) || src[pos - 1] === '$') return false;
  const m = execAt(TEX, state);
  if (!m || isWordChar(src[pos + m[0].length])) return false;
  if (!silent) {
    const html = tex(m[1], false);
    pushHtml(state, html ?? `<span class="tex-error">${escapeText(`$$${m[1]}$$`)}</span>`);
  }
  state.pos += m[0].length;
  return true;
};

// `code`: the run of backticks closes on the same run within the line; the content keeps its spaces.
export const codeSpan: InlineRule = (state, silent) => {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x60 || src[pos - 1] === '\\') return false;
  let end = pos;
  while (src.charCodeAt(end) === 0x60) end++;
  const run = end - pos;
  const lineEnd = src.indexOf('\n', end) < 0 ? state.posMax : Math.min(src.indexOf('\n', end), state.posMax);
  let at = end;
  for (;;) {
    at = src.indexOf('`'.repeat(run), at);
    if (at < 0 || at >= lineEnd) {
      if (!silent) state.pending += src.slice(pos, end);
      state.pos = end;
      return true;
    }
    let close = at + run;
    if (src.charCodeAt(close) === 0x60 || src.charCodeAt(at - 1) === 0x60 || at === end) {
      while (src.charCodeAt(close) === 0x60) close++;
      at = close;
      continue;
    }
    if (!silent) {
      const token = state.push('code_inline', 'code', 0);
      token.markup = '`'.repeat(run);
      token.content = src.slice(end, at);
    }
    state.pos = close;
    return true;
  }
};

function wrap(state: InlineState, silent: boolean, tags: string[], innerStart: number, innerEnd: number, end: number): boolean {
  if (!silent) {
    for (const tag of tags) state.push(`${tag}_open`, tag, 1);
    const max = state.posMax;
    state.pos = innerStart;
    state.posMax = innerEnd;
    state.md.inline.tokenize(state);
    state.posMax = max;
    for (const tag of [...tags].reverse()) state.push(`${tag}_close`, tag, -1);
  }
  state.pos = end;
  return true;
}

// ***x***, **x** and *x* as Zulip's patterns have them (never _x_): emphasis does not start or end
// with a space and holds no * or ^; strong holds anything but a newline.
export const emphasis: InlineRule = (state, silent) => {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x2a) return false;
  let m = execAt(STRONG_EM, state);
  if (m) return wrap(state, silent, ['strong', 'em'], pos + 3, pos + 3 + m[1].length, pos + m[0].length);
  m = execAt(STRONG, state);
  if (m) return wrap(state, silent, ['strong'], pos + 2, pos + 2 + m[1].length, pos + m[0].length);
  m = execAt(EM, state);
  if (m) return wrap(state, silent, ['em'], pos + 1, pos + 1 + m[1].length, pos + m[0].length);
  return false;
};

// ~~x~~, not part of a longer run of tildes.
export const strikethrough: InlineRule = (state, silent) => {
  const { src, pos } = state;
  if (src.charCodeAt(pos) !== 0x7e || src[pos - 1] === '~') return false;
  const m = execAt(DEL, state);
  if (!m) return false;
  return wrap(state, silent, ['s'], pos + 2, pos + 2 + m[1].length, pos + m[0].length);
};

// Bare URLs, domains and addresses, linked where Zulip's pattern finds them (links.ts).
export const autolink: InlineRule = (state, silent) => {
  if (state.linkLevel > 0) return false;
  const url = matchWebLink(state.src, state.pos, state.posMax);
  if (!url) return false;
  const href = state.md.normalizeLink(url);
  if (!state.md.validateLink(href)) return false;
  if (!silent) {
    const open = state.push('link_open', 'a', 1);
    open.attrs = [['href', href]];
    open.markup = 'autolink';
    open.info = 'auto';
    const text = state.push('text', '', 0);
    text.content = url;
    const close = state.push('link_close', 'a', -1);
    close.markup = 'autolink';
    close.info = 'auto';
  }
  state.pos += url.length;
  return true;
};

// Characters at which some inline rule may start (markdown-it's list of them).
const TERMINATORS = new Set('\n!#$%&*+-:<=>@[\\]^_`{}~'.split('').map((c) => c.charCodeAt(0)));
const BEFORE_LINK = /[\s'"(,:<]/u;

// Plain text, as markdown-it's text rule, but also stopping where a bare link may start.
export const text: InlineRule = (state, silent) => {
  const { src } = state;
  let pos = state.pos;
  while (pos < state.posMax && !TERMINATORS.has(src.charCodeAt(pos))) {
    pos++;
    if (BEFORE_LINK.test(src[pos - 1])) break;
  }
  if (pos === state.pos) return false;
  if (!silent) state.pending += src.slice(state.pos, pos);
  state.pos = pos;
  return true;
};

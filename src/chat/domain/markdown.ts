// Zulip's Markdown dialect, on markdown-it: one newline is a line break, raw HTML is shown as text,
// `_x_` is not emphasis (only `*x*` and `**x**` are), no indented code blocks or underlined
// headings, fenced code in Zulip's codehilite wrapper, links that open in a new tab with their
// URL as title, ~~x~~ as <del>, bare URLs linked. Mentions, emoji and math come later.
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, breaks: true, linkify: true, typographer: false });
// Zulip has neither indented code (4 spaces keep text as text), setext headings, nor inline images.
md.disable(['code', 'lheading', 'image']);

type InlineRule = Parameters<typeof md.inline.ruler.at>[1];
const rules = (md.inline.ruler as unknown as { __rules__: { name: string; fn: InlineRule }[] }).__rules__;
const emphasis = rules.find((r) => r.name === 'emphasis')!.fn;
// An underscore never opens emphasis in Zulip (snake_case words and _x_ stay as typed).
md.inline.ruler.at('emphasis', (state, silent) => (state.src.charCodeAt(state.pos) === 0x5f /* _ */ ? false : emphasis(state, silent)));

const escapeHtml = md.utils.escapeHtml;

md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  const lang = token.info.trim().split(/\s+/)[0] ?? '';
  const attr = lang ? ` data-code-language="${escapeHtml(lang)}"` : '';
  return `<div class="codehilite"${attr}><pre><span></span><code>${escapeHtml(token.content)}</code></pre></div>\n`;
};

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  const href = token.attrGet('href') ?? '';
  token.attrSet('target', '_blank');
  token.attrSet('title', href);
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.s_open = () => '<del>';
md.renderer.rules.s_close = () => '</del>';

/** The HTML Zulip would store as rendered_content for this Markdown (no trailing newline). */
export function renderMarkdown(content: string): string {
  return md.render(content).replace(/\n+$/, '');
}

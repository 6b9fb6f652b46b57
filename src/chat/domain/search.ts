// The `search` narrow operator: reading its operand into words and quoted phrases, and marking the
// matched words in a message's HTML and topic with <span class="highlight">, as Zulip does.
import { looseFold, searchTokens, type SearchGroups } from '../../platform/db/fulltext.js';

/**
 * Quoted text is a phrase; every other word must occur somewhere (AND). A word the tokenizers
 * split (foo-bar, a.b) becomes a phrase of its parts, as the engines index it.
 */
export function parseSearch(operand: string): SearchGroups {
  const groups: SearchGroups = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (const m of operand.matchAll(re)) {
    const tokens = searchTokens(m[1] ?? m[2]);
    if (tokens.length) groups.push(tokens);
  }
  return groups;
}

/** The words to highlight for a set of groups, compared loosely (case and accents ignored). */
export function highlightWords(groups: SearchGroups): Set<string> {
  return new Set(groups.flat().map(looseFold));
}

const HTML_PIECES = /(<[^>]*>)|(&[#a-zA-Z0-9]+;)|([\p{L}\p{N}]+)/gu;

/** Wraps matched words in HTML text (never inside tags or entities) in highlight spans. */
export function highlightHtml(html: string, words: Set<string>): string {
  if (!words.size) return html;
  return html.replace(HTML_PIECES, (piece: string, tag: string | undefined, entity: string | undefined) =>
    tag || entity || !words.has(looseFold(piece)) ? piece : `<span class="highlight">${piece}</span>`,
  );
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

// The `search` narrow operator as Zulip reads it: every word of the operand (quoted or not) must
// occur after stemming, stop words aside; a quoted phrase must also occur as typed. Matched words
// are marked in a message's HTML and topic with <span class="highlight">: those whose lexeme is
// one of the search's, as PostgreSQL's ts_headline marks them for Zulip's match_content/match_subject.
import { lexeme, lexemes, type SearchQuery } from '../../platform/db/fulltext.js';

/** Zulip's reading of quoted phrases: a non-empty run between two double quotes. */
const PHRASE = /"([^"]+)"|\S+/g;

export function parseSearch(operand: string): SearchQuery {
  const phrases: string[] = [];
  for (const m of operand.matchAll(PHRASE)) if (m[1] !== undefined) phrases.push(m[1]);
  return { lexemes: lexemes(operand), phrases };
}

/** The lexemes to highlight for a search. */
export function highlightWords(q: SearchQuery): Set<string> {
  return new Set(q.lexemes);
}

const HTML_PIECES = /(<[^>]*>)|(&[#a-zA-Z0-9]+;)|([\p{L}\p{N}]+)/gu;

/** Wraps the words whose lexeme is searched for (never inside tags or entities) in highlight spans. */
export function highlightHtml(html: string, words: Set<string>): string {
  if (!words.size) return html;
  return html.replace(HTML_PIECES, (piece: string, tag: string | undefined, entity: string | undefined) => {
    if (tag || entity) return piece;
    const l = lexeme(piece);
    return l !== null && words.has(l) ? `<span class="highlight">${piece}</span>` : piece;
  });
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

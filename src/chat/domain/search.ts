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

const ENTITY = /&[#a-zA-Z0-9]+;/y;
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Length of the letter or digit at i (2 for one outside the BMP), or 0 for anything else. */
function wordCharAt(s: string, i: number): number {
  if (i >= s.length) return 0;
  const c = s.charCodeAt(i);
  if (c < 0x80) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) ? 1 : 0;
  const cp = s.codePointAt(i)!;
  return WORD_CHAR.test(String.fromCodePoint(cp)) ? (cp > 0xffff ? 2 : 1) : 0;
}

/**
 * Wraps the words whose lexeme is searched for in highlight spans, skipping tags and entities.
 * Words are runs of letters and digits, as the index reads them (fulltext.ts words()). A scan by
 * hand rather than a replace with a callback: this runs on every message of every search page,
 * and most messages have one or two words to mark, so unchanged text is never copied.
 */
export function highlightHtml(html: string, words: Set<string>): string {
  if (!words.size) return html;
  // A lexeme starts with its word's first letter (lower-cased): words starting otherwise are not
  // looked up at all (most of a message's words).
  const firsts = new Set<number>();
  for (const w of words) firsts.add(w.charCodeAt(0));
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < html.length) {
    const c = html.charCodeAt(i);
    if (c === 60) {
      // <: a tag runs to its >; an unclosed one is text.
      const end = html.indexOf('>', i);
      i = end < 0 ? i + 1 : end + 1;
      continue;
    }
    if (c === 38) {
      ENTITY.lastIndex = i;
      i = ENTITY.test(html) ? ENTITY.lastIndex : i + 1;
      continue;
    }
    let j = i;
    for (let n = wordCharAt(html, j); n > 0; n = wordCharAt(html, j)) j += n;
    if (j === i) {
      i++;
      continue;
    }
    const first = c >= 65 && c <= 90 ? c + 32 : c;
    if (c < 0x80 && !firsts.has(first)) {
      i = j;
      continue;
    }
    const word = html.slice(i, j);
    const l = lexeme(word);
    if (l !== null && words.has(l)) {
      out += `${html.slice(copied, i)}<span class="highlight">${word}</span>`;
      copied = j;
    }
    i = j;
  }
  return copied === 0 ? html : out + html.slice(copied);
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

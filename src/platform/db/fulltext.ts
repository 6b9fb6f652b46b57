// Full-text search for both engines, kept here so handlers and narrow builders never spell it.
//
// Zulip searches with PostgreSQL's English configuration: words are stemmed (Snowball English,
// which is Porter2), stop words are dropped, and every remaining word must occur. Keel computes
// those lexemes once, in JS, and stores them in messages.search_text (space-separated, each once);
// the engines only index that text verbatim: SQLite through FTS5 with the `ascii` tokenizer (it
// splits on ASCII punctuation and spaces only and keeps every other character, so our tokens come
// out unchanged), PostgreSQL through array_to_tsvector (lexemes taken as they are, no parser) and a
// GIN index. Neither engine's parser, dictionary or locale takes part, so both find exactly the
// same messages; see docs/decisions/chat-search-stems.md for why not to_tsvector('english').
//
// The index of an existing database was built with these rules: changing how lexemes are made
// (tokenizer, stop words, stemmer) needs a migration that recomputes search_text.
import { sql, type RawBuilder } from 'kysely';
import { stem } from 'porter2';
import type { Engine } from './database.js';

/**
 * Zulip's stop words (puppet/zulip/files/postgresql/zulip_english.stop): PostgreSQL's English list
 * and the single letters. Never indexed, never searched for, never highlighted.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself ' +
    'they them their theirs themselves what which who whom this that these those am is are was were be been being have has had ' +
    'having do does did doing a an the and but if or because as until while of at by for with about against between into through ' +
    'during before after above below to from up down in out on off over under again further then once here there when where why ' +
    'how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now ' +
    'b c d e f g h j k l m n o p q r u v w x y z'
  ).split(' '),
);

/**
 * Longer words are not indexed (PostgreSQL refuses lexemes over 2 KiB; this keeps far below it on
 * both engines alike), so a search for one finds nothing.
 */
export const MAX_WORD_LENGTH = 200;

const WORD = /[\p{L}\p{N}]+/gu;
const DIGIT = /\p{N}/u;

/**
 * Lexemes of words seen lately, as written (case included): highlighting a page of search results
 * looks up every word of 50 messages, mostly the same few hundred words, and stemming each again
 * was a third of a search's CPU time. Bounded: emptied when full; long words are not kept.
 */
const LEXEME_CACHE = new Map<string, string | null>();
const LEXEME_CACHE_SIZE = 20_000;
const CACHED_WORD_LENGTH = 32;

/**
 * The lexeme a word is indexed and searched as, or null for a stop word or an over-long word.
 * Words with a digit stay as they are (PostgreSQL's English configuration sends those to the
 * `simple` dictionary); the others are stemmed.
 */
export function lexeme(word: string): string | null {
  const hit = LEXEME_CACHE.get(word);
  if (hit !== undefined) return hit;
  const l = lexemeOf(word);
  if (word.length <= CACHED_WORD_LENGTH) {
    if (LEXEME_CACHE.size >= LEXEME_CACHE_SIZE) LEXEME_CACHE.clear();
    LEXEME_CACHE.set(word, l);
  }
  return l;
}

function lexemeOf(word: string): string | null {
  const w = word.toLowerCase();
  if (w.length > MAX_WORD_LENGTH || STOP_WORDS.has(w)) return null;
  if (DIGIT.test(w)) return w;
  return stem(w);
}

/** Words as Keel reads text: runs of letters and digits (punctuation of URLs, emails etc. splits). */
export function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** The distinct lexemes of a text, in order of first occurrence. */
export function lexemes(text: string): string[] {
  const out = new Set<string>();
  for (const w of words(text)) {
    const l = lexeme(w);
    if (l !== null) out.add(l);
  }
  return [...out];
}

/** What PostgreSQL's parser skips in Zulip's rendered HTML: tags and character entities. */
const MARKUP = /<[^>]*>|&[#a-zA-Z0-9]+;/g;

/**
 * messages.search_text: the lexemes of the topic and of the rendered message's text (as Zulip
 * indexes subject and rendered_content, so link targets and other attributes are not searched).
 */
export function searchText(topic: string, renderedHtml: string): string {
  return lexemes(`${topic} ${renderedHtml.replace(MARKUP, ' ')}`).join(' ');
}

/** DDL for the search index over messages.search_text (migration 19), run once the column is filled. */
export function searchIndexDdl(engine: Engine): string[] {
  if (engine === 'postgres') {
    return [
      `ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (array_to_tsvector(string_to_array(search_text, ' '))) STORED`,
      `CREATE INDEX messages_search ON messages USING GIN (search_tsv)`,
    ];
  }
  // External content: FTS5 stores only the index; triggers keep it in step with every insert,
  // update and delete of a message row, whatever code path makes them.
  return [
    `CREATE VIRTUAL TABLE messages_fts USING fts5(search_text, content='messages', content_rowid='id', tokenize='ascii', detail='none')`,
    `CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
       INSERT INTO messages_fts(rowid, search_text) VALUES (new.id, new.search_text);
     END`,
    `CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
       INSERT INTO messages_fts(messages_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
     END`,
    `CREATE TRIGGER messages_fts_update AFTER UPDATE OF search_text ON messages BEGIN
       INSERT INTO messages_fts(messages_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
       INSERT INTO messages_fts(rowid, search_text) VALUES (new.id, new.search_text);
     END`,
    `INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`,
  ];
}

/** A parsed search operand: lexemes that must all occur, and quoted phrases that must appear as typed. */
export interface SearchQuery {
  lexemes: string[];
  phrases: string[];
}

/** Lower case for ASCII letters only: what both engines' LIKE below compare without case. */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** A LIKE pattern matching the text anywhere, with LIKE's own characters escaped by a backslash. */
function containsPattern(text: string): string {
  return `%${asciiLower(text).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * SQLite's conditions that a search narrow can be driven by (see searchDriver): the condition
 * object handed out, its lexemes, and what else it requires (its phrases). Keyed by identity, so a
 * negated search (wrapped in `not (...)` by the narrow builder) is never mistaken for one.
 */
const DRIVABLE = new WeakMap<RawBuilder<unknown>, { lexemes: string[]; rest: RawBuilder<unknown>[] }>();

/**
 * A condition over the messages row aliased `m` that holds when the search matches. As in Zulip,
 * a search without any lexeme (only stop words, or only punctuation) matches nothing. A quoted
 * phrase must also occur as typed in the Markdown content or the topic (case-insensitive for
 * ASCII letters on both engines: SQLite's LIKE, PostgreSQL's lower() under the C collation).
 * Lexemes hold only letters and digits, so nothing in them is query syntax.
 */
export function searchCondition(engine: Engine, q: SearchQuery): RawBuilder<unknown> {
  if (!q.lexemes.length) return sql`1 = 0`;
  const phrases: RawBuilder<unknown>[] = q.phrases.map((p) => {
    const pattern = containsPattern(p);
    return engine === 'postgres'
      ? sql`(lower(m.content collate "C") like ${pattern} escape '\\' or lower(m.topic collate "C") like ${pattern} escape '\\')`
      : sql`(m.content like ${pattern} escape '\\' or m.topic like ${pattern} escape '\\')`;
  });
  if (engine === 'postgres') return sql`(${sql.join([sql`m.search_tsv @@ ${tsquery(q.lexemes)}::tsquery`, ...phrases], sql` and `)})`;
  const cond = sql`(${sql.join([sql`m.id in (select rowid from messages_fts where messages_fts match ${ftsQuery(q.lexemes)})`, ...phrases], sql` and `)})`;
  DRIVABLE.set(cond, { lexemes: q.lexemes, rest: phrases });
  return cond;
}

function tsquery(lexemes: string[]): string {
  return lexemes.map((l) => `'${l}'`).join(' & ');
}

function ftsQuery(lexemes: string[]): string {
  return lexemes.map((l) => `"${l}"`).join(' ');
}

/** How to read a narrow's messages when a search drives the query. */
export interface SearchDriver {
  /** The FROM clause: the full-text matches joined to their messages `m`. */
  from: RawBuilder<unknown>;
  /** The message id column to bound and order by (so the bounds reach the full-text index). */
  id: RawBuilder<unknown>;
  /** The narrow's conditions with the searches' lexemes taken over by `from`. */
  conditions: RawBuilder<unknown>[];
}

/**
 * On SQLite, a narrow with a (non-negated) search reads its page from the full-text index in id
 * order and stops at the page's end. Written as a condition, `m.id in (select rowid ...)` makes
 * SQLite collect every match first (all 10,000 messages holding a common word, for a page of
 * 50), and a correlated probe per message costs a full-text lookup each. Null: nothing to drive
 * by (no search, only negated ones, or PostgreSQL, whose planner reads the GIN index as a bitmap).
 */
export function searchDriver(conditions: readonly RawBuilder<unknown>[]): SearchDriver | null {
  const lexemes = new Set<string>();
  const rest: RawBuilder<unknown>[] = [];
  for (const c of conditions) {
    const d = DRIVABLE.get(c);
    if (!d) {
      rest.push(c);
      continue;
    }
    for (const l of d.lexemes) lexemes.add(l);
    rest.push(...d.rest);
  }
  if (!lexemes.size) return null;
  return {
    from: sql`messages_fts f join messages m on m.id = f.rowid`,
    id: sql`f.rowid`,
    conditions: [sql`messages_fts match ${ftsQuery([...lexemes])}`, ...rest],
  };
}

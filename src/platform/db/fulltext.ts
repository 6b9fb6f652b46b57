// Full-text search SQL for both engines, kept here so handlers and narrow builders never spell it.
// SQLite: an FTS5 table over a content table (unicode61, diacritics removed). PostgreSQL: a
// tsvector column with the `simple` configuration (lower case, no stemming, no stop words), so
// both engines match whole words the same way. PostgreSQL has no accent folding without the
// unaccent extension (not always installable, and not immutable), so the indexed text goes through
// translate() with the FOLD table first; queries are folded with the same table in JS.
// The index of an existing database was built with this table and these DDL strings: changing
// either needs a new migration that rebuilds the index.
import { sql, type RawBuilder } from 'kysely';
import type { Engine } from './database.js';

/**
 * Characters PostgreSQL's parser would keep inside one token (emails, URLs, hosts, hyphenated
 * words, file names) but SQLite's unicode61 splits on: mapped to spaces so both index the parts.
 */
const SEPARATORS = "@./:-_+=#?&%~'";

function foldTable(): { from: string; to: string } {
  let from = SEPARATORS;
  let to = ' '.repeat(SEPARATORS.length);
  // Latin letters with diacritics that decompose to one base letter (é -> e, Ł stays: it has no
  // decomposition). Fixed range so the table, and thus the index, never changes with the runtime.
  for (let c = 0xc0; c <= 0x24f; c++) {
    const ch = String.fromCharCode(c);
    const base = ch.normalize('NFKD').replace(/\p{M}/gu, '');
    if (base.length === 1 && base !== ch && /[A-Za-z]/.test(base)) {
      from += ch;
      to += base;
    }
  }
  return { from, to };
}

export const FOLD = foldTable();
const FOLD_MAP = new Map([...FOLD.from].map((c, i) => [c, FOLD.to[i]]));

function quoteLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** The SQL expression PostgreSQL indexes: the folded topic and content of a message row. */
export function postgresSearchVector(): string {
  return `to_tsvector('simple'::regconfig, translate(topic || ' ' || content, ${quoteLiteral(FOLD.from)}, ${quoteLiteral(FOLD.to)}))`;
}

/** DDL for the search index of the messages table (migration 005). */
export function messageSearchDdl(engine: Engine): string[] {
  if (engine === 'postgres') {
    return [`ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (${postgresSearchVector()}) STORED`, `CREATE INDEX messages_search ON messages USING GIN (search_tsv)`];
  }
  // External content: the FTS table stores only the index; triggers keep it in step with every
  // insert, update (edits, topic moves) and delete of messages, whatever code path makes them.
  return [
    `CREATE VIRTUAL TABLE messages_fts USING fts5(topic, content, content='messages', content_rowid='id', tokenize='unicode61 remove_diacritics 2')`,
    `CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
       INSERT INTO messages_fts(rowid, topic, content) VALUES (new.id, new.topic, new.content);
     END`,
    `CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
       INSERT INTO messages_fts(messages_fts, rowid, topic, content) VALUES ('delete', old.id, old.topic, old.content);
     END`,
    `CREATE TRIGGER messages_fts_update AFTER UPDATE OF topic, content ON messages BEGIN
       INSERT INTO messages_fts(messages_fts, rowid, topic, content) VALUES ('delete', old.id, old.topic, old.content);
       INSERT INTO messages_fts(rowid, topic, content) VALUES (new.id, new.topic, new.content);
     END`,
    // Messages stored before this migration.
    `INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`,
  ];
}

/**
 * Lower case, separators to spaces, Latin diacritics removed by the fixed table: exactly what the
 * PostgreSQL index saw of the text (SQLite's unicode61 folds further by itself, on both sides).
 */
export function foldText(s: string): string {
  let out = '';
  for (const ch of s.toLowerCase()) out += FOLD_MAP.get(ch) ?? ch;
  return out;
}

/** Every mark removed too: for comparing words in JS (highlighting), where either engine matched. */
export function looseFold(word: string): string {
  return foldText(word).normalize('NFKD').replace(/\p{M}/gu, '');
}

/** Words as both tokenizers see them: runs of letters and digits. */
export function searchTokens(s: string): string[] {
  return foldText(s).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A search: every group must occur; a group of several words is a phrase (in that order). */
export type SearchGroups = string[][];

/**
 * A condition over the messages row aliased `m` that holds when every group matches. Groups hold
 * only tokens from searchTokens (letters and digits), so nothing in them is query syntax.
 */
export function searchCondition(engine: Engine, groups: SearchGroups): RawBuilder<unknown> {
  const used = groups.filter((g) => g.length > 0);
  if (!used.length) return sql`1 = 1`;
  if (engine === 'postgres') {
    const q = used
      .map((g) => g.map((t) => `'${t}'`).join(' <-> '))
      .map((p) => `(${p})`)
      .join(' & ');
    return sql`m.search_tsv @@ to_tsquery('simple'::regconfig, ${q})`;
  }
  const q = used.map((g) => `"${g.join(' ')}"`).join(' AND ');
  return sql`m.id in (select rowid from messages_fts where messages_fts match ${q})`;
}

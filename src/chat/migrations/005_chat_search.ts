// Chat full-text search as first shipped: an index over each message's topic and raw (Markdown)
// content matching whole words (SQLite FTS5 with unicode61; PostgreSQL's `simple` configuration
// over text folded by a fixed table). Migration 19 replaced it with stemmed lexemes
// (platform/db/fulltext.ts); the DDL below is kept as it ran, so a new database passes through the
// same states as an old one.
import type { Migration } from '../../platform/db/migrate.js';

/** Separators PostgreSQL's parser would keep inside one token, mapped to spaces. */
const SEPARATORS = "@./:-_+=#?&%~'";

/** The fixed folding table of this index: separators to spaces, Latin diacritics to base letters. */
function foldTable(): { from: string; to: string } {
  let from = SEPARATORS;
  let to = ' '.repeat(SEPARATORS.length);
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

function quoteLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export const chatSearch: Migration = {
  version: 5,
  name: 'chat message search',
  up: (_t, engine) => {
    if (engine === 'postgres') {
      const fold = foldTable();
      const vector = `to_tsvector('simple'::regconfig, translate(topic || ' ' || content, ${quoteLiteral(fold.from)}, ${quoteLiteral(fold.to)}))`;
      return [`ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (${vector}) STORED`, `CREATE INDEX messages_search ON messages USING GIN (search_tsv)`];
    }
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
      `INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')`,
    ];
  },
};

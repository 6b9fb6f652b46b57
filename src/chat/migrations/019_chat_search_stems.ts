// Chat search as Zulip's: messages are indexed by the stemmed lexemes of their topic and rendered
// text (platform/db/fulltext.ts), replacing migration 5's whole-word index over the raw content.
// The lexemes are computed in JS, so every stored message is re-indexed here, in batches, before
// the new index is built over the filled column (one build instead of one update per row).
import { sql } from 'kysely';
import type { Migration } from '../../platform/db/migrate.js';
import { searchIndexDdl, searchText } from '../../platform/db/fulltext.js';

const BATCH = 1000;

export const chatSearchStems: Migration = {
  version: 19,
  name: 'chat search by stems',
  up: (_t, engine) => [
    ...(engine === 'postgres'
      ? [`DROP INDEX messages_search`, `ALTER TABLE messages DROP COLUMN search_tsv`]
      : [`DROP TRIGGER messages_fts_insert`, `DROP TRIGGER messages_fts_delete`, `DROP TRIGGER messages_fts_update`, `DROP TABLE messages_fts`]),
    `ALTER TABLE messages ADD COLUMN search_text TEXT NOT NULL DEFAULT ''`,
  ],
  async after(trx, engine) {
    for (let last = 0; ; ) {
      const rows = (await sql<{ id: number; topic: string; rendered_content: string }>`select id, topic, rendered_content from messages where id > ${last} order by id limit ${BATCH}`.execute(trx))
        .rows;
      if (!rows.length) break;
      last = Number(rows[rows.length - 1].id);
      const filled = rows.map((r) => ({ id: Number(r.id), text: searchText(r.topic, r.rendered_content) })).filter((r) => r.text !== '');
      if (!filled.length) continue;
      // One statement per batch: a CASE over the batch's ids on both engines.
      const cases = sql.join(
        filled.map((r) => sql`when ${r.id} then ${r.text}`),
        sql` `,
      );
      await sql`update messages set search_text = case id ${cases} end where id in (${sql.join(filled.map((r) => r.id))})`.execute(trx);
    }
    for (const stmt of searchIndexDdl(engine)) await sql.raw(stmt).execute(trx);
  },
};

// Chat full-text search: an index over each message's topic and raw (Markdown) content, for the
// `search` narrow operator. The engine-specific DDL and the matching queries live side by side in
// platform/db/fulltext.ts, so the index and the queries cannot drift apart.
import type { Migration } from '../../platform/db/migrate.js';
import { messageSearchDdl } from '../../platform/db/fulltext.js';

export const chatSearch: Migration = {
  version: 5,
  name: 'chat message search',
  up: (_t, engine) => messageSearchDdl(engine),
};

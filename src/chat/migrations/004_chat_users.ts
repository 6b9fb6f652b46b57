// Chat users and channels, second slice: the realm's default channels (new users join them;
// GET /streams reports is_default).
import type { Migration } from '../../platform/db/migrate.js';

export const chatUsers: Migration = {
  version: 4,
  name: 'chat default channels',
  up: (t) => [
    `CREATE TABLE default_streams (
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      stream_id ${t.bigint} NOT NULL REFERENCES streams(id),
      PRIMARY KEY (realm_id, stream_id)
    )`,
  ],
};

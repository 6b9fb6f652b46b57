// Chat presence and status: each user's last active/connected times (written in batches from the
// in-memory presence map, see chat/domain/presence.ts) and the status a user set (text and emoji).
import type { Migration } from '../../platform/db/migrate.js';

export const chatPresence: Migration = {
  version: 6,
  name: 'chat presence and status',
  up: (t) => [
    `CREATE TABLE user_presence (
      user_id ${t.bigint} PRIMARY KEY REFERENCES chat_users(id),
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      last_active_time ${t.bigint},
      last_connected_time ${t.bigint} NOT NULL,
      last_update_id ${t.bigint} NOT NULL
    )`,
    'CREATE INDEX user_presence_realm ON user_presence (realm_id, last_update_id)',
    `CREATE TABLE user_status (
      user_id ${t.bigint} PRIMARY KEY REFERENCES chat_users(id),
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      status_text ${t.text} NOT NULL DEFAULT '',
      emoji_name ${t.text} NOT NULL DEFAULT '',
      emoji_code ${t.text} NOT NULL DEFAULT '',
      reaction_type ${t.text} NOT NULL DEFAULT 'unicode_emoji',
      timestamp ${t.bigint} NOT NULL
    )`,
  ],
};

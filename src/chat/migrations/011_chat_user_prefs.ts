// Chat per-user preferences beside the settings JSON of chat_users: the realm's defaults for new
// users' settings, synchronised drafts, muted users, and per-topic visibility policies (muted,
// unmuted, followed).
import type { Migration } from '../../platform/db/migrate.js';

export const chatUserPrefs: Migration = {
  version: 11,
  name: 'chat user settings defaults, drafts, muted users and user topics',
  up: (t) => [
    `CREATE TABLE realm_user_settings_defaults (
      realm_id ${t.bigint} PRIMARY KEY REFERENCES realms(id),
      settings ${t.text} NOT NULL
    )`,
    `CREATE TABLE drafts (
      id ${t.id},
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      type ${t.text} NOT NULL,
      to_ids ${t.text} NOT NULL,
      topic ${t.text} NOT NULL,
      content ${t.text} NOT NULL,
      last_edit_time ${t.bigint} NOT NULL
    )`,
    'CREATE INDEX drafts_user ON drafts (user_id, last_edit_time)',
    `CREATE TABLE muted_users (
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      muted_user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      date_muted ${t.bigint} NOT NULL,
      PRIMARY KEY (user_id, muted_user_id)
    )`,
    // Who muted a sender is asked on every send.
    'CREATE INDEX muted_users_muted ON muted_users (muted_user_id)',
    `CREATE TABLE user_topics (
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      stream_id ${t.bigint} NOT NULL REFERENCES streams(id),
      topic ${t.text} NOT NULL,
      topic_lower ${t.text} NOT NULL,
      visibility_policy ${t.bigint} NOT NULL,
      last_updated ${t.bigint} NOT NULL,
      PRIMARY KEY (user_id, stream_id, topic_lower)
    )`,
  ],
};

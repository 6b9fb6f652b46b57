// Alert words: words or phrases a user wants to be alerted about (has_alert_word on messages that
// contain them). Case-insensitive, so each is kept as given and lowercased for matching and uniqueness.
import type { Migration } from '../../platform/db/migrate.js';

export const chatAlertWords: Migration = {
  version: 10,
  name: 'chat alert words',
  up: (t) => [
    `CREATE TABLE alert_words (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      word ${t.text} NOT NULL,
      word_lower ${t.text} NOT NULL
    )`,
    'CREATE UNIQUE INDEX alert_words_user_word ON alert_words (user_id, word_lower)',
    'CREATE INDEX alert_words_realm ON alert_words (realm_id)',
  ],
};

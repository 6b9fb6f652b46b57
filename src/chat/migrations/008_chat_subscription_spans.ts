// Chat: the ranges of message ids each subscriber received (see chat/domain/receipt.ts), so a channel
// message needs no user_messages row per subscriber. Existing subscriptions start a span at the
// newest message: everything before it already has its rows.
import type { Migration } from '../../platform/db/migrate.js';

export const chatSubscriptionSpans: Migration = {
  version: 8,
  name: 'chat subscription spans',
  up: (t) => [
    `CREATE TABLE subscription_spans (
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      stream_id ${t.bigint} NOT NULL REFERENCES streams(id),
      after_message_id ${t.bigint} NOT NULL,
      until_message_id ${t.bigint},
      PRIMARY KEY (user_id, stream_id, after_message_id)
    )`,
    `INSERT INTO subscription_spans (user_id, stream_id, after_message_id, until_message_id)
      SELECT user_id, stream_id, (SELECT COALESCE(MAX(id), 0) FROM messages), NULL FROM subscriptions WHERE active = 1`,
  ],
};

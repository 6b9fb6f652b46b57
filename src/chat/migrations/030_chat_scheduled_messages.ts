// Scheduled messages (Zulip's ScheduledMessage, send-later kind): what a user asked to be sent at
// `scheduled_timestamp` (Unix seconds), held until the scheduler (domain/scheduled-delivery.ts)
// sends it through the normal send path. A delivered row keeps `delivered_message_id`, set in the
// same transaction as the message's insert; a failed one keeps Zulip's failure text. The channel is
// not a foreign key: a channel that goes away makes the delivery fail, as in Zulip, not the row vanish.
import type { Migration } from '../../platform/db/migrate.js';

export const chatScheduledMessages: Migration = {
  version: 30,
  name: 'chat scheduled messages',
  up: (t) => [
    `CREATE TABLE scheduled_messages (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      sender_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      kind ${t.text} NOT NULL,
      stream_id ${t.bigint},
      to_ids ${t.text} NOT NULL DEFAULT '',
      topic ${t.text} NOT NULL DEFAULT '',
      content ${t.text} NOT NULL,
      rendered_content ${t.text} NOT NULL,
      client ${t.text} NOT NULL,
      scheduled_timestamp ${t.bigint} NOT NULL,
      read_by_sender INTEGER NOT NULL,
      delivered INTEGER NOT NULL DEFAULT 0,
      delivered_message_id ${t.bigint},
      failed INTEGER NOT NULL DEFAULT 0,
      failure_message ${t.text}
    )`,
    // The scheduler's question (what is due next) and a user's list (what is still pending).
    'CREATE INDEX scheduled_messages_due ON scheduled_messages (delivered, failed, scheduled_timestamp, id)',
    'CREATE INDEX scheduled_messages_sender ON scheduled_messages (sender_id, delivered, scheduled_timestamp)',
  ],
};

// Chat event queues saved by a graceful shutdown and taken back by the next start (chat/events/
// persist.ts), so clients keep their queue_id and pending events across a restart. Rows live only
// between a stop and the next start.
import type { Migration } from '../../platform/db/migrate.js';

export const chatEventQueues: Migration = {
  version: 9,
  name: 'chat event queues kept across a restart',
  up: (t) => [
    `CREATE TABLE chat_event_queues (
      queue_id ${t.text} PRIMARY KEY,
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      event_types ${t.text},
      narrow ${t.text} NOT NULL,
      all_public_streams ${t.bigint} NOT NULL,
      apply_markdown ${t.bigint} NOT NULL,
      client_gravatar ${t.bigint} NOT NULL,
      client_capabilities ${t.text} NOT NULL,
      acknowledged_id ${t.bigint} NOT NULL,
      next_event_id ${t.bigint} NOT NULL,
      events ${t.text} NOT NULL,
      last_activity ${t.bigint} NOT NULL,
      saved_at ${t.bigint} NOT NULL
    )`,
  ],
};

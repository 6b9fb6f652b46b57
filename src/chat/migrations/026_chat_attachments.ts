// Chat uploads: one row per uploaded file (Zulip's Attachment). The bytes live in the file store
// (platform/files/), under `path_id`, never here. A message that links the file claims it
// (attachment_messages); an edit that drops the link detaches it. is_realm_public / is_web_public
// say whether a channel message that anyone in the realm (or a spectator) may read links it.
import type { Migration } from '../../platform/db/migrate.js';

export const chatAttachments: Migration = {
  version: 26,
  name: 'chat attachments',
  up: (t) => [
    `CREATE TABLE attachments (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      owner_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      path_id ${t.text} NOT NULL UNIQUE,
      file_name ${t.text} NOT NULL,
      content_type ${t.text},
      size ${t.bigint} NOT NULL,
      create_time ${t.bigint} NOT NULL,
      is_realm_public INTEGER NOT NULL DEFAULT 0,
      is_web_public INTEGER NOT NULL DEFAULT 0
    )`,
    'CREATE INDEX attachments_owner ON attachments (owner_id, id)',
    `CREATE TABLE attachment_messages (
      attachment_id ${t.bigint} NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
      message_id ${t.bigint} NOT NULL,
      PRIMARY KEY (attachment_id, message_id)
    )`,
    'CREATE INDEX attachment_messages_message ON attachment_messages (message_id)',
  ],
};

// Chat: message edits, moves, deletions and emoji reactions. Each message keeps its edit history
// (JSON, newest first, as the message object shows it) and the times of its last content edit and
// last move; reactions are one row per (message, user, emoji). The realm gains the settings that
// decide who may edit, move and delete, with Zulip's defaults; a NULL group setting means Zulip's
// default system group for it (domain/message-rules.ts), so every realm made later needs nothing.
import type { Migration } from '../../platform/db/migrate.js';

export const chatMessageEdits: Migration = {
  version: 12,
  name: 'chat message edits and reactions',
  up: (t) => [
    `ALTER TABLE messages ADD COLUMN edit_history ${t.text}`,
    `ALTER TABLE messages ADD COLUMN last_edit_time ${t.bigint}`,
    `ALTER TABLE messages ADD COLUMN last_moved_time ${t.bigint}`,
    // The id orders a message's reactions as they were added.
    `CREATE TABLE reactions (
      id ${t.id},
      message_id ${t.bigint} NOT NULL REFERENCES messages(id),
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      reaction_type ${t.text} NOT NULL,
      emoji_code ${t.text} NOT NULL,
      emoji_name ${t.text} NOT NULL,
      UNIQUE (message_id, user_id, reaction_type, emoji_code)
    )`,
    `ALTER TABLE realms ADD COLUMN allow_message_editing INTEGER NOT NULL DEFAULT 1`,
    `ALTER TABLE realms ADD COLUMN message_content_edit_limit_seconds ${t.bigint} DEFAULT 600`,
    `ALTER TABLE realms ADD COLUMN move_messages_within_stream_limit_seconds ${t.bigint} DEFAULT 604800`,
    `ALTER TABLE realms ADD COLUMN move_messages_between_streams_limit_seconds ${t.bigint} DEFAULT 604800`,
    `ALTER TABLE realms ADD COLUMN message_content_delete_limit_seconds ${t.bigint} DEFAULT 600`,
    `ALTER TABLE realms ADD COLUMN message_edit_history_visibility_policy ${t.text} NOT NULL DEFAULT 'all'`,
    `ALTER TABLE realms ADD COLUMN can_move_messages_between_topics_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_move_messages_between_channels_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_resolve_topics_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_delete_any_message_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_delete_own_message_group ${t.text}`,
  ],
};

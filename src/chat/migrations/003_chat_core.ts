// Chat core: the realm, its users and groups, channels and subscriptions, messages and each
// user's copy of a message (flags). Booleans are INTEGER 0/1 so one query reads the same on both
// engines. Tables are named so they cannot clash with Infra's (customers, logins, api_users).
import type { Migration } from '../../platform/db/migrate.js';

export const chatCore: Migration = {
  version: 3,
  name: 'chat core',
  up: (t) => [
    `CREATE TABLE realms (
      id ${t.id},
      string_id ${t.text} NOT NULL UNIQUE,
      name ${t.text} NOT NULL,
      description ${t.text} NOT NULL DEFAULT '',
      email_host ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL
    )`,
    `CREATE TABLE chat_users (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      email ${t.text} NOT NULL,
      email_lower ${t.text} NOT NULL,
      delivery_email ${t.text} NOT NULL,
      full_name ${t.text} NOT NULL,
      role INTEGER NOT NULL,
      is_active INTEGER NOT NULL DEFAULT 1,
      is_bot INTEGER NOT NULL DEFAULT 0,
      bot_type INTEGER,
      bot_owner_id ${t.bigint},
      password_hash ${t.text},
      api_key_hash ${t.text} NOT NULL UNIQUE,
      api_key_sealed ${t.text} NOT NULL,
      timezone ${t.text} NOT NULL DEFAULT '',
      avatar_version INTEGER NOT NULL DEFAULT 1,
      settings ${t.text} NOT NULL DEFAULT '{}',
      date_joined ${t.bigint} NOT NULL,
      UNIQUE (realm_id, email_lower)
    )`,
    `CREATE TABLE user_groups (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      name ${t.text} NOT NULL,
      description ${t.text} NOT NULL DEFAULT '',
      is_system_group INTEGER NOT NULL DEFAULT 0,
      deactivated INTEGER NOT NULL DEFAULT 0,
      date_created ${t.bigint} NOT NULL,
      UNIQUE (realm_id, name)
    )`,
    `CREATE TABLE user_group_members (
      group_id ${t.bigint} NOT NULL REFERENCES user_groups(id),
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      PRIMARY KEY (group_id, user_id)
    )`,
    `CREATE TABLE user_group_subgroups (
      group_id ${t.bigint} NOT NULL REFERENCES user_groups(id),
      subgroup_id ${t.bigint} NOT NULL REFERENCES user_groups(id),
      PRIMARY KEY (group_id, subgroup_id)
    )`,
    // One row per conversation a message can go to (a channel or a set of users): recipient_id.
    `CREATE TABLE recipients (
      id ${t.id},
      kind ${t.text} NOT NULL,
      direct_key ${t.text} UNIQUE
    )`,
    `CREATE TABLE streams (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      recipient_id ${t.bigint} NOT NULL REFERENCES recipients(id),
      name ${t.text} NOT NULL,
      name_lower ${t.text} NOT NULL,
      description ${t.text} NOT NULL DEFAULT '',
      rendered_description ${t.text} NOT NULL DEFAULT '',
      invite_only INTEGER NOT NULL DEFAULT 0,
      is_web_public INTEGER NOT NULL DEFAULT 0,
      history_public_to_subscribers INTEGER NOT NULL DEFAULT 1,
      message_retention_days INTEGER,
      creator_id ${t.bigint},
      is_archived INTEGER NOT NULL DEFAULT 0,
      can_add_subscribers_group ${t.text} NOT NULL,
      can_remove_subscribers_group ${t.text} NOT NULL,
      can_administer_channel_group ${t.text} NOT NULL,
      can_send_message_group ${t.text} NOT NULL,
      can_subscribe_group ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL,
      UNIQUE (realm_id, name_lower)
    )`,
    `CREATE TABLE subscriptions (
      id ${t.id},
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      stream_id ${t.bigint} NOT NULL REFERENCES streams(id),
      active INTEGER NOT NULL DEFAULT 1,
      color ${t.text} NOT NULL,
      is_muted INTEGER NOT NULL DEFAULT 0,
      pin_to_top INTEGER NOT NULL DEFAULT 0,
      desktop_notifications INTEGER,
      email_notifications INTEGER,
      push_notifications INTEGER,
      audible_notifications INTEGER,
      wildcard_mentions_notify INTEGER,
      UNIQUE (user_id, stream_id)
    )`,
    `CREATE INDEX subscriptions_stream ON subscriptions (stream_id, active)`,
    `CREATE TABLE messages (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      sender_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      recipient_id ${t.bigint} NOT NULL REFERENCES recipients(id),
      stream_id ${t.bigint} REFERENCES streams(id),
      topic ${t.text} NOT NULL DEFAULT '',
      content ${t.text} NOT NULL,
      rendered_content ${t.text} NOT NULL,
      client ${t.text} NOT NULL,
      date_sent ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX messages_recipient ON messages (recipient_id, id)`,
    `CREATE INDEX messages_sender ON messages (sender_id, id)`,
    // Each user's copy of a message: who received it, with a bit set of flags (see domain/flags.ts).
    `CREATE TABLE user_messages (
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      message_id ${t.bigint} NOT NULL REFERENCES messages(id),
      flags ${t.bigint} NOT NULL DEFAULT 0,
      PRIMARY KEY (user_id, message_id)
    )`,
    `CREATE INDEX user_messages_message ON user_messages (message_id)`,
  ],
};

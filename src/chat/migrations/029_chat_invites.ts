// Invitations (Zulip's PreregistrationUser and MultiuseInvite with their Confirmation): one row per
// e-mail invitation or reusable link, with its confirmation key (the /accounts/do_confirm/<key> or
// /join/<key>/ link), what the new user gets (role, channels, groups) and its status. Each send of
// an invitation e-mail leaves a row in invite_sends (the realm's daily limit counts them). The realm
// gains who may invite by e-mail and make links (NULL: Zulip's default groups) and invite_required.
// channel_email_addresses holds the per-channel e-mail tokens GET /streams/{id}/email_address gives.
import type { Migration } from '../../platform/db/migrate.js';

export const chatInvites: Migration = {
  version: 29,
  name: 'chat invites',
  up: (t) => [
    `CREATE TABLE invites (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      referred_by ${t.bigint} NOT NULL REFERENCES chat_users(id),
      is_multiuse INTEGER NOT NULL,
      email ${t.text},
      email_lower ${t.text},
      invited_as INTEGER NOT NULL,
      stream_ids ${t.text} NOT NULL,
      group_ids ${t.text} NOT NULL,
      include_realm_default_subscriptions INTEGER NOT NULL,
      notify_referrer_on_join INTEGER NOT NULL,
      confirmation_key ${t.text} NOT NULL UNIQUE,
      invited_at ${t.bigint} NOT NULL,
      expires_at ${t.bigint},
      status INTEGER NOT NULL DEFAULT 0,
      created_user_id ${t.bigint}
    )`,
    'CREATE INDEX invites_realm ON invites (realm_id, status, id)',
    'CREATE INDEX invites_referrer ON invites (referred_by, status)',
    `CREATE TABLE invite_sends (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      sent_at ${t.bigint} NOT NULL
    )`,
    'CREATE INDEX invite_sends_realm ON invite_sends (realm_id, sent_at)',
    `ALTER TABLE realms ADD COLUMN can_invite_users_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN create_multiuse_invite_group ${t.text}`,
    'ALTER TABLE realms ADD COLUMN invite_required INTEGER NOT NULL DEFAULT 1',
    `CREATE TABLE channel_email_addresses (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      stream_id ${t.bigint} NOT NULL REFERENCES streams(id),
      creator_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      sender_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      email_token ${t.text} NOT NULL UNIQUE,
      date_created ${t.bigint} NOT NULL,
      UNIQUE (stream_id, creator_id, sender_id)
    )`,
  ],
};

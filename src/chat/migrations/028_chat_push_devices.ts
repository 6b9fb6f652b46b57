// Chat: the mobile devices a user registered for push notifications (Zulip's PushDeviceToken): one
// row per user, kind (1 APNs, 2 FCM) and token. A token may be up to 4,096 characters, longer than
// an index entry may be on PostgreSQL, so uniqueness is kept on its SHA-256 (token_hash, hex).
import type { Migration } from '../../platform/db/migrate.js';

export const chatPushDevices: Migration = {
  version: 28,
  name: 'chat push devices',
  up: (t) => [
    `CREATE TABLE push_devices (
      id ${t.id},
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      kind INTEGER NOT NULL,
      token ${t.text} NOT NULL,
      token_hash ${t.text} NOT NULL,
      ios_app_id ${t.text},
      last_updated ${t.bigint} NOT NULL
    )`,
    'CREATE UNIQUE INDEX push_devices_user_kind_token ON push_devices (user_id, kind, token_hash)',
  ],
};

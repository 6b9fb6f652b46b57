// Chat: who may create public and private channels and subscribe other users, realm group settings
// an administrator changes with PATCH /realm (NULL: Zulip's default, role:members).
import type { Migration } from '../../platform/db/migrate.js';

export const chatChannelCreation: Migration = {
  version: 16,
  name: 'chat channel creation settings',
  up: (t) => [
    `ALTER TABLE realms ADD COLUMN can_create_public_channel_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_create_private_channel_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_add_subscribers_group ${t.text}`,
  ],
};

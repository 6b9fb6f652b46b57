// Chat realm rules that register reported at fixed values before (events/fixed-state.ts) and PATCH
// /realm now changes: whether channel messages need a topic, whether members may change their own
// name and email address, whether names must be unique (off, as Zulip creates a realm), and who may start direct messages and whom
// they must include (NULL: Zulip's default, role:everyone).
import type { Migration } from '../../platform/db/migrate.js';

export const chatRealmRules: Migration = {
  version: 18,
  name: 'chat realm rules',
  up: (t) => [
    'ALTER TABLE realms ADD COLUMN mandatory_topics INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE realms ADD COLUMN name_changes_disabled INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE realms ADD COLUMN email_changes_disabled INTEGER NOT NULL DEFAULT 0',
    'ALTER TABLE realms ADD COLUMN require_unique_names INTEGER NOT NULL DEFAULT 0',
    `ALTER TABLE realms ADD COLUMN direct_message_initiator_group ${t.text}`,
    `ALTER TABLE realms ADD COLUMN direct_message_permission_group ${t.text}`,
  ],
};

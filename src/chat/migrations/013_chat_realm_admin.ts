// Chat organization settings: who created a user group and its permission settings (group-setting
// values as JSON, like the channel ones; NULL for system groups, whose settings are fixed), the
// realm's linkifiers in their processing order, and custom emoji (the image itself lives in the
// file store, not here).
import type { Migration } from '../../platform/db/migrate.js';

const GROUP_SETTINGS = ['can_add_members_group', 'can_join_group', 'can_leave_group', 'can_manage_group', 'can_mention_group', 'can_remove_members_group'];

export const chatRealmAdmin: Migration = {
  version: 13,
  name: 'chat user group settings, linkifiers, custom emoji',
  up: (t) => [
    `ALTER TABLE user_groups ADD COLUMN creator_id ${t.bigint}`,
    ...GROUP_SETTINGS.map((s) => `ALTER TABLE user_groups ADD COLUMN ${s} ${t.text}`),
    `CREATE TABLE realm_linkifiers (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      pattern ${t.text} NOT NULL,
      url_template ${t.text} NOT NULL,
      sort_order ${t.bigint} NOT NULL,
      UNIQUE (realm_id, pattern, url_template)
    )`,
    `CREATE TABLE realm_emoji (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      name ${t.text} NOT NULL,
      author_id ${t.bigint} REFERENCES chat_users(id),
      file_name ${t.text} NOT NULL,
      is_animated INTEGER NOT NULL DEFAULT 0,
      deactivated INTEGER NOT NULL DEFAULT 0,
      date_created ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX realm_emoji_realm ON realm_emoji (realm_id, name)`,
  ],
};

// Chat organization settings that PATCH /realm changes beyond those of migration 12: the rendered
// description (GET /server_settings shows HTML, register the source), the organization language,
// and the realm's group permissions over user groups. A NULL group setting means Zulip's default
// system group for it (domain/realm-settings.ts), as in migration 12.
import type { Migration } from '../../platform/db/migrate.js';

export const chatRealmSettings: Migration = {
  version: 14,
  name: 'chat realm settings',
  up: (t) => [
    `ALTER TABLE realms ADD COLUMN rendered_description ${t.text} NOT NULL DEFAULT ''`,
    `ALTER TABLE realms ADD COLUMN default_language ${t.text} NOT NULL DEFAULT 'en'`,
    `ALTER TABLE realms ADD COLUMN can_create_groups ${t.text}`,
    `ALTER TABLE realms ADD COLUMN can_manage_all_groups ${t.text}`,
  ],
};

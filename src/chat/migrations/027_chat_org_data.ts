// Organization data a realm and its users configure: custom profile fields and each user's values
// for them (Zulip's CustomProfileField / CustomProfileFieldValue), code playgrounds
// (RealmPlayground), saved snippets (SavedSnippet), and the realm's read-receipts switch
// (enable_read_receipts: on, as Zulip creates an organization that is not a school).
import type { Migration } from '../../platform/db/migrate.js';

export const chatOrgData: Migration = {
  version: 27,
  name: 'chat organization data',
  up: (t) => [
    `CREATE TABLE custom_profile_fields (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      name ${t.text} NOT NULL,
      hint ${t.text} NOT NULL DEFAULT '',
      field_type INTEGER NOT NULL,
      field_data ${t.text} NOT NULL DEFAULT '',
      sort_order ${t.bigint} NOT NULL DEFAULT 0,
      display_in_profile_summary INTEGER NOT NULL DEFAULT 0,
      required INTEGER NOT NULL DEFAULT 0,
      editable_by_user INTEGER NOT NULL DEFAULT 1,
      UNIQUE (realm_id, name)
    )`,
    `CREATE TABLE custom_profile_field_values (
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      field_id ${t.bigint} NOT NULL REFERENCES custom_profile_fields(id) ON DELETE CASCADE,
      value ${t.text} NOT NULL,
      rendered_value ${t.text},
      PRIMARY KEY (user_id, field_id)
    )`,
    'CREATE INDEX custom_profile_field_values_field ON custom_profile_field_values (field_id)',
    `CREATE TABLE realm_playgrounds (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      name ${t.text} NOT NULL,
      pygments_language ${t.text} NOT NULL,
      url_template ${t.text} NOT NULL,
      UNIQUE (realm_id, pygments_language, name)
    )`,
    `CREATE TABLE saved_snippets (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      title ${t.text} NOT NULL,
      content ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL
    )`,
    'CREATE INDEX saved_snippets_user ON saved_snippets (user_id, id)',
    'ALTER TABLE realms ADD COLUMN enable_read_receipts INTEGER NOT NULL DEFAULT 1',
  ],
};

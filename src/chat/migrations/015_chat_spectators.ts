// Chat spectator (web-public) access: the realm's enable_spectator_access setting (off, as Zulip
// creates a realm) and who may make channels web-public (NULL: Zulip's default, role:owners).
import type { Migration } from '../../platform/db/migrate.js';

export const chatSpectators: Migration = {
  version: 15,
  name: 'chat spectator access',
  up: (t) => ['ALTER TABLE realms ADD COLUMN enable_spectator_access INTEGER NOT NULL DEFAULT 0', `ALTER TABLE realms ADD COLUMN can_create_web_public_channel_group ${t.text}`],
};

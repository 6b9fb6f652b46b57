// Chat: a realm's deactivation by its owner (POST /realm/deactivate) or an operator (`keel admin
// deactivate-realm`). Its rows stay, as in Zulip (it can be reactivated); while it is 1 every
// authenticated request to the realm is refused.
import type { Migration } from '../../platform/db/migrate.js';

export const chatRealmDeactivation: Migration = {
  version: 17,
  name: 'chat realm deactivation',
  up: () => [`ALTER TABLE realms ADD COLUMN deactivated INTEGER NOT NULL DEFAULT 0`],
};

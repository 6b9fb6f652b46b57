// Chat uploads: the realm's `upload_space_used` (GET /attachments, attachment events) sums the sizes
// of the realm's files; this index finds them without reading every realm's.
import type { Migration } from '../../platform/db/migrate.js';

export const chatAttachmentsRealm: Migration = {
  version: 27,
  name: 'chat attachments by realm',
  up: () => ['CREATE INDEX attachments_realm ON attachments (realm_id)'],
};

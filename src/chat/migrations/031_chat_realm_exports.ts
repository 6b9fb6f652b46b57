// Chat: realm data exports (Zulip's RealmExport). A row per export an administrator asked for
// (POST /export/realm); the background writer (chat/exports/worker.ts) takes requested rows, writes
// the tarball into the file store under `export_path`, and records how it ended. Status numbers are
// Zulip's (1 requested, 2 started, 3 succeeded, 4 failed, 5 deleted); times in clock milliseconds.
import type { Migration } from '../../platform/db/migrate.js';

export const chatRealmExports: Migration = {
  version: 31,
  name: 'chat realm exports',
  up: (t) => [
    `CREATE TABLE realm_exports (
      id ${t.id},
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      acting_user_id ${t.bigint} REFERENCES chat_users(id),
      type INTEGER NOT NULL,
      status INTEGER NOT NULL,
      date_requested ${t.bigint} NOT NULL,
      date_started ${t.bigint},
      date_succeeded ${t.bigint},
      date_failed ${t.bigint},
      date_deleted ${t.bigint},
      export_path ${t.text},
      sha256sum_hex ${t.text},
      tarball_size_bytes ${t.bigint}
    )`,
    'CREATE INDEX realm_exports_realm ON realm_exports (realm_id, date_requested)',
    'CREATE INDEX realm_exports_status ON realm_exports (status, id)',
  ],
};

// Browser sessions (Zulip's Django sessions: the `sessionid` cookie of a logged-in browser). A row is
// kept by the SHA-256 of its random token (the cookie's value is never stored), with its user and
// realm and when it was made and ends (Unix milliseconds). domain/sessions.ts bounds them per user
// and sweeps expired ones.
import type { Migration } from '../../platform/db/migrate.js';

export const chatSessions: Migration = {
  version: 35,
  name: 'chat sessions',
  up: (t) => [
    `CREATE TABLE chat_sessions (
      id ${t.id},
      token_hash ${t.text} NOT NULL UNIQUE,
      user_id ${t.bigint} NOT NULL REFERENCES chat_users(id),
      realm_id ${t.bigint} NOT NULL REFERENCES realms(id),
      created_at ${t.bigint} NOT NULL,
      expires_at ${t.bigint} NOT NULL
    )`,
    'CREATE INDEX chat_sessions_user ON chat_sessions (user_id, created_at)',
    'CREATE INDEX chat_sessions_expiry ON chat_sessions (expires_at)',
  ],
};

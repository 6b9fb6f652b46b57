// Chat: hidden addresses stay hidden. A user's `email` column is their API email, as in Zulip: the
// real address only when email_address_visibility is 1 (everyone, and always for bots), else the
// placeholder user<id>@<realm host>; `delivery_email` keeps the real one. Users who hid their
// address before this version still had it in `email`, so it is rewritten; logins and registration
// look up the real address (domain/users.ts userByDeliveryEmail), one per realm, by the engine's
// lower() (the same expression the lookup uses, so the index serves it).
import type { Migration } from '../../platform/db/migrate.js';

export const chatHiddenEmails: Migration = {
  version: 20,
  name: 'chat hidden email addresses',
  up: (_t, engine) => {
    const visibility = engine === 'sqlite' ? `json_extract(settings, '$.email_address_visibility')` : `(settings::json ->> 'email_address_visibility')::integer`;
    const placeholder = `'user' || id || '@' || (SELECT email_host FROM realms WHERE realms.id = chat_users.realm_id)`;
    return [
      'CREATE UNIQUE INDEX chat_users_delivery_email ON chat_users (realm_id, lower(delivery_email))',
      `UPDATE chat_users SET email = ${placeholder}, email_lower = lower(${placeholder})
        WHERE is_bot = 0 AND ${visibility} IS NOT NULL AND ${visibility} <> 1`,
    ];
  },
};

// Uploaded avatars and the realm's icon and logos (endpoints/images.ts; the images: domain/images.ts).
// A user's avatar_path names their uploaded avatar's files in the file store (`avatars/<path>.png`,
// `-medium.png`, `.original`), null for the hash-based one (Zulip's avatar_source G). The realm keeps
// Zulip's source letters and versions (icon: G or U, from version 1; logos: D or U, from version 0).
import type { Migration } from '../../platform/db/migrate.js';

export const chatUploadedImages: Migration = {
  version: 33,
  name: 'chat uploaded images',
  up: (t) => [
    `ALTER TABLE chat_users ADD COLUMN avatar_path ${t.text}`,
    `ALTER TABLE realms ADD COLUMN icon_source ${t.text} NOT NULL DEFAULT 'G'`,
    'ALTER TABLE realms ADD COLUMN icon_version INTEGER NOT NULL DEFAULT 1',
    `ALTER TABLE realms ADD COLUMN logo_source ${t.text} NOT NULL DEFAULT 'D'`,
    'ALTER TABLE realms ADD COLUMN logo_version INTEGER NOT NULL DEFAULT 0',
    `ALTER TABLE realms ADD COLUMN night_logo_source ${t.text} NOT NULL DEFAULT 'D'`,
    'ALTER TABLE realms ADD COLUMN night_logo_version INTEGER NOT NULL DEFAULT 0',
  ],
};

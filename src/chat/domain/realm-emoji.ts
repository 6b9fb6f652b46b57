// Custom emoji of a realm, as clients see them: keyed by id (as a string), with the image's path
// relative to the realm URL, served at /user_avatars/ (chat/avatars-http.ts). Uploading is
// POST /realm/emoji/{emoji_name} (endpoints/images.ts; the images: domain/images.ts).
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, RealmEmojiRow } from '../tables.js';
import type { Selectable } from 'kysely';

type Row = Selectable<RealmEmojiRow>;

export function realmEmojiObject(e: Row): Record<string, unknown> {
  const dir = `/user_avatars/${e.realm_id}/emoji/images`;
  return {
    id: String(e.id),
    name: e.name,
    source_url: `${dir}/${e.file_name}`,
    // Animated images come with a still first frame, stored as PNG beside them.
    still_url: e.is_animated === 1 ? `${dir}/still/${e.file_name.replace(/\.[^.]*$/, '')}.png` : null,
    deactivated: e.deactivated === 1,
    author_id: e.author_id,
  };
}

/** Every custom emoji of the realm, deactivated ones included (Zulip's GET /realm/emoji and register). */
export async function realmEmojiObjects(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, Record<string, unknown>>> {
  const rows = await db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  return Object.fromEntries(rows.map((e) => [String(e.id), realmEmojiObject(e)]));
}

/** The active emoji of that name (names are compared as Zulip stores them: lower case). */
export async function activeRealmEmoji(db: Queryable<ChatTables>, realmId: number, name: string): Promise<Row | undefined> {
  return db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).where('name', '=', name.toLowerCase()).where('deactivated', '=', 0).executeTakeFirst();
}

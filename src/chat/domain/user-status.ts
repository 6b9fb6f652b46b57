// A user's status (Zulip's UserStatus): text up to 60 characters and an emoji, stored per user; the
// deprecated `away` is the inverse of the presence_enabled setting, as in Zulip since 6.0.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, UserStatusRow } from '../tables.js';
import { emojiNameRequired } from '../errors.js';
import { checkEmojiRequest, type Emoji } from './emoji.js';
import { booleanSetting } from './presence.js';

export const MAX_STATUS_TEXT_LENGTH = 60;

/**
 * Zulip's rules for a status emoji: "" clears it; a name alone finds its code and type; a code or
 * type without a name is refused; the three must agree (check_emoji_request).
 */
export function checkStatusEmoji(name: string | undefined, code: string | undefined, type: string | undefined): Emoji | undefined {
  if (name === undefined) {
    if (code !== undefined || type !== undefined) throw emojiNameRequired();
    return undefined;
  }
  if (name === '') return { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  return checkEmojiRequest(name, code, type);
}

/** The UserStatus object: only what is set (away only when true, the emoji only with a name). */
export function statusObject(row: Pick<UserStatusRow, 'status_text' | 'emoji_name' | 'emoji_code' | 'reaction_type'> | undefined, presenceEnabled: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!presenceEnabled) out.away = true;
  if (row?.status_text) out.status_text = row.status_text;
  if (row?.emoji_name) Object.assign(out, { emoji_name: row.emoji_name, emoji_code: row.emoji_code, reaction_type: row.reaction_type });
  return out;
}

/** register's `user_status`: every active user with something set, keyed by user id. */
export async function allStatuses(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, Record<string, unknown>>> {
  const users = await db.selectFrom('chat_users').select(['id', 'settings']).where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
  const rows = await db.selectFrom('user_status').selectAll().where('realm_id', '=', realmId).execute();
  const byUser = new Map(rows.map((r) => [Number(r.user_id), r]));
  const out: Record<string, Record<string, unknown>> = {};
  for (const u of users) {
    const s = statusObject(byUser.get(Number(u.id)), booleanSetting(u, 'presence_enabled', true));
    if (Object.keys(s).length) out[String(u.id)] = s;
  }
  return out;
}

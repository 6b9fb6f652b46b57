// Emoji reactions: which emoji a request names (emoji_name, emoji_code, reaction_type, checked as
// Zulip does: Unicode names by emoji.ts's table, custom emoji by the realm's rows), and the reactions
// of messages as message objects list them.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { customEmojiDeactivated, emojiNameOrCodeRequired, invalidCustomEmoji, invalidCustomEmojiName, invalidEmojiType } from '../errors.js';
import { activeRealmEmoji } from './realm-emoji.js';
import { canonicalReactionType, checkEmojiRequest, emojiNamed, REACTION_TYPES, type Emoji } from './emoji.js';

export interface EmojiAsk {
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

/**
 * An emoji by name alone, as Zulip's get_emoji_data: the realm's active custom emoji of that name
 * first, then Zulip's own (`zulip`), then Unicode's.
 */
async function emojiOfName(db: Queryable<ChatTables>, realmId: number, name: string): Promise<Emoji> {
  const custom = await activeRealmEmoji(db, realmId, name);
  if (custom && custom.name === name) return { emoji_name: name, emoji_code: String(custom.id), reaction_type: 'realm_emoji' };
  return emojiNamed(name);
}

/** Zulip's check_emoji_request, with the realm's custom emoji for realm_emoji (by id, under its own name, active). */
async function checkEmoji(db: Queryable<ChatTables>, realmId: number, name: string, code: string, type: string): Promise<Emoji> {
  if (type !== 'realm_emoji') return checkEmojiRequest(name, code, type);
  const id = /^[0-9]{1,15}$/.test(code) ? Number(code) : undefined;
  const custom = id === undefined ? undefined : await db.selectFrom('realm_emoji').select(['name', 'deactivated']).where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
  if (!custom) throw invalidCustomEmoji();
  if (custom.name !== name) throw invalidCustomEmojiName();
  if (custom.deactivated === 1) throw customEmojiDeactivated();
  return { emoji_name: name, emoji_code: code, reaction_type: type };
}

/**
 * The emoji a request to add a reaction names, as Zulip's check_add_reaction: a name without a code
 * (or without a type) finds them as get_emoji_data does. An emoji_code (with its type) that some
 * reaction on the message already uses is taken as a vote for that reaction, whatever name the
 * client has for it (Zulip's rule, for clients with older emoji data); otherwise the name, code and
 * type must agree. The seed's reaction_type `service_extra_emoji` is Zulip's `zulip_extra_emoji`.
 */
export async function emojiToAdd(db: Queryable<ChatTables>, realmId: number, messageId: number, asked: EmojiAsk & { emoji_name: string }): Promise<Emoji> {
  const ask = { ...asked, reaction_type: canonicalReactionType(asked.reaction_type) };
  if (ask.reaction_type !== undefined && !(REACTION_TYPES as readonly string[]).includes(ask.reaction_type)) throw invalidEmojiType();
  let code = ask.emoji_code;
  let type = ask.reaction_type;
  if (code === undefined || type === undefined) {
    const found = await emojiOfName(db, realmId, ask.emoji_name);
    code ??= found.emoji_code;
    type ??= found.reaction_type;
  }
  const existing = await db.selectFrom('reactions').select('emoji_name').where('message_id', '=', messageId).where('emoji_code', '=', code).where('reaction_type', '=', type).executeTakeFirst();
  if (existing) return { emoji_name: existing.emoji_name, emoji_code: code, reaction_type: type };
  return checkEmoji(db, realmId, ask.emoji_name, code, type);
}

/**
 * The reaction a request to remove one names, as Zulip's remove_reaction: the type is the one given
 * (unicode_emoji if none), the code the one given or the name's; neither is checked, since a
 * reaction that exists was valid when it was added (its custom emoji may be deactivated since).
 * The name is left blank: the stored reaction's is the one reported.
 */
export async function emojiToRemove(db: Queryable<ChatTables>, realmId: number, asked: EmojiAsk): Promise<Emoji> {
  const type = canonicalReactionType(asked.reaction_type) ?? 'unicode_emoji';
  if (asked.emoji_code !== undefined) return { emoji_name: '', emoji_code: asked.emoji_code, reaction_type: type };
  if (asked.emoji_name === undefined) throw emojiNameOrCodeRequired();
  return { emoji_name: '', emoji_code: (await emojiOfName(db, realmId, asked.emoji_name)).emoji_code, reaction_type: type };
}

/** Each message's reactions, in the order they were added. */
export async function reactionsOf(db: Queryable<ChatTables>, messageIds: number[]): Promise<Map<number, (Emoji & { user_id: number })[]>> {
  const out = new Map<number, (Emoji & { user_id: number })[]>();
  if (!messageIds.length) return out;
  const rows = await db.selectFrom('reactions').select(['message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type']).where('message_id', 'in', messageIds).orderBy('id').execute();
  for (const r of rows) {
    const id = Number(r.message_id);
    const list = out.get(id) ?? [];
    list.push({ emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type, user_id: Number(r.user_id) });
    out.set(id, list);
  }
  return out;
}

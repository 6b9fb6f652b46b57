// Emoji reactions: which emoji a request names (emoji_name, emoji_code, reaction_type, checked as
// Zulip does by emoji.ts), and the reactions of messages as message objects list them.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { emojiNameMissing, emojiNameOrCodeRequired, invalidEmojiType } from '../errors.js';
import { canonicalReactionType, checkEmojiRequest, emojiNamed, REACTION_TYPES, type Emoji } from './emoji.js';

export interface EmojiAsk {
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

/**
 * The emoji a request names. An emoji_code (with its type) that some reaction on the message
 * already uses is taken as a vote for that reaction, whatever name the client has for it (Zulip's
 * rule, for clients with older emoji data); otherwise the name and code must agree.
 */
export async function resolveEmoji(db: Queryable<ChatTables>, messageId: number, asked: EmojiAsk, forRemoval: boolean): Promise<Emoji> {
  const ask = { ...asked, reaction_type: canonicalReactionType(asked.reaction_type) };
  if (ask.reaction_type !== undefined && !(REACTION_TYPES as readonly string[]).includes(ask.reaction_type)) throw invalidEmojiType();
  if (ask.emoji_code === undefined) {
    if (ask.emoji_name === undefined) throw emojiNameOrCodeRequired();
    return checkEmojiRequest(ask.emoji_name, undefined, ask.reaction_type);
  }
  const type = ask.reaction_type ?? (ask.emoji_name !== undefined ? emojiNamed(ask.emoji_name).reaction_type : 'unicode_emoji');
  const existing = await db
    .selectFrom('reactions')
    .select('emoji_name')
    .where('message_id', '=', messageId)
    .where('emoji_code', '=', ask.emoji_code)
    .where('reaction_type', '=', type)
    .executeTakeFirst();
  if (existing) return { emoji_name: existing.emoji_name, emoji_code: ask.emoji_code, reaction_type: type };
  if (ask.emoji_name === undefined) {
    // Removing by code alone needs nothing else; adding needs a name to show.
    if (forRemoval) return { emoji_name: '', emoji_code: ask.emoji_code, reaction_type: type };
    throw emojiNameMissing();
  }
  return checkEmojiRequest(ask.emoji_name, ask.emoji_code, type);
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

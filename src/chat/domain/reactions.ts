// Emoji reactions: which emoji a request names (emoji_name, emoji_code, reaction_type, resolved as
// Zulip does), and the reactions of messages as message objects list them. Unicode emoji come from
// emoji.ts; the realm has no custom emoji yet, so realm_emoji names none; Zulip's one extra emoji
// is `zulip`.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { badRequest } from '../errors.js';
import { emojiByName } from './emoji.js';

export interface Emoji { emoji_name: string; emoji_code: string; reaction_type: string }

export const REACTION_TYPES = ['unicode_emoji', 'realm_emoji', 'zulip_extra_emoji'] as const;

const ZULIP_EXTRA = new Set(['zulip']);

/** An emoji by name, in the namespaces Zulip searches: custom emoji (none here), Zulip's, Unicode. */
function byName(name: string): Emoji {
  if (ZULIP_EXTRA.has(name)) return { emoji_name: name, emoji_code: name, reaction_type: 'zulip_extra_emoji' };
  const unicode = emojiByName(name);
  if (unicode) return { emoji_name: name, emoji_code: unicode.code, reaction_type: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/** Whether a (code, type) names a real emoji, and the name fits it. */
function checkEmoji(e: Emoji): void {
  switch (e.reaction_type) {
    case 'unicode_emoji': {
      const named = emojiByName(e.emoji_name);
      if (!named) throw badRequest('Invalid emoji name.');
      if (named.code !== e.emoji_code) throw badRequest('Invalid emoji code.');
      return;
    }
    case 'realm_emoji':
      throw badRequest('Invalid custom emoji.');
    case 'zulip_extra_emoji':
      if (!ZULIP_EXTRA.has(e.emoji_code) || e.emoji_name !== e.emoji_code) throw badRequest('Invalid emoji name.');
      return;
    default:
      throw badRequest('Invalid emoji type.');
  }
}

export interface EmojiAsk { emoji_name?: string; emoji_code?: string; reaction_type?: string }

/**
 * The emoji a request names. An emoji_code (with its type) that some reaction on the message
 * already uses is taken as a vote for that reaction, whatever name the client has for it (Zulip's
 * rule, for clients with older emoji data); otherwise the name and code must agree.
 */
export async function resolveEmoji(db: Queryable<ChatTables>, messageId: number, ask: EmojiAsk, forRemoval: boolean): Promise<Emoji> {
  if (ask.reaction_type !== undefined && !(REACTION_TYPES as readonly string[]).includes(ask.reaction_type)) throw badRequest('Invalid emoji type.');
  if (ask.emoji_code === undefined) {
    if (ask.emoji_name === undefined) throw badRequest('At least one of the following arguments must be present: emoji_name, emoji_code');
    const e = byName(ask.emoji_name);
    if (ask.reaction_type !== undefined && ask.reaction_type !== e.reaction_type) throw badRequest('Invalid emoji type.');
    return e;
  }
  const type = ask.reaction_type ?? (ask.emoji_name !== undefined ? byName(ask.emoji_name).reaction_type : 'unicode_emoji');
  const existing = await db.selectFrom('reactions').select('emoji_name').where('message_id', '=', messageId)
    .where('emoji_code', '=', ask.emoji_code).where('reaction_type', '=', type).executeTakeFirst();
  if (existing) return { emoji_name: existing.emoji_name, emoji_code: ask.emoji_code, reaction_type: type };
  if (ask.emoji_name === undefined) {
    // Removing by code alone needs nothing else; adding needs a name to show.
    if (forRemoval) return { emoji_name: '', emoji_code: ask.emoji_code, reaction_type: type };
    throw badRequest("Missing 'emoji_name' argument");
  }
  const e = { emoji_name: ask.emoji_name, emoji_code: ask.emoji_code, reaction_type: type };
  checkEmoji(e);
  return e;
}

/** Each message's reactions, in the order they were added. */
export async function reactionsOf(db: Queryable<ChatTables>, messageIds: number[]): Promise<Map<number, (Emoji & { user_id: number })[]>> {
  const out = new Map<number, (Emoji & { user_id: number })[]>();
  if (!messageIds.length) return out;
  const rows = await db.selectFrom('reactions').select(['message_id', 'user_id', 'emoji_name', 'emoji_code', 'reaction_type'])
    .where('message_id', 'in', messageIds).orderBy('id').execute();
  for (const r of rows) {
    const id = Number(r.message_id);
    const list = out.get(id) ?? [];
    list.push({ emoji_name: r.emoji_name, emoji_code: r.emoji_code, reaction_type: r.reaction_type, user_id: Number(r.user_id) });
    out.set(id, list);
  }
  return out;
}

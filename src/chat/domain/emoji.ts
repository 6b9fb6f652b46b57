// Unicode emoji by the names Zulip users type (`:smile:`), from iamcal's emoji-datasource (the data
// Zulip's own emoji names grew from). Codes are the dash-joined lowercase codepoints Zulip uses in
// `emoji-<code>` classes and reaction emoji_code, without the FE0F variation selector.
import { createRequire } from 'node:module';
import { emojiNotFound, invalidCustomEmoji, invalidEmojiCode, invalidEmojiName, invalidEmojiType } from '../errors.js';

interface DataEntry {
  unified: string;
  non_qualified: string | null;
  short_name: string;
  short_names: string[];
}

export interface UnicodeEmoji {
  name: string;
  code: string;
}

const require = createRequire(import.meta.url);

let tables: { byName: Map<string, UnicodeEmoji>; byChars: Map<string, UnicodeEmoji>; pattern: RegExp } | undefined;

function toChars(hex: string): string {
  return String.fromCodePoint(...hex.split('-').map((h) => parseInt(h, 16)));
}

/** Loaded on first use: 1.3 MB of JSON is not worth reading for servers that never render. */
function load() {
  if (tables) return tables;
  const data = require('emoji-datasource/emoji.json') as DataEntry[];
  const byName = new Map<string, UnicodeEmoji>();
  const byChars = new Map<string, UnicodeEmoji>();
  for (const e of data) {
    const code = (e.non_qualified ?? e.unified).toLowerCase();
    const canonical: UnicodeEmoji = { name: e.short_name, code };
    for (const n of e.short_names) if (!byName.has(n)) byName.set(n, { name: n, code });
    byChars.set(toChars(e.unified), canonical);
    if (e.non_qualified) byChars.set(toChars(e.non_qualified), canonical);
  }
  // Longest sequences first, so a family or flag is not split into its parts.
  const alternatives = [...byChars.keys()].sort((a, b) => b.length - a.length).map((s) => s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'));
  tables = { byName, byChars, pattern: new RegExp(alternatives.join('|'), 'gu') };
  return tables;
}

export function emojiByName(name: string): UnicodeEmoji | undefined {
  return load().byName.get(name);
}

export function emojiByChars(chars: string): UnicodeEmoji | undefined {
  return load().byChars.get(chars);
}

/** A fresh global regex matching any known emoji sequence. */
export function emojiPattern(): RegExp {
  return new RegExp(load().pattern.source, 'gu');
}

/** An emoji as statuses and reactions name it: each reaction_type has its own namespace of codes. */
export interface Emoji {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

export const REACTION_TYPES = ['unicode_emoji', 'realm_emoji', 'zulip_extra_emoji'] as const;

/** The emoji Zulip ships beside Unicode's (zulip_extra_emoji). */
const ZULIP_EXTRA_EMOJI = new Set(['zulip']);

function unicodeCodeExists(code: string): boolean {
  // Code points of at most six hex digits, at most U+10FFFF (String.fromCodePoint throws past it),
  // and no longer a sequence than any emoji has (the longest, families and flags, have 7 or 8).
  if (!/^[0-9a-f]{1,6}(-[0-9a-f]{1,6}){0,15}$/.test(code)) return false;
  if (code.split('-').some((h) => parseInt(h, 16) > 0x10ffff)) return false;
  return emojiByChars(toChars(code)) !== undefined;
}

/** An emoji by name alone: Zulip's own first, then Unicode's (no custom emoji exist yet). */
export function emojiNamed(name: string): Emoji {
  if (ZULIP_EXTRA_EMOJI.has(name)) return { emoji_name: name, emoji_code: name, reaction_type: 'zulip_extra_emoji' };
  const found = emojiByName(name);
  if (!found) throw emojiNotFound({ name });
  return { emoji_name: name, emoji_code: found.code, reaction_type: 'unicode_emoji' };
}

/**
 * Zulip's check_emoji_request: a name alone finds its code and type; otherwise name, code and type
 * must agree (type defaults to unicode_emoji).
 */
export function checkEmojiRequest(name: string, code: string | undefined, type: string | undefined): Emoji {
  if (code === undefined) {
    const found = emojiNamed(name);
    code = found.emoji_code;
    type ??= found.reaction_type;
  }
  type ??= 'unicode_emoji';
  switch (type) {
    case 'unicode_emoji':
      if (!unicodeCodeExists(code)) throw invalidEmojiCode();
      if (emojiByName(name)?.code !== code) throw invalidEmojiName();
      break;
    case 'zulip_extra_emoji':
      if (!ZULIP_EXTRA_EMOJI.has(code)) throw invalidEmojiCode();
      if (name !== code) throw invalidEmojiName();
      break;
    case 'realm_emoji':
      // Custom emoji cannot be uploaded yet, so no id names one.
      throw invalidCustomEmoji();
    default:
      throw invalidEmojiType();
  }
  return { emoji_name: name, emoji_code: code, reaction_type: type };
}

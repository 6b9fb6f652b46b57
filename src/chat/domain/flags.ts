// Per-user message flags, stored as bits of user_messages.flags; names as the API spells them.
export const FLAG = {
  read: 1,
  starred: 2,
  collapsed: 4,
  mentioned: 8,
  stream_wildcard_mentioned: 16,
  topic_wildcard_mentioned: 32,
  has_alert_word: 64,
  historical: 128,
} as const;

/** A message the user never received (shared history) reads as read and historical. */
export const HISTORICAL_FLAGS = FLAG.read | FLAG.historical;

const NAMES_BY_BITS = new Map<number, readonly string[]>();

/** The API's flag names for a bit set; the answer is shared (callers copy it before changing it). */
export function flagNames(bits: number): string[] {
  let names = NAMES_BY_BITS.get(bits);
  if (!names) {
    names = computeFlagNames(bits);
    NAMES_BY_BITS.set(bits, names);
  }
  return [...names];
}

const JSON_BY_BITS = new Map<number, string>();

/** The JSON of flagNames(bits), for answers assembled as text. */
export function flagNamesJson(bits: number): string {
  let json = JSON_BY_BITS.get(bits);
  if (json === undefined) {
    json = JSON.stringify(flagNames(bits));
    JSON_BY_BITS.set(bits, json);
  }
  return json;
}

function computeFlagNames(bits: number): string[] {
  const names = (Object.entries(FLAG) as [string, number][]).filter(([, bit]) => (bits & bit) !== 0).map(([name]) => name);
  // The legacy name stays for clients older than feature level 224.
  if (bits & (FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned)) names.push('wildcard_mentioned');
  return names;
}

/** The flags a user may change; the others follow from the message (mentions, alert words, history). */
export const EDITABLE_FLAGS = new Set(['read', 'starred', 'collapsed']);

/** Zulip's errors for a flag name a client may not set. */
export function checkEditableFlag(flag: string): number {
  if (EDITABLE_FLAGS.has(flag)) return FLAG[flag as keyof typeof FLAG];
  if (flag in FLAG || flag === 'wildcard_mentioned') return -1;
  return 0;
}

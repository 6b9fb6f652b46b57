// Unicode emoji by the names Zulip users type (`:smile:`), from iamcal's emoji-datasource (the data
// Zulip's own emoji names grew from). Codes are the dash-joined lowercase codepoints Zulip uses in
// `emoji-<code>` classes and reaction emoji_code, without the FE0F variation selector.
import { createRequire } from 'node:module';

interface DataEntry { unified: string; non_qualified: string | null; short_name: string; short_names: string[] }

export interface UnicodeEmoji { name: string; code: string }

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

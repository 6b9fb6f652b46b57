// Builds src/chat/domain/zulip-emoji-names.ts, the table of Unicode emoji names Keel serves: the names,
// aliases and codes of Zulip's emoji name table (tools/setup/emoji/emoji_names.py in zulip/zulip),
// which Zulip derives from its hand-picked names (custom_emoji_names.py) and Unicode's CLDR English
// annotations for every emoji in the iamcal emoji data. The table is data; this script only reads it.
//
//   node --import tsx scripts/zulip-emoji.ts --emoji-names path/to/emoji_names.py
//     takes Zulip's generated table as it is;
//   node --import tsx scripts/zulip-emoji.ts --custom path/to/custom_emoji_names.py \
//       --cldr annotations/en/annotations.json --cldr-derived annotationsDerived/en/annotations.json \
//       --emoji-data emoji-datasource/emoji.json
//     derives it by the rules of Zulip's generate_emoji_names (for a checkout without the generated file).
//
// The committed table is Zulip 10.2's: derived from 10.2's custom_emoji_names.py, the npm packages
// cldr-annotations-full and cldr-annotations-derived-full 47.0.0 (46.1.0 gives the same) and the emoji
// data of emoji-datasource 15.1.2 (Zulip 10.2 ships emoji-datasource-google 15.1; Keel's own dependency,
// 16, has 8 emoji more, which 10.2 does not know). It has 1,875 emoji and 3,308 names, as Zulip 10.2.
// The derivation was checked against a generated emoji_names.py of Zulip's (2023: custom names, CLDR 43,
// emoji data 15.0.1): the same 1,847 emoji and 2,956 names, name for name.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface NameEntry {
  canonical: string;
  aliases: string[];
}
type NameTable = Map<string, NameEntry>;

const OUT = fileURLToPath(new URL('../src/chat/domain/zulip-emoji-names.ts', import.meta.url));
const EMOJI_DATA = fileURLToPath(new URL('../node_modules/emoji-datasource/emoji.json', import.meta.url));

// Zulip leaves out the clock faces other than 1f557 (eight o'clock, which Zulip names itself) and the
// skin tone modifiers on their own.
const SKIPPED = new Set([
  ...['1f550', '1f551', '1f552', '1f553', '1f554', '1f555', '1f556', '1f558', '1f559', '1f55a', '1f55b', '1f55c'],
  ...['1f55d', '1f55e', '1f55f', '1f560', '1f561', '1f562', '1f563', '1f564', '1f565', '1f566', '1f567'],
  ...['1f3fb', '1f3fc', '1f3fd', '1f3fe', '1f3ff'],
]);

// Names Zulip keeps in their own script (each emoji also has an ASCII alias).
const NON_ASCII_KEPT = new Set(['ココ', 'サ', '指', '空']);

/** The emoji as Zulip keys it: the code points without the FE0F presentation selector. */
function unqualified(unified: string): string {
  return unified
    .toLowerCase()
    .split('-')
    .filter((h) => h !== 'fe0f')
    .map((h) => h.padStart(4, '0'))
    .join('-');
}

function chars(code: string): string {
  return String.fromCodePoint(...code.split('-').map((h) => parseInt(h, 16)));
}

/** Zulip's spelling of an annotation as a name: lower case, words joined by underscores. */
function cleanName(name: string): string {
  const out = name
    .replace(/[ \-–]/g, '_')
    .replace(/[“”:.,()‘’']/g, '')
    .replace(/&/g, 'and')
    .replace(/_{2,}/g, '_');
  return out.toLowerCase();
}

const ASCII_FOR: Record<string, string> = { è: 'e', ǐ: 'i', ó: 'o', ā: 'a', ō: 'o', ñ: 'n', ô: 'o', ç: 'c', é: 'e', ã: 'a', í: 'i', å: 'a', ü: 'u' };
function asciiName(name: string): string {
  const out = [...name].map((c) => ASCII_FOR[c] ?? c).join('');
  if (!/^[\x00-\x7f]*$/.test(out)) throw new Error(`${name} has characters with no ASCII spelling`);
  return out;
}

/** The entries of a Python name table (`"1f600": {"canonical_name": "grinning", "aliases": ["happy"]}`); comments ignored. */
function readPythonTable(path: string): NameTable {
  const text = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .join('\n');
  const entry = /(["'])([0-9a-f-]+)\1\s*:\s*\{\s*(["'])canonical_name\3\s*:\s*(["'])(.*?)\4\s*,\s*(["'])aliases\6\s*:\s*\[([^\]]*)\]\s*,?\s*\}/g;
  const table: NameTable = new Map();
  for (const m of text.matchAll(entry)) {
    const aliases = [...m[7].matchAll(/(["'])(.*?)\1/g)].map((a) => a[2]);
    table.set(m[2], { canonical: m[5], aliases });
  }
  if (table.size === 0) throw new Error(`${path}: no name entries found`);
  return table;
}

interface Cldr {
  [emoji: string]: { default?: string[]; tts?: string[] };
}

/** Zulip's generate_emoji_names: hand-picked names first, CLDR's for the rest, then collisions resolved. */
function deriveTable(emojiCodes: string[], custom: NameTable, cldr: Cldr): NameTable {
  const table: NameTable = new Map();
  const canonicals = new Set<string>();
  for (const code of emojiCodes) {
    if (SKIPPED.has(code) || table.has(code)) continue;
    const picked = custom.get(code);
    let entry: NameEntry;
    let canonical: string;
    if (picked) {
      canonical = cleanName(picked.canonical);
      entry = { canonical: picked.canonical, aliases: [...picked.aliases] };
    } else {
      const notes = cldr[chars(code)];
      if (!notes?.tts) continue;
      canonical = cleanName(notes.tts[0].trim());
      entry = { canonical, aliases: (notes.default ?? []).map((a) => cleanName(a.trim())) };
    }
    if (canonicals.has(canonical)) throw new Error(`${canonical} names two emoji (${code})`);
    canonicals.add(canonical);
    table.set(code, entry);
  }
  // An alias never shadows another emoji's canonical name.
  const codesOfAlias = new Map<string, string[]>();
  for (const [code, entry] of table) {
    const kept: string[] = [];
    for (const alias of entry.aliases) {
      if (canonicals.has(alias)) continue;
      kept.push(alias);
      codesOfAlias.set(alias, [...(codesOfAlias.get(alias) ?? []), code]);
    }
    entry.aliases = kept;
  }
  // An alias shared by several emoji stays only where it was picked by hand.
  for (const [alias, codes] of codesOfAlias) {
    if (codes.length < 2) continue;
    for (const code of codes) {
      if (custom.has(code)) continue;
      const entry = table.get(code)!;
      const at = entry.aliases.indexOf(alias);
      if (at >= 0) entry.aliases.splice(at, 1);
    }
  }
  // Names with letters outside ASCII also get an ASCII alias, which no other emoji keeps.
  for (const entry of table.values()) {
    for (const name of [entry.canonical, ...entry.aliases]) {
      if (NON_ASCII_KEPT.has(name) || /^[\x20-\x7e]*$/.test(name)) continue;
      const ascii = asciiName(name);
      for (const other of codesOfAlias.get(ascii) ?? []) {
        const o = table.get(other)!;
        const at = o.aliases.indexOf(ascii);
        if (at >= 0) o.aliases.splice(at, 1);
      }
      entry.aliases.push(ascii);
    }
  }
  return table;
}

function main(): void {
  const { values } = parseArgs({
    options: { 'emoji-names': { type: 'string' }, custom: { type: 'string' }, cldr: { type: 'string' }, 'cldr-derived': { type: 'string' }, 'emoji-data': { type: 'string' }, out: { type: 'string' } },
  });
  const data = JSON.parse(readFileSync(values['emoji-data'] ?? EMOJI_DATA, 'utf8')) as { unified: string }[];
  const codes = data.map((e) => unqualified(e.unified));
  let table: NameTable;
  if (values['emoji-names']) {
    table = readPythonTable(values['emoji-names']);
  } else if (values.custom && values.cldr && values['cldr-derived']) {
    const cldr: Cldr = { ...JSON.parse(readFileSync(values.cldr, 'utf8')).annotations.annotations };
    Object.assign(cldr, JSON.parse(readFileSync(values['cldr-derived'], 'utf8')).annotationsDerived.annotations);
    table = deriveTable(codes, readPythonTable(values.custom), cldr);
  } else {
    throw new Error('pass --emoji-names, or --custom with --cldr and --cldr-derived');
  }
  const known = new Set(codes);
  const seen = new Map<string, string>();
  for (const [code, entry] of table) {
    if (!known.has(code)) console.warn(`${code} (${entry.canonical}) is not in the emoji data`);
    for (const name of [entry.canonical, ...entry.aliases]) {
      const before = seen.get(name);
      if (before !== undefined && before !== code) throw new Error(`${name} names both ${before} and ${code}`);
      seen.set(name, code);
    }
  }
  // One line per emoji, `code canonical alias...`: compact, and a diff shows what changed.
  const lines = [...table].map(([code, e]) => [code, e.canonical, ...e.aliases].join(' '));
  console.log(`${table.size} emoji, ${seen.size} names`);
  const out = [
    "// Generated by scripts/zulip-emoji.ts from Zulip's emoji name table (tools/setup/emoji/emoji_names.py):",
    '// one emoji a line, its code (hex code points without FE0F), its canonical name, then its aliases.',
    '// Do not edit by hand; rerun the script.',
    'export const ZULIP_EMOJI_NAMES = `',
    ...lines,
    '`;',
    '',
  ].join('\n');
  writeFileSync(values.out ?? OUT, out);
}

main();

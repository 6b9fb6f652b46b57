// Linkifiers: a pattern in Python's regular expression syntax (named groups as (?P<name>...)) and an
// RFC 6570 URL template ({name}, {+name}, {#name}) filled from the groups. Checked when saved,
// compiled to JavaScript once, and applied to message text by the Markdown renderer in their order.
import type { Queryable } from '../../platform/db/database.js';
import { TableCache } from '../../platform/db/table-cache.js';
import type { ChatTables } from '../tables.js';
import { badRequest } from '../errors.js';

export interface Linkifier { id: number; pattern: string; url_template: string }

export interface CompiledLinkifier {
  /** Global regex: the pattern where Zulip lets it match (after a space, quote, bracket, comma, colon or `<`; not before a word character). */
  regex: RegExp;
  template: TemplatePart[];
}

type TemplatePart = string | { op: '' | '+' | '#'; name: string };

export const MAX_PATTERN_LENGTH = 1000;

export async function linkifierObjects(db: Queryable<ChatTables>, realmId: number): Promise<Linkifier[]> {
  return db.selectFrom('realm_linkifiers').select(['pattern', 'url_template', 'id']).where('realm_id', '=', realmId).orderBy('sort_order').orderBy('id').execute();
}

// Escapes JavaScript reads the same way as Python; anything else (\A, \Z, \g...) would silently mean a
// letter in JavaScript, so it is refused.
const KNOWN_ESCAPES = /^[dDwWsSbBnrtfv0-9xuck\\^$.|?*+()[\]{}\/\-#&~=!:<>,'"@%; ]$/;

/** Python syntax to JavaScript: named groups and backreferences; refuses what would differ. */
function toJavaScript(pattern: string): string {
  for (const m of pattern.matchAll(/\\(.)/gs)) {
    if (!KNOWN_ESCAPES.test(m[1])) throw badRequest(`Bad regular expression: bad escape \\${m[1]}`, { errors: { pattern: [`Bad regular expression: bad escape \\${m[1]}`] } });
  }
  if (/\(\?[aiLmsux-]+[:)]/.test(pattern)) throw badRequest('Bad regular expression: inline flags are not supported', { errors: { pattern: ['Bad regular expression: inline flags are not supported'] } });
  return pattern.replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>').replace(/\(\?P=([A-Za-z_][A-Za-z0-9_]*)\)/g, '\\k<$1>');
}

function badPattern(why: string) {
  return badRequest(`Bad regular expression: ${why}`, { errors: { pattern: [`Bad regular expression: ${why}`] } });
}

function badTemplate(msg: string) {
  return badRequest(msg, { errors: { url_template: [msg] } });
}

function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest) {
    const open = rest.indexOf('{');
    const close = rest.indexOf('}');
    if (close >= 0 && (open < 0 || close < open)) throw badTemplate('Invalid URL template.');
    if (open < 0) { parts.push(rest); break; }
    if (open > 0) parts.push(rest.slice(0, open));
    const end = rest.indexOf('}', open);
    if (end < 0) throw badTemplate('Invalid URL template.');
    const m = /^([+#]?)([A-Za-z0-9_]+)$/.exec(rest.slice(open + 1, end));
    if (!m) throw badTemplate('Invalid URL template.');
    parts.push({ op: m[1] as '' | '+' | '#', name: m[2] });
    rest = rest.slice(end + 1);
  }
  return parts;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(value: string, allowReserved: boolean): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (UNRESERVED.test(ch)) out += ch;
    // Reserved expansion keeps reserved characters and percent-triplets already in the value.
    else if (allowReserved && (RESERVED.test(ch) || (ch === '%' && /^[0-9A-Fa-f]{2}$/.test(value.slice(i + 1, i + 3))))) out += ch;
    else {
      const cp = value.codePointAt(i)!;
      const c = String.fromCodePoint(cp);
      if (c.length === 2) i++;
      out += [...Buffer.from(c, 'utf8')].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
    }
  }
  return out;
}

/** Fills a URL template from a match's named groups (a group that did not take part expands to nothing). */
export function expandTemplate(parts: TemplatePart[], groups: Record<string, string | undefined>): string {
  return parts.map((p) => {
    if (typeof p === 'string') return p;
    const v = groups[p.name];
    if (v === undefined) return '';
    if (p.op === '#') return '#' + encode(v, true);
    return encode(v, p.op === '+');
  }).join('');
}

function wrap(js: string): RegExp {
  return new RegExp(`(?<![^\\s'"(,:<])(?:${js})(?!\\w)`, 'g');
}

/** Refuses a pattern or template Zulip would refuse; returns the compiled linkifier. */
export function checkLinkifier(pattern: string, urlTemplate: string): CompiledLinkifier {
  if (!pattern) throw badPattern('empty pattern');
  if (pattern.length > MAX_PATTERN_LENGTH) throw badPattern(`pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  const js = toJavaScript(pattern);
  let regex: RegExp;
  try {
    regex = wrap(js);
  } catch (err) {
    throw badPattern((err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, ''));
  }
  if (regex.test('')) throw badPattern('the pattern matches the empty string');
  const template = parseTemplate(urlTemplate);
  const groups = new Set([...js.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]));
  for (const p of template) {
    if (typeof p !== 'string' && !groups.has(p.name)) throw badTemplate(`Group '${p.name}' in URL template is not present in linkifier pattern.`);
  }
  // The template must give a URL whatever the groups hold.
  const sample = expandTemplate(template, Object.fromEntries([...groups].map((g) => [g, 'x'])));
  let url: URL;
  try {
    url = new URL(sample);
  } catch {
    throw badTemplate('Invalid URL template.');
  }
  if (!/^https?:$/.test(url.protocol) && url.protocol !== 'mailto:') throw badTemplate('Invalid URL template.');
  return { regex, template };
}

const compiled = new TableCache<CompiledLinkifier[]>('realm_linkifiers');

/**
 * The realm's linkifiers, compiled: every send renders with them and every message object's
 * topic_links needs them. Kept per realm until this node writes realm_linkifiers (or for the read
 * cache's TTL, for other nodes' changes); inside a transaction they are read afresh.
 */
export async function realmLinkifiers(db: Queryable<ChatTables>, realmId: number): Promise<CompiledLinkifier[]> {
  return compiled.get(db, String(realmId), async () => compileLinkifiers(await linkifierObjects(db, realmId)));
}

/** Compiles stored linkifiers (checked when saved); one that no longer compiles is left out. */
export function compileLinkifiers(list: Linkifier[]): CompiledLinkifier[] {
  const out: CompiledLinkifier[] = [];
  for (const l of list) {
    try {
      out.push(checkLinkifier(l.pattern, l.url_template));
    } catch {
      // Saved by an older rule set: rendering goes on without it.
    }
  }
  return out;
}

export type LinkifiedPiece = { text: string; href?: string };

/**
 * Splits text into plain pieces and linked ones. Linkifiers apply in order: an earlier one's links
 * are final, a later one only sees the text left between them.
 */
export function linkifyText(text: string, linkifiers: CompiledLinkifier[]): LinkifiedPiece[] {
  let pieces: LinkifiedPiece[] = [{ text }];
  for (const l of linkifiers) {
    const next: LinkifiedPiece[] = [];
    for (const piece of pieces) {
      if (piece.href !== undefined) { next.push(piece); continue; }
      let last = 0;
      l.regex.lastIndex = 0;
      for (const m of piece.text.matchAll(l.regex)) {
        if (!m[0]) continue;
        if (m.index! > last) next.push({ text: piece.text.slice(last, m.index) });
        next.push({ text: m[0], href: expandTemplate(l.template, m.groups ?? {}) });
        last = m.index! + m[0].length;
      }
      if (last < piece.text.length) next.push({ text: piece.text.slice(last) });
    }
    pieces = next;
  }
  return pieces;
}

/** A bare URL in a topic; trailing punctuation stays out, as in running text. */
const TOPIC_URL = /https?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]'*]/g;

/**
 * A topic's links, in the order they appear: linkifier matches and bare URLs, as messages carry
 * them in topic_links (topics are not Markdown, so clients draw these themselves).
 */
export function topicLinks(topic: string, linkifiers: CompiledLinkifier[]): { text: string; url: string }[] {
  const out: { text: string; url: string }[] = [];
  for (const piece of linkifyText(topic, linkifiers)) {
    if (piece.href !== undefined) out.push({ text: piece.text, url: piece.href });
    else for (const m of piece.text.matchAll(TOPIC_URL)) out.push({ text: m[0], url: m[0] });
  }
  return out;
}

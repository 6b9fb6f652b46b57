// Linkifiers: a pattern in RE2's syntax (Zulip's: named groups as (?P<name>...)) and an RFC 6570 URL
// template ({name}, {+name}, {#name}) filled from the groups. Checked when saved, compiled once on
// RE2 (linear-time matching: an administrator's pattern cannot stall the server on a message built
// against it), and applied to message text by the Markdown renderer in their order.
import type { RE2JS } from 're2js';
import type { Queryable } from '../../platform/db/database.js';
import { TableCache } from '../../platform/db/fast/table-cache.js';
import type { ChatTables } from '../tables.js';
import { linkifierBadPattern, linkifierBadTemplate, linkifierBlankPattern, linkifierGroupNotInPattern, linkifierGroupNotInTemplate } from '../errors.js';
import { compileRe2, embeddable, Re2SyntaxError } from './re2.js';

export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
}

export interface CompiledLinkifier {
  /**
   * The pattern where Zulip lets it match: after the start, a space, quote, bracket, comma, colon
   * or `<`, and before the end or a character that is not a letter or digit. Those two characters
   * are part of the match (RE2 has no lookaround); group 1 is the linked text.
   */
  regex: RE2JS;
  /** The pattern's named groups, which fill the template. */
  groups: string[];
  template: TemplatePart[];
}

type TemplatePart = string | { op: '' | '+' | '#'; name: string };

export const MAX_PATTERN_LENGTH = 1000;

export async function linkifierObjects(db: Queryable<ChatTables>, realmId: number): Promise<Linkifier[]> {
  return db.selectFrom('realm_linkifiers').select(['pattern', 'url_template', 'id']).where('realm_id', '=', realmId).orderBy('sort_order').orderBy('id').execute();
}

const badPattern = (why: string) => linkifierBadPattern({ why });

function parseTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest) {
    const open = rest.indexOf('{');
    const close = rest.indexOf('}');
    if (close >= 0 && (open < 0 || close < open)) throw linkifierBadTemplate();
    if (open < 0) {
      parts.push(rest);
      break;
    }
    if (open > 0) parts.push(rest.slice(0, open));
    const end = rest.indexOf('}', open);
    if (end < 0) throw linkifierBadTemplate();
    const m = /^([+#]?)([A-Za-z0-9_]+)$/.exec(rest.slice(open + 1, end));
    if (!m) throw linkifierBadTemplate();
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
  return parts
    .map((p) => {
      if (typeof p === 'string') return p;
      const v = groups[p.name];
      if (v === undefined) return '';
      if (p.op === '#') return '#' + encode(v, true);
      return encode(v, p.op === '+');
    })
    .join('');
}

// Zulip's boundaries around a linkifier (its markdown's prepare_linkifier_pattern): RE2's \s is
// ASCII only, so NEL and Unicode separators are added.
const BEFORE = `(?:^|[\\s\\x{85}\\pZ'"(,:<])`;
const AFTER = '(?:$|[^\\pL\\pN])';

/** The template as a URL, whatever the groups hold (each variable filled with "x"). */
function checkTemplateUrl(template: TemplatePart[]): void {
  const sample = expandTemplate(template, new Proxy({}, { get: () => 'x' }));
  let url: URL;
  try {
    url = new URL(sample);
  } catch {
    throw linkifierBadTemplate();
  }
  if (!/^https?:$/.test(url.protocol) && url.protocol !== 'mailto:') throw linkifierBadTemplate();
}

/** The pattern on RE2, inside Zulip's boundaries; throws Re2SyntaxError for a pattern RE2 refuses. */
function compile(pattern: string, template: TemplatePart[]): CompiledLinkifier {
  // Alone first: RE2's verdict on the pattern as written (once embedded, "a)(b" would parse).
  const groups = Object.keys(compileRe2(pattern).namedGroups());
  return { regex: compileRe2(`${BEFORE}(${embeddable(pattern)})${AFTER}`), groups, template };
}

/** Refuses a pattern or template Zulip would refuse (and in its words); returns the compiled linkifier. */
export function checkLinkifier(pattern: string, urlTemplate: string): CompiledLinkifier {
  if (!pattern) throw linkifierBlankPattern();
  const template = parseTemplate(urlTemplate);
  checkTemplateUrl(template);
  if (pattern.length > MAX_PATTERN_LENGTH) throw badPattern(`pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  let linkifier: CompiledLinkifier;
  try {
    linkifier = compile(pattern, template);
  } catch (err) {
    if (err instanceof Re2SyntaxError) throw badPattern(err.message);
    throw err;
  }
  if (linkifier.regex.test('')) throw badPattern('the pattern matches the empty string');
  // Zulip names the alphabetically first group missing on either side.
  const used = new Set(template.flatMap((p) => (typeof p === 'string' ? [] : [p.name])));
  const groups = new Set(linkifier.groups);
  const missingInPattern = [...used].filter((g) => !groups.has(g)).sort();
  if (missingInPattern.length) throw linkifierGroupNotInPattern({ group: missingInPattern[0] });
  const missingInTemplate = [...groups].filter((g) => !used.has(g)).sort();
  if (missingInTemplate.length) throw linkifierGroupNotInTemplate({ group: missingInTemplate[0] });
  return linkifier;
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

// Compiling on RE2 takes about 0.4 ms a linkifier (matching one takes microseconds), and the realm
// cache above is read again after every write and every READ_CACHE_TTL_MS: compiled linkifiers are
// kept by their text (the same for every realm), the oldest dropped past MAX_COMPILED. Module-level on
// purpose: a pure compilation of a pattern text, the same whichever store it came from.
const compiledByText = new Map<string, CompiledLinkifier | null>();
const MAX_COMPILED = 500;

/**
 * Compiles stored linkifiers (checked when saved); one that no longer compiles (saved under older
 * rules, before patterns ran on RE2) is left out, as Zulip lets such a linkifier match nothing.
 */
export function compileLinkifiers(list: Linkifier[]): CompiledLinkifier[] {
  const out: CompiledLinkifier[] = [];
  for (const l of list) {
    const key = `${l.pattern}\u0000${l.url_template}`;
    let c = compiledByText.get(key);
    if (c === undefined) {
      try {
        c = compile(l.pattern, parseTemplate(l.url_template));
      } catch {
        c = null; // rendering goes on without it
      }
      if (compiledByText.size >= MAX_COMPILED) compiledByText.delete(compiledByText.keys().next().value!);
      compiledByText.set(key, c);
    }
    if (c) out.push(c);
  }
  return out;
}

export type LinkifiedPiece = { text: string; href?: string };

/**
 * How long the linkifiers may take on one message or topic. Matching is linear in the text, but
 * re2js finds each match with its NFA, whose cost also grows with the pattern (bounded when saved)
 * and, for a pattern that looks far ahead (`#\d+(.*x)?`), with the number of matches: a message
 * built against the realm's linkifiers could still take most of a second. Past the budget the
 * rest of the text stays plain. Ordinary messages are far inside it (5 linkifiers on 200 bytes:
 * about 0.1 ms); it is generous so that a busy machine does not cut them short.
 */
export const LINKIFY_BUDGET_MS = 100;

/** The time linkifiers have left on one message or topic, from their first search on. */
export class LinkifyBudget {
  private deadline: number | undefined;

  /** Whether another search may start (the first always may: the clock starts then). */
  allows(): boolean {
    const now = performance.now();
    this.deadline ??= now + LINKIFY_BUDGET_MS;
    return now < this.deadline;
  }
}

/**
 * Splits text into plain pieces and linked ones. Linkifiers apply in order: an earlier one's links
 * are final, a later one only sees the text left between them, and none once the budget is spent.
 */
export function linkifyText(text: string, linkifiers: CompiledLinkifier[], budget = new LinkifyBudget()): LinkifiedPiece[] {
  let pieces: LinkifiedPiece[] = [{ text }];
  for (const l of linkifiers) {
    const next: LinkifiedPiece[] = [];
    for (const piece of pieces) {
      if (piece.href !== undefined) {
        next.push(piece);
        continue;
      }
      const { text } = piece;
      const m = l.regex.matcher(text);
      let last = 0;
      // The boundary characters around a match are not linked: the next search starts right
      // after the linked text, so they can bound the next match too.
      for (let from = 0; from <= text.length && budget.allows() && m.find(from); ) {
        const start = m.start(1);
        const end = m.end(1);
        if (end === start) {
          from = m.start() + 1;
          continue;
        } // empty matches are refused when saved
        if (start > last) next.push({ text: text.slice(last, start) });
        const groups: Record<string, string | undefined> = {};
        for (const g of l.groups) groups[g] = m.group(g) ?? undefined;
        next.push({ text: text.slice(start, end), href: expandTemplate(l.template, groups) });
        last = from = end;
      }
      if (last < text.length) next.push({ text: text.slice(last) });
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

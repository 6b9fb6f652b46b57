// Links as Zulip makes them: which URLs may be linked (sanitize_url's rules), links to the realm's own
// narrows and uploads made relative, and the bare URLs, domains and e-mail addresses Zulip links in
// plain text (its web link pattern: a scheme, or a domain ending in a known top-level domain, or an
// address; starting after a space or one of '"(,:< and ending before a space or the end).
import { parse as parseDomain } from 'tldts';

// Zulip allows the web's own schemes and the HTML standard's safelisted ones, nothing else.
const ALLOWED_SCHEMES = new Set([
  'http',
  'https',
  'ftp',
  'file',
  'bitcoin',
  'geo',
  'im',
  'irc',
  'ircs',
  'magnet',
  'mailto',
  'matrix',
  'mms',
  'news',
  'nntp',
  'openpgp4fpr',
  'sip',
  'sms',
  'smsto',
  'ssh',
  'tel',
  'urn',
  'webcal',
  'wtai',
  'xmpp',
]);

interface UrlParts {
  scheme: string;
  netloc: string | undefined;
  path: string;
  query: string;
  fragment: string;
}

/** Splits a URL the way Python's urlsplit does, for the cases sanitising needs. */
function splitUrl(url: string): UrlParts {
  let rest = url;
  let scheme = '';
  const s = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (s) {
    scheme = s[1].toLowerCase();
    rest = rest.slice(s[0].length);
  }
  let netloc: string | undefined;
  if (rest.startsWith('//')) {
    const end = rest.slice(2).search(/[/?#]/);
    netloc = end < 0 ? rest.slice(2) : rest.slice(2, end + 2);
    rest = end < 0 ? '' : rest.slice(end + 2);
  }
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  return { scheme, netloc, path: rest, query, fragment };
}

function joinUrl(p: UrlParts): string {
  let url = p.scheme ? `${p.scheme}:` : '';
  if (p.netloc !== undefined) url += `//${p.netloc}`;
  url += p.path;
  if (p.query) url += `?${p.query}`;
  if (p.fragment) url += `#${p.fragment}`;
  return url;
}

/**
 * The href Zulip would give a link to `url`, or null when Zulip shows it as text: an address
 * without scheme becomes mailto:, a path or #fragment stays relative, anything else without a
 * scheme is taken as http://, and only the allowed schemes pass.
 */
export function sanitizeUrl(url: string, depth = 0): string | null {
  const parts = splitUrl(url.replace(/ /g, '%20'));
  const noHost = parts.scheme === '' && (parts.netloc === undefined || parts.netloc === '');
  if (noHost && parts.path.includes('@')) parts.scheme = 'mailto';
  else if (noHost && parts.path.startsWith('/')) return joinUrl({ ...parts, netloc: undefined });
  else if (noHost && parts.path === '' && parts.query === '' && parts.fragment !== '') return `#${parts.fragment}`;
  if (!parts.scheme) return depth > 0 ? null : sanitizeUrl(`http://${url}`, depth + 1);
  if (!ALLOWED_SCHEMES.has(parts.scheme)) return null;
  return joinUrl(parts);
}

/** Zulip opens links to the realm's own narrows and uploads in place: they become relative. */
export function relativeToRealm(href: string, realmUrl: string | undefined): string {
  if (!realmUrl) return href;
  const prefix = `${realmUrl}/`;
  return href.startsWith(`${prefix}#`) || href.startsWith(`${prefix}user_uploads/`) ? href.slice(prefix.length) : href;
}

// Python's \w (Unicode letters, digits, marks and the underscore).
const W = '[\\p{L}\\p{N}\\p{M}_]';
// A path may hold balanced parentheses nested up to six deep, as in Zulip's pattern.
const INNER = '[^\\s()"]*';
const GROUP = '[^\\s()"]*?(?:\\(%s\\)[^\\s()"]*?)*';
let nested = GROUP;
for (let i = 0; i < 6; i++) nested = nested.replace('%s', GROUP);
nested = nested.replace('%s', INNER);
const TAIL = `(?=[!:;?),.'">]*(?:$|\\s))`;
const WEB_LINK = new RegExp(
  `(?:(?:https?://[${W.slice(1, -1)}.:@-]+?|((?:[${W.slice(1, -1)}-]+\\.)+)([a-z0-9-]+))(?:/${nested})?${TAIL})` +
    `|(?:[${W.slice(1, -1)}.-]+@[${W.slice(1, -1)}.-]+\\.${W}+${TAIL})` +
    `|(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34}${TAIL})`,
  'uy',
);
// File extensions Zulip does not take for top-level domains.
const NOT_TLDS = new Set(['java', 'md', 'mov', 'py', 'zip']);
const tldCache = new Map<string, boolean>();

function isTld(label: string): boolean {
  let known = tldCache.get(label);
  if (known === undefined) {
    known = !NOT_TLDS.has(label) && parseDomain(`x.${label}`).isIcann === true;
    if (tldCache.size < 10_000) tldCache.set(label, known);
  }
  return known;
}

const BEFORE_LINK = /[\s'"(,:<]/u;

/** Whether a bare link may start at `pos` of `src` (after the start, a space or one of '"(,:<). */
export function linkMayStartAt(src: string, pos: number): boolean {
  return pos === 0 || BEFORE_LINK.test(src[pos - 1]);
}

/** The bare URL, domain or address Zulip links at `pos` of `src` (ending by `max`), or null. */
export function matchWebLink(src: string, pos: number, max = src.length): string | null {
  if (!linkMayStartAt(src, pos) || !/[\p{L}\p{N}\p{M}_]/u.test(src[pos])) return null;
  WEB_LINK.lastIndex = pos;
  const m = WEB_LINK.exec(max < src.length ? src.slice(0, max) : src);
  if (!m) return null;
  // A bare domain counts only when it ends in a top-level domain Zulip knows.
  if (m[2] !== undefined && !isTld(m[2])) return null;
  return m[0];
}

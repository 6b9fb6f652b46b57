// One router for every listener: finds what a method and a path name in a table of `{param}`
// patterns. Literal paths (the hottest requests) come from a map without splitting the path; a wrong
// method (405, with the allowed ones) is told from an unknown path (404); path parameters are
// percent-decoded, and a malformed escape is the client's error, thrown as the service words it.

export interface Route<T> {
  method: string;
  /** Segments separated by `/`; a `{name}` segment is a path parameter. */
  path: string;
  value: T;
}

export type RouteMatch<T> = { kind: 'found'; value: T; params: Record<string, string> } | { kind: 'wrong-method'; allowed: string[] } | { kind: 'none' };

export interface RouterOptions {
  /** Literal segments match whatever their case (Infra). Default: exactly as written (Chat). */
  caseInsensitive?: boolean;
  /** The pattern a parameter's segment must match, if any (Chat: an `_id` is digits). */
  paramPattern?: (name: string) => RegExp | undefined;
  /** The error thrown for a parameter with a malformed %-escape (`%zz`, a lone `%`, bytes that are not UTF-8). */
  badEscape: (segment: string) => Error;
}

interface Segment {
  /** The literal text (lower-cased when matching ignores case), or the parameter's name. */
  text: string;
  param: boolean;
  pattern: RegExp | undefined;
}

interface Compiled<T> {
  method: string;
  value: T;
  segments: Segment[];
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

const split = (path: string): string[] => path.split('/').filter((s) => s !== '');

export class Router<T> {
  private readonly options: RouterOptions;
  /** Paths without parameters: path key (segments joined by `/`), then method. */
  private readonly literal = new Map<string, Map<string, RouteMatch<T> & { kind: 'found' }>>();
  /** Every route, by segment count and first literal segment: a request tries a handful. */
  private readonly buckets = new Map<string, Compiled<T>[]>();
  /** Routes whose first segment is a parameter, by segment count: tried for every path of that length. */
  private readonly open = new Map<number, Compiled<T>[]>();

  constructor(routes: readonly Route<T>[], options: RouterOptions) {
    this.options = options;
    const seen = new Set<string>();
    for (const r of routes) {
      const segments = split(r.path).map((s): Segment => {
        if (s.startsWith('{') && s.endsWith('}')) {
          const name = s.slice(1, -1);
          return { text: name, param: true, pattern: options.paramPattern?.(name) };
        }
        return { text: this.fold(s), param: false, pattern: undefined };
      });
      const id = `${r.method} ${segments.map((s) => (s.param ? `{${s.text}}` : s.text)).join('/')}`;
      if (seen.has(id)) throw new Error(`route ${r.method} ${r.path} is defined twice`);
      seen.add(id);
      const compiled: Compiled<T> = { method: r.method, value: r.value, segments };
      if (!segments.some((s) => s.param)) {
        const key = segments.map((s) => s.text).join('/');
        let byMethod = this.literal.get(key);
        if (!byMethod) this.literal.set(key, (byMethod = new Map()));
        // Shared between requests (its params frozen and empty): a literal route is found without a scan.
        byMethod.set(r.method, { kind: 'found', value: r.value, params: NO_PARAMS });
      }
      const first = segments[0];
      if (first?.param) {
        const list = this.open.get(segments.length);
        if (list) list.push(compiled);
        else this.open.set(segments.length, [compiled]);
      } else {
        const key = `${segments.length} ${first?.text ?? ''}`;
        const list = this.buckets.get(key);
        if (list) list.push(compiled);
        else this.buckets.set(key, [compiled]);
      }
    }
  }

  private fold(segment: string): string {
    return this.options.caseInsensitive ? segment.toLowerCase() : segment;
  }

  /** The route for a method and a raw (still percent-encoded) path; empty segments are ignored. */
  find(method: string, path: string): RouteMatch<T> {
    // A plain path (one leading slash, no empty segment) is its segments joined already.
    const plain = path.length > 1 && path.charCodeAt(0) === 47 && path.charCodeAt(path.length - 1) !== 47 && !path.includes('//');
    const key = this.fold(plain ? path.slice(1) : split(path).join('/'));
    const exact = this.literal.get(key)?.get(method);
    if (exact) return exact;
    const segs = key === '' ? [] : key.split('/');
    // The fold was for the literal key: parameters are read from the path as written.
    const raw = this.options.caseInsensitive ? split(path) : segs;
    const bucket = this.buckets.get(`${segs.length} ${segs[0] ?? ''}`);
    const open = this.open.get(segs.length);
    let best: Compiled<T> | undefined;
    let bestParams: Record<string, string> | undefined;
    let bestLiterals = -1;
    let allowed: string[] | undefined;
    for (let b = 0; b < 2; b++) {
      const candidates = b === 0 ? bucket : open;
      if (!candidates) continue;
      for (const route of candidates) {
        let params: Record<string, string> | undefined;
        let literals = 0;
        let ok = true;
        for (let i = 0; i < segs.length && ok; i++) {
          const p = route.segments[i];
          if (p.param) {
            if (p.pattern && !p.pattern.test(raw[i])) ok = false;
            else (params ??= {})[p.text] = this.decode(raw[i]);
          } else if (p.text === segs[i]) literals++;
          else ok = false;
        }
        if (!ok) continue;
        if (route.method !== method) {
          if (!allowed) allowed = [route.method];
          else if (!allowed.includes(route.method)) allowed.push(route.method);
          continue;
        }
        // /users/me beats /users/{user_id}: the most literal segments win.
        if (literals > bestLiterals) {
          best = route;
          bestParams = params;
          bestLiterals = literals;
        }
      }
    }
    if (best) return { kind: 'found', value: best.value, params: bestParams ?? {} };
    return allowed ? { kind: 'wrong-method', allowed } : { kind: 'none' };
  }

  /** A path segment's text with its %-escapes decoded; a broken escape is the client's mistake. */
  private decode(segment: string): string {
    if (!segment.includes('%')) return segment;
    try {
      return decodeURIComponent(segment);
    } catch {
      throw this.options.badEscape(segment);
    }
  }
}

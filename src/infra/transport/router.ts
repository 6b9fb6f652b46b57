// Finds the command a request names: json.php (command style) or a REST path. Clients use
// /api/<ver>/... and /api/rest/<ver>/..., any version, and spell a family singular or plural.
import type { Command, HttpMethod } from '../command.js';
import { infraErrors } from '../errors.js';

const PREFIX = /^\/api\/(?:rest\/)?(v\d+(?:\.\d+)*)(\/.*)?$/i;

export type Target =
  | { kind: 'cmd' }
  | { kind: 'openapi' }
  | { kind: 'rest'; command: Command; pathParams: Record<string, string> }
  | { kind: 'wrong-method'; allowed: string[] }
  | { kind: 'none' };

interface Route { command: Command; segments: string[] }

const CMD: Target = { kind: 'cmd' };

/**
 * Routes are looked for among those of the same length and first word (a family, singular or
 * plural: trailing s's dropped), so a request tries a handful of patterns, not all of them.
 */
function bucketKey(length: number, first: string): string {
  return `${length} ${first.toLowerCase().replace(/s+$/, '')}`;
}

export class Router {
  private readonly buckets = new Map<string, Route[]>();
  /** Routes whose first segment is a parameter: tried for every path of their length. */
  private readonly open: Route[] = [];
  readonly byName = new Map<string, Command>();

  constructor(commands: Command[]) {
    for (const c of commands) {
      if (this.byName.has(c.cmd)) throw new Error(`command ${c.cmd} is defined twice`);
      this.byName.set(c.cmd, c);
      const route = { command: c, segments: split(c.rest.path) };
      const first = route.segments[0] ?? '';
      if (isParam(first)) this.open.push(route);
      else {
        const key = bucketKey(route.segments.length, first);
        const bucket = this.buckets.get(key);
        if (bucket) bucket.push(route);
        else this.buckets.set(key, [route]);
      }
    }
  }

  /** The path after /api/[rest/]<ver>, or null when the URL is not under the API. */
  static apiPath(pathname: string): string | null {
    const m = PREFIX.exec(pathname);
    return m ? (m[2] ?? '/') : null;
  }

  find(method: string, apiPath: string): Target {
    // Nearly every command-style call: no need to split the path.
    if (apiPath.length === 9 && apiPath.toLowerCase() === '/json.php') return CMD;
    const segs = split(apiPath);
    if (segs.length === 1 && segs[0].toLowerCase() === 'json.php') return CMD;
    if (segs.length === 1 && segs[0].toLowerCase() === 'openapi.json') return { kind: 'openapi' };
    let best: { route: Route; params: Record<string, string>; literals: number } | undefined;
    const allowed = new Set<string>();
    const bucket = this.buckets.get(bucketKey(segs.length, segs[0] ?? '')) ?? [];
    const candidates = this.open.length ? [...bucket, ...this.open.filter((r) => r.segments.length === segs.length)] : bucket;
    for (const route of candidates) {
      const m = match(route.segments, segs);
      if (!m) continue;
      if (route.command.rest.method !== (method.toUpperCase() as HttpMethod)) {
        allowed.add(route.command.rest.method);
        continue;
      }
      if (!best || m.literals > best.literals) best = { route, params: m.params, literals: m.literals };
    }
    if (best) return { kind: 'rest', command: best.route.command, pathParams: best.params };
    return allowed.size ? { kind: 'wrong-method', allowed: [...allowed] } : { kind: 'none' };
  }
}

function isParam(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

/** A path parameter, percent-decoded; a malformed escape is the client's error, not a crash. */
function decodeSegment(seg: string): string {
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    throw infraErrors.malformedPercent({ segment: seg });
  }
}

function sameWord(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x === y || x + 's' === y || x === y + 's';
}

function match(pattern: string[], segs: string[]): { params: Record<string, string>; literals: number } | null {
  if (pattern.length !== segs.length) return null;
  const params: Record<string, string> = {};
  let literals = 0;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (isParam(p)) {
      params[p.slice(1, -1)] = decodeSegment(segs[i]);
    } else if (i === 0 ? sameWord(p, segs[i]) : p.toLowerCase() === segs[i].toLowerCase()) {
      literals++;
    } else {
      return null;
    }
  }
  return { params, literals };
}

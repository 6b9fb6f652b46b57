// Finds the endpoint definition for a method and a path under /api/v1 ({name} segments are path
// parameters); tells a wrong method (405 with Allow) from an unknown path (404).
import type { Endpoint } from './endpoint.js';
import { malformedPathEscape } from './errors.js';

export type RouteMatch =
  | { kind: 'found'; endpoint: Endpoint; pathParams: Record<string, string> }
  | { kind: 'wrong-method'; allowed: string[] }
  | { kind: 'none' };

interface Route { endpoint: Endpoint; segments: string[] }

const NO_PARAMS: Record<string, string> = Object.freeze({});

/** What a client is told of a path with a broken %-escape (`%zz`, a lone `%`, `%FF` that is not UTF-8). */
export const BAD_PATH_ESCAPE = malformedPathEscape.template;

/**
 * A path segment's text with its %-escapes decoded. A broken escape is the client's mistake, a 400,
 * as fastify's own router answers it for the requests it routes (frameworkErrors in http.ts).
 */
export function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw malformedPathEscape();
  }
}
const split = (p: string) => p.split('/').filter((s) => s !== '');
const isParam = (segment: string) => segment.startsWith('{') && segment.endsWith('}');

export class ChatRouter {
  private readonly routes: Route[];
  constructor(endpoints: Endpoint[]) {
    const seen = new Set<string>();
    for (const e of endpoints) {
      const id = `${e.method} ${e.path}`;
      if (seen.has(id)) throw new Error(`chat endpoint ${id} is defined twice`);
      seen.add(id);
    }
    this.routes = endpoints.map((endpoint) => ({ endpoint, segments: split(endpoint.path) }));
    for (const r of this.routes) {
      if (!r.segments.some(isParam)) this.literal.set(`${r.endpoint.method} ${r.segments.join('/')}`, { kind: 'found', endpoint: r.endpoint, pathParams: NO_PARAMS });
    }
  }

  /**
   * Paths without parameters, by method and path: such a route has the most literal segments, so it
   * wins. The match is shared (its pathParams frozen and empty): the hottest requests take this way.
   */
  private readonly literal = new Map<string, RouteMatch & { kind: 'found' }>();

  find(method: string, path: string): RouteMatch {
    // A plain path (one leading slash, no empty segment) is its segments joined already.
    const plain = path.length > 1 && path[0] === '/' && !path.endsWith('/') && !path.includes('//');
    const exact = this.literal.get(`${method} ${plain ? path.slice(1) : split(path).join('/')}`);
    if (exact) return exact;
    const segs = split(path);
    let best: { route: Route; params: Record<string, string>; literals: number } | undefined;
    const allowed = new Set<string>();
    for (const route of this.routes) {
      if (route.segments.length !== segs.length) continue;
      const params: Record<string, string> = {};
      let literals = 0;
      let ok = true;
      for (let i = 0; i < segs.length && ok; i++) {
        const p = route.segments[i];
        if (isParam(p)) {
          // As in Zulip's URL patterns, an id segment is digits: /users/{user_id} and
          // /users/{email} share a shape and the segment decides.
          if (p.endsWith('_id}') && !/^[0-9]+$/.test(segs[i])) ok = false;
          else params[p.slice(1, -1)] = decodeSegment(segs[i]);
        }
        else if (p === segs[i]) literals++;
        else ok = false;
      }
      if (!ok) continue;
      if (route.endpoint.method !== method) {
        allowed.add(route.endpoint.method);
        continue;
      }
      // /users/me beats /users/{user_id}: the most literal segments win.
      if (!best || literals > best.literals) best = { route, params, literals };
    }
    if (best) return { kind: 'found', endpoint: best.route.endpoint, pathParams: best.params };
    return allowed.size ? { kind: 'wrong-method', allowed: [...allowed] } : { kind: 'none' };
  }
}

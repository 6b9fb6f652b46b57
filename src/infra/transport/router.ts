// Finds the command a request names: json.php (command style) or a REST path, on the shared router
// (platform/http/router.ts). Clients use /api/<ver>/... and /api/rest/<ver>/..., any version, spell
// a family singular or plural, and any case.
import type { Command } from '../command.js';
import { infraErrors } from '../errors.js';
import { Router as PathRouter, type Route } from '../../platform/http/router.js';

const PREFIX = /^\/api\/(?:rest\/)?(v\d+(?:\.\d+)*)(\/.*)?$/i;

export type Target = { kind: 'cmd' } | { kind: 'openapi' } | { kind: 'rest'; command: Command; pathParams: Record<string, string> } | { kind: 'wrong-method'; allowed: string[] } | { kind: 'none' };

const CMD: Target = { kind: 'cmd' };
const OPENAPI: Target = { kind: 'openapi' };

const isParam = (segment: string) => segment.startsWith('{') && segment.endsWith('}');

/** A family word as clients may write it: as declared, with one more `s`, or with one `s` less. */
function spellings(family: string): string[] {
  const out = [family, `${family}s`];
  if (family.endsWith('s')) out.push(family.slice(0, -1));
  return out;
}

export class Router {
  private readonly paths: PathRouter<Command>;
  readonly byName = new Map<string, Command>();

  constructor(commands: Command[]) {
    for (const c of commands) {
      if (this.byName.has(c.cmd)) throw new Error(`command ${c.cmd} is defined twice`);
      this.byName.set(c.cmd, c);
    }
    // Every declared path first, then the other spellings of its family (first) segment, unless a
    // declared path already reads so.
    const routes: Route<Command>[] = [];
    const taken = new Set<string>();
    const add = (c: Command, path: string) => {
      const id = `${c.rest.method} ${path.toLowerCase()}`;
      if (taken.has(id)) return;
      taken.add(id);
      routes.push({ method: c.rest.method, path, value: c });
    };
    for (const c of commands) add(c, c.rest.path);
    for (const c of commands) {
      const [family, ...rest] = c.rest.path.split('/').filter((s) => s !== '');
      if (family === undefined || isParam(family)) continue;
      for (const word of spellings(family.toLowerCase())) add(c, `/${[word, ...rest].join('/')}`);
    }
    this.paths = new PathRouter(routes, {
      caseInsensitive: true,
      badEscape: (segment) => infraErrors.malformedPercent({ segment }),
    });
  }

  /** The path after /api/[rest/]<ver>, or null when the URL is not under the API. */
  static apiPath(pathname: string): string | null {
    const m = PREFIX.exec(pathname);
    return m ? (m[2] ?? '/') : null;
  }

  find(method: string, apiPath: string): Target {
    // Nearly every command-style call: no need to split the path.
    if (apiPath.length === 9 && apiPath.toLowerCase() === '/json.php') return CMD;
    const segs = apiPath.split('/').filter((s) => s !== '');
    if (segs.length === 1) {
      const only = segs[0].toLowerCase();
      if (only === 'json.php') return CMD;
      if (only === 'openapi.json') return OPENAPI;
    }
    const m = this.paths.find(method.toUpperCase(), apiPath);
    if (m.kind === 'found') return { kind: 'rest', command: m.value, pathParams: m.params };
    return m;
  }
}

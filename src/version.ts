// Keel's own version, as package.json states it: what `keel --version` prints.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reads the version from Keel's package.json, found by walking up from this module: the sources
 * run from src/ today and the compiled program from dist/, at different depths below the package root.
 */
export function keelVersion(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    let text: string | undefined;
    try {
      text = readFileSync(path.join(dir, 'package.json'), 'utf8');
    } catch {
      // No package.json at this level: look one higher.
    }
    if (text !== undefined) {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === 'keel' && typeof pkg.version === 'string') return pkg.version;
    }
    if (path.dirname(dir) === dir) throw new Error(`no package.json of keel above ${from}`);
  }
}

// `keel admin catalogue`: an operator's way into the catalogue without starting Keel. `--print`
// writes the built-in catalogue as JSON, the file to start from; `--check FILE` reads a catalogue file
// as `keel serve --infra-catalogue FILE` would and lists every problem, not only the first.
import { parseArgs } from 'node:util';
import { UsageError } from '../config/env.js';
import { DEFAULT_CATALOGUE, type Catalogue } from './catalogue.js';
import { CatalogueError, readCatalogueFile } from './catalogue-file.js';

export const CATALOGUE_ADMIN_USAGE = `  admin catalogue --print | --check FILE [--json]
            print the built-in catalogue as JSON (to start a catalogue file from), or check a
            catalogue file for --infra-catalogue and list every problem in it (exit 1 if any)`;

function counts(c: Catalogue): Record<string, number> {
  return {
    dataCentres: c.dataCentres.length,
    productGroups: c.productGroups.length,
    products: c.products.length,
    operatingSystems: c.operatingSystems.length,
    installImages: c.installImages.length,
    templates: c.templates.length,
    isoImages: c.isoImages.length,
    periods: c.periods.length,
  };
}

/** argv: what follows `keel admin catalogue`. */
export async function runCatalogueAdmin(argv: string[], out: (line: string) => void): Promise<number> {
  let values: { check?: string; print?: boolean; json?: boolean };
  try {
    values = parseArgs({ args: argv, options: { check: { type: 'string' }, print: { type: 'boolean' }, json: { type: 'boolean' } }, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]);
  }
  if ((values.check === undefined) === (values.print !== true)) throw new UsageError('keel admin catalogue takes one of --print or --check FILE');
  if (values.print) {
    out(JSON.stringify(DEFAULT_CATALOGUE, null, 2));
    return 0;
  }
  const file = values.check!;
  try {
    const catalogue = readCatalogueFile(file);
    if (values.json) out(JSON.stringify({ file, valid: true, counts: counts(catalogue) }));
    else {
      const c = counts(catalogue);
      out(
        `${file}: a valid catalogue: ${Object.entries(c)
          .map(([k, n]) => `${n} ${k}`)
          .join(', ')}`,
      );
    }
    return 0;
  } catch (err) {
    if (!(err instanceof CatalogueError)) throw err;
    if (values.json) out(JSON.stringify({ file, valid: false, problems: err.problems }));
    else {
      out(`${file}: ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}:`);
      for (const p of err.problems) out(`  ${p}`);
    }
    return 1;
  }
}

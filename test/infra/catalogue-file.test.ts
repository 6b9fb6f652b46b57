// The operator's catalogue file (src/infra/catalogue-file.ts): the built-in catalogue passes its own
// check, and bad files are refused with every problem named by its JSON path.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULT_CATALOGUE, type Catalogue } from '../../src/infra/catalogue.js';
import { CatalogueError, checkCatalogue, parseCatalogue, readCatalogueFile } from '../../src/infra/catalogue-file.js';
import { UsageError } from '../../src/config/env.js';
import { prng } from '../helpers/prng.js';

/** A copy of the default catalogue to spoil, as an operator's file would start (JSON: products of a class share one prices object). */
function copy(): any {
  return JSON.parse(JSON.stringify(DEFAULT_CATALOGUE));
}

function problemsOf(value: unknown): string[] {
  return checkCatalogue(value).problems;
}

describe('catalogue file checks', () => {
  it('passes the built-in catalogue, which comes back equal', () => {
    const { catalogue, problems } = checkCatalogue(JSON.parse(JSON.stringify(DEFAULT_CATALOGUE)));
    assert.deepEqual(problems, []);
    assert.deepEqual(catalogue, DEFAULT_CATALOGUE);
  });

  it('names a range whose max is below its min, by JSON path', () => {
    const c = copy();
    c.products[3].cpu = { min: 4, max: 2, default: 2 };
    assert.deepEqual(problemsOf(c), ['products[3].cpu.max must be >= cpu.min (4)']);
    c.products[3].cpu = { min: 1, max: 2, default: 3 };
    assert.deepEqual(problemsOf(c), ['products[3].cpu.default must be from cpu.min to cpu.max (1 to 2)']);
    c.products[3].cpu = { min: 0, max: 2, default: 1 };
    assert.deepEqual(problemsOf(c), ['products[3].cpu.min must be >= 1']);
    c.products[3].cpu = { min: 1, max: 2.5, default: 1 };
    assert.deepEqual(problemsOf(c), ['products[3].cpu.max must be an integer, got number 2.5']);
  });

  it('refuses duplicate codes and ids, without case, naming the earlier entry', () => {
    const c = copy();
    c.products[5].code = c.products[1].code.toLowerCase();
    c.dataCentres[2].id = c.dataCentres[0].id;
    c.operatingSystems[1].code = c.operatingSystems[0].code;
    c.periods[2].code = 'MONTHLY';
    c.periods[2].months = 1;
    const problems = problemsOf(c);
    assert.ok(problems.includes(`products[5].code "${c.products[5].code}" is already the code of products[1]`), problems.join('\n'));
    assert.ok(problems.includes(`dataCentres[2].id ${c.dataCentres[0].id} is already the id of dataCentres[0]`), problems.join('\n'));
    assert.ok(problems.includes(`operatingSystems[1].code "${c.operatingSystems[0].code}" is already the code of operatingSystems[0]`), problems.join('\n'));
    assert.ok(problems.includes('periods[2].code "MONTHLY" is already the code of periods[0]'), problems.join('\n'));
  });

  it('refuses a DC name that is another DC location: orders name a DC by either', () => {
    const c = copy();
    c.dataCentres[1].name = c.dataCentres[0].location;
    assert.deepEqual(problemsOf(c), [`dataCentres[1].name "${c.dataCentres[0].location}" is already the location of dataCentres[0] (orders name a data centre by either)`]);
  });

  it('refuses products in data centres or groups that do not exist', () => {
    const c = copy();
    c.products[0].dcIds = [19, 999];
    c.products[1].groupCode = 'NOPE';
    c.products[2].dcIds = [19, 19];
    assert.deepEqual(problemsOf(c), [
      'products[2].dcIds[1] 19 is listed twice',
      'products[0].dcIds[1] 999 is not the id of any of dataCentres',
      'products[1].groupCode "NOPE" is not the code of any of productGroups',
    ]);
    c.products[2].dcIds = [];
    assert.ok(problemsOf(c).includes('products[2].dcIds must hold at least one entry'));
  });

  it("refuses codes that do not look like the provider's", () => {
    const c = copy();
    c.products[0].code = 'SERVER VIRTUAL';
    c.products[1].code = '123';
    c.productGroups[0].code = 'SERVER-VIRTUAL';
    const problems = problemsOf(c);
    assert.ok(problems.includes('products[0].code must be letters, digits and underscores, a letter first (such as SERVER_VIRTUAL_PERFORMANCE_AU), got "SERVER VIRTUAL"'), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('products[1].code must be letters, digits and underscores')));
    assert.ok(problems.some((p) => p.startsWith('productGroups[0].code must be letters, digits and underscores')));
    // Every product of the group now names a group that does not pass its own check: those are not also reported.
    assert.equal(problems.length, 3, problems.join('\n'));
  });

  it('refuses wrong types, missing and unknown fields, and bad prices', () => {
    const c = copy();
    c.currency = 'aud';
    delete c.dataCentres[0].city;
    c.dataCentres[1].cty = 'Sydney';
    c.dataCentres[2].country = 'Australia';
    c.products[0].prices.base = '5';
    c.products[1].prices.perCpu = 0.123;
    c.products[2].prices.perStorageGB.SSD = -1;
    c.operatingSystems[0].family = 'bsd';
    c.periods[1].months = 4;
    c.periods[3].factor = 1.5;
    assert.deepEqual(problemsOf(c), [
      'currency must be an ISO 4217 currency code of three capital letters (such as AUD), got "aud"',
      'dataCentres[0].city is required',
      'dataCentres[1].cty is not a field of this object (fields: id, name, location, description, country, city)',
      'dataCentres[2].country must be an ISO 3166 country code of two capital letters (such as AU), got "Australia"',
      'products[0].prices.base must be a number, got string "5"',
      'products[1].prices.perCpu must have at most two decimals (whole cents), got 0.123',
      'products[2].prices.perStorageGB.SSD must be >= 0',
      'operatingSystems[0].family must be one of linux, windows, none, got string "bsd"',
      'periods[1].months must be 3 for QUARTERLY',
      'periods[3].factor must be above 0 and at most 1 (the fraction of the undiscounted price charged: 0.9 is 10% off)',
    ]);
  });

  it('shows a long wrong value by its start only', () => {
    const c = copy();
    c.dataCentres[3].id = 'x'.repeat(10_000);
    assert.deepEqual(problemsOf(c), [`dataCentres[3].id must be an integer, got string "${'x'.repeat(56)}...`]);
  });

  it('refuses a file that is not a catalogue at all', () => {
    assert.deepEqual(problemsOf([]), ['the file must be an object, got a list']);
    assert.deepEqual(problemsOf({}), ['currency is required', 'dataCentres is required', 'productGroups is required', 'products is required', 'operatingSystems is required', 'periods is required']);
    for (const section of ['dataCentres', 'productGroups', 'products', 'operatingSystems', 'periods']) {
      const without = copy();
      delete without[section];
      assert.deepEqual(problemsOf(without), [`${section} is required`]);
      without[section] = 'none';
      assert.deepEqual(problemsOf(without), [`${section} must be a list, got string "none"`]);
      without[section] = [];
      // An empty list of DCs or groups also leaves every product naming one that does not exist.
      assert.equal(problemsOf(without)[0], `${section} must hold at least one entry`);
    }
    const c = copy();
    c.periods = c.periods.filter((p: { code: string }) => p.code !== 'MONTHLY');
    assert.deepEqual(problemsOf(c), ['periods must include MONTHLY (prices are per month; orders without a period are monthly)']);
    const big = copy();
    big.isoImages = Array.from({ length: 10_001 }, (_, i) => ({ code: `ISO${i}`, name: 'x', description: '' }));
    assert.deepEqual(problemsOf(big), ['isoImages must hold at most 10000 entries, got 10001']);
  });

  it('takes the image lists as optional', () => {
    const c = copy();
    delete (c as Partial<Catalogue>).installImages;
    delete (c as Partial<Catalogue>).templates;
    delete (c as Partial<Catalogue>).isoImages;
    const { catalogue, problems } = checkCatalogue(c);
    assert.deepEqual(problems, []);
    assert.deepEqual(catalogue?.isoImages, []);
  });

  it('raises a usage error naming the file and the first problem, and how many more', () => {
    const c = copy();
    c.products[3].cpu.max = 0;
    c.products[4].memoryGB.default = 100_000;
    const err = (() => {
      try {
        parseCatalogue(JSON.stringify(c), 'my.json');
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof CatalogueError && err instanceof UsageError);
    assert.equal(err.message, 'catalogue my.json: products[3].cpu.max must be >= 1 (and 1 more; keel admin catalogue --check lists them all)');
    assert.equal(err.problems.length, 2);
    assert.throws(
      () => parseCatalogue('{"currency": ', 'bad.json'),
      (e: Error) => e instanceof CatalogueError && /^catalogue bad\.json: is not JSON: /.test(e.message),
    );
  });

  it('never throws on a spoilt file: 2,000 seeded mutations each answer problems, or a catalogue', () => {
    const VALUES: unknown[] = [null, true, 0, -1, 1.5, 1e308, '', ' ', 'X', '19', [], [null], {}, { min: 1 }];
    for (let seed = 1; seed <= 2000; seed++) {
      const random = prng(seed);
      const c = copy();
      // One to three places anywhere in the tree get another value, or lose their key.
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
        let node = c;
        for (;;) {
          const keys = Object.keys(node);
          const key = keys[Math.floor(random() * keys.length)];
          const child = node[key];
          if (child !== null && typeof child === 'object' && Object.keys(child).length > 0 && random() < 0.7) {
            node = child;
            continue;
          }
          if (random() < 0.2 && !Array.isArray(node)) delete node[key];
          else node[key] = structuredClone(VALUES[Math.floor(random() * VALUES.length)]);
          break;
        }
      }
      const { catalogue, problems } = checkCatalogue(c);
      assert.equal(catalogue === undefined, problems.length > 0, `seed ${seed}`);
      for (const p of problems) assert.match(p, /^(the file|[a-zA-Z]+(\[\d+\])?([.][a-zA-Z0-9]+|\[\d+\])*) /, `seed ${seed}: ${p}`);
    }
  });

  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-catalogue-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a file, and names one it cannot read', () => {
    const file = path.join(dir, 'ok.json');
    writeFileSync(file, JSON.stringify(DEFAULT_CATALOGUE));
    assert.deepEqual(readCatalogueFile(file), DEFAULT_CATALOGUE);
    assert.throws(() => readCatalogueFile(path.join(dir, 'missing.json')), { message: `catalogue ${path.join(dir, 'missing.json')}: cannot be read: ENOENT` });
  });
});

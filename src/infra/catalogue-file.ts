// An operator's catalogue (--infra-catalogue FILE): a JSON file of the Catalogue shape
// (catalogue.ts), read once at start and checked field by field before Keel serves anything from
// it. Every problem names its JSON path (`products[3].cpu.max must be >= cpu.min`), so an operator
// can fix a file without reading code; `keel admin catalogue --check FILE` lists them all, and
// `keel serve` refuses to start on the first.
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from '../config/env.js';
import type { Catalogue, DataCentre, NamedImage, OperatingSystem, Period, Product, ProductGroup, Range, ServerPrices } from './catalogue.js';

/** Larger than any real catalogue by far; a file beyond it is a mistake, not read into memory. */
export const CATALOGUE_FILE_MAX_BYTES = 16 * 1024 * 1024;
/** Entries of one list (products, data centres ...): each is shown in lists and held in memory. */
export const CATALOGUE_LIST_MAX = 10_000;
/** Prices per month, in the catalogue's currency. */
export const PRICE_MAX = 1_000_000;
const NAME_MAX = 200;
const DESCRIPTION_MAX = 2000;
const CODE_MAX = 64;

/**
 * Product and product group codes as the provider writes them (SERVER_VIRTUAL_PERFORMANCE_AU):
 * letters, digits and underscores, a letter first, so a code never reads as a numeric id.
 */
const PRODUCT_CODE = /^[A-Za-z][A-Za-z0-9_]*$/;
/** Operating system and image codes also hold dots and hyphens (UBUNTU22.04_64). */
const IMAGE_CODE = /^[A-Za-z][A-Za-z0-9_.-]*$/;
/** DC names and locations (RC-AU-GLOBESW1, GLOBALSWITCH-SYD1): orders name a DC by either, or by its numeric id. */
const DC_NAME = /^[A-Za-z][A-Za-z0-9_.-]*$/;
const COUNTRY = /^[A-Z]{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
/** An Incus/LXD image alias (debian/12, ubuntu/24.04, images:alpine/3.20). */
const IMAGE_ALIAS = /^[A-Za-z0-9][A-Za-z0-9._/:-]*$/;

/** The size fields of a product with the most any product may allow: an order asks within them. */
const RANGE_LIMITS: Record<'cpu' | 'memoryGB' | 'storageGB' | 'disks' | 'trafficGB' | 'ipv4' | 'nics', { min: number; max: number }> = {
  cpu: { min: 1, max: 1024 },
  memoryGB: { min: 1, max: 65_536 },
  storageGB: { min: 1, max: 1_000_000 },
  disks: { min: 1, max: 64 },
  trafficGB: { min: 0, max: 1_000_000_000 },
  ipv4: { min: 0, max: 256 },
  nics: { min: 1, max: 16 },
};

/** The period codes and the months each stands for. */
const PERIOD_MONTHS: Record<Period['code'], number> = { MONTHLY: 1, QUARTERLY: 3, SEMIANNUALLY: 6, ANNUALLY: 12 };

const FAMILIES = ['linux', 'windows', 'none'] as const;

/** A catalogue that failed its check: every problem, each `<json path> <what is wrong>`. */
export class CatalogueError extends UsageError {
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more; keel admin catalogue --check lists them all)` : '';
    super(`catalogue ${source}: ${problems[0]}${more}`);
    this.problems = problems;
  }
}

type Json = unknown;

/** Collects problems while the checks walk the file. */
class Findings {
  readonly list: string[] = [];
  report(path: string, what: string): void {
    this.list.push(`${path} ${what}`);
  }
}

const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function describeType(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  // A long string is named by its start: the message is one line on a terminal.
  const shown = JSON.stringify(v);
  return `${typeof v} ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`;
}

/** An object with exactly these fields (those marked optional may be absent); unknown ones are typos. */
function fields(f: Findings, path: string, v: Json, required: string[], optional: string[] = []): Record<string, Json> | undefined {
  if (!isObject(v)) {
    f.report(path, `must be an object, got ${describeType(v)}`);
    return undefined;
  }
  for (const name of required) if (v[name] === undefined) f.report(`${path}.${name}`.replace(/^\./, ''), 'is required');
  const known = new Set([...required, ...optional]);
  for (const name of Object.keys(v)) if (!known.has(name)) f.report(`${path}.${name}`.replace(/^\./, ''), `is not a field of this object (fields: ${[...known].join(', ')})`);
  return v;
}

function text(f: Findings, path: string, v: Json, max: number, pattern?: RegExp, shape?: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    f.report(path, `must be a string, got ${describeType(v)}`);
    return undefined;
  }
  if (v.trim() === '' && pattern === undefined) {
    f.report(path, 'must not be empty');
    return undefined;
  }
  if (v.length > max) f.report(path, `must be at most ${max} characters long`);
  // Control characters would reach every list and log line that shows the value.
  else if (/[\u0000-\u001f\u007f]/.test(v)) f.report(path, 'must not contain control characters');
  else if (pattern && !pattern.test(v)) f.report(path, `must be ${shape}, got ${JSON.stringify(v)}`);
  else return v;
  return undefined;
}

/** Free text that may be empty (descriptions). */
function description(f: Findings, path: string, v: Json): string | undefined {
  if (v === '') return v;
  return text(f, path, v, DESCRIPTION_MAX);
}

function integer(f: Findings, path: string, v: Json, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) f.report(path, `must be an integer, got ${describeType(v)}`);
  else if (v < min) f.report(path, `must be >= ${min}`);
  else if (v > max) f.report(path, `must be <= ${max}`);
  else return v;
  return undefined;
}

/** Money per month: whole cents, so every price made of integer quantities is whole cents too. */
function price(f: Findings, path: string, v: Json): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) f.report(path, `must be a number, got ${describeType(v)}`);
  else if (v < 0) f.report(path, 'must be >= 0');
  else if (v > PRICE_MAX) f.report(path, `must be <= ${PRICE_MAX}`);
  else if (Math.abs(Math.round(v * 100) - v * 100) > 1e-6) f.report(path, `must have at most two decimals (whole cents), got ${v}`);
  else return v;
  return undefined;
}

/** A list of at most CATALOGUE_LIST_MAX entries, each checked by `each`. */
function list<T>(f: Findings, path: string, v: Json, each: (item: Json, at: string) => T | undefined, nonEmpty = false): T[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    f.report(path, `must be a list, got ${describeType(v)}`);
    return [];
  }
  if (nonEmpty && v.length === 0) f.report(path, 'must hold at least one entry');
  if (v.length > CATALOGUE_LIST_MAX) {
    f.report(path, `must hold at most ${CATALOGUE_LIST_MAX} entries, got ${v.length}`);
    return [];
  }
  const out: T[] = [];
  v.forEach((item, i) => {
    const checked = each(item, `${path}[${i}]`);
    if (checked !== undefined) out.push(checked);
  });
  return out;
}

const upper = (s: string) => s.toUpperCase();

function range(f: Findings, path: string, v: Json, limits: { min: number; max: number }): Range | undefined {
  const o = fields(f, path, v, ['min', 'max', 'default']);
  if (!o) return undefined;
  const min = integer(f, `${path}.min`, o.min, limits.min, limits.max);
  const max = integer(f, `${path}.max`, o.max, limits.min, limits.max);
  const def = integer(f, `${path}.default`, o.default, limits.min, limits.max);
  if (min === undefined || max === undefined || def === undefined) return undefined;
  const name = path.slice(path.lastIndexOf('.') + 1);
  if (max < min) f.report(`${path}.max`, `must be >= ${name}.min (${min})`);
  else if (def < min || def > max) f.report(`${path}.default`, `must be from ${name}.min to ${name}.max (${min} to ${max})`);
  else return { min, max, default: def };
  return undefined;
}

function prices(f: Findings, path: string, v: Json): ServerPrices | undefined {
  const o = fields(f, path, v, ['base', 'perCpu', 'perMemoryGB', 'perStorageGB', 'perTrafficGB', 'perIPv4']);
  if (!o) return undefined;
  const storage = fields(f, `${path}.perStorageGB`, o.perStorageGB ?? {}, ['MAGNETIC', 'SSD']);
  const p = {
    base: price(f, `${path}.base`, o.base),
    perCpu: price(f, `${path}.perCpu`, o.perCpu),
    perMemoryGB: price(f, `${path}.perMemoryGB`, o.perMemoryGB),
    perStorageGB: { MAGNETIC: price(f, `${path}.perStorageGB.MAGNETIC`, storage?.MAGNETIC), SSD: price(f, `${path}.perStorageGB.SSD`, storage?.SSD) },
    perTrafficGB: price(f, `${path}.perTrafficGB`, o.perTrafficGB),
    perIPv4: price(f, `${path}.perIPv4`, o.perIPv4),
  };
  const all = [p.base, p.perCpu, p.perMemoryGB, p.perStorageGB.MAGNETIC, p.perStorageGB.SSD, p.perTrafficGB, p.perIPv4];
  return all.every((x) => x !== undefined) ? (p as ServerPrices) : undefined;
}

function dataCentre(f: Findings, at: string, v: Json): DataCentre | undefined {
  const o = fields(f, at, v, ['id', 'name', 'location', 'description', 'country', 'city']);
  if (!o) return undefined;
  const dc = {
    id: integer(f, `${at}.id`, o.id, 1, 2_147_483_647),
    name: text(f, `${at}.name`, o.name, CODE_MAX, DC_NAME, 'letters, digits, "_", "." and "-", a letter first (such as RC-AU-GLOBESW1)'),
    location: text(f, `${at}.location`, o.location, CODE_MAX, DC_NAME, 'letters, digits, "_", "." and "-", a letter first (such as GLOBALSWITCH-SYD1)'),
    description: description(f, `${at}.description`, o.description),
    country: text(f, `${at}.country`, o.country, CODE_MAX, COUNTRY, 'an ISO 3166 country code of two capital letters (such as AU)'),
    city: text(f, `${at}.city`, o.city, NAME_MAX),
  };
  return Object.values(dc).every((x) => x !== undefined) ? (dc as DataCentre) : undefined;
}

function productGroup(f: Findings, at: string, v: Json): ProductGroup | undefined {
  const o = fields(f, at, v, ['code', 'name', 'description']);
  if (!o) return undefined;
  const g = {
    code: text(f, `${at}.code`, o.code, CODE_MAX, PRODUCT_CODE, 'letters, digits and underscores, a letter first (such as SERVER_VIRTUAL)'),
    name: text(f, `${at}.name`, o.name, NAME_MAX),
    description: description(f, `${at}.description`, o.description),
  };
  return Object.values(g).every((x) => x !== undefined) ? (g as ProductGroup) : undefined;
}

const RANGE_FIELDS = Object.keys(RANGE_LIMITS) as (keyof typeof RANGE_LIMITS)[];

function product(f: Findings, at: string, v: Json): Product | undefined {
  const o = fields(f, at, v, ['code', 'groupCode', 'name', 'description', 'contractType', 'dcIds', ...RANGE_FIELDS, 'includedTrafficGB', 'prices']);
  if (!o) return undefined;
  const dcIds = list(f, `${at}.dcIds`, o.dcIds, (id, p) => integer(f, p, id, 1, 2_147_483_647), true);
  const seen = new Set<number>();
  (Array.isArray(o.dcIds) ? o.dcIds : []).forEach((id, i) => {
    if (typeof id !== 'number') return;
    if (seen.has(id)) f.report(`${at}.dcIds[${i}]`, `${id} is listed twice`);
    seen.add(id);
  });
  const p: Record<string, unknown> = {
    code: text(f, `${at}.code`, o.code, CODE_MAX, PRODUCT_CODE, 'letters, digits and underscores, a letter first (such as SERVER_VIRTUAL_PERFORMANCE_AU)'),
    groupCode: text(f, `${at}.groupCode`, o.groupCode, CODE_MAX),
    name: text(f, `${at}.name`, o.name, NAME_MAX),
    description: description(f, `${at}.description`, o.description),
    contractType: text(f, `${at}.contractType`, o.contractType, CODE_MAX, PRODUCT_CODE, 'letters, digits and underscores, a letter first (such as VIRTUALSERVER)'),
    dcIds: Array.isArray(o.dcIds) && dcIds.length === o.dcIds.length && dcIds.length > 0 ? dcIds : undefined,
    includedTrafficGB: integer(f, `${at}.includedTrafficGB`, o.includedTrafficGB, 0, RANGE_LIMITS.trafficGB.max),
    prices: o.prices === undefined ? undefined : prices(f, `${at}.prices`, o.prices),
  };
  for (const name of RANGE_FIELDS) p[name] = o[name] === undefined ? undefined : range(f, `${at}.${name}`, o[name], RANGE_LIMITS[name]);
  return Object.values(p).every((x) => x !== undefined) ? (p as unknown as Product) : undefined;
}

function operatingSystem(f: Findings, at: string, v: Json): OperatingSystem | undefined {
  const o = fields(f, at, v, ['code', 'name', 'family', 'price'], ['image']);
  if (!o) return undefined;
  let family: OperatingSystem['family'] | undefined;
  if (o.family !== undefined) {
    if (FAMILIES.includes(o.family as never)) family = o.family as OperatingSystem['family'];
    else f.report(`${at}.family`, `must be one of ${FAMILIES.join(', ')}, got ${describeType(o.family)}`);
  }
  const os: Record<string, unknown> = {
    code: text(f, `${at}.code`, o.code, CODE_MAX, IMAGE_CODE, 'letters, digits, "_", "." and "-", a letter first (such as UBUNTU22.04_64)'),
    name: text(f, `${at}.name`, o.name, NAME_MAX),
    family,
    price: price(f, `${at}.price`, o.price),
  };
  if (Object.values(os).some((x) => x === undefined)) return undefined;
  if (o.image !== undefined) {
    const image = text(f, `${at}.image`, o.image, NAME_MAX, IMAGE_ALIAS, 'an Incus/LXD image alias such as debian/12');
    if (image === undefined) return undefined;
    os.image = image;
  }
  return os as unknown as OperatingSystem;
}

function namedImage(f: Findings, at: string, v: Json): NamedImage | undefined {
  const o = fields(f, at, v, ['code', 'name', 'description']);
  if (!o) return undefined;
  const img = {
    code: text(f, `${at}.code`, o.code, CODE_MAX, IMAGE_CODE, 'letters, digits, "_", "." and "-", a letter first (such as DEBIAN12_NETINST)'),
    name: text(f, `${at}.name`, o.name, NAME_MAX),
    description: description(f, `${at}.description`, o.description),
  };
  return Object.values(img).every((x) => x !== undefined) ? (img as NamedImage) : undefined;
}

function period(f: Findings, at: string, v: Json): Period | undefined {
  const o = fields(f, at, v, ['code', 'months', 'factor']);
  if (!o) return undefined;
  const codes = Object.keys(PERIOD_MONTHS);
  if (o.code !== undefined && !codes.includes(o.code as string)) {
    f.report(`${at}.code`, `must be one of ${codes.join(', ')}, got ${describeType(o.code)}`);
    return undefined;
  }
  const code = o.code as Period['code'] | undefined;
  const months = integer(f, `${at}.months`, o.months, 1, 12);
  if (code !== undefined && months !== undefined && months !== PERIOD_MONTHS[code]) {
    f.report(`${at}.months`, `must be ${PERIOD_MONTHS[code]} for ${code}`);
    return undefined;
  }
  let factor: number | undefined;
  if (o.factor !== undefined) {
    if (typeof o.factor !== 'number' || !Number.isFinite(o.factor)) f.report(`${at}.factor`, `must be a number, got ${describeType(o.factor)}`);
    else if (o.factor <= 0 || o.factor > 1) f.report(`${at}.factor`, 'must be above 0 and at most 1 (the fraction of the undiscounted price charged: 0.9 is 10% off)');
    else factor = o.factor;
  }
  return code !== undefined && months !== undefined && factor !== undefined ? { code, months, factor } : undefined;
}

/** Every problem of a parsed catalogue file, in file order; none means it is a Catalogue. */
export function catalogueProblems(value: Json): string[] {
  return checkCatalogue(value).problems;
}

/** The catalogue a parsed file holds, or every problem found in it. */
export function checkCatalogue(value: Json): { catalogue?: Catalogue; problems: string[] } {
  const f = new Findings();
  const sections = ['currency', 'dataCentres', 'productGroups', 'products', 'operatingSystems', 'periods'];
  const o = fields(f, '', value, sections, ['installImages', 'templates', 'isoImages']);
  if (!o) return { problems: f.list.map((p) => p.replace(/^ /, 'the file ')) };
  const currency = text(f, 'currency', o.currency, CODE_MAX, CURRENCY, 'an ISO 4217 currency code of three capital letters (such as AUD)');
  const dataCentres = list(f, 'dataCentres', o.dataCentres, (v, at) => dataCentre(f, at, v), true);
  const productGroups = list(f, 'productGroups', o.productGroups, (v, at) => productGroup(f, at, v), true);
  const products = list(f, 'products', o.products, (v, at) => product(f, at, v), true);
  const operatingSystems = list(f, 'operatingSystems', o.operatingSystems, (v, at) => operatingSystem(f, at, v), true);
  const installImages = list(f, 'installImages', o.installImages, (v, at) => namedImage(f, at, v));
  const templates = list(f, 'templates', o.templates, (v, at) => namedImage(f, at, v));
  const isoImages = list(f, 'isoImages', o.isoImages, (v, at) => namedImage(f, at, v));
  const periods = list(f, 'periods', o.periods, (v, at) => period(f, at, v), true);

  // Across entries: what look-ups (catalogue.ts CatalogueIndex) need to be unambiguous.
  uniqueField(f, 'dataCentres', o.dataCentres, 'id', (x) => String(x));
  // A DC is found by its name or its location, in one map: no name or location may be another's.
  uniqueAcross(f, 'dataCentres', o.dataCentres, ['name', 'location']);
  uniqueField(f, 'productGroups', o.productGroups, 'code', upper);
  uniqueField(f, 'products', o.products, 'code', upper);
  uniqueField(f, 'operatingSystems', o.operatingSystems, 'code', upper);
  uniqueField(f, 'installImages', o.installImages, 'code', upper);
  uniqueField(f, 'templates', o.templates, 'code', upper);
  uniqueField(f, 'isoImages', o.isoImages, 'code', upper);
  uniqueField(f, 'periods', o.periods, 'code', upper);
  if (periods.length === (Array.isArray(o.periods) ? o.periods.length : -1) && !periods.some((p) => p.code === 'MONTHLY')) {
    f.report('periods', 'must include MONTHLY (prices are per month; orders without a period are monthly)');
  }

  // References: a product's group and data centres must exist.
  const groupCodes = new Set(productGroups.map((g) => upper(g.code)));
  const dcIds = new Set(dataCentres.map((d) => d.id));
  // Only against a list whose every entry passed: a reference to an entry with problems of its own is not reported twice.
  const groupsWhole = Array.isArray(o.productGroups) && productGroups.length === o.productGroups.length;
  const dcsWhole = Array.isArray(o.dataCentres) && dataCentres.length === o.dataCentres.length;
  if (Array.isArray(o.products)) {
    o.products.forEach((p, i) => {
      if (!isObject(p)) return;
      if (typeof p.groupCode === 'string' && groupsWhole && !groupCodes.has(upper(p.groupCode))) {
        f.report(`products[${i}].groupCode`, `${JSON.stringify(p.groupCode)} is not the code of any of productGroups`);
      }
      if (Array.isArray(p.dcIds) && dcsWhole) {
        p.dcIds.forEach((id, j) => {
          if (Number.isInteger(id) && !dcIds.has(id as number)) f.report(`products[${i}].dcIds[${j}]`, `${id} is not the id of any of dataCentres`);
        });
      }
    });
  }
  // Entries that failed their own checks are missing from the lists above: a catalogue only if none did.
  if (f.list.length > 0 || currency === undefined) return { problems: f.list };
  return { catalogue: { currency, dataCentres, productGroups, products, operatingSystems, installImages, templates, isoImages, periods }, problems: [] };
}

/** Reports a field whose value (as `key` compares it) an earlier entry of the list already has. */
function uniqueField(f: Findings, path: string, raw: Json, field: string, key: (v: string) => string): void {
  if (!Array.isArray(raw)) return;
  const first = new Map<string, number>();
  raw.forEach((item, i) => {
    if (!isObject(item)) return;
    const v = item[field];
    if (typeof v !== 'string' && typeof v !== 'number') return;
    const k = key(String(v));
    const earlier = first.get(k);
    if (earlier !== undefined) f.report(`${path}[${i}].${field}`, `${JSON.stringify(v)} is already the ${field} of ${path}[${earlier}]`);
    else first.set(k, i);
  });
}

/** As uniqueField, over several fields sharing one space of values (DC names and locations). */
function uniqueAcross(f: Findings, path: string, raw: Json, names: string[]): void {
  if (!Array.isArray(raw)) return;
  const first = new Map<string, string>();
  raw.forEach((item, i) => {
    if (!isObject(item)) return;
    for (const field of names) {
      const v = item[field];
      if (typeof v !== 'string') continue;
      const k = upper(v);
      const earlier = first.get(k);
      if (earlier !== undefined) f.report(`${path}[${i}].${field}`, `${JSON.stringify(v)} is already ${earlier} (orders name a data centre by either)`);
      else first.set(k, `the ${field} of ${path}[${i}]`);
    }
  });
}

/** Parses and checks the text of a catalogue file; `source` names it in errors. */
export function parseCatalogue(textOfFile: string, source: string): Catalogue {
  let value: Json;
  try {
    value = JSON.parse(textOfFile);
  } catch (err) {
    throw new CatalogueError(source, [`is not JSON: ${(err as Error).message}`]);
  }
  const { catalogue, problems } = checkCatalogue(value);
  if (!catalogue) throw new CatalogueError(source, problems);
  return catalogue;
}

/** Reads and checks the catalogue file at `file` (--infra-catalogue). */
export function readCatalogueFile(file: string): Catalogue {
  let textOfFile: string;
  try {
    const size = statSync(file).size;
    if (size > CATALOGUE_FILE_MAX_BYTES) throw new CatalogueError(file, [`is ${size} bytes, more than the ${CATALOGUE_FILE_MAX_BYTES} a catalogue file may be`]);
    textOfFile = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof CatalogueError) throw err;
    throw new CatalogueError(file, [`cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`]);
  }
  return parseCatalogue(textOfFile, file);
}

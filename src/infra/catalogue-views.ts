// The catalogue as product.*, productgroup.*, pricing.get, dc.* and the image lists show it. No
// client of the provider decodes these objects (infra-clients.md §6 lists product.* as invented), so
// the field names follow the provider's other objects: camelCase, `productCode`, `productGroup`,
// `dcId`, `dcName` as on devices and orders. docs/infra-api.md describes each object.
import type { Catalogue, CatalogueIndex, DataCentre, NamedImage, OperatingSystem, Period, Product, ProductGroup, ServerPrices } from './catalogue.js';

/** Money as a JSON number of whole cents: 0.1 + 0.2 shows as 0.3, not 0.30000000000000004. */
export function money(amount: number): number {
  return Math.round(amount * 100) / 100;
}

/** The country of a product: that of its data centres when they share one, else "". */
function countryOf(p: Product, dcs: Map<number, DataCentre>): { country: string; countries: string[] } {
  const countries = [...new Set(p.dcIds.map((id) => dcs.get(id)?.country).filter((c): c is string => c !== undefined))];
  return { country: countries.length === 1 ? countries[0] : '', countries };
}

function pricesView(prices: ServerPrices, scale = 1) {
  return {
    base: money(prices.base * scale),
    perCpu: money(prices.perCpu * scale),
    perMemoryGB: money(prices.perMemoryGB * scale),
    perStorageGB: { MAGNETIC: money(prices.perStorageGB.MAGNETIC * scale), SSD: money(prices.perStorageGB.SSD * scale) },
    perTrafficGB: money(prices.perTrafficGB * scale),
    perIPv4: money(prices.perIPv4 * scale),
  };
}

export type ProductView = ReturnType<typeof productView>;

function productView(p: Product, id: number, c: Catalogue, dcs: Map<number, DataCentre>) {
  return {
    id,
    productCode: p.code,
    productGroup: p.groupCode,
    name: p.name,
    description: p.description,
    contractType: p.contractType,
    ...countryOf(p, dcs),
    dcIds: p.dcIds,
    locations: p.dcIds.map((d) => dcs.get(d)?.location ?? ''),
    cpu: p.cpu,
    memoryGB: p.memoryGB,
    storageGB: p.storageGB,
    storageTypes: ['MAGNETIC', 'SSD'],
    disks: p.disks,
    trafficGB: p.trafficGB,
    includedTrafficGB: p.includedTrafficGB,
    ipv4: p.ipv4,
    nics: p.nics,
    currency: c.currency,
    prices: pricesView(p.prices),
  };
}

export type ProductGroupView = ReturnType<typeof groupView>;

function groupView(g: ProductGroup, id: number, products: Product[]) {
  return {
    id,
    productGroup: g.code,
    name: g.name,
    description: g.description,
    productCodes: products.filter((p) => p.groupCode.toUpperCase() === g.code.toUpperCase()).map((p) => p.code),
  };
}

export type DcView = ReturnType<typeof dcView>;

function dcView(d: DataCentre, products: Product[]) {
  return {
    dcId: d.id,
    dcName: d.name,
    location: d.location,
    description: d.description,
    country: d.country,
    city: d.city,
    productCodes: products.filter((p) => p.dcIds.includes(d.id)).map((p) => p.code),
  };
}

function osView(o: OperatingSystem, currency: string) {
  return { code: o.code, name: o.name, family: o.family, price: money(o.price), currency };
}

function imageView(i: NamedImage) {
  return { code: i.code, name: i.name, description: i.description };
}

/** One period's prices: each monthly price times the period's months and factor, in whole cents. */
function periodPrices(p: Product, period: Period, oses: OperatingSystem[]) {
  const scale = period.months * period.factor;
  return {
    period: period.code,
    months: period.months,
    factor: period.factor,
    prices: { ...pricesView(p.prices, scale), operatingSystems: Object.fromEntries(oses.map((o) => [o.code, money(o.price * scale)])) },
  };
}

/** What pricing.get answers for a product: its monthly unit prices and those of each period. */
export function pricingView(c: Catalogue, p: Product, periods: Period[]) {
  return {
    productCode: p.code,
    productGroup: p.groupCode,
    currency: c.currency,
    includedTrafficGB: p.includedTrafficGB,
    prices: { ...pricesView(p.prices), operatingSystems: Object.fromEntries(c.operatingSystems.map((o) => [o.code, money(o.price)])) },
    periods: periods.map((period) => periodPrices(p, period, c.operatingSystems)),
  };
}

/** Every view of one catalogue, built once: the catalogue does not change while Keel runs. */
export interface CatalogueViews {
  products: ProductView[];
  productsByCode: Map<string, ProductView>;
  groups: ProductGroupView[];
  groupsByCode: Map<string, ProductGroupView>;
  dcs: DcView[];
  operatingSystems: ReturnType<typeof osView>[];
  installImages: ReturnType<typeof imageView>[];
  templates: ReturnType<typeof imageView>[];
  isoImages: ReturnType<typeof imageView>[];
}

const built = new WeakMap<CatalogueIndex, CatalogueViews>();

/**
 * The views of the catalogue an index holds. Products and product groups are numbered by their
 * place in the catalogue (1, 2 ...): the provider's objects have numeric ids, and a catalogue has no
 * other; codes are what orders use and what stays put when an operator edits the file.
 */
export function catalogueViews(index: CatalogueIndex): CatalogueViews {
  let v = built.get(index);
  if (v) return v;
  const c = index.catalogue;
  const dcs = new Map(c.dataCentres.map((d) => [d.id, d]));
  const products = c.products.map((p, i) => productView(p, i + 1, c, dcs));
  const groups = c.productGroups.map((g, i) => groupView(g, i + 1, c.products));
  v = {
    products,
    productsByCode: new Map(products.map((p) => [p.productCode.toUpperCase(), p])),
    groups,
    groupsByCode: new Map(groups.map((g) => [g.productGroup.toUpperCase(), g])),
    dcs: c.dataCentres.map((d) => dcView(d, c.products)),
    operatingSystems: c.operatingSystems.map((o) => osView(o, c.currency)),
    installImages: c.installImages.map(imageView),
    templates: c.templates.map(imageView),
    isoImages: c.isoImages.map(imageView),
  };
  built.set(index, v);
  return v;
}

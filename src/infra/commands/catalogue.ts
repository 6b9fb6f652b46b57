// The catalogue's read commands: product.*, productgroup.*, pricing.get, dc.*, operatingsystem.getall,
// installimage.getall, template.getall, isoimage.getall. The catalogue is configuration, the same for
// every customer (catalogue.ts, catalogue-file.ts), so these read no store and need no permission
// beyond valid credentials (access 'authenticated'): a Terraform key holding only device.* and
// order.* still has to learn product codes, DCs and operating systems to write an order.
import Type, { type Static, type TProperties } from 'typebox';
import { defineCommand, requirePrincipal, type Call, type Command, type Result } from '../command.js';
import { infraErrors, infraProblems } from '../errors.js';
import { pagingParams, RES_WINDOW_MAX } from '../params.js';
import { canActFor } from '../customer-scope.js';
import { catalogueViews, pricingView } from '../catalogue-views.js';

// Catalogues are short: a list answers whole unless the caller asks for a window.
const Paging = pagingParams(RES_WINDOW_MAX);
const Code = (what: string) => Type.String({ minLength: 1, maxLength: 200, description: what });
const PERIODS = ['MONTHLY', 'QUARTERLY', 'SEMIANNUALLY', 'ANNUALLY'];

/**
 * A list in the provider's `count` + plural key dialect (infra-clients.md §9.1), with Keel's `data`
 * and `matches` beside them: `count` and `matches` are the total, whatever the window.
 */
function listResult<T>(message: string, key: string, all: T[], p: { resStart?: number; resWindow?: number }): Result {
  const start = p.resStart ?? 0;
  const page = all.slice(start, start + (p.resWindow ?? RES_WINDOW_MAX));
  return { message, data: page, matches: all.length, top: { count: all.length, [key]: page } };
}

/** A code or a numeric id (as the provider's ids, from 1), whichever the reference is. */
function byCodeOrId<T extends { id: number }>(list: T[], byCode: Map<string, T>, ref: string | number): T | undefined {
  const s = String(ref).trim();
  if (/^\d+$/.test(s)) return list.find((x) => x.id === Number(s));
  return byCode.get(s.toUpperCase());
}

const contains = (value: string, part: string | undefined) => part === undefined || value.toUpperCase().includes(part.trim().toUpperCase());

/** The parameters of a list of named images (install images, templates, ISO images). */
const ImageListParams = Type.Object({ ...Paging, code: Type.Optional(Code('only those whose code contains this')) });

/** The handler of a list of named images: its code filter and paging. */
function imageList(message: string, key: string, pick: (v: ReturnType<typeof catalogueViews>) => { code: string }[]) {
  return async (call: Call, p: Static<typeof ImageListParams>): Promise<Result> => {
    const all = pick(catalogueViews(call.services.catalogue)).filter((i) => contains(i.code, p.code));
    return listResult(message, key, all, p);
  };
}

const ProductRef: TProperties = {
  code: Type.Optional(Code('the product code (such as SERVER_VIRTUAL_PERFORMANCE_AU), or its numeric id')),
  id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Code('product id')], { description: 'the product id, or its code' })),
  productCode: Type.Optional(Code('the product code, as order.create names it')),
};

export const catalogueCommands: Command[] = [
  defineCommand({
    cmd: 'product.getall',
    summary: 'List the products on sale: codes, sizes, data centres and monthly prices',
    rest: { method: 'GET', path: '/products' },
    access: 'authenticated',
    params: Type.Object({
      ...Paging,
      productGroup: Type.Optional(Code('only products of this product group (groupCode is the same)')),
      groupCode: Type.Optional(Code('only products of this product group')),
      country: Type.Optional(Type.String({ minLength: 2, maxLength: 2, description: 'only products sold in this country (ISO 3166 code, such as AU)' })),
      dcId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Code('DC name or location')], { description: 'only products sold in this data centre: its id, name or location' })),
      code: Type.Optional(Code('only products whose code contains this (SERVER_VIRTUAL_BUDGET)')),
    }),
    async handler(call, p) {
      const views = catalogueViews(call.services.catalogue);
      const group = (p.productGroup ?? p.groupCode)?.trim().toUpperCase();
      const country = p.country?.toUpperCase();
      // An unknown DC is a filter nothing matches, as an unknown country is.
      const dc = p.dcId === undefined ? undefined : (call.services.catalogue.dataCentre(p.dcId)?.id ?? -1);
      const all = views.products.filter(
        (x) =>
          (group === undefined || x.productGroup.toUpperCase() === group) &&
          (country === undefined || x.countries.includes(country)) &&
          (dc === undefined || x.dcIds.includes(dc)) &&
          contains(x.productCode, p.code),
      );
      return listResult('Products Retrieved Successfully', 'products', all, p);
    },
  }),
  defineCommand({
    cmd: 'product.get',
    summary: 'One product, by code or id',
    rest: { method: 'GET', path: '/products/{code}' },
    access: 'authenticated',
    params: Type.Object(ProductRef),
    async handler(call, p) {
      const ref = p.code ?? p.productCode ?? p.id;
      if (ref === undefined) throw infraErrors.missingParameterDetail({ name: 'code', detail: 'the product code, or its id' });
      const views = catalogueViews(call.services.catalogue);
      const product = byCodeOrId(views.products, views.productsByCode, ref as string | number);
      if (!product) throw infraErrors.productNotFound();
      return { message: 'Product Retrieved Successfully', data: product, top: { product } };
    },
  }),
  defineCommand({
    cmd: 'productgroup.getall',
    summary: 'List the product groups and the product codes in each',
    rest: { method: 'GET', path: '/productgroups' },
    access: 'authenticated',
    params: Type.Object({ ...Paging }),
    async handler(call, p) {
      return listResult('Product Groups Retrieved Successfully', 'productGroups', catalogueViews(call.services.catalogue).groups, p);
    },
  }),
  defineCommand({
    cmd: 'productgroup.get',
    summary: 'One product group, by code or id',
    rest: { method: 'GET', path: '/productgroups/{code}' },
    access: 'authenticated',
    params: Type.Object({
      code: Type.Optional(Code('the product group code (such as SERVER_VIRTUAL), or its numeric id')),
      id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Code('product group id')], { description: 'the product group id, or its code' })),
      productGroup: Type.Optional(Code('the product group code')),
    }),
    async handler(call, p) {
      const ref = p.code ?? p.productGroup ?? p.id;
      if (ref === undefined) throw infraErrors.missingParameterDetail({ name: 'code', detail: 'the product group code, or its id' });
      const views = catalogueViews(call.services.catalogue);
      const productGroup = byCodeOrId(views.groups, views.groupsByCode, ref);
      if (!productGroup) throw infraErrors.productGroupNotFound();
      return { message: 'Product Group Retrieved Successfully', data: productGroup, top: { productGroup } };
    },
  }),
  defineCommand({
    cmd: 'pricing.get',
    summary: "A product's prices: per month, and for each billing period",
    rest: { method: 'GET', path: '/pricing' },
    access: 'authenticated',
    params: Type.Object({
      productCode: Type.Optional(Code('the product code (such as SERVER_VIRTUAL_PERFORMANCE_AU)')),
      code: Type.Optional(Code('the product code (productCode is the same)')),
      period: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: `only this billing period: ${PERIODS.join(', ')} (any case)` })),
      customerId: Type.Optional(Type.Integer({ minimum: 1, description: "the caller's customer or one below it; prices are the same for every customer" })),
    }),
    async handler(call, p) {
      const code = p.productCode ?? p.code;
      if (code === undefined) throw infraErrors.missingParameterDetail({ name: 'productCode', detail: 'the product code, such as SERVER_VIRTUAL_PERFORMANCE_AU' });
      const { customerId } = requirePrincipal(call);
      // Another customer answers exactly like one that does not exist (customer-scope.ts).
      if (p.customerId !== undefined && !(await canActFor(call.services.db.kysely, customerId, p.customerId))) throw infraErrors.customerNotFound();
      const index = call.services.catalogue;
      const product = index.product(code.trim());
      if (!product) throw infraErrors.productNotFound();
      let periods = index.catalogue.periods;
      if (p.period !== undefined) {
        periods = periods.filter((x) => x.code === p.period!.trim().toUpperCase());
        if (periods.length === 0) {
          throw infraErrors.invalidParameter({ name: 'period', problem: infraProblems.periodUnknown({ periods: index.catalogue.periods.map((x) => x.code).join(', ') }) });
        }
      }
      const pricing = pricingView(index.catalogue, product, periods);
      return { message: 'Pricing Retrieved Successfully', data: pricing, top: { pricing } };
    },
  }),
  defineCommand({
    cmd: 'dc.getall',
    summary: 'List the data centres: ids, DC names, locations and the products sold in each',
    rest: { method: 'GET', path: '/dcs' },
    access: 'authenticated',
    params: Type.Object({
      ...Paging,
      country: Type.Optional(Type.String({ minLength: 2, maxLength: 2, description: 'only data centres in this country (ISO 3166 code, such as AU)' })),
      productCode: Type.Optional(Code('only data centres where this product is sold')),
    }),
    async handler(call, p) {
      const country = p.country?.toUpperCase();
      const product = p.productCode?.trim().toUpperCase();
      const all = catalogueViews(call.services.catalogue).dcs.filter(
        (d) => (country === undefined || d.country === country) && (product === undefined || d.productCodes.some((c) => c.toUpperCase() === product)),
      );
      return listResult('Data Centres Retrieved Successfully', 'dcs', all, p);
    },
  }),
  defineCommand({
    cmd: 'dc.get',
    summary: 'One data centre, by id, DC name or location',
    rest: { method: 'GET', path: '/dcs/{id}' },
    access: 'authenticated',
    params: Type.Object({
      id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Code('DC name or location')], { description: 'the DC id, name (RC-AU-GLOBESW1) or location (GLOBALSWITCH-SYD1)' })),
      dcId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Code('DC name or location')], { description: 'the same as id' })),
    }),
    async handler(call, p) {
      const ref = p.id ?? p.dcId;
      if (ref === undefined) throw infraErrors.missingParameterDetail({ name: 'id', detail: 'the DC id, name or location' });
      const found = call.services.catalogue.dataCentre(ref);
      const dc = found && catalogueViews(call.services.catalogue).dcs.find((d) => d.dcId === found.id);
      if (!dc) throw infraErrors.dataCentreNotFound();
      return { message: 'Data Centre Retrieved Successfully', data: dc, top: { dc } };
    },
  }),
  defineCommand({
    cmd: 'operatingsystem.getall',
    summary: 'List the operating systems servers can be installed with (install.operatingSystem)',
    rest: { method: 'GET', path: '/operatingsystems' },
    access: 'authenticated',
    params: Type.Object({
      ...Paging,
      family: Type.Optional(Type.Union([Type.Literal('linux'), Type.Literal('windows'), Type.Literal('none')], { description: 'only this family' })),
      code: Type.Optional(Code('only those whose code contains this')),
    }),
    async handler(call, p) {
      const all = catalogueViews(call.services.catalogue).operatingSystems.filter((o) => (p.family === undefined || o.family === p.family) && contains(o.code, p.code));
      return listResult('Operating Systems Retrieved Successfully', 'operatingSystems', all, p);
    },
  }),
  defineCommand({
    cmd: 'installimage.getall',
    summary: 'List the install images servers can be installed from',
    rest: { method: 'GET', path: '/installimages' },
    access: 'authenticated',
    params: ImageListParams,
    handler: imageList('Install Images Retrieved Successfully', 'installImages', (v) => v.installImages),
  }),
  defineCommand({
    cmd: 'template.getall',
    summary: 'List the templates servers can be installed with (install.template)',
    rest: { method: 'GET', path: '/templates' },
    access: 'authenticated',
    params: ImageListParams,
    handler: imageList('Templates Retrieved Successfully', 'templates', (v) => v.templates),
  }),
  defineCommand({
    cmd: 'isoimage.getall',
    summary: 'List the ISO images a server can be installed from by its customer',
    rest: { method: 'GET', path: '/isoimages' },
    access: 'authenticated',
    params: ImageListParams,
    handler: imageList('ISO Images Retrieved Successfully', 'isoImages', (v) => v.isoImages),
  }),
];

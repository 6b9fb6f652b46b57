// Black-box: the catalogue's read commands (product.*, productgroup.*, pricing.get, dc.*, the image
// lists) through json.php and REST on a real `keel serve`, over the built-in catalogue and over an
// operator's file (--infra-catalogue, KEEL_INFRA_CATALOGUE); a bad file stops `keel serve`, and
// `keel admin catalogue --print | --check`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, runKeel, startInfra, startServer, storageArgs, type Storage } from '../helpers/server.js';
import { InfraClient, send } from '../helpers/infra-client.js';
import { DEFAULT_CATALOGUE, type Catalogue } from '../../src/infra/catalogue.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'keel-catalogue-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

await forEachEngine('catalogue commands', (engine) => {
  let api: InfraClient;
  let infraUrl: string;
  let stop: () => Promise<void>;

  before(async () => {
    const started = await startInfra(engine);
    ({ api, stop } = started);
    infraUrl = started.server.infraUrl;
  });
  after(() => stop?.());

  it('lists products in both dialects: count and products, data and matches', async () => {
    const cmd = await api.cmd('product.getall');
    assert.equal(cmd.body.code, 'OK', cmd.text);
    assert.equal(cmd.body.message, 'Products Retrieved Successfully');
    assert.equal(cmd.body.count, DEFAULT_CATALOGUE.products.length);
    assert.equal(cmd.body.matches, DEFAULT_CATALOGUE.products.length);
    assert.deepEqual(cmd.body.data, cmd.body.products);
    const p = cmd.body.products.find((x: { productCode: string }) => x.productCode === 'SERVER_VIRTUAL_PERFORMANCE_AU');
    assert.deepEqual(
      { id: p.id, productGroup: p.productGroup, country: p.country, dcIds: p.dcIds, locations: p.locations, contractType: p.contractType, currency: p.currency },
      {
        id: DEFAULT_CATALOGUE.products.findIndex((x) => x.code === 'SERVER_VIRTUAL_PERFORMANCE_AU') + 1,
        productGroup: 'SERVER_VIRTUAL',
        country: 'AU',
        dcIds: [19, 20, 21, 22],
        locations: ['GLOBALSWITCH-SYD1', 'EQUINIX-SYD1', 'VOCUS530-MEL1', 'VOCUSIX-PER1'],
        contractType: 'VIRTUALSERVER',
        currency: 'AUD',
      },
    );
    assert.deepEqual(p.cpu, { min: 1, max: 32, default: 1 });
    assert.deepEqual(p.prices, { base: 10, perCpu: 7, perMemoryGB: 5, perStorageGB: { MAGNETIC: 0.08, SSD: 0.2 }, perTrafficGB: 0.05, perIPv4: 3 });
    const rest = await api.rest('GET', '/products');
    assert.equal(rest.body.matches, DEFAULT_CATALOGUE.products.length);
    assert.deepEqual(rest.body.data, cmd.body.products);
    assert.equal(rest.body.products, undefined, 'REST answers in data');
  });

  it('filters products by group, country, data centre and code, and pages them', async () => {
    const codes = async (params: Record<string, unknown>) => {
      const r = await api.cmd('product.getall', params);
      assert.equal(r.body.code, 'OK', r.text);
      assert.equal(r.body.count, r.body.matches);
      return r.body.products.map((x: { productCode: string }) => x.productCode);
    };
    assert.deepEqual(await codes({ country: 'nz' }), ['SERVER_VIRTUAL_BUDGET_NZ', 'SERVER_VIRTUAL_PERFORMANCE_NZ', 'SERVER_VIRTUAL_STORAGE_NZ', 'SERVER_VIRTUAL_TRAFFIC_NZ']);
    assert.deepEqual(await codes({ dcId: 40 }), await codes({ country: 'SG' }));
    assert.deepEqual(await codes({ dcId: 'GLOBALSWITCH-SYD1' }), await codes({ dcId: 'rc-au-globesw1' }));
    assert.equal((await codes({ dcId: 'GLOBALSWITCH-SYD1' })).length, 4);
    assert.deepEqual(await codes({ dcId: 'NOWHERE-1' }), []);
    assert.deepEqual(await codes({ code: 'budget_a' }), ['SERVER_VIRTUAL_BUDGET_AU']);
    assert.equal((await codes({ productGroup: 'server_virtual' })).length, DEFAULT_CATALOGUE.products.length);
    assert.deepEqual(await codes({ groupCode: 'NONE' }), []);
    const page = await api.rest('GET', '/products?country=AU&resStart=1&resWindow=2');
    assert.equal(page.body.matches, 4);
    assert.deepEqual(
      page.body.data.map((x: { productCode: string }) => x.productCode),
      ['SERVER_VIRTUAL_PERFORMANCE_AU', 'SERVER_VIRTUAL_STORAGE_AU'],
    );
    const beyond = await api.cmd('product.getall', { resStart: 1000 });
    assert.deepEqual(beyond.body.products, []);
    assert.equal(beyond.body.count, DEFAULT_CATALOGUE.products.length);
    const bad = await api.cmd('product.getall', { resWindow: 0 });
    assert.equal(bad.body.code, 'FAULT');
    assert.deepEqual(bad.body.error, { resWindow: 'must be at least 1' });
  });

  it('gets one product by code (any case) or id, by command and REST', async () => {
    const byCode = await api.cmd('product.get', { code: 'server_virtual_budget_au' });
    assert.equal(byCode.body.code, 'OK', byCode.text);
    assert.equal(byCode.body.product.productCode, 'SERVER_VIRTUAL_BUDGET_AU');
    assert.deepEqual(byCode.body.data, byCode.body.product);
    const id = byCode.body.product.id;
    assert.deepEqual((await api.cmd('product.get', { id })).body.product, byCode.body.product);
    assert.deepEqual((await api.cmd('product.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' })).body.product, byCode.body.product);
    assert.deepEqual((await api.rest('GET', '/products/SERVER_VIRTUAL_BUDGET_AU')).body.data, byCode.body.product);
    assert.deepEqual((await api.rest('GET', `/products/${id}`)).body.data, byCode.body.product);
    // Clients spell families singular and plural, under /api/<ver>/ too.
    const v29 = new InfraClient(infraUrl, api.auth, '/api/v2.9');
    assert.deepEqual((await v29.rest('GET', '/product/SERVER_VIRTUAL_BUDGET_AU')).body.data, byCode.body.product);
    assert.deepEqual((await api.cmd('product.get', { code: 'SERVER_VIRTUAL_NOPE' })).body, { code: 'ERROR', message: 'Could not find product' });
    assert.deepEqual((await api.rest('GET', '/products/9999')).body, { code: 'ERROR', message: 'Could not find product' });
    const missing = await api.cmd('product.get', {});
    assert.equal(missing.body.code, 'FAULT');
    assert.deepEqual(missing.body.error, { code: 'is required: the product code, or its id' });
  });

  it('lists and gets product groups', async () => {
    const all = await api.cmd('productgroup.getall');
    assert.equal(all.body.count, 1);
    const [group] = all.body.productGroups;
    assert.deepEqual({ id: group.id, productGroup: group.productGroup, codes: group.productCodes.length }, { id: 1, productGroup: 'SERVER_VIRTUAL', codes: DEFAULT_CATALOGUE.products.length });
    assert.deepEqual((await api.rest('GET', '/productgroups')).body.data, all.body.productGroups);
    assert.deepEqual((await api.cmd('productgroup.get', { code: 'server_virtual' })).body.productGroup, group);
    assert.deepEqual((await api.cmd('productgroup.get', { id: 1 })).body.productGroup, group);
    assert.deepEqual((await api.rest('GET', '/productgroups/SERVER_VIRTUAL')).body.data, group);
    assert.deepEqual((await api.rest('GET', '/productgroups/2')).body, { code: 'ERROR', message: 'Could not find product group' });
  });

  it("prices a product per month and per period, in the catalogue's currency", async () => {
    const r = await api.cmd('pricing.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' });
    assert.equal(r.body.code, 'OK', r.text);
    const pricing = r.body.pricing;
    assert.deepEqual(r.body.data, pricing);
    assert.equal(pricing.productCode, 'SERVER_VIRTUAL_BUDGET_AU');
    assert.equal(pricing.currency, 'AUD');
    assert.deepEqual(pricing.prices.perStorageGB, { MAGNETIC: 0.05, SSD: 0.15 });
    assert.equal(pricing.prices.operatingSystems.WINDOWS2022STD, 30);
    assert.deepEqual(
      pricing.periods.map((p: { period: string; months: number; factor: number }) => [p.period, p.months, p.factor]),
      [
        ['MONTHLY', 1, 1],
        ['QUARTERLY', 3, 0.97],
        ['SEMIANNUALLY', 6, 0.95],
        ['ANNUALLY', 12, 0.9],
      ],
    );
    const quarterly = pricing.periods[1].prices;
    // 5 * 3 * 0.97 = 14.55; 0.15 * 3 * 0.97 = 0.4365 -> 0.44; 30 * 3 * 0.97 = 87.3.
    assert.equal(quarterly.base, 14.55);
    assert.equal(quarterly.perStorageGB.SSD, 0.44);
    assert.equal(quarterly.operatingSystems.WINDOWS2022STD, 87.3);
    assert.equal(pricing.periods[3].prices.perCpu, 43.2);
    const one = await api.rest('GET', '/pricing?productCode=server_virtual_budget_au&period=annually');
    assert.deepEqual(one.body.data.periods, [pricing.periods[3]]);
    const badPeriod = await api.cmd('pricing.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU', period: 'WEEKLY' });
    assert.deepEqual(badPeriod.body, {
      code: 'FAULT',
      message: 'Invalid parameter period: must be one of MONTHLY, QUARTERLY, SEMIANNUALLY, ANNUALLY',
      error: { period: 'must be one of MONTHLY, QUARTERLY, SEMIANNUALLY, ANNUALLY' },
    });
    assert.deepEqual((await api.cmd('pricing.get', { productCode: 'NOPE' })).body, { code: 'ERROR', message: 'Could not find product' });
    assert.equal((await api.cmd('pricing.get', {})).body.message, 'Missing parameter productCode: the product code, such as SERVER_VIRTUAL_PERFORMANCE_AU');
  });

  it("takes the caller's own customerId for pricing, and answers another's as missing", async () => {
    const me = (await api.cmd('customer.get')).body.customer.id;
    const own = await api.cmd('pricing.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU', customerId: me });
    assert.equal(own.body.code, 'OK', own.text);
    const lower = await api.cmd('pricing.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU', customerid: String(me) });
    assert.equal(lower.body.code, 'OK', lower.text);
    assert.deepEqual((await api.cmd('pricing.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU', customerId: me + 1000 })).body, { code: 'ERROR', message: 'Could not find customer' });
  });

  it('lists data centres with their products, and gets one by id, name or location', async () => {
    const all = await api.cmd('dc.getall');
    assert.equal(all.body.count, DEFAULT_CATALOGUE.dataCentres.length);
    const syd = all.body.dcs.find((d: { dcId: number }) => d.dcId === 19);
    assert.deepEqual(syd, {
      dcId: 19,
      dcName: 'RC-AU-GLOBESW1',
      location: 'GLOBALSWITCH-SYD1',
      description: 'Global Switch Sydney',
      country: 'AU',
      city: 'Sydney',
      productCodes: ['SERVER_VIRTUAL_BUDGET_AU', 'SERVER_VIRTUAL_PERFORMANCE_AU', 'SERVER_VIRTUAL_STORAGE_AU', 'SERVER_VIRTUAL_TRAFFIC_AU'],
    });
    assert.deepEqual((await api.rest('GET', '/dcs')).body.data, all.body.dcs);
    assert.deepEqual((await api.cmd('dc.getall', { country: 'au' })).body.count, 4);
    assert.deepEqual(
      (await api.cmd('dc.getall', { productCode: 'SERVER_VIRTUAL_BUDGET_SG' })).body.dcs.map((d: { dcName: string }) => d.dcName),
      ['RC-SG-EQUINIX1'],
    );
    for (const ref of [19, '19', 'RC-AU-GLOBESW1', 'globalswitch-syd1']) assert.deepEqual((await api.cmd('dc.get', { id: ref })).body.dc, syd, String(ref));
    assert.deepEqual((await api.cmd('dc.get', { dcId: 19 })).body.dc, syd);
    assert.deepEqual((await api.rest('GET', '/dcs/19')).body.data, syd);
    assert.deepEqual((await api.rest('GET', '/dc/GLOBALSWITCH-SYD1')).body.data, syd);
    assert.deepEqual((await api.cmd('dc.get', { id: 77 })).body, { code: 'ERROR', message: 'Could not find data centre' });
    assert.equal((await api.cmd('dc.get', {})).body.code, 'FAULT');
  });

  it('lists operating systems, install images, templates and ISO images', async () => {
    const oses = await api.cmd('operatingsystem.getall');
    assert.equal(oses.body.count, DEFAULT_CATALOGUE.operatingSystems.length);
    assert.deepEqual(
      oses.body.operatingSystems.find((o: { code: string }) => o.code === 'WINDOWS2022STD'),
      { code: 'WINDOWS2022STD', name: 'Windows Server 2022 Standard', family: 'windows', price: 30, currency: 'AUD' },
    );
    assert.deepEqual(
      (await api.rest('GET', '/operatingsystems?family=windows')).body.data.map((o: { code: string }) => o.code),
      ['WINDOWS2022STD', 'WINDOWS2016STD'],
    );
    assert.equal((await api.cmd('operatingsystem.getall', { family: 'bsd' })).body.code, 'FAULT');
    for (const [cmd, restPath, key, list] of [
      ['installimage.getall', '/installimages', 'installImages', DEFAULT_CATALOGUE.installImages],
      ['template.getall', '/templates', 'templates', DEFAULT_CATALOGUE.templates],
      ['isoimage.getall', '/isoimages', 'isoImages', DEFAULT_CATALOGUE.isoImages],
    ] as const) {
      const c = await api.cmd(cmd);
      assert.equal(c.body.code, 'OK', c.text);
      assert.deepEqual(c.body[key], list, cmd);
      assert.equal(c.body.count, list.length);
      const r = await api.rest('GET', restPath);
      assert.deepEqual(r.body.data, list, restPath);
      assert.equal(r.body.matches, list.length);
      assert.deepEqual((await api.cmd(cmd, { resWindow: 1, resStart: 1 })).body[key], list.slice(1, 2));
    }
  });

  it('answers any valid credentials, whatever their permissions, and refuses none', async () => {
    const made = await api.cmd('apiuser.create', { name: 'terraform', permissions: ['dns.domain.getall'] });
    assert.equal(made.body.code, 'OK', made.text);
    const narrow = new InfraClient(infraUrl, { basic: [made.body.apiuser.uuid, made.body.apiuser.secret] });
    for (const cmd of ['product.getall', 'productgroup.getall', 'dc.getall', 'operatingsystem.getall', 'installimage.getall', 'template.getall', 'isoimage.getall']) {
      assert.equal((await narrow.cmd(cmd)).body.code, 'OK', cmd);
    }
    assert.equal((await narrow.cmd('pricing.get', { productCode: 'SERVER_VIRTUAL_BUDGET_AU' })).body.code, 'OK');
    assert.equal((await narrow.cmd('apiuser.getall')).body.code, 'ACCESS_DENIED', 'the key is narrow indeed');
    const anonymous = await send(`${api.base}/products`, { method: 'GET' });
    assert.deepEqual(anonymous.body, { code: 'ACCESS_DENIED', message: 'Access Denied' });
    const perms = (await api.cmd('apiuser.permissions.system')).body.permissions as string[];
    assert.ok(!perms.includes('product.getall') && !perms.includes('product.*'), 'no permission exists for a command anyone authenticated may call');
    const granted = await api.cmd('apiuser.create', { permissions: ['product.getall'] });
    assert.deepEqual(granted.body.error, { permissions: 'unknown permission "product.getall" (see apiuser.permissions.system)' });
  });
});

/** A small catalogue of the operator's own: one DC, one product, one OS, a monthly period. */
function operatorCatalogue(): Catalogue {
  return {
    currency: 'NZD',
    dataCentres: [{ id: 7, name: 'KE-NZ-WLG1', location: 'KEEL-WLG1', description: 'Wellington rack', country: 'NZ', city: 'Wellington' }],
    productGroups: [{ code: 'VPS', name: 'VPS', description: '' }],
    products: [
      {
        ...structuredClone(DEFAULT_CATALOGUE.products[0]),
        code: 'VPS_SMALL_NZ',
        groupCode: 'VPS',
        name: 'Small VPS',
        dcIds: [7],
        prices: { base: 1.1, perCpu: 2.2, perMemoryGB: 0.01, perStorageGB: { MAGNETIC: 0.01, SSD: 0.02 }, perTrafficGB: 0, perIPv4: 1 },
      },
    ],
    operatingSystems: [{ code: 'DEBIAN12_64', name: 'Debian 12', family: 'linux', price: 0, image: 'debian/12' }],
    installImages: [],
    templates: [],
    isoImages: [],
    periods: [
      { code: 'MONTHLY', months: 1, factor: 1 },
      { code: 'ANNUALLY', months: 12, factor: 0.75 },
    ],
  };
}

// The store plays no part in what a catalogue file changes, so one engine shows it.
describe("an operator's catalogue file [sqlite: the file changes no stored data]", () => {
  let storage: Storage;
  let basic: [string, string] | undefined;
  const good = path.join(tmp, 'operator.json');
  const bad = path.join(tmp, 'bad.json');
  before(async () => {
    storage = await createStorage('sqlite');
    writeFileSync(good, JSON.stringify(operatorCatalogue()));
    const spoilt = operatorCatalogue() as Catalogue & { products: Record<string, any>[] };
    spoilt.products[0].cpu = { min: 4, max: 2, default: 2 };
    spoilt.products[0].dcIds = [8];
    writeFileSync(bad, JSON.stringify(spoilt));
  });
  after(() => storage?.dispose());

  it('is what every catalogue command answers from (--infra-catalogue)', async () => {
    const server = await startServer(storage, ['--infra-catalogue', good]);
    try {
      basic = [server.secrets!.apiUuid, server.secrets!.apiSecret];
      const api = new InfraClient(server.infraUrl, { basic });
      const products = await api.cmd('product.getall');
      assert.deepEqual(
        products.body.products.map((p: { productCode: string; country: string; currency: string }) => [p.productCode, p.country, p.currency]),
        [['VPS_SMALL_NZ', 'NZ', 'NZD']],
      );
      assert.deepEqual((await api.rest('GET', '/dcs/KEEL-WLG1')).body.data.productCodes, ['VPS_SMALL_NZ']);
      assert.deepEqual((await api.cmd('dc.get', { id: 19 })).body, { code: 'ERROR', message: 'Could not find data centre' });
      assert.equal((await api.cmd('productgroup.getall')).body.productGroups[0].productGroup, 'VPS');
      const pricing = (await api.cmd('pricing.get', { productCode: 'VPS_SMALL_NZ' })).body.pricing;
      assert.equal(pricing.currency, 'NZD');
      // 1.1 * 12 * 0.75 = 9.9 (not 9.900000000000002); 0.01 * 9 = 0.09.
      assert.deepEqual([pricing.periods[1].prices.base, pricing.periods[1].prices.perMemoryGB], [9.9, 0.09]);
      assert.deepEqual((await api.cmd('pricing.get', { productCode: 'VPS_SMALL_NZ', period: 'QUARTERLY' })).body.error, { period: 'must be one of MONTHLY, ANNUALLY' });
      assert.deepEqual((await api.cmd('isoimage.getall')).body.isoImages, []);
    } finally {
      await server.stop();
    }
  });

  it('is read from KEEL_INFRA_CATALOGUE too', async () => {
    const server = await startServer(storage, [], { KEEL_INFRA_CATALOGUE: good });
    try {
      // The store was set up by the first start of this suite: its key is not printed again.
      const api = new InfraClient(server.infraUrl, { basic: basic! });
      const r = await api.cmd('product.getall');
      assert.deepEqual(
        r.body.products.map((p: { productCode: string }) => p.productCode),
        ['VPS_SMALL_NZ'],
      );
    } finally {
      await server.stop();
    }
  });

  it('stops keel serve with the problem, naming the file and the JSON path', async () => {
    const r = await runKeel(['serve', ...storageArgs(storage), '--infra-catalogue', bad]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.equal(r.stderr, `keel: catalogue ${bad}: products[0].cpu.max must be >= cpu.min (4) (and 1 more; keel admin catalogue --check lists them all)\n`);
    const missing = await runKeel(['serve', ...storageArgs(storage)], { KEEL_INFRA_CATALOGUE: path.join(tmp, 'nope.json') });
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, `keel: catalogue ${path.join(tmp, 'nope.json')}: cannot be read: ENOENT\n`);
  });

  it('is checked by keel admin catalogue --check, every problem listed', async () => {
    const r = await runKeel(['admin', 'catalogue', '--check', bad]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, `${bad}: 2 problems:\n  products[0].cpu.max must be >= cpu.min (4)\n  products[0].dcIds[0] 8 is not the id of any of dataCentres\n`);
    const json = await runKeel(['admin', 'catalogue', '--check', bad, '--json']);
    assert.deepEqual(JSON.parse(json.stdout), { file: bad, valid: false, problems: ['products[0].cpu.max must be >= cpu.min (4)', 'products[0].dcIds[0] 8 is not the id of any of dataCentres'] });
    const ok = await runKeel(['admin', 'catalogue', '--check', good, '--json']);
    assert.equal(ok.code, 0);
    assert.deepEqual(JSON.parse(ok.stdout), {
      file: good,
      valid: true,
      counts: { dataCentres: 1, productGroups: 1, products: 1, operatingSystems: 1, installImages: 0, templates: 0, isoImages: 0, periods: 2 },
    });
    const neither = await runKeel(['admin', 'catalogue']);
    assert.equal(neither.code, 2);
    assert.equal(neither.stderr, 'keel: keel admin catalogue takes one of --print or --check FILE\n');
  });

  it('starts from keel admin catalogue --print, the built-in catalogue, which checks clean', async () => {
    const r = await runKeel(['admin', 'catalogue', '--print']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), DEFAULT_CATALOGUE);
    const file = path.join(tmp, 'printed.json');
    writeFileSync(file, r.stdout);
    const check = await runKeel(['admin', 'catalogue', '--check', file]);
    assert.equal(check.code, 0, check.stdout);
    assert.ok(check.stdout.includes(`: a valid catalogue: ${DEFAULT_CATALOGUE.dataCentres.length} dataCentres, 1 productGroups, ${DEFAULT_CATALOGUE.products.length} products, `), check.stdout);
  });
});

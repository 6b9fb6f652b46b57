// Black-box: loadbalancer.* as the Go client (rackcorp-api-go loadbalancer.go) sends and decodes it:
// every answer checked field by field against the client's Go types, the client's own create ->
// update -> get -> delete flow, scoping by customer, validation naming the field with nothing
// written, and the per-customer bound.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { goProblems, networkWorld, type GoType, type NetworkWorld } from '../helpers/network-world.js';
import { MAX_LOAD_BALANCERS_PER_CUSTOMER } from '../../src/infra/commands/loadbalancer.js';

/** rackcorp-api-go existingLoadBalancer (loadbalancer.go @3a1afd8), with its nested types. */
const BACKEND: GoType = {
  name: 'string',
  hostname: 'string',
  port: 'int',
  tls: 'bool',
  timeout: 'int',
  weight: 'int',
  uuid: 'string',
  ttl: 'int',
  tcpproxy: 'int',
  portmask: ['int'],
  created: 'int',
  modified: 'int',
};
const PATTERN: GoType = {
  id: 'int',
  regularexpression: 'string',
  minttl: 'int',
  cachetime: 'int',
  maxttl: 'int',
  checkttl: 'int',
  overrideexpire: 'bool',
  browserrefresh: 'string',
  forceexpiremins: 'int',
  redirectcode: 'int',
  redirecturl: 'string',
  iprestrictions: [{ ip: 'string', action: 'string' }],
};
const LB: GoType = {
  id: 'int',
  name: 'string',
  customerid: 'int',
  hostname: 'string',
  stdname: 'string',
  hostsource: 'string',
  type: 'string',
  hostsourceforcehost: 'string',
  backend_hostname_force: 'string',
  datecreated: 'int',
  datemodified: 'int',
  autoupgradehttps: 'bool',
  version: 'int',
  scope: 'string',
  scope_networkid: 'int',
  scope_instances: 'int',
  monthlyallocationmb: 'int',
  monthlyusagemb: 'int',
  trafficremainingmb: 'int',
  acl: [{ id: 'int', acl_data: 'string', acl_action: 'string' }],
  aliases: ['string'],
  allowdirectssl: 'bool',
  backends: [BACKEND],
  balancemode: 'string',
  checkmode: 'string',
  headerspasson: 'bool',
  ports: ['int'],
  refreshpatterns: [PATTERN],
  regions: ['int'],
  tls: 'bool',
};

function decodes(spec: GoType, value: unknown) {
  assert.deepEqual(goProblems(spec, value), [], JSON.stringify(value));
}

/** The create request of the Go client's integration test (TestIntegrationLoadBalancerCreateUpdateDelete). */
const GO_CREATE = {
  balancemode: 'roundrobin',
  checkmode: 'TCP',
  name: 'TestIntegrationLoadBalancerCreateUpdateDelete',
  scope: 'global',
  type: 'TCP',
  ports: [80, 443],
  backends: [
    { name: 'backendhttp', hostname: '192.0.2.0', port: 8080, weight: 100, portmask: [80] },
    { name: 'backendhttps', hostname: '192.0.2.0', port: 8443, weight: 100, portmask: [443] },
  ],
};

await forEachEngine('loadbalancer commands', (engine) => {
  let w: NetworkWorld;
  before(async () => {
    w = await networkWorld(engine);
  });
  after(() => w?.close());

  it("runs the Go client's create, update, get, getall and delete, every answer decoding into its types", async () => {
    const made = await w.owner.cmd('loadbalancer.create', GO_CREATE);
    assert.equal(made.code, 'OK', JSON.stringify(made));
    decodes(LB, made.loadbalancers);
    assert.deepEqual(made.loadbalancer, made.loadbalancers, 'the doc page reads `loadbalancer`, Go reads `loadbalancers`: the same object');
    const lb = made.loadbalancers;
    assert.equal(lb.customerid, w.owner.customerId);
    assert.deepEqual(lb.ports, [80, 443]);
    assert.deepEqual(lb.regions, []);
    assert.equal(lb.type, 'TCP');
    assert.equal(lb.scope, 'global');
    assert.deepEqual(
      lb.backends.map((b: any) => [b.name, b.port, b.weight, b.tls, b.portmask]),
      [
        ['backendhttp', 8080, 100, false, [80]],
        ['backendhttps', 8443, 100, false, [443]],
      ],
    );
    for (const b of lb.backends) assert.match(b.uuid, /^[0-9a-f-]{36}$/);

    // Update as Go sends it: the whole object back, backends with their uuids, ports always.
    const { backends } = lb;
    const changed = await w.owner.cmd('loadbalancer.update', {
      id: lb.id,
      name: `${GO_CREATE.name}-updated`,
      balancemode: 'least',
      checkmode: 'TCP',
      scope: 'global',
      type: 'TCP',
      ports: [80, 443, 8443],
      backends: backends.map((b: any) => ({ name: b.name, hostname: b.hostname, port: b.port, timeout: b.timeout, weight: b.weight, uuid: b.uuid, portmask: b.portmask })),
    });
    assert.equal(changed.code, 'OK', JSON.stringify(changed));
    decodes(LB, changed.loadbalancers);
    assert.equal(changed.loadbalancers.name, `${GO_CREATE.name}-updated`);
    assert.equal(changed.loadbalancers.balancemode, 'least');
    assert.equal(changed.loadbalancers.version, lb.version + 1);
    assert.deepEqual(changed.loadbalancers.ports, [80, 443, 8443]);
    assert.deepEqual(
      changed.loadbalancers.backends.map((b: any) => [b.uuid, b.created]),
      backends.map((b: any) => [b.uuid, b.created]),
      'a backend sent back with its uuid stays that backend',
    );

    const got = await w.owner.cmd('loadbalancer.get', { id: lb.id });
    assert.equal(got.code, 'OK');
    decodes(LB, got.loadbalancers);
    assert.deepEqual(got.loadbalancers, changed.loadbalancers);
    assert.deepEqual(got.loadbalancer, got.loadbalancers);

    const all = await w.owner.cmd('loadbalancer.getall', {});
    decodes({ count: 'int', loadbalancers: [LB] }, all);
    assert.ok(all.loadbalancers.some((x: any) => x.id === lb.id));

    // A nil Go slice: update sends "ports": null and "backends": [] — none of either.
    const emptied = await w.owner.cmd('loadbalancer.update', { id: lb.id, ports: null, backends: [] });
    assert.equal(emptied.code, 'OK', JSON.stringify(emptied));
    assert.deepEqual(emptied.loadbalancers.ports, []);
    assert.deepEqual(emptied.loadbalancers.backends, []);
    decodes(LB, emptied.loadbalancers);

    const gone = await w.owner.cmd('loadbalancer.delete', { id: lb.id });
    assert.deepEqual(gone, { code: 'OK', message: 'Load Balancer Deleted Successfully' });
    assert.deepEqual(await w.owner.cmd('loadbalancer.get', { id: lb.id }), { code: 'ERROR', message: 'Could not find load balancer' });
  });

  it('keeps the CDN settings Go sends (refresh patterns with omitted fields, aliases, regions) and answers them in full', async () => {
    const made = await w.owner.cmd('loadbalancer.create', {
      type: 'CDN',
      name: 'cdn',
      aliases: ['www.example.com', 'static.example.com'],
      autoupgradehttps: true,
      regions: [1, '2'],
      refreshpatterns: [
        { regularexpression: '\\.jpg$', cachetime: 3600, browserrefresh: 'CACHE', iprestrictions: [{ ip: '192.0.2.0/24' }] },
        { redirectcode: 301, redirecturl: 'https://example.com/' },
      ],
      ports: [80, 443],
    });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    const lb = made.loadbalancers;
    decodes(LB, lb);
    assert.deepEqual([lb.type, lb.aliases, lb.autoupgradehttps, lb.regions], ['CDN', ['www.example.com', 'static.example.com'], true, [1, 2]]);
    assert.deepEqual(
      lb.refreshpatterns.map((p: any) => [p.id, p.regularexpression, p.cachetime, p.redirectcode, p.iprestrictions]),
      [
        [1, '\\.jpg$', 3600, 0, [{ ip: '192.0.2.0/24', action: '' }]],
        [2, '', 0, 301, []],
      ],
    );
    await w.owner.cmd('loadbalancer.delete', { id: lb.id });
  });

  it('serves REST /loadbalancer[/{id}] singular and plural, under /api/<ver>/', async () => {
    const made = await w.owner.rest('POST', '/loadbalancer', { name: 'rest', type: 'HTTP', ports: [80], regions: ['3', 7], backends: [{ hostname: 'web1.example.com', port: 80 }] });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    decodes(LB, made.data);
    assert.deepEqual(made.data.regions, [3, 7], 'regions as numeric strings are stored as numbers');
    const id = made.data.id;
    const got = await w.owner.rest('GET', `/loadbalancers/${id}`);
    assert.equal(got.data.name, 'rest');
    const put = await w.owner.rest('PUT', `/loadbalancer/${id}`, { name: 'rest2', ports: [443], backends: [{ hostname: '2001:db8::1', port: 443, tls: true }] });
    assert.equal(put.code, 'OK', JSON.stringify(put));
    assert.equal(put.data.tls, true);
    const list = await w.owner.rest('GET', '/loadbalancers?name=REST2');
    assert.equal(list.count, undefined, 'REST answers carry data, not the command-style keys');
    assert.deepEqual(
      list.data.map((x: any) => x.id),
      [id],
    );
    assert.equal((await w.owner.rest('DELETE', `/loadbalancer/${id}`)).code, 'OK');
    assert.equal((await w.owner.rest('GET', `/loadbalancer/${id}`)).message, 'Could not find load balancer');
  });

  it('pages getall with count as the total, filters, and never answers null lists', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await w.child.cmd('loadbalancer.create', { name: `page-${i}` })).loadbalancers.id);
    const all = await w.child.cmd('loadbalancer.getall', {});
    assert.equal(all.count, 5);
    const page = await w.child.cmd('loadbalancer.getall', { resStart: 1, resWindow: 2 });
    assert.equal(page.count, 5);
    assert.deepEqual(
      page.loadbalancers.map((x: any) => x.id),
      ids.slice(1, 3),
    );
    const none = await w.child.cmd('loadbalancer.getall', { name: 'no such' });
    assert.deepEqual([none.count, none.loadbalancers], [0, []]);
    assert.equal((await w.child.cmd('loadbalancer.getall', { id: ids[2] })).loadbalancers[0].id, ids[2]);
    const host = (await w.child.cmd('loadbalancer.get', { id: ids[0] })).loadbalancers.hostname;
    assert.equal((await w.child.cmd('loadbalancer.getall', { hostname: host })).count, 1);
    assert.equal((await w.child.cmd('loadbalancer.getall', { resWindow: 0 })).code, 'FAULT');
    for (const id of ids) assert.equal((await w.child.cmd('loadbalancer.delete', { id })).code, 'OK');
  });

  it("scopes by customer: another customer's load balancer answers like a missing one; a parent sees its sub-customer's", async () => {
    const mine = (await w.other.cmd('loadbalancer.create', { name: 'private' })).loadbalancers;
    for (const t of [w.owner, w.child]) {
      assert.deepEqual(await t.cmd('loadbalancer.get', { id: mine.id }), { code: 'ERROR', message: 'Could not find load balancer' });
      assert.deepEqual(await t.cmd('loadbalancer.update', { id: mine.id, name: 'hijack', ports: [], backends: [] }), { code: 'ERROR', message: 'Could not find load balancer' });
      assert.deepEqual(await t.cmd('loadbalancer.delete', { id: mine.id }), { code: 'ERROR', message: 'Could not find load balancer' });
      assert.ok(!(await t.cmd('loadbalancer.getall', { resWindow: 1000 })).loadbalancers.some((x: any) => x.id === mine.id));
    }
    assert.equal((await w.other.cmd('loadbalancer.get', { id: mine.id })).loadbalancers.name, 'private');
    // The owner creates for its sub-customer (customerid, any case) and sees it; the child sees it too.
    const forChild = await w.owner.cmd('loadbalancer.create', { name: 'for child', customerId: w.child.customerId });
    assert.equal(forChild.loadbalancers.customerid, w.child.customerId);
    assert.equal((await w.child.cmd('loadbalancer.get', { id: forChild.loadbalancers.id })).code, 'OK');
    assert.equal((await w.owner.cmd('loadbalancer.getall', { customerid: w.child.customerId })).count, 1);
    // Neither the child nor the owner may act for a customer outside its scope.
    assert.deepEqual(await w.child.cmd('loadbalancer.create', { name: 'up', customerid: w.owner.customerId }), { code: 'ERROR', message: 'Could not find customer' });
    assert.deepEqual(await w.owner.cmd('loadbalancer.create', { name: 'across', customerid: w.other.customerId }), { code: 'ERROR', message: 'Could not find customer' });
    assert.equal((await w.owner.cmd('loadbalancer.getall', { customerid: w.other.customerId })).count, 0);
    await w.owner.cmd('loadbalancer.delete', { id: forChild.loadbalancers.id });
    await w.other.cmd('loadbalancer.delete', { id: mine.id });
  });

  it("scopes a load balancer to one of its customer's networks, which then cannot be deleted under it", async () => {
    const net = (await w.owner.cmd('network.ip.create', { network: '10.60.0.0/24', dcId: 19 })).network;
    const theirs = (await w.other.cmd('network.ip.create', { network: '10.61.0.0/24', dcId: 19 })).network;
    assert.deepEqual(await w.owner.cmd('loadbalancer.create', { scope: 'local', scope_networkid: theirs.NETWORKID }), { code: 'ERROR', message: 'Could not find network' });
    const lb = (await w.owner.cmd('loadbalancer.create', { scope: 'local', scope_networkid: net.NETWORKID, scope_instances: 2 })).loadbalancers;
    decodes(LB, lb);
    assert.deepEqual([lb.scope, lb.scope_networkid, lb.scope_instances], ['local', net.NETWORKID, 2]);
    assert.deepEqual(await w.owner.cmd('network.ip.delete', { id: net.NETWORKID }), {
      code: 'ERROR',
      message: `Network 10.60.0.0/24 is the scope of load balancer ${lb.id}; change or delete that first`,
    });
    const moved = await w.owner.cmd('loadbalancer.update', { id: lb.id, scope: 'global', scope_networkid: 0, ports: [], backends: [] });
    assert.deepEqual([moved.loadbalancers.scope, moved.loadbalancers.scope_networkid, moved.loadbalancers.scope_instances], ['global', 0, 2]);
    assert.equal((await w.owner.cmd('network.ip.delete', { id: net.NETWORKID })).code, 'OK');
    assert.equal((await w.other.cmd('network.ip.delete', { id: theirs.NETWORKID })).code, 'OK');
    await w.owner.cmd('loadbalancer.delete', { id: lb.id });
  });

  it('applies updates made at once one after the other, or refuses one saying so', async () => {
    const lb = (await w.owner.cmd('loadbalancer.create', { name: 'race', ports: [1] })).loadbalancers;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => w.owner.cmd('loadbalancer.update', { id: lb.id, ports: [100 + i], backends: [] })));
    const ok = answers.filter((a) => a.code === 'OK');
    assert.ok(ok.length >= 1);
    for (const a of answers) if (a.code !== 'OK') assert.deepEqual(a, { code: 'ERROR', message: `Load balancer ${lb.id} changed while this request ran; nothing was changed, try again` });
    const now = (await w.owner.cmd('loadbalancer.get', { id: lb.id })).loadbalancers;
    assert.equal(now.version, 1 + ok.length, 'each accepted update counted once');
    await w.owner.cmd('loadbalancer.delete', { id: lb.id });
  });

  it('refuses bad values with a FAULT naming the field, writing nothing', async () => {
    const before = await w.count('load_balancers');
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'FTP' }, 'type'],
      [{ balancemode: 'fastest' }, 'balancemode'],
      [{ checkmode: 'ICMP' }, 'checkmode'],
      [{ ports: [0] }, 'ports'],
      [{ ports: [65536] }, 'ports'],
      [{ ports: ['http'] }, 'ports'],
      [{ regions: [null] }, 'regions'],
      [{ regions: ['x'] }, 'regions'],
      [{ regions: [0] }, 'regions'],
      [{ backends: [{ hostname: 'a.example', port: 70000 }] }, 'backends'],
      [{ backends: [{ port: 80 }] }, 'backends.0.hostname'],
      [{ backends: [{ hostname: 'a.example', port: 80 }, { hostname: 'b.example' }] }, 'backends.1.port'],
      [{ backends: [{ hostname: 'bad host!', port: 80 }] }, 'backends.0.hostname'],
      [{ backends: [{ hostname: 'a.example', port: 80, tcpproxy: 1 }] }, 'backends'],
      [{ aliases: ['ok.example', '-bad-.example'] }, 'aliases.1'],
      [{ scope: 'planet' }, 'scope'],
      [{ autoupgradehttps: 'maybe' }, 'autoupgradehttps'],
      [{ ports: Array.from({ length: 65 }, (_, i) => i + 1) }, 'ports'],
    ];
    for (const [params, field] of cases) {
      const r = await w.owner.cmd('loadbalancer.create', { name: 'bad', ...params });
      assert.equal(r.code, 'FAULT', `${JSON.stringify(params)} -> ${JSON.stringify(r)}`);
      assert.ok(r.error && field in r.error, `${JSON.stringify(params)} names ${field}: ${JSON.stringify(r)}`);
    }
    assert.deepEqual(await w.owner.cmd('loadbalancer.create', { scope_networkid: 99999 }), { code: 'ERROR', message: 'Could not find network' });
    assert.equal(await w.count('load_balancers'), before, 'nothing written');
    // An update with one bad value changes nothing either.
    const lb = (await w.owner.cmd('loadbalancer.create', { name: 'keep', ports: [80] })).loadbalancers;
    const bad = await w.owner.cmd('loadbalancer.update', { id: lb.id, name: 'changed', ports: [80], backends: [{ hostname: 'x.example', port: -1 }] });
    assert.equal(bad.code, 'FAULT');
    assert.deepEqual((await w.owner.cmd('loadbalancer.get', { id: lb.id })).loadbalancers, lb);
    await w.owner.cmd('loadbalancer.delete', { id: lb.id });
  });

  it(`holds at most ${MAX_LOAD_BALANCERS_PER_CUSTOMER} load balancers a customer`, async () => {
    const db = w.infra.ctx.db.kysely;
    const rows = Array.from({ length: MAX_LOAD_BALANCERS_PER_CUSTOMER - 1 }, (_, i) => ({
      customer_id: w.other.customerId,
      name: `bulk${i}`,
      hostname: `bulk${i}.example`,
      type: 'HTTP',
      config: '{}',
      version: 1,
      date_created: 0,
      date_modified: 0,
    }));
    await db.insertInto('load_balancers').values(rows).execute();
    assert.equal((await w.other.cmd('loadbalancer.create', { name: 'last' })).code, 'OK');
    const over = await w.other.cmd('loadbalancer.create', { name: 'one too many' });
    assert.deepEqual(over, { code: 'ERROR', message: `Limit reached: a customer has at most ${MAX_LOAD_BALANCERS_PER_CUSTOMER} load balancers; delete one first` });
    assert.equal((await w.other.cmd('loadbalancer.getall', {})).count, MAX_LOAD_BALANCERS_PER_CUSTOMER);
    // Rows written with a bare config still decode into the Go types (defaults fill the rest).
    decodes(LB, (await w.other.cmd('loadbalancer.getall', { resWindow: 1 })).loadbalancers[0]);
    // Another customer is not affected by this one's bound.
    assert.equal((await w.owner.cmd('loadbalancer.create', { name: 'still fine' })).code, 'OK');
  });
});

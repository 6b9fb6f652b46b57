// loadbalancer.*: load balancers as the Go client (rackcorp-api-go loadbalancer.go) sends and decodes
// them. Its decoding is strict: `id`, `customerid` and each of `regions` are numbers (or numeric
// strings, never null); `scope_networkid`, `scope_instances`, `monthlyusagemb`, `trafficremainingmb`,
// `datecreated`/`datemodified` plain numbers; booleans JSON booleans. getall answers top `count` and
// `loadbalancers` (a list); get, create and update answer top `loadbalancers` as ONE object (what the
// client reads) and `loadbalancer` (what the provider's doc page shows). Keel keeps the configuration;
// no traffic is balanced.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import Type, { type Static } from 'typebox';
import type { Selectable } from 'kysely';
import { defineCommand, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { pagingParams } from '../params.js';
import { unixSeconds } from '../../platform/clock.js';
import type { Queryable } from '../../platform/db/database.js';
import type { InfraTables, LoadBalancerRow } from '../tables.js';
import { actingCustomer, seenCustomers } from '../network/scope.js';
import { NETWORK_LOCK } from './network.js';

export const MAX_LOAD_BALANCERS_PER_CUSTOMER = 100;
/** Lists inside one load balancer, bounded so a row stays small. */
export const MAX_LB_BACKENDS = 64;
export const MAX_LB_PORTS = 64;
export const MAX_LB_ITEMS = 32;

const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Ports = Type.Array(Port, { maxItems: MAX_LB_PORTS, description: 'listening ports, 1 to 65535' });
const LbType = Type.Union(['CDN', 'GLB', 'HTTP', 'TCP', 'UDP'].map((t) => Type.Literal(t)));
const BalanceMode = Type.Union(['roundrobin', 'least', 'random'].map((t) => Type.Literal(t)));
/** "" is "always online" (no health check), as the provider's wiki says. */
const CheckMode = Type.Union(['HTTP', 'TCP', ''].map((t) => Type.Literal(t)));
const Scope = Type.Union([Type.Literal('global'), Type.Literal('local')]);
const Host = Type.String({ maxLength: 253 });
const Seconds = Type.Integer({ minimum: 0, maximum: 86400 * 365 });

const Backend = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  // Required, but checked in checkedBackends: params.ts would name a nested missing field without its place.
  hostname: Type.Optional(Host),
  port: Type.Optional(Port),
  tls: Type.Optional(Type.Boolean()),
  timeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600, description: 'seconds' })),
  weight: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  uuid: Type.Optional(Type.String({ maxLength: 64, description: "an existing backend's uuid keeps it (and its created time); otherwise a new one is made" })),
  ttl: Type.Optional(Seconds),
  tcpproxy: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(2)], { description: 'PROXY protocol: 0 none, 2 version 2' })),
  portmask: Type.Optional(Type.Array(Port, { maxItems: MAX_LB_PORTS })),
});
const Backends = Type.Array(Backend, { maxItems: MAX_LB_BACKENDS });

const RefreshPattern = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 0 })),
  regularexpression: Type.Optional(Type.String({ maxLength: 1000 })),
  minttl: Type.Optional(Seconds),
  cachetime: Type.Optional(Seconds),
  maxttl: Type.Optional(Seconds),
  checkttl: Type.Optional(Seconds),
  overrideexpire: Type.Optional(Type.Boolean()),
  overridelastmodified: Type.Optional(Type.Boolean()),
  ignoresetcookie: Type.Optional(Type.Boolean()),
  ignorecachecontrol: Type.Optional(Type.Boolean()),
  cacheauthorizedpages: Type.Optional(Type.Boolean()),
  browserrefresh: Type.Optional(Type.Union(['CACHE', 'IFMODIFIEDSINCE', 'REFRESH', ''].map((t) => Type.Literal(t)))),
  forceexpiremins: Type.Optional(Type.Integer({ minimum: 0, maximum: 525600 })),
  pseudostreamflv: Type.Optional(Type.Boolean()),
  pseudostreammp4: Type.Optional(Type.Boolean()),
  cgiignoreparams: Type.Optional(Type.Boolean()),
  nocompression: Type.Optional(Type.Boolean()),
  redirectcode: Type.Optional(Type.Integer({ minimum: 0, maximum: 399 })),
  redirecturl: Type.Optional(Type.String({ maxLength: 2000 })),
  redirectpreserveparams: Type.Optional(Type.Boolean()),
  redirectforcehttps: Type.Optional(Type.Boolean()),
  iprestrictiondefaultpolicy: Type.Optional(Type.String({ maxLength: 20 })),
  iprestrictions: Type.Optional(Type.Array(Type.Object({ ip: Type.Optional(Type.String({ maxLength: 100 })), action: Type.Optional(Type.String({ maxLength: 20 })) }), { maxItems: MAX_LB_ITEMS })),
});

/** What create and update both take (update: all optional, backends and ports replace the lists). */
const Settings = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  type: Type.Optional(LbType),
  balancemode: Type.Optional(BalanceMode),
  checkmode: Type.Optional(CheckMode),
  checkmethod: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('HEAD'), Type.Literal('')])),
  checkurl: Type.Optional(Type.String({ maxLength: 2000 })),
  checkhost: Type.Optional(Type.String({ maxLength: 253 })),
  scope: Type.Optional(Scope),
  scope_instances: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  scope_networkid: Type.Optional(Type.Integer({ minimum: 0, description: "0, or one of the customer's IP networks (network.ip.*)" })),
  aliases: Type.Optional(Type.Array(Host, { maxItems: MAX_LB_ITEMS })),
  autoupgradehttps: Type.Optional(Type.Boolean()),
  backend_hostname: Type.Optional(Type.String({ maxLength: 253 })),
  backend_hostname_force: Type.Optional(Type.String({ maxLength: 253 })),
  regions: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { maxItems: MAX_LB_ITEMS, description: 'region ids: numbers or numeric strings' })),
  refreshpatterns: Type.Optional(Type.Array(RefreshPattern, { maxItems: MAX_LB_ITEMS })),
};

type BackendIn = Static<typeof Backend>;
type PatternIn = Static<typeof RefreshPattern>;

interface StoredBackend {
  name: string;
  hostname: string;
  port: number;
  tls: boolean;
  timeout: number;
  weight: number;
  uuid: string;
  ttl: number;
  tcpproxy: number;
  portmask: number[];
  created: number;
  modified: number;
}

/** The `config` column: everything of the object but id, customer, name, hostname, type and times. */
interface LoadBalancerConfig {
  balancemode: string;
  checkmode: string;
  checkmethod: string;
  checkurl: string;
  checkhost: string;
  scope: string;
  scope_instances: number;
  scope_networkid: number;
  aliases: string[];
  autoupgradehttps: boolean;
  backend_hostname: string;
  backend_hostname_force: string;
  regions: number[];
  ports: number[];
  backends: StoredBackend[];
  refreshpatterns: ReturnType<typeof fullPattern>[];
}

const DEFAULT_CONFIG: LoadBalancerConfig = {
  balancemode: 'roundrobin',
  checkmode: '',
  checkmethod: '',
  checkurl: '',
  checkhost: '',
  scope: 'global',
  scope_instances: 0,
  scope_networkid: 0,
  aliases: [],
  autoupgradehttps: false,
  backend_hostname: '',
  backend_hostname_force: '',
  regions: [],
  ports: [],
  backends: [],
  refreshpatterns: [],
};

function fullPattern(p: PatternIn, index: number) {
  return {
    id: p.id || index + 1,
    regularexpression: p.regularexpression ?? '',
    minttl: p.minttl ?? 0,
    cachetime: p.cachetime ?? 0,
    maxttl: p.maxttl ?? 0,
    checkttl: p.checkttl ?? 0,
    overrideexpire: p.overrideexpire ?? false,
    overridelastmodified: p.overridelastmodified ?? false,
    ignoresetcookie: p.ignoresetcookie ?? false,
    ignorecachecontrol: p.ignorecachecontrol ?? false,
    cacheauthorizedpages: p.cacheauthorizedpages ?? false,
    browserrefresh: p.browserrefresh ?? 'CACHE',
    forceexpiremins: p.forceexpiremins ?? 0,
    pseudostreamflv: p.pseudostreamflv ?? false,
    pseudostreammp4: p.pseudostreammp4 ?? false,
    cgiignoreparams: p.cgiignoreparams ?? false,
    nocompression: p.nocompression ?? false,
    redirectcode: p.redirectcode ?? 0,
    redirecturl: p.redirecturl ?? '',
    redirectpreserveparams: p.redirectpreserveparams ?? false,
    redirectforcehttps: p.redirectforcehttps ?? false,
    iprestrictiondefaultpolicy: p.iprestrictiondefaultpolicy ?? '',
    iprestrictions: (p.iprestrictions ?? []).map((r) => ({ ip: r.ip ?? '', action: r.action ?? '' })),
  };
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
function isHost(text: string): boolean {
  if (isIP(text)) return true;
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  return name.length > 0 && name.length <= 253 && name.split('.').every((l) => LABEL.test(l));
}

/** Backends as stored: host names checked, defaults filled, known uuids kept with their created time. */
function checkedBackends(list: BackendIn[], before: StoredBackend[], now: number): StoredBackend[] {
  const known = new Map(before.map((b) => [b.uuid, b]));
  return list.map((b, i) => {
    if (b.hostname === undefined) throw infraErrors.missingParameter({ name: `backends.${i}.hostname` });
    if (b.port === undefined) throw infraErrors.missingParameter({ name: `backends.${i}.port` });
    if (!isHost(b.hostname)) throw infraErrors.invalidParameter({ name: `backends.${i}.hostname`, problem: P.hostOrAddress() });
    const old = b.uuid ? known.get(b.uuid) : undefined;
    if (old) known.delete(old.uuid);
    return {
      name: b.name ?? '',
      hostname: b.hostname,
      port: b.port,
      tls: b.tls ?? false,
      timeout: b.timeout ?? 30,
      weight: b.weight ?? 100,
      uuid: old?.uuid ?? randomUUID(),
      ttl: b.ttl ?? 0,
      tcpproxy: b.tcpproxy ?? 0,
      portmask: b.portmask ?? [],
      created: old?.created ?? now,
      modified: now,
    };
  });
}

function checkedAliases(list: string[]): string[] {
  list.forEach((a, i) => {
    if (!isHost(a)) throw infraErrors.invalidParameter({ name: `aliases.${i}`, problem: P.hostOrAddress() });
  });
  return list;
}

type SettingsIn = { [K in keyof typeof Settings]?: Static<(typeof Settings)[K]> } & { backends?: BackendIn[] | null; ports?: number[] | null };

/** The stored configuration after applying what the request sent (checked) over `base`. */
async function applySettings(db: Queryable<InfraTables>, customerId: number, base: LoadBalancerConfig, p: SettingsIn, now: number): Promise<LoadBalancerConfig> {
  const c: LoadBalancerConfig = { ...base };
  for (const key of ['balancemode', 'checkmode', 'checkmethod', 'checkurl', 'checkhost', 'scope', 'scope_instances', 'backend_hostname', 'backend_hostname_force', 'autoupgradehttps'] as const) {
    if (p[key] !== undefined) (c as unknown as Record<string, unknown>)[key] = p[key];
  }
  for (const [i, host] of [p.backend_hostname, p.backend_hostname_force, p.checkhost].entries()) {
    if (host) {
      if (!isHost(host)) throw infraErrors.invalidParameter({ name: ['backend_hostname', 'backend_hostname_force', 'checkhost'][i], problem: P.hostOrAddress() });
    }
  }
  if (p.aliases !== undefined) c.aliases = checkedAliases(p.aliases);
  if (p.regions !== undefined) c.regions = [...new Set(p.regions)];
  // Go's update always sends `ports` and `backends`; a nil slice arrives as null, meaning none.
  if (p.ports !== undefined) c.ports = p.ports ?? [];
  if (p.backends !== undefined) c.backends = checkedBackends(p.backends ?? [], base.backends, now);
  if (p.refreshpatterns !== undefined) c.refreshpatterns = p.refreshpatterns.map(fullPattern);
  if (p.scope_networkid !== undefined && p.scope_networkid !== 0) {
    // A network of the load balancer's own customer, or it answers like a missing one.
    const net = await db.selectFrom('ip_networks').select('id').where('id', '=', p.scope_networkid).where('customer_id', '=', customerId).executeTakeFirst();
    if (!net) throw infraErrors.ipNetworkNotFound();
  }
  if (p.scope_networkid !== undefined) c.scope_networkid = p.scope_networkid;
  return c;
}

function present(row: Selectable<LoadBalancerRow>, stdName: string) {
  const c: LoadBalancerConfig = { ...DEFAULT_CONFIG, ...(JSON.parse(row.config) as Partial<LoadBalancerConfig>) };
  return {
    id: row.id,
    name: row.name,
    customerid: row.customer_id,
    hostname: row.hostname,
    stdname: stdName,
    hostsource: c.backend_hostname,
    type: row.type,
    hostsourceforcehost: c.backend_hostname_force,
    backend_hostname_force: c.backend_hostname_force,
    status: 'ACTIVE',
    datecreated: row.date_created,
    datemodified: row.date_modified,
    autoupgradehttps: c.autoupgradehttps,
    version: row.version,
    scope: c.scope,
    scope_networkid: c.scope_networkid,
    scope_instances: c.scope_instances,
    monthlyallocationmb: 0,
    monthlyusagemb: 0,
    trafficremainingmb: 0,
    acl: [],
    aliases: c.aliases,
    allowdirectssl: false,
    backends: c.backends,
    balancemode: c.balancemode,
    checkmode: c.checkmode,
    checkmethod: c.checkmethod,
    checkurl: c.checkurl,
    checkhost: c.checkhost,
    headerspasson: false,
    ports: c.ports,
    refreshpatterns: c.refreshpatterns,
    regions: c.regions,
    tls: c.backends.some((b) => b.tls),
  };
}

async function stdNames(db: Queryable<InfraTables>, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('customers')
    .select(['id', 'std_name'])
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r.std_name]));
}

async function presentOne(call: Call, row: Selectable<LoadBalancerRow>) {
  const names = await stdNames(call.services.db.kysely, [row.customer_id]);
  return present(row, names.get(row.customer_id) ?? '');
}

async function findSeen(call: Call, id: number): Promise<Selectable<LoadBalancerRow>> {
  const customers = await seenCustomers(call);
  const row = await call.services.db.kysely.selectFrom('load_balancers').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.loadBalancerNotFound();
  return row;
}

function oneAnswer(message: string, loadbalancer: ReturnType<typeof present>) {
  return { message, data: loadbalancer, top: { loadbalancers: loadbalancer, loadbalancer } };
}

const Id = Type.Integer({ minimum: 1, description: 'load balancer id' });
const CustomerId = Type.Integer({ minimum: 1, description: "customer id (customerid or customerId); defaults to the caller's" });

export const loadbalancerCommands: Command[] = [
  defineCommand({
    cmd: 'loadbalancer.getall',
    summary: "List the customer's load balancers (and its sub-customers')",
    rest: { method: 'GET', path: '/loadbalancer' },
    params: Type.Object({
      ...pagingParams(20),
      id: Type.Optional(Id),
      customerid: Type.Optional(CustomerId),
      name: Type.Optional(Type.String({ maxLength: 200, description: 'only load balancers whose name contains this (any case)' })),
      stdname: Type.Optional(Type.String({ maxLength: 200, description: "the customer's standard name" })),
      hostname: Type.Optional(Type.String({ maxLength: 253 })),
    }),
    async handler(call, p) {
      const customers = await seenCustomers(call, p.customerid);
      const db = call.services.db.kysely;
      let rows: Selectable<LoadBalancerRow>[] = [];
      if (customers.length) {
        let q = db.selectFrom('load_balancers').selectAll().where('customer_id', 'in', customers);
        if (p.id !== undefined) q = q.where('id', '=', p.id);
        if (p.hostname !== undefined) q = q.where('hostname', '=', p.hostname.toLowerCase());
        rows = await q.orderBy('id').execute();
      }
      const names = await stdNames(
        db,
        rows.map((r) => r.customer_id),
      );
      if (p.name !== undefined) rows = rows.filter((r) => r.name.toLowerCase().includes(p.name!.toLowerCase()));
      if (p.stdname !== undefined) rows = rows.filter((r) => names.get(r.customer_id)?.toLowerCase() === p.stdname!.toLowerCase());
      const start = p.resStart ?? 0;
      const list = rows.slice(start, start + (p.resWindow ?? 20)).map((r) => present(r, names.get(r.customer_id) ?? ''));
      return { message: 'Load Balancers Retrieved Successfully', data: list, top: { count: rows.length, loadbalancers: list } };
    },
  }),
  defineCommand({
    cmd: 'loadbalancer.get',
    summary: 'One load balancer',
    rest: { method: 'GET', path: '/loadbalancer/{id}' },
    params: Type.Object({ id: Id }),
    async handler(call, p) {
      return oneAnswer('Load Balancer Retrieved Successfully', await presentOne(call, await findSeen(call, p.id)));
    },
  }),
  defineCommand({
    cmd: 'loadbalancer.create',
    summary: 'Create a load balancer',
    rest: { method: 'POST', path: '/loadbalancer' },
    params: Type.Object({ ...Settings, customerid: Type.Optional(CustomerId), backends: Type.Optional(Backends), ports: Type.Optional(Ports) }),
    async handler(call, p) {
      const customerId = await actingCustomer(call, p.customerid);
      const now = unixSeconds(call.services.clock);
      // Under the network family's lock: the bound is counted and the row added in one step, and a
      // network named by scope_networkid is not deleted meanwhile.
      const row = await call.services.db.exclusive(NETWORK_LOCK, async (trx) => {
        const config = await applySettings(trx, customerId, DEFAULT_CONFIG, p, now);
        const held = await trx
          .selectFrom('load_balancers')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('customer_id', '=', customerId)
          .executeTakeFirstOrThrow();
        if (Number(held.n) >= MAX_LOAD_BALANCERS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_LOAD_BALANCERS_PER_CUSTOMER, things: 'load balancers' });
        const made = await trx
          .insertInto('load_balancers')
          .values({ customer_id: customerId, name: p.name ?? '', hostname: '', type: p.type ?? 'HTTP', config: JSON.stringify(config), version: 1, date_created: now, date_modified: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        // Named after its id unless named; the service name clients point DNS at is unique by id (Keel answers no queries for it).
        return trx
          .updateTable('load_balancers')
          .set({ hostname: `lb${made.id}.${call.services.nameserverDomain}`.toLowerCase(), name: p.name ?? `lb${made.id}` })
          .where('id', '=', made.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      return oneAnswer('Load Balancer Created Successfully', await presentOne(call, row));
    },
  }),
  defineCommand({
    cmd: 'loadbalancer.update',
    summary: 'Change a load balancer: backends and ports, when sent, replace the lists (null: none)',
    rest: { method: 'PUT', path: '/loadbalancer/{id}' },
    params: Type.Object({
      id: Id,
      ...Settings,
      backends: Type.Optional(Type.Union([Backends, Type.Null()])),
      ports: Type.Optional(Type.Union([Ports, Type.Null()])),
    }),
    async handler(call, p) {
      const row = await findSeen(call, p.id);
      const now = unixSeconds(call.services.clock);
      const base: LoadBalancerConfig = { ...DEFAULT_CONFIG, ...(JSON.parse(row.config) as Partial<LoadBalancerConfig>) };
      const updated = await call.services.db.exclusive(NETWORK_LOCK, async (trx) => {
        const config = await applySettings(trx, row.customer_id, base, p, now);
        return (
          trx
            .updateTable('load_balancers')
            .set({ config: JSON.stringify(config), name: p.name ?? row.name, type: p.type ?? row.type, version: row.version + 1, date_modified: now })
            .where('id', '=', row.id)
            // Only over the version just read: two updates at once would otherwise merge into neither's lists.
            .where('version', '=', row.version)
            .returningAll()
            .executeTakeFirst()
        );
      });
      if (!updated) throw infraErrors.loadBalancerChanged({ id: row.id });
      return oneAnswer('Load Balancer Updated Successfully', await presentOne(call, updated));
    },
  }),
  defineCommand({
    cmd: 'loadbalancer.delete',
    summary: 'Delete a load balancer',
    rest: { method: 'DELETE', path: '/loadbalancer/{id}' },
    params: Type.Object({ id: Id }),
    async handler(call, p) {
      const row = await findSeen(call, p.id);
      await call.services.db.kysely.deleteFrom('load_balancers').where('id', '=', row.id).execute();
      return { message: 'Load Balancer Deleted Successfully' };
    },
  }),
];

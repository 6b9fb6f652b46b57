// An order's productDetails: the shape clients send (GO/SDK ProductDetails, infra-clients.md 2.1),
// the checks against the catalogue, and the details as stored in orders.details, with every default
// filled in and passwords replaced by their SHA-512 crypt hash. The provisioning worker reads them.
import Type, { type Static } from 'typebox';
import type { CatalogueIndex, DataCentre, OperatingSystem, Product } from './catalogue.js';
import { infraProblems as P } from './errors.js';
import { hashSha512Crypt } from '../platform/auth/sha512-crypt.js';

export const STORAGE_TYPES = ['MAGNETIC', 'SSD'] as const;
export const FIREWALL_DIRECTIONS = ['INBOUND', 'OUTBOUND', 'ANY'] as const;
export const FIREWALL_POLICIES = ['ALLOW', 'DENY', 'DISABLED', 'REJECT'] as const;
export const FIREWALL_PROTOCOLS = ['TCP', 'UDP', 'ANY'] as const;
/** Policies a device holds at most (device.firewall.update and order.create). */
export const MAX_FIREWALL_POLICIES = 100;
const MAX_CREDENTIALS = 8;
/** A post-install script is a shell script, not a file store. */
const SCRIPT_LIMIT = 65_536;

const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );
/** A port as clients send it: digits in a string (GO), a number, or null/"" for none. */
const Port = Type.Union([Type.String({ maxLength: 5 }), Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()]);

/** One firewall policy as sent (order.create and device.firewall.update). */
export const FirewallPolicyInput = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 0, description: 'the policy to change (device.firewall.update); 0 or absent adds one' })),
  direction: literals(FIREWALL_DIRECTIONS),
  policy: Type.Union([...FIREWALL_POLICIES.map((v) => Type.Literal(v)), Type.Literal('DELETED')], { description: 'DELETED (with id) removes the policy' }),
  order: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  comment: Type.Optional(Type.String({ maxLength: 255 })),
  ipAddressFrom: Type.Optional(Type.String({ maxLength: 64 })),
  ipAddressTo: Type.Optional(Type.String({ maxLength: 64 })),
  protocol: Type.Optional(Type.Union([...FIREWALL_PROTOCOLS.map((v) => Type.Literal(v)), Type.Literal('')])),
  portFrom: Type.Optional(Port),
  portTo: Type.Optional(Port),
  deviceId: Type.Optional(Type.Integer({ minimum: 0 })),
  deviceID: Type.Optional(Type.String({ maxLength: 20 })),
});
export type FirewallPolicyIn = Static<typeof FirewallPolicyInput>;

export const ProductDetailsInput = Type.Object(
  {
    hostname: Type.Optional(Type.String({ maxLength: 253, description: 'the server name; a fully qualified name is published in DNS where the customer hosts the zone' })),
    dcId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ maxLength: 64 })], { description: 'data centre id (a number or digits), or its name or location code' })),
    location: Type.Optional(Type.String({ maxLength: 64, description: 'data centre location code, such as GLOBALSWITCH-SYD1' })),
    credentials: Type.Optional(
      Type.Array(
        Type.Object({
          username: Type.String({ minLength: 1, maxLength: 32 }),
          password: Type.String({ minLength: 1, maxLength: 256 }),
        }),
        { maxItems: MAX_CREDENTIALS, description: 'null (the Go client when no password is given) is taken as none' },
      ),
    ),
    install: Type.Optional(
      Type.Object({
        operatingSystem: Type.Optional(Type.String({ maxLength: 64, description: 'operatingsystem.getall code; "" or absent: none chosen' })),
        postInstallScript: Type.Optional(Type.String({ maxLength: SCRIPT_LIMIT })),
        template: Type.Optional(Type.String({ maxLength: 64 })),
      }),
    ),
    cpu: Type.Optional(Type.Integer({ description: "cores; the product's range" })),
    memoryGB: Type.Optional(Type.Integer({ description: "the product's range" })),
    storage: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.Optional(Type.String({ maxLength: 64 })),
          sizeGB: Type.Integer(),
          type: Type.Optional(Type.Union([Type.Literal('MAGNETIC'), Type.Literal('SSD'), Type.Literal('')], { description: '"" is MAGNETIC' })),
          order: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
        }),
        { maxItems: 64 },
      ),
    ),
    trafficGB: Type.Optional(Type.Integer()),
    firewallPolicies: Type.Optional(Type.Array(FirewallPolicyInput, { maxItems: MAX_FIREWALL_POLICIES })),
    nics: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.Optional(Type.String({ maxLength: 64 })),
          vlan: Type.Optional(Type.Integer({ minimum: 0, maximum: 4094 })),
          speed: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
          ipv4: Type.Optional(Type.Integer({ minimum: 0 })),
          poolIPv4: Type.Optional(Type.Integer({ minimum: 0, maximum: 1024 })),
          ipv6: Type.Optional(Type.Integer({ minimum: 0, maximum: 1024 })),
          poolIPv6: Type.Optional(Type.Integer({ minimum: 0, maximum: 1024 })),
        }),
        { maxItems: 16 },
      ),
    ),
    hostGroupId: Type.Optional(Type.Integer({ minimum: 0 })),
    timezone: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { description: 'the server ordered: sizes within the product ranges (product.get), a data centre where the product is sold' },
);
export type ProductDetailsIn = Static<typeof ProductDetailsInput>;

/** A firewall policy as stored and applied: ports as digits or null. */
export interface FirewallPolicySpec {
  direction: (typeof FIREWALL_DIRECTIONS)[number];
  policy: (typeof FIREWALL_POLICIES)[number];
  order: number;
  comment: string;
  ipAddressFrom: string;
  ipAddressTo: string;
  protocol: (typeof FIREWALL_PROTOCOLS)[number];
  portFrom: string | null;
  portTo: string | null;
}

/** orders.details: what order.create checked, completed with the catalogue's defaults. */
export interface OrderDetails {
  hostname: string;
  dcId: number;
  cpu: number;
  memoryGB: number;
  storage: { name: string; sizeGB: number; type: (typeof STORAGE_TYPES)[number]; order: number }[];
  trafficGB: number;
  /** operatingSystem "" when the order named none (the provider's device then shows OPERATINGSYSTEM ""). */
  install: { operatingSystem: string; postInstallScript?: string; template?: string };
  nics: { name: string; vlan: number; speed: number; ipv4: number; poolIPv4: number; ipv6: number; poolIPv6: number }[];
  firewallPolicies: FirewallPolicySpec[];
  hostGroupId?: number;
  timezone?: string;
  /** Never a plaintext password: a crypt(3) SHA-512 "$6$" hash (cloud-init's hashed_passwd takes it). */
  credentials: { username: string; passwordHash: string }[];
}

/** What a check found: problems by the field as the request named it (productDetails.cpu ...). */
export type Problems = Record<string, string>;

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;
const USERNAME = /^[a-z_][a-z0-9_-]{0,31}$/;
const PORT_TEXT = /^\d{1,5}$/;
const TIMEZONE = /^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*$|^UTC$/;

function inRange(problems: Problems, field: string, value: number, range: { min: number; max: number }): void {
  if (value < range.min) problems[field] = P.atLeast({ limit: range.min });
  else if (value > range.max) problems[field] = P.atMost({ limit: range.max });
}

/** A port as stored: digits or null; undefined when it is not a port. */
export function portText(raw: unknown): string | null | undefined {
  if (raw === undefined || raw === null || raw === '') return null;
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
  if (text === undefined || !PORT_TEXT.test(text) || Number(text) < 1 || Number(text) > 65535) return undefined;
  return String(Number(text));
}

/** Checks one policy's values (problems under `field`); the spec to store, unless refused. */
export function checkFirewallPolicy(p: FirewallPolicyIn, field: string, problems: Problems): FirewallPolicySpec | undefined {
  const portFrom = portText(p.portFrom);
  const portTo = portText(p.portTo);
  if (portFrom === undefined) problems[`${field}.portFrom`] = P.portNumber();
  if (portTo === undefined) problems[`${field}.portTo`] = P.portNumber();
  for (const key of ['ipAddressFrom', 'ipAddressTo'] as const) {
    const v = (p[key] ?? '').trim();
    if (v !== '' && !isAddressOrNetwork(v)) problems[`${field}.${key}`] = P.addressOrNetwork();
  }
  if (p.policy === 'DELETED') return undefined;
  if (portFrom === undefined || portTo === undefined) return undefined;
  return {
    direction: p.direction,
    policy: p.policy,
    order: p.order ?? 0,
    comment: p.comment ?? '',
    ipAddressFrom: (p.ipAddressFrom ?? '').trim(),
    ipAddressTo: (p.ipAddressTo ?? '').trim(),
    protocol: p.protocol === undefined || p.protocol === '' ? 'ANY' : p.protocol,
    portFrom,
    portTo,
  };
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isAddressOrNetwork(v: string): boolean {
  const [addr, len, ...rest] = v.split('/');
  if (rest.length) return false;
  const v4 = IPV4.test(addr);
  const v6 = !v4 && /^[0-9a-f:.]+$/i.test(addr) && addr.includes(':');
  if (!v4 && !v6) return false;
  if (len === undefined) return true;
  return /^\d{1,3}$/.test(len) && Number(len) <= (v4 ? 32 : 128);
}

/** The data centre an order names (dcId, else location), or undefined with the problem recorded. */
function dataCentreOf(catalogue: CatalogueIndex, product: Product, d: ProductDetailsIn, problems: Problems): DataCentre | undefined {
  const byId = d.dcId !== undefined && d.dcId !== '' ? catalogue.dataCentre(d.dcId) : undefined;
  const byLocation = d.location !== undefined && d.location !== '' ? catalogue.dataCentre(d.location) : undefined;
  if (d.dcId !== undefined && d.dcId !== '' && !byId) {
    problems['productDetails.dcId'] = P.unknownDc({ dc: String(d.dcId) });
    return undefined;
  }
  if (d.location !== undefined && d.location !== '' && !byLocation) {
    problems['productDetails.location'] = P.unknownDc({ dc: d.location });
    return undefined;
  }
  if (byId && byLocation && byId.id !== byLocation.id) {
    problems['productDetails.location'] = P.notThatDc({ location: d.location ?? '', dc: byId.name });
    return undefined;
  }
  const dc = byId ?? byLocation ?? catalogue.dataCentre(product.dcIds[0] ?? 0);
  if (!dc) {
    problems['productDetails.dcId'] = P.dcRequired();
    return undefined;
  }
  if (!product.dcIds.includes(dc.id)) {
    problems[byId ? 'productDetails.dcId' : 'productDetails.location'] = P.notSoldIn({ product: product.code, dc: `${dc.name} (${dc.location})` });
    return undefined;
  }
  return dc;
}

export interface CheckedOrder {
  product: Product;
  dataCentre: DataCentre;
  operatingSystem?: OperatingSystem;
  details: OrderDetails;
}

/**
 * Checks productDetails (already of the right types: the command's schema saw to that) against the
 * product, and completes them with its defaults. Returns the problems, or the details to store.
 * `newHostname` names a server whose order gives none.
 */
export function checkProductDetails(catalogue: CatalogueIndex, product: Product, d: ProductDetailsIn, newHostname: () => string): CheckedOrder | Problems {
  const problems: Problems = {};
  const dc = dataCentreOf(catalogue, product, d, problems);
  let hostname = (d.hostname ?? '').trim().toLowerCase().replace(/\.$/, '');
  if (hostname === '') hostname = newHostname();
  else if (!HOSTNAME.test(hostname)) problems['productDetails.hostname'] = P.hostname();

  const cpu = d.cpu === undefined || d.cpu === 0 ? product.cpu.default : d.cpu;
  inRange(problems, 'productDetails.cpu', cpu, product.cpu);
  const memoryGB = d.memoryGB === undefined || d.memoryGB === 0 ? product.memoryGB.default : d.memoryGB;
  inRange(problems, 'productDetails.memoryGB', memoryGB, product.memoryGB);
  const trafficGB = d.trafficGB ?? product.trafficGB.default;
  inRange(problems, 'productDetails.trafficGB', trafficGB, product.trafficGB);

  const disks = d.storage?.length ? d.storage : [{ sizeGB: product.storageGB.default }];
  if (disks.length > product.disks.max) problems['productDetails.storage'] = P.atMostItems({ limit: product.disks.max });
  const storage = disks.map((s, i) => {
    const type = 'type' in s && s.type ? s.type : 'MAGNETIC';
    inRange(problems, `productDetails.storage.${i}.sizeGB`, s.sizeGB, product.storageGB);
    return { name: ('name' in s && s.name) || `disk${i + 1}`, sizeGB: s.sizeGB, type, order: ('order' in s && s.order) || i + 1 };
  });

  const nicsIn = d.nics?.length ? d.nics : [{}];
  if (nicsIn.length > product.nics.max) problems['productDetails.nics'] = P.atMostItems({ limit: product.nics.max });
  const nics = nicsIn.map((n, i) => ({
    name: n.name || (i === 0 ? 'public' : `nic${i}`),
    vlan: n.vlan ?? 0,
    speed: n.speed || 1000,
    ipv4: n.ipv4 ?? (i === 0 ? product.ipv4.default : 0),
    poolIPv4: n.poolIPv4 ?? 0,
    ipv6: n.ipv6 ?? 0,
    poolIPv6: n.poolIPv6 ?? 0,
  }));
  const ipv4 = nics.reduce((sum, n) => sum + n.ipv4, 0);
  if (ipv4 > product.ipv4.max) problems[d.nics?.length ? 'productDetails.nics' : 'productDetails.nics.0.ipv4'] = P.ipv4Count({ max: product.ipv4.max });

  const osCode = (d.install?.operatingSystem ?? '').trim();
  const os = osCode === '' ? undefined : catalogue.operatingSystem(osCode);
  if (osCode !== '' && !os) problems['productDetails.install.operatingSystem'] = P.unknownOs({ os: osCode });
  const template = d.install?.template?.trim();
  if (template && !catalogue.catalogue.templates.some((t) => t.code.toUpperCase() === template.toUpperCase())) {
    problems['productDetails.install.template'] = P.unknownTemplate({ template });
  }

  const firewallPolicies: FirewallPolicySpec[] = [];
  (d.firewallPolicies ?? []).forEach((p, i) => {
    const field = `productDetails.firewallPolicies.${i}`;
    if (p.policy === 'DELETED') problems[`${field}.policy`] = P.deletedInOrder();
    const spec = checkFirewallPolicy(p, field, problems);
    if (spec) firewallPolicies.push(spec);
  });

  const credentials = (d.credentials ?? []).map((c, i) => {
    if (!USERNAME.test(c.username)) problems[`productDetails.credentials.${i}.username`] = P.machineUsername();
    return { username: c.username, password: c.password };
  });
  if (d.timezone !== undefined && d.timezone !== '' && !TIMEZONE.test(d.timezone)) problems['productDetails.timezone'] = P.timezone();

  if (Object.keys(problems).length || !dc) return problems;
  const details: OrderDetails = {
    hostname,
    dcId: dc.id,
    cpu,
    memoryGB,
    storage,
    trafficGB,
    install: {
      operatingSystem: os?.code ?? '',
      ...(d.install?.postInstallScript ? { postInstallScript: d.install.postInstallScript } : {}),
      ...(template ? { template: template.toUpperCase() } : {}),
    },
    nics,
    firewallPolicies,
    ...(d.hostGroupId !== undefined ? { hostGroupId: d.hostGroupId } : {}),
    ...(d.timezone ? { timezone: d.timezone } : {}),
    // Hashed last: only an order that passes every check pays for it.
    credentials: credentials.map((c) => ({ username: c.username, passwordHash: hashSha512Crypt(c.password) })),
  };
  return { product, dataCentre: dc, operatingSystem: os, details };
}

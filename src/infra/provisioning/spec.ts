// From an order's details to the machine a driver makes (drivers/driver.ts MachineSpec).
import type { CatalogueIndex } from '../catalogue.js';
import type { MachineSpec } from '../drivers/driver.js';

/**
 * The order's `details` as order.create stores them (the orders helper's src/infra/orders-details.ts
 * is the owner of this shape; this is the part the worker reads, to be unified at merge).
 */
export interface OrderDetails {
  hostname?: string;
  dcId?: number | string;
  cpu?: number;
  memoryGB?: number;
  storage?: { name?: string; sizeGB: number; type?: string; order?: number }[] | null;
  install?: { operatingSystem?: string; postInstallScript?: string; template?: string } | null;
  credentials?: { username: string; passwordHash?: string }[] | null;
  /** Checked by order.create (ports as digits or null); they become the device's policies. */
  firewallPolicies?: {
    direction: string;
    policy: string;
    order: number;
    comment?: string;
    ipAddressFrom?: string;
    ipAddressTo?: string;
    protocol: string;
    portFrom?: string | null;
    portTo?: string | null;
  }[];
}

export function parseDetails(json: string): OrderDetails {
  try {
    const v = JSON.parse(json) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as OrderDetails) : {};
  } catch {
    return {};
  }
}

/** The machine for a device: everything but the credentials is also what devices.spec keeps. */
export function machineSpec(details: OrderDetails, machineName: string, fallbackHostname: string, catalogue: CatalogueIndex, sshKeys: string[]): MachineSpec {
  const os = details.install?.operatingSystem ?? '';
  const disks = (details.storage ?? []).map((d) => ({ sizeGB: d.sizeGB, type: d.type === 'SSD' ? ('SSD' as const) : ('MAGNETIC' as const) }));
  const spec: MachineSpec = {
    name: machineName,
    hostname: details.hostname || fallbackHostname,
    cpu: details.cpu ?? 1,
    memoryGB: details.memoryGB ?? 1,
    disks,
    operatingSystem: os,
    sshKeys,
    credentials: (details.credentials ?? []).map((c) => ({ username: c.username, passwordHash: c.passwordHash })),
  };
  const image = os ? catalogue.operatingSystem(os)?.image : undefined;
  if (image) spec.image = image;
  if (details.install?.postInstallScript) spec.postInstallScript = details.install.postInstallScript;
  return spec;
}

/** devices.spec: the spec without credentials. */
export function storedSpec(spec: MachineSpec): string {
  const { credentials: _credentials, ...rest } = spec;
  return JSON.stringify(rest);
}

// From an order's details to the machine a driver makes (drivers/driver.ts MachineSpec).
import type { CatalogueIndex } from '../catalogue.js';
import type { MachineSpec } from '../drivers/driver.js';
import type { OrderDetails } from '../orders-details.js';

/**
 * The order's `details` as order.create stored them (orders-details.ts); read defensively, every
 * field optional, as a row written by an older version may lack one.
 */
export type StoredDetails = Partial<OrderDetails>;

export function parseDetails(json: string): StoredDetails {
  try {
    const v = JSON.parse(json) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as StoredDetails) : {};
  } catch {
    return {};
  }
}

/** The machine for a device: everything but the credentials is also what devices.spec keeps. */
export function machineSpec(details: StoredDetails, machineName: string, fallbackHostname: string, catalogue: CatalogueIndex, sshKeys: string[]): MachineSpec {
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

// What rctransaction.create accepts and what each transaction type asks of the worker: shared by the
// command (commands/rctransaction.ts) and the worker (provisioning/transactions.ts).
import type { CloudInit } from '../drivers/driver.js';
import { infraProblems as P } from '../errors.js';

export const TRANSACTION_TYPES = ['STARTUP', 'SHUTDOWN', 'SAFESHUTDOWN', 'FORCESHUTDOWN', 'REFRESHCONFIG', 'CANCEL', 'OPENVNC', 'CLOSEVNC'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export const TRANSACTION_STATUSES = ['PENDING', 'COMMENCED', 'COMPLETED', 'FAILED'] as const;
/** Not finished: the worker still has to run them. */
export const UNFINISHED = ['PENDING', 'COMMENCED'] as const;

/** The only object type with transactions here (the provider's clients send nothing else). */
export const OBJ_TYPES = ['DEVICE'] as const;

/**
 * Types that take a server down or destroy it: created only with `confirmation: true`. Without it the
 * answer says confirmationRequired and nothing is queued. STARTUP, REFRESHCONFIG and the VNC types
 * need none (the Go client's fixture creates STARTUP unconfirmed; Terraform sends REFRESHCONFIG so).
 */
export const NEEDS_CONFIRMATION: ReadonlySet<string> = new Set(['CANCEL', 'FORCESHUTDOWN', 'SHUTDOWN', 'SAFESHUTDOWN']);

/** The driver step each type runs (its duration is driver.stepMs of it); null: no machine step. */
export function stepOf(type: string): 'start' | 'stop' | 'reconfigure' | 'destroy' | null {
  switch (type) {
    case 'STARTUP':
      return 'start';
    case 'SHUTDOWN':
    case 'SAFESHUTDOWN':
    case 'FORCESHUTDOWN':
      return 'stop';
    case 'REFRESHCONFIG':
      return 'reconfigure';
    case 'CANCEL':
      return 'destroy';
    default:
      return null;
  }
}

/** STARTUP's `data` (the Go client's TransactionStartupData), parsed. */
export interface StartupData {
  deployMediaImageAccessKey?: string;
  deployMediaImageAccessSecret?: string;
  deployMediaImageBucket?: string;
  deployMediaImageId?: string;
  deployMediaImagePath?: string;
  cloudInit: CloudInit;
}

const MEDIA_KEYS = ['deployMediaImageAccessKey', 'deployMediaImageAccessSecret', 'deployMediaImageBucket', 'deployMediaImageId', 'deployMediaImagePath'] as const;
const CLOUD_INIT_KEYS = ['userData', 'metaData', 'networkConfig'] as const;

/**
 * STARTUP's data string: "" or absent for none, else a JSON object whose known fields are strings.
 * Returns the parsed data, or the problem (for a FAULT naming `data`).
 */
export function parseStartupData(text: string | null | undefined): { ok: StartupData } | { problem: string } {
  if (text === null || text === undefined || text === '') return { ok: { cloudInit: {} } };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: P.startupJson() };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: P.startupJson() };
  const obj = value as Record<string, unknown>;
  const out: StartupData = { cloudInit: {} };
  for (const key of MEDIA_KEYS) {
    const v = obj[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return { problem: P.startupField({ field: key }) };
    out[key] = v;
  }
  // The Go client nests cloud-init under cloudInit; the section-io SDK (v2, used by its Terraform
  // provider) sends userData, metaData and networkConfig at the top level. Nested ones win.
  const ci = obj.cloudInit;
  if (ci !== undefined && ci !== null && (typeof ci !== 'object' || Array.isArray(ci))) return { problem: P.startupCloudInit() };
  const sources: [Record<string, unknown>, string][] = [[obj, '']];
  if (ci) sources.unshift([ci as Record<string, unknown>, 'cloudInit.']);
  for (const [source, prefix] of sources) {
    for (const key of CLOUD_INIT_KEYS) {
      const v = source[key];
      if (v === undefined || v === null || v === '') continue;
      if (typeof v !== 'string') return { problem: P.startupField({ field: `${prefix}${key}` }) };
      out.cloudInit[key] ??= v;
    }
  }
  return { ok: out };
}

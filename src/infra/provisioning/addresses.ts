// Primary IPv4 addresses for new devices, from one pool (by default 100.64.0.0/10, shared address
// space no public route reaches). An address is held by its device_ips row: unique in the store, so
// two devices never share one, and free again once the row is deleted (CANCEL).
import type { Transaction } from 'kysely';
import type { InfraTables } from '../tables.js';

export interface AddressPool {
  /** First address as a number, and how many addresses follow (network and broadcast excluded). */
  base: number;
  size: number;
  cidr: string;
}

export const DEFAULT_POOL = '100.64.0.0/10';

function toNumber(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

function toText(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** A CIDR block of at least 4 addresses; undefined if `cidr` is not one. */
export function parsePool(cidr: string): AddressPool | undefined {
  const m = /^([\d.]+)\/(\d{1,2})$/.exec(cidr.trim());
  if (!m) return undefined;
  const start = toNumber(m[1]);
  const prefix = Number(m[2]);
  if (start === undefined || prefix > 30) return undefined;
  const block = 2 ** (32 - prefix);
  if (start % block !== 0) return undefined;
  return { base: start + 1, size: block - 2, cidr };
}

const PROBE = 64;

/**
 * Takes `count` free addresses of the pool for the device, the first its primary: tries from a place
 * that depends on the device id (so successive devices rarely probe the same addresses), 64
 * candidates per query, and inserts each row with ON CONFLICT DO NOTHING (a race loses nothing but a
 * candidate). Returns the primary address; undefined when the pool has fewer free addresses left
 * (the caller's transaction then writes none of them).
 */
export async function allocatePrimary(trx: Transaction<InfraTables>, pool: AddressPool, deviceId: number, now: number, count = 1): Promise<string | undefined> {
  let offset = (deviceId - 1) % pool.size;
  const got: string[] = [];
  for (let probed = 0; probed < pool.size && got.length < count; probed += PROBE) {
    const candidates: string[] = [];
    for (let i = 0; i < Math.min(PROBE, pool.size - probed); i++) candidates.push(toText(pool.base + ((offset + i) % pool.size)));
    const taken = new Set((await trx.selectFrom('device_ips').select('address').where('address', 'in', candidates).execute()).map((r) => r.address));
    for (const address of candidates) {
      if (got.length >= count) break;
      if (taken.has(address)) continue;
      const row = await trx
        .insertInto('device_ips')
        .values({ device_id: deviceId, address, family: 4, is_primary: got.length === 0 ? 1 : 0, network_id: null, date_created: now })
        .onConflict((oc) => oc.column('address').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (row) got.push(address);
    }
    offset = (offset + PROBE) % pool.size;
  }
  return got.length === count ? got[0] : undefined;
}

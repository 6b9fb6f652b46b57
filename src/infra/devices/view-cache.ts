// device.get's answers kept as JSON text per device (fast path "read caches", platform/db/fast):
// Terraform polls device.get every few seconds for each server it waits on, and building the view
// (four reads, the order's details parsed, prices and `extra` worked out, 3 KB stringified) cost
// seven times an apiuser.get. An entry dies when this node writes any table the view is made from
// (devices, addresses, firewall policies, contracts, orders, customers) and after the read caches'
// TTL, which bounds how long another node's change goes unseen. Owned by the composition root.
import type { Clock } from '../../platform/clock.js';
import type { Database } from '../../platform/db/database.js';
import { JsonText } from '../../platform/db/fast/json-text.js';
import { ReadCache } from '../../platform/db/fast/read-cache.js';
import type { CatalogueIndex } from '../catalogue.js';
import type { InfraTables } from '../tables.js';
import { liveDevice, loadOne, loadParts, presentDevice } from './view.js';
import { visibleCustomers } from '../customer-scope.js';

/** The tables a device's view is read from. */
const SOURCES = ['devices', 'device_ips', 'device_firewall_policies', 'contracts', 'orders', 'customers'] as const;

/** One device's answer: whose it is (the caller's scope is checked on every request) and its JSON. */
export interface CachedDevice {
  customerId: number;
  json: JsonText;
}

export class DeviceViews {
  private readonly db: Database<InfraTables>;
  private readonly catalogue: CatalogueIndex;
  private readonly cache: ReadCache<CachedDevice, number>;
  /** device.getall's element of each device (the list form), kept the same way. */
  private readonly listed: ReadCache<{ json: string }, number>;
  /** A reseller's tree (customer-scope.ts) by its customer id: a partner polls its sub-customers' devices. */
  private readonly scopes: ReadCache<{ ids: ReadonlySet<number> }, number>;

  constructor(db: Database<InfraTables>, clock: Clock, catalogue: CatalogueIndex) {
    this.db = db;
    this.catalogue = catalogue;
    // Each generation only grows, so their sum moves whenever one of them does.
    const source = { writeGeneration: () => SOURCES.reduce((n, t) => n + db.writeGeneration(t), 0) };
    this.cache = new ReadCache<CachedDevice, number>(source, clock);
    this.listed = new ReadCache<{ json: string }, number>(source, clock);
    this.scopes = new ReadCache<{ ids: ReadonlySet<number> }, number>({ writeGeneration: () => db.writeGeneration('customers') }, clock);
  }

  /**
   * device.getall's page: the list-form JSON of these devices, in this order, as one JSON array.
   * Devices not kept are read together (loadParts: three statements for the lot).
   */
  async page(ids: readonly number[]): Promise<JsonText> {
    const kept = this.listed.peekMany(ids);
    const missing = ids.filter((_, i) => kept[i] === undefined);
    if (missing.length) {
      const stamp = this.listed.stamp();
      const rows = await this.db.kysely.selectFrom('devices').selectAll().where('id', 'in', missing).execute();
      for (const parts of await loadParts(this.db.kysely, rows)) {
        const entry = { json: JSON.stringify(presentDevice(parts, this.catalogue, 'list')) };
        this.listed.set(parts.row.id, entry, stamp);
        kept[ids.indexOf(parts.row.id)] = entry;
      }
    }
    // A device gone between the id query and here (cancelled by another request) is left out.
    return new JsonText(`[${kept.flatMap((k) => (k ? [k.json] : [])).join(',')}]`);
  }

  /** Whether a device of `owner` is the caller's to see: its own, or one of its sub-customers'. */
  async visibleTo(caller: number, owner: number): Promise<boolean> {
    if (caller === owner) return true;
    const scope = await this.scopes.get(caller, async () => ({ ids: new Set(await visibleCustomers(this.db.kysely, caller)) }));
    return scope.ids.has(owner);
  }

  /** A live (not cancelled) device's answer, whoever's it is, or undefined. */
  get(id: number): Promise<CachedDevice | undefined> {
    return this.cache.get(id, async () => {
      const row = await liveDevice(this.db.kysely, id);
      if (!row) return undefined;
      const view = presentDevice(await loadOne(this.db.kysely, row), this.catalogue, 'get');
      return { customerId: row.customer_id, json: new JsonText(JSON.stringify(view)) };
    });
  }
}

// Which customers a caller may see and act for: its own, and every customer below it (a partner's
// or reseller's sub-customers, at any depth, through customers.parent_id). Every resource command
// (devices, orders, contracts, transactions, keys, networks, load balancers) scopes its reads and
// writes by this list, and answers for a customer outside it exactly as for one that does not exist.
import type { Queryable } from '../platform/db/database.js';
import type { InfraTables } from './tables.js';

/** The caller's customer id first, then its descendants (breadth first). */
export async function visibleCustomers(db: Queryable<InfraTables>, customerId: number): Promise<number[]> {
  const seen = [customerId];
  let frontier = [customerId];
  // Depth is bounded by the customer count; a cycle (not makeable through the API) cannot loop.
  while (frontier.length) {
    const rows = await db.selectFrom('customers').select('id').where('parent_id', 'in', frontier).execute();
    frontier = rows.map((r) => r.id).filter((id) => !seen.includes(id));
    seen.push(...frontier);
  }
  return seen;
}

/** Whether `customerId` is the caller's or one of its descendants. */
export async function canActFor(db: Queryable<InfraTables>, callerCustomerId: number, customerId: number): Promise<boolean> {
  if (callerCustomerId === customerId) return true;
  return (await visibleCustomers(db, callerCustomerId)).includes(customerId);
}

// Which customers a caller may see and act for: its own, and every customer below it (a partner's
// or reseller's sub-customers, at any depth, through customers.parent_id). Every resource command
// (devices, orders, contracts, transactions, keys, networks, load balancers) scopes its reads and
// writes by this list, and answers for a customer outside it exactly as for one that does not exist.
import type { Queryable } from '../platform/db/database.js';
import type { InfraTables } from './tables.js';
import { sql, type RawBuilder } from 'kysely';
import { infraErrors } from './errors.js';

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

// ---- for commands taking a customerId parameter (customers helper, issue 15) --------------------

/**
 * The customer a command acts for: the caller's own when the request names none; else the one it
 * names, if visible to the caller. One outside the scope, or that does not exist, raises `notFound`
 * (by default "Could not find customer"), so the answer never tells them apart. `requested` is the
 * checked parameter: an integer, or the digits the Go clients send as a string.
 */
export async function customerForCall(
  db: Queryable<InfraTables>,
  callerCustomerId: number,
  requested: number | string | null | undefined,
  notFound: () => Error = () => infraErrors.customerNotFound(),
): Promise<number> {
  if (requested === undefined || requested === null || requested === '') return callerCustomerId;
  const id = typeof requested === 'number' ? requested : /^\d{1,15}$/.test(requested) ? Number(requested) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw notFound();
  if (id === callerCustomerId) return id;
  if (!(await visibleCustomers(db, callerCustomerId)).includes(id)) throw notFound();
  return id;
}

/**
 * The customers a list shows: every visible one when the request names none (a `customerId`
 * filter), else the one it names if visible, else none (an empty list, as for a customer with
 * nothing: a filter never tells an outside customer from a missing one).
 */
export async function customersToList(db: Queryable<InfraTables>, callerCustomerId: number, requested: number | string | null | undefined): Promise<number[]> {
  const visible = await visibleCustomers(db, callerCustomerId);
  if (requested === undefined || requested === null || requested === '') return visible;
  const id = typeof requested === 'number' ? requested : /^\d{1,15}$/.test(requested) ? Number(requested) : Number.NaN;
  return visible.includes(id) ? [id] : [];
}

/**
 * The caller's customer and every customer below it, as SQL for `where customer_id in (...)`: one
 * recursive query instead of a list of ids (a reseller's tree can outgrow a statement's parameters).
 * UNION (not UNION ALL) stops at a row seen before, so even a cycle ends.
 */
export function visibleCustomersSql(callerCustomerId: number): RawBuilder<number> {
  return sql<number>`(with recursive scope(id) as (select id from customers where id = ${callerCustomerId} union select c.id from customers c join scope s on c.parent_id = s.id) select id from scope)`;
}

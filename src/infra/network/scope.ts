// The customer a network-family call acts for, and the customers whose objects it sees
// (customer-scope.ts): another customer's object answers exactly like a missing one.
import { requirePrincipal, type Call } from '../command.js';
import { canActFor, visibleCustomers } from '../customer-scope.js';
import { infraErrors } from '../errors.js';

/** `customerid` as given (the caller's or a sub-customer's), else the caller's own. */
export async function actingCustomer(call: Call, requested: number | undefined): Promise<number> {
  const { customerId } = requirePrincipal(call);
  if (requested === undefined || requested === customerId) return customerId;
  if (await canActFor(call.services.db.kysely, customerId, requested)) return requested;
  throw infraErrors.customerNotFound();
}

/** The customers whose objects the caller sees; narrowed to one when a list filters by customer. */
export async function seenCustomers(call: Call, only?: number): Promise<number[]> {
  const all = await visibleCustomers(call.services.db.kysely, requirePrincipal(call).customerId);
  return only === undefined ? all : all.filter((c) => c === only);
}

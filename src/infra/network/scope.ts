// The customer a network-family call acts for, and the customers whose objects it sees: the
// call-shaped forms of customer-scope.ts (another customer's object answers exactly like a missing one).
import { requirePrincipal, type Call } from '../command.js';
import { customerForCall, customersToList } from '../customer-scope.js';

/** `customerid` as given (the caller's or a sub-customer's), else the caller's own. */
export function actingCustomer(call: Call, requested: number | undefined): Promise<number> {
  return customerForCall(call.services.db.kysely, requirePrincipal(call).customerId, requested);
}

/** The customers whose objects the caller sees; narrowed to one when a list filters by customer. */
export function seenCustomers(call: Call, only?: number): Promise<number[]> {
  return customersToList(call.services.db.kysely, requirePrincipal(call).customerId, only);
}

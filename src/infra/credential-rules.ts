// Who may manage a credential (an API key today; any later command that creates, changes, disables or
// rotates one calls these too). Without them a key holding only `apiuser.update` could rotate the
// secret of the owner's `*` key and read it back: a takeover. The rules:
// - the customer's owner login may manage every credential of its customer;
// - an API user may manage only credentials whose permissions are all within its own (itself included);
// - nobody may give a credential a permission it does not hold itself.
import type { Principal } from './command.js';
import { infraErrors } from './errors.js';
import { covers } from './permissions.js';

/** True when `actor` may change, disable or rotate a credential holding `targetPermissions`. */
export function mayManage(actor: Principal, targetPermissions: readonly string[]): boolean {
  if (actor.kind === 'login') return true;
  return targetPermissions.every((p) => covers(actor.permissions, p));
}

/** Throws ACCESS_DENIED unless `actor` may manage the credential (`what` names it in the answer). */
export function requireMayManage(actor: Principal, targetPermissions: readonly string[], what: string): void {
  if (mayManage(actor, targetPermissions)) return;
  // Which ones is not said: a caller allowed only to update need not learn a stronger key's permissions.
  throw infraErrors.mayNotManage({ what });
}

/** Throws ACCESS_DENIED unless `actor` holds every permission it would grant. */
export function requireMayGrant(actor: Principal, permissions: readonly string[]): void {
  for (const p of permissions) {
    if (!covers(actor.permissions, p)) throw infraErrors.mayNotGrant({ permission: p });
  }
}

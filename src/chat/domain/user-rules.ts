// Zulip's rules for managing accounts, as pure functions so they can be pinned by unit tests:
// who may change whose role, who may be deactivated, and who may see a user's real email address.
import { adminRequired, cannotDeactivateLastOwner, cannotDeactivateLastUser, guestCannotBeAdmin, lastOwnerRoleChange, ownerRequired, paramInvalid } from '../errors.js';
import { ROLE, ROLES, isAdmin } from './roles.js';

interface Actor {
  id: number;
  role: number;
}
interface Target {
  id: number;
  role: number;
  is_bot: number;
}

/**
 * Checks a role change of `target` to `newRole` by `actor`; throws Zulip's error, or returns
 * whether anything changes. `activeOwners` counts active human owners (the last one must stay).
 */
export function checkRoleChange(actor: Actor, target: Target, newRole: number, activeOwners: number): boolean {
  if (!isAdmin(actor.role)) throw adminRequired();
  if (!ROLES.includes(newRole)) throw paramInvalid({ name: 'role', var_name: 'role' });
  if (newRole === target.role) return false;
  // Only owners add or remove the owner role.
  if ((newRole === ROLE.owner || target.role === ROLE.owner) && actor.role !== ROLE.owner) throw ownerRequired();
  if (target.role === ROLE.owner && activeOwners <= 1) {
    throw lastOwnerRoleChange();
  }
  // The seed's rule: a guest is not made an administrator (or owner) in one step.
  if (target.role === ROLE.guest && isAdmin(newRole)) throw guestCannotBeAdmin();
  return true;
}

/** Checks that `actor` may deactivate `target` (DELETE /users/{user_id}). */
export function checkDeactivation(actor: Actor, target: Target, activeOwners: number): void {
  if (!isAdmin(actor.role)) throw adminRequired();
  if (target.role === ROLE.owner && actor.role !== ROLE.owner) throw ownerRequired();
  if (target.role === ROLE.owner && target.is_bot === 0 && activeOwners <= 1) throw cannotDeactivateLastOwner();
}

/** DELETE /users/me: the only owner, or the only user, cannot leave. */
export function checkSelfDeactivation(me: Target, activeOwners: number, activeHumans: number): void {
  if (me.role === ROLE.owner && me.is_bot === 0 && activeOwners <= 1) {
    const lastUser = activeHumans <= 1;
    const entity = lastUser ? 'user' : 'organization owner';
    throw cannotDeactivateLastUser({ entity, is_last_owner: !lastUser });
  }
  if (me.is_bot === 0 && activeHumans <= 1) {
    throw cannotDeactivateLastUser({ entity: 'user', is_last_owner: false });
  }
}

/** email_address_visibility values (a user setting since Zulip 7.0). */
export const EMAIL_VISIBILITY = { everyone: 1, members: 2, admins: 3, nobody: 4, moderators: 5 } as const;

/**
 * Whether a viewer of this role may see the real address of a user with this visibility setting,
 * the role alone deciding (Zulip's ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS): GET/PATCH
 * /users/{email} find a user by real address only then, the viewer's own address included.
 */
export function roleSeesEmail(role: number, visibility: number): boolean {
  switch (visibility) {
    case EMAIL_VISIBILITY.everyone:
      return true;
    case EMAIL_VISIBILITY.members:
      return role <= ROLE.member;
    case EMAIL_VISIBILITY.moderators:
      return role <= ROLE.moderator;
    case EMAIL_VISIBILITY.admins:
      return role <= ROLE.administrator;
    default:
      return false;
  }
}

/**
 * Whether `viewer` may see the real (delivery) email of a user with this visibility setting: their
 * own always, a bot's always (Zulip fixes bots at "everyone"), anyone else's by roleSeesEmail.
 */
export function canSeeRealEmail(viewer: Actor, targetId: number, visibility: number, targetIsBot: boolean): boolean {
  return viewer.id === targetId || targetIsBot || roleSeesEmail(viewer.role, visibility);
}

/** Whether a user's API `email` is their real address: only with visibility "everyone" (bots always). */
export function emailIsPublic(visibility: number, isBot: boolean): boolean {
  return isBot || visibility === EMAIL_VISIBILITY.everyone;
}

/**
 * The API `email` of a user, the same for every viewer (Zulip's get_display_email_address): the real
 * address when it is public, else the placeholder user<id>@<realm host>.
 */
export function displayEmail(userId: number, deliveryEmail: string, visibility: number, isBot: boolean, realmHost: string): string {
  return emailIsPublic(visibility, isBot) ? deliveryEmail : placeholderEmail(userId, realmHost);
}

/** The stand-in API address of a user whose real address is hidden: user<id>@<realm host>. */
export function placeholderEmail(userId: number, realmHost: string): string {
  return `user${userId}@${realmHost}`;
}

/**
 * The user id in an address of the placeholder's form at this realm's host, or null. Ids past 15
 * digits are no id (the store could not even compare them), so such an address finds nobody.
 */
export function placeholderUserId(email: string, realmHost: string): number | null {
  const m = /^user(\d{1,15})@(.+)$/i.exec(email.trim());
  return m && m[2].toLowerCase() === realmHost.toLowerCase() ? Number(m[1]) : null;
}

/** Whether an address has the placeholder's form at this realm's host (any number of digits). */
export function looksLikePlaceholder(email: string, realmHost: string): boolean {
  const m = /^user\d+@(.+)$/i.exec(email.trim());
  return m !== null && m[1].toLowerCase() === realmHost.toLowerCase();
}

/** A bot's address from its short name, as Zulip makes it. */
export function botEmail(shortName: string, realmHost: string): string {
  return `${shortName}-bot@${realmHost}`;
}

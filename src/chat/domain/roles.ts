// Organization roles (seed convention 7) and the system groups that mirror them.
export const ROLE = { owner: 100, administrator: 200, moderator: 300, member: 400, guest: 600 } as const;
export const ROLES: number[] = Object.values(ROLE);

export const isAdmin = (role: number) => role <= ROLE.administrator;
export const isGuest = (role: number) => role === ROLE.guest;

/**
 * Zulip's system groups, each containing the next (owners inside administrators, and so on up to
 * role:internet); role:nobody is empty. Order here is inner to outer.
 */
export const SYSTEM_GROUPS = [
  { name: 'role:owners', description: 'Owners of this organization' },
  { name: 'role:administrators', description: 'Administrators of this organization, including owners' },
  { name: 'role:moderators', description: 'Moderators of this organization, including administrators' },
  { name: 'role:fullmembers', description: 'Members of this organization, not including new accounts and guests' },
  { name: 'role:members', description: 'Members of this organization, not including guests' },
  { name: 'role:everyone', description: 'Everyone in this organization, including guests' },
  { name: 'role:internet', description: 'Everyone on the Internet' },
] as const;
export const NOBODY_GROUP = { name: 'role:nobody', description: 'Nobody' } as const;

/** The system groups a user of a role is a direct member of (members join fullmembers at once: no waiting period). */
export function directGroupsForRole(role: number): string[] {
  switch (role) {
    case ROLE.owner:
      return ['role:owners'];
    case ROLE.administrator:
      return ['role:administrators'];
    case ROLE.moderator:
      return ['role:moderators'];
    case ROLE.member:
      return ['role:members', 'role:fullmembers'];
    default:
      return ['role:everyone'];
  }
}

// The permission model. A permission is "*" (everything), a family wildcard ("dns.*", or deeper
// such as "dns.record.*"), or one command name. An API user may call a command when one of its
// permissions covers it, and may grant another key only what it holds itself.

export function allows(held: readonly string[], cmd: string): boolean {
  for (const p of held) {
    if (p === '*' || p === cmd) return true;
    if (p.endsWith('.*') && cmd.startsWith(p.slice(0, -1))) return true;
  }
  return false;
}

/** True when `held` includes everything `wanted` would grant. */
export function covers(held: readonly string[], wanted: string): boolean {
  if (wanted === '*') return held.includes('*');
  if (wanted.endsWith('.*')) {
    const prefix = wanted.slice(0, -1);
    return held.some((p) => p === '*' || (p.endsWith('.*') && prefix.startsWith(p.slice(0, -1))));
  }
  return allows(held, wanted);
}

/**
 * Every permission that exists: "*", a wildcard for each family and sub-family a command name has
 * ("dns.*", "dns.record.*"), and each command that needs one.
 */
export function systemPermissions(commands: readonly string[]): string[] {
  const wildcards = new Set<string>();
  for (const c of commands) {
    const parts = c.split('.');
    for (let i = 1; i < parts.length; i++) wildcards.add(parts.slice(0, i).join('.') + '.*');
  }
  return ['*', ...[...wildcards].sort(), ...[...commands].sort()];
}

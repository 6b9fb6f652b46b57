// The registry: every Infra command, found by name (json.php) or by REST method and path.
import type { Command } from '../command.js';
import { apiuserCommands } from './apiuser.js';
import { customerCommands } from './customer.js';
import { dnsCommands } from './dns.js';
import { sessionCommands } from './session.js';
// worker family
import { rctransactionCommands } from './rctransaction.js';

export function allCommands(): Command[] {
  const list: Command[] = [];
  // Permissions exist for the commands that need one; apiuser.* lists them from this registry.
  const permissionNames = () => list.filter((c) => (c.access ?? 'permission') === 'permission').map((c) => c.cmd);
  list.push(...apiuserCommands(permissionNames), ...customerCommands, ...sessionCommands, ...dnsCommands);
  // worker family
  list.push(...rctransactionCommands);
  return list;
}

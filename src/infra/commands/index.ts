// The registry: every Infra command, found by name (json.php) or by REST method and path.
import type { Command } from '../command.js';
import { apiuserCommands } from './apiuser.js';
import { customerCommands } from './customer.js';
import { dnsCommands } from './dns.js';
import { sessionCommands } from './session.js';
// issue 15, orders helper: order.*, order.contract.*, device.*
import { orderCommands } from './order.js';
import { deviceCommands } from './device.js';

export function allCommands(): Command[] {
  const list: Command[] = [];
  // Permissions exist for the commands that need one; apiuser.* lists them from this registry.
  const permissionNames = () => list.filter((c) => (c.access ?? 'permission') === 'permission').map((c) => c.cmd);
  list.push(...apiuserCommands(permissionNames), ...customerCommands, ...sessionCommands, ...dnsCommands);
  // issue 15, orders helper
  list.push(...orderCommands, ...deviceCommands);
  return list;
}

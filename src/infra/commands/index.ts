// The registry: every Infra command, found by name (json.php) or by REST method and path.
import type { Command } from '../command.js';
import { apiuserCommands } from './apiuser.js';
import { customerCommands } from './customer.js';
import { dnsCommands } from './dns.js';
import { sessionCommands } from './session.js';
// catalogue family (product, productgroup, pricing, dc, operatingsystem, installimage, template, isoimage)
import { catalogueCommands } from './catalogue.js';
// network family (issue 15)
import { loadbalancerCommands } from './loadbalancer.js';
import { networkCommands } from './network.js';
import { sshkeyCommands } from './sshkey.js';
// worker family
import { rctransactionCommands } from './rctransaction.js';
// issue 15, orders helper: order.*, order.contract.*, device.*
import { orderCommands } from './order.js';
import { deviceCommands } from './device.js';
// object storage (issue 17): storage.s3.bucket.*, storage.s3.credential.*
import { storageCommands } from './storage.js';

export function allCommands(): Command[] {
  const list: Command[] = [];
  // Permissions exist for the commands that need one; apiuser.* lists them from this registry.
  const permissionNames = () => list.filter((c) => (c.access ?? 'permission') === 'permission').map((c) => c.cmd);
  list.push(...apiuserCommands(permissionNames), ...customerCommands, ...sessionCommands, ...dnsCommands);
  // catalogue family
  list.push(...catalogueCommands);
  // network family (issue 15)
  list.push(...sshkeyCommands, ...networkCommands, ...loadbalancerCommands);
  // worker family
  list.push(...rctransactionCommands);
  // issue 15, orders helper
  list.push(...orderCommands, ...deviceCommands);
  // object storage (issue 17)
  list.push(...storageCommands);
  return list;
}

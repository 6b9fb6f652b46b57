// Infra's migrations, in order. Versions are numbered across both services (one keel_schema table
// records them): a new migration takes the next number free in src/infra/migrations and
// src/chat/migrations together. Never edit one that has shipped.
import type { Migration } from '../../platform/db/migrate.js';
import { infraCore } from './001_infra_core.js';
import { dns } from './002_dns.js';
import { infraServers } from './021_servers.js';
// provisioning worker
import { infraProvisioning } from './024_provisioning.js';

export const INFRA_MIGRATIONS: readonly Migration[] = [
  infraCore,
  dns,
  infraServers,
  // BRANCH i15-worker ONLY, REMOVE AT MERGE: stand-ins for the customers (22) and orders (23)
  // helpers' migrations, so that 24 follows without a gap on this branch.
  { version: 22, name: 'reserved (customers)', up: () => [] },
  { version: 23, name: 'reserved (orders)', up: () => [] },
  infraProvisioning,
];

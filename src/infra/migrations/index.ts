// Infra's migrations, in order. Versions are numbered across both services (one keel_schema table
// records them): a new migration takes the next number free in src/infra/migrations and
// src/chat/migrations together. Never edit one that has shipped.
import type { Migration } from '../../platform/db/migrate.js';
import { infraCore } from './001_infra_core.js';
import { dns } from './002_dns.js';
import { infraServers } from './021_servers.js';
// customers (issue 15)
import { infraCustomers } from './022_customers.js';

export const INFRA_MIGRATIONS: readonly Migration[] = [infraCore, dns, infraServers, infraCustomers];

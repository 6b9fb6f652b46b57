// Infra's migrations, in order. Versions are numbered across both services (one keel_schema table
// records them): a new migration takes the next number free in src/infra/migrations and
// src/chat/migrations together. Never edit one that has shipped.
import type { Migration } from '../../platform/db/migrate.js';
import { infraCore } from './001_infra_core.js';
import { dns } from './002_dns.js';
import { infraServers } from './021_servers.js';
// network family (issue 15): ssh keys, VLANs, IP networks; load balancers
import { infraNetwork } from './022_network.js';
import { infraLoadBalancers } from './023_load_balancers.js';
// customers (issue 15): sub-customers and resellers
import { infraCustomers } from './024_customers.js';
// provisioning worker (issue 15): sim machines, attempts
import { infraProvisioning } from './025_provisioning.js';
// object storage (issue 17): s3 buckets, credentials, objects, multipart uploads
import { infraS3 } from './034_s3.js';

export const INFRA_MIGRATIONS: readonly Migration[] = [infraCore, dns, infraServers, infraNetwork, infraLoadBalancers, infraCustomers, infraProvisioning, infraS3];

// Row types of the Infra tables, as Kysely sees them (see infra/migrations for the DDL).
import type { Generated } from 'kysely';

export interface CustomerRow {
  id: Generated<number>;
  company_name: string;
  std_name: string;
  first_name: string;
  last_name: string;
  email: string;
  status: string;
  parent_id: number | null;
  currency: string;
  date_created: number;
  date_modified: number;
  // ---- customers (issue 15, migration 24) ----
  /** 1: a reseller or partner, which may make sub-customers; 0: not. */
  is_reseller: Generated<number>;
  company_abn: Generated<string>;
  company_acn: Generated<string>;
  /** The customer's own reference (the provider's customID). */
  custom_id: Generated<string>;
}

export interface LoginRow {
  id: Generated<number>;
  customer_id: number;
  username: string;
  password_hash: string;
  name: string;
  role: string;
  status: string;
  last_login: number | null;
  date_created: number;
  date_modified: number;
}

export interface ApiUserRow {
  id: Generated<number>;
  customer_id: number;
  uuid: string;
  secret_hash: string;
  name: string;
  /** JSON array of permission strings. */
  permissions: string;
  status: string;
  date_created: number;
  date_modified: number;
}

export interface DnsDomainRow {
  id: Generated<number>;
  customer_id: number;
  /** Lower case, no trailing dot; unique across customers. */
  name: string;
  serial: number;
  /** ACTIVE (served) or DISABLED (kept, not served). */
  status: string;
  date_created: number;
  date_modified: number;
}

export interface DnsRecordRow {
  id: Generated<number>;
  domain_id: number;
  /** Relative to the zone, lower case; '' is the apex. */
  lookup: string;
  type: string;
  /** The value as the API shows it: address, target host name, TXT text, CAA value. */
  data: string;
  ttl: number;
  priority: number;
  weight: number;
  port: number;
  caa_flag: number;
  caa_tag: string;
  date_created: number;
  date_modified: number;
}

export interface OrderRow {
  id: Generated<number>;
  customer_id: number;
  product_code: string;
  quantity: number;
  /** productDetails as checked and completed (JSON). */
  details: string;
  change_txt: string;
  currency: string;
  cost_cents: number;
  /** PENDING | ACCEPTED | CANCELLED */
  status: string;
  date_created: number;
  date_modified: number;
}

export interface ContractRow {
  id: Generated<number>;
  order_id: number;
  customer_id: number;
  type: string;
  /** PENDING | ACTIVE | CANCELLED */
  status: string;
  device_id: number | null;
  currency: string;
  cost_cents: number;
  /** Unix ms (injectable clock) when the worker next acts on it; null: nothing to do. */
  due_at: number | null;
  date_created: number;
  date_modified: number;
  /** Migration 24 (worker): retries of the activation step, and why it FAILED. */
  attempts: Generated<number>;
  status_info: Generated<string>;
}

export interface DeviceRow {
  id: Generated<number>;
  customer_id: number;
  contract_id: number;
  name: string;
  std_name: string;
  /** ACTIVE | CANCELLED */
  status: string;
  dc_id: number;
  product_code: string;
  /** The machine as ordered, without secrets (JSON). */
  spec: string;
  machine_name: string;
  /** ONLINE | OFFLINE */
  power_switch: string;
  power_status: string;
  traffic_mb: number;
  date_created: number;
  date_modified: number;
}

export interface DeviceIpRow {
  id: Generated<number>;
  device_id: number;
  address: string;
  /** 4 or 6 */
  family: number;
  is_primary: number;
  network_id: number | null;
  date_created: number;
}

export interface DeviceFirewallPolicyRow {
  id: Generated<number>;
  device_id: number;
  /** INBOUND | OUTBOUND | ANY */
  direction: string;
  /** ALLOW | DENY | DISABLED | REJECT */
  policy: string;
  sort_order: number;
  comment: string;
  ip_from: string;
  ip_to: string;
  /** TCP | UDP | ANY */
  protocol: string;
  port_from: string | null;
  port_to: string | null;
  date_created: number;
  date_modified: number;
}

export interface TransactionRow {
  id: Generated<number>;
  customer_id: number;
  /** DEVICE */
  obj_type: string;
  obj_id: number;
  /** STARTUP | SHUTDOWN | SAFESHUTDOWN | FORCESHUTDOWN | REFRESHCONFIG | CANCEL | OPENVNC | CLOSEVNC */
  type: string;
  data: string | null;
  confirmation: number;
  /** PENDING | COMMENCED | COMPLETED | FAILED */
  status: string;
  status_info: string;
  due_at: number | null;
  date_created: number;
  date_modified: number;
  /** Migration 24 (worker): retries of the step under way. */
  attempts: Generated<number>;
}

// ---- provisioning worker (migration 25) ----
/** A machine of the simulated driver (drivers/sim.ts). */
export interface SimMachineRow {
  name: string;
  /** ONLINE | OFFLINE */
  power: string;
  /** MachineSpec without credentials (JSON). */
  spec: string;
  /** cloud-init of the last start (JSON), or null. */
  cloud_init: string | null;
  starts: Generated<number>;
  date_created: number;
  date_modified: number;
}

// ---- network family (issue 15: migrations 25 and 26) ----
export interface SshKeyRow {
  id: Generated<number>;
  customer_id: number;
  name: string;
  key_type: string;
  /** "<type> <base64>", no comment. */
  public_key: string;
  comment: string;
  /** SHA256:<unpadded base64>. */
  fingerprint: string;
  date_created: number;
  date_modified: number;
}

export interface VlanRow {
  id: Generated<number>;
  customer_id: number;
  dc_id: number;
  /** 802.1Q tag, 1..4094. */
  tag: number;
  name: string;
  date_created: number;
  date_modified: number;
}

export interface IpNetworkRow {
  id: Generated<number>;
  customer_id: number;
  dc_id: number;
  vlan_id: number | null;
  /** 4 or 6 */
  family: number;
  /** Network address, canonical text. */
  address: string;
  prefix_length: number;
  gateway: string;
  name: string;
  date_created: number;
  date_modified: number;
}

export interface LoadBalancerRow {
  id: Generated<number>;
  customer_id: number;
  name: string;
  hostname: string;
  type: string;
  /** JSON of the rest of the object. */
  config: string;
  version: number;
  date_created: number;
  date_modified: number;
}

export interface InfraTables {
  server_secrets: { name: string; value: string };
  customers: CustomerRow;
  logins: LoginRow;
  api_users: ApiUserRow;
  dns_domains: DnsDomainRow;
  dns_records: DnsRecordRow;
  dns_serial_floors: { name: string; serial: number };
  orders: OrderRow;
  contracts: ContractRow;
  devices: DeviceRow;
  device_ips: DeviceIpRow;
  device_firewall_policies: DeviceFirewallPolicyRow;
  transactions: TransactionRow;
  // network family (issue 15)
  ssh_keys: SshKeyRow;
  vlans: VlanRow;
  ip_networks: IpNetworkRow;
  load_balancers: LoadBalancerRow;
  // provisioning worker (migration 25)
  sim_machines: SimMachineRow;
  // object storage (issue 17, migration 34)
  s3_buckets: S3BucketRow;
  s3_credentials: S3CredentialRow;
  s3_objects: S3ObjectRow;
  s3_uploads: S3UploadRow;
  s3_parts: S3PartRow;
}

// ---- object storage (issue 17, migration 34) ------------------------------------------------------
export interface S3BucketRow {
  id: Generated<number>;
  customer_id: number;
  name: string;
  region_id: number;
  status: string;
  date_created: number;
  date_modified: number;
}

export interface S3CredentialRow {
  id: Generated<number>;
  customer_id: number;
  name: string;
  access_key: string;
  secret_sealed: string;
  status: string;
  date_created: number;
  date_modified: number;
}

export interface S3ObjectRow {
  id: Generated<number>;
  bucket_id: number;
  object_key: string;
  size: number;
  etag: string;
  content_type: string;
  metadata: string;
  file_key: string;
  modified_ms: number;
}

export interface S3UploadRow {
  id: Generated<number>;
  upload_id: string;
  bucket_id: number;
  object_key: string;
  content_type: string;
  metadata: string;
  date_created: number;
}

export interface S3PartRow {
  upload_id: number;
  part_number: number;
  size: number;
  etag: string;
  file_key: string;
}

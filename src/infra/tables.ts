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

export interface InfraTables {
  server_secrets: { name: string; value: string };
  customers: CustomerRow;
  logins: LoginRow;
  api_users: ApiUserRow;
  dns_domains: DnsDomainRow;
  dns_records: DnsRecordRow;
  dns_serial_floors: { name: string; serial: number };
}

// Hosted DNS: zones (one customer per zone name) and their records, as the dns.* commands keep them.
import type { Migration } from '../../platform/db/migrate.js';

export const dns: Migration = {
  version: 2,
  name: 'dns zones and records',
  up: (t) => [
    // name is UNIQUE across customers: a zone can be served by one customer only.
    `CREATE TABLE dns_domains (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      name ${t.text} NOT NULL UNIQUE,
      serial ${t.bigint} NOT NULL,
      status ${t.text} NOT NULL DEFAULT 'ACTIVE',
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX dns_domains_customer ON dns_domains (customer_id, id)`,
    // lookup is relative to the zone, lower case, '' for the apex. data is the value as the API
    // shows it (MX exchange, SRV target, CAA value, whole TXT text); the other parts have columns.
    `CREATE TABLE dns_records (
      id ${t.id},
      domain_id ${t.bigint} NOT NULL REFERENCES dns_domains(id) ON DELETE CASCADE,
      lookup ${t.text} NOT NULL,
      type ${t.text} NOT NULL,
      data ${t.text} NOT NULL,
      ttl ${t.bigint} NOT NULL,
      priority ${t.bigint} NOT NULL DEFAULT 0,
      weight ${t.bigint} NOT NULL DEFAULT 0,
      port ${t.bigint} NOT NULL DEFAULT 0,
      caa_flag ${t.bigint} NOT NULL DEFAULT 0,
      caa_tag ${t.text} NOT NULL DEFAULT '',
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX dns_records_domain ON dns_records (domain_id, lookup, type)`,
    // The last serial of a deleted zone, so the same name hosted again starts above it and
    // secondaries (which only transfer a higher serial) pick the new zone up.
    `CREATE TABLE dns_serial_floors (name ${t.text} PRIMARY KEY, serial ${t.bigint} NOT NULL)`,
  ],
};

// Infra foundation: customers, their logins, API users (keys), and server-wide secrets (the JWT key).
import type { Migration } from '../../platform/db/migrate.js';

export const infraCore: Migration = {
  version: 1,
  name: 'infra core',
  up: (t) => [
    `CREATE TABLE server_secrets (name ${t.text} PRIMARY KEY, value ${t.text} NOT NULL)`,
    `CREATE TABLE customers (
      id ${t.id},
      company_name ${t.text} NOT NULL,
      std_name ${t.text} NOT NULL,
      first_name ${t.text} NOT NULL DEFAULT '',
      last_name ${t.text} NOT NULL DEFAULT '',
      email ${t.text} NOT NULL DEFAULT '',
      status ${t.text} NOT NULL DEFAULT 'ACTIVE',
      parent_id ${t.bigint},
      currency ${t.text} NOT NULL DEFAULT 'AUD',
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE TABLE logins (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      username ${t.text} NOT NULL UNIQUE,
      password_hash ${t.text} NOT NULL,
      name ${t.text} NOT NULL DEFAULT '',
      role ${t.text} NOT NULL DEFAULT 'OWNER',
      status ${t.text} NOT NULL DEFAULT 'ACTIVE',
      last_login ${t.bigint},
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE TABLE api_users (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      uuid ${t.text} NOT NULL UNIQUE,
      secret_hash ${t.text} NOT NULL,
      name ${t.text} NOT NULL,
      permissions ${t.text} NOT NULL,
      status ${t.text} NOT NULL DEFAULT 'ACTIVE',
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX api_users_customer ON api_users (customer_id, id)`,
  ],
};

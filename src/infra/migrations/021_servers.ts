// Servers (issue 15): orders and the contracts they make, the devices contracts deliver, the
// devices' addresses and firewall policies, and the transactions (power and other actions) that the
// provisioning worker carries out. States are the provider's (infra-clients.md section 4); every
// row belongs to one customer and is scoped by it (customer-scope.ts). Money is in cents.
import type { Migration } from '../../platform/db/migrate.js';

export const infraServers: Migration = {
  version: 21,
  name: 'infra servers',
  up: (t) => [
    // PENDING (created) -> ACCEPTED (confirmed); CANCELLED when given up before confirmation.
    `CREATE TABLE orders (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      product_code ${t.text} NOT NULL,
      quantity ${t.bigint} NOT NULL DEFAULT 1,
      -- productDetails as checked and completed with the catalogue's defaults (JSON).
      details ${t.text} NOT NULL,
      change_txt ${t.text} NOT NULL,
      currency ${t.text} NOT NULL,
      -- per month, for the whole quantity
      cost_cents ${t.bigint} NOT NULL,
      status ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX orders_customer ON orders (customer_id, id)`,
    // One per server an order makes: PENDING -> ACTIVE once its device exists; CANCELLED at the end.
    `CREATE TABLE contracts (
      id ${t.id},
      order_id ${t.bigint} NOT NULL REFERENCES orders(id),
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      type ${t.text} NOT NULL,
      status ${t.text} NOT NULL,
      device_id ${t.bigint},
      currency ${t.text} NOT NULL,
      cost_cents ${t.bigint} NOT NULL,
      -- unix ms of the injectable clock when the worker next has something to do for it (null: nothing)
      due_at ${t.bigint},
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX contracts_order ON contracts (order_id)`,
    `CREATE INDEX contracts_customer ON contracts (customer_id, id)`,
    `CREATE INDEX contracts_due ON contracts (due_at)`,
    // ACTIVE while it exists; CANCELLED rows stay for history and answer "Could not find device".
    `CREATE TABLE devices (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      contract_id ${t.bigint} NOT NULL REFERENCES contracts(id),
      name ${t.text} NOT NULL,
      std_name ${t.text} NOT NULL,
      status ${t.text} NOT NULL,
      dc_id ${t.bigint} NOT NULL,
      product_code ${t.text} NOT NULL,
      -- the machine as ordered (MachineSpec without secrets, JSON)
      spec ${t.text} NOT NULL,
      -- the driver's name for the machine (drivers/driver.ts)
      machine_name ${t.text} NOT NULL,
      -- SYS_POWERSWITCH and SYS_POWERSTATUS: ONLINE | OFFLINE
      power_switch ${t.text} NOT NULL,
      power_status ${t.text} NOT NULL,
      traffic_mb ${t.bigint} NOT NULL DEFAULT 0,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX devices_customer ON devices (customer_id, id)`,
    `CREATE UNIQUE INDEX devices_machine ON devices (machine_name)`,
    // Addresses on a device; network_id set when allocated from a customer's network (network.*).
    `CREATE TABLE device_ips (
      id ${t.id},
      device_id ${t.bigint} NOT NULL REFERENCES devices(id),
      address ${t.text} NOT NULL,
      family ${t.bigint} NOT NULL,
      is_primary ${t.bigint} NOT NULL DEFAULT 0,
      network_id ${t.bigint},
      date_created ${t.bigint} NOT NULL
    )`,
    `CREATE UNIQUE INDEX device_ips_address ON device_ips (address)`,
    `CREATE INDEX device_ips_device ON device_ips (device_id)`,
    `CREATE TABLE device_firewall_policies (
      id ${t.id},
      device_id ${t.bigint} NOT NULL REFERENCES devices(id),
      direction ${t.text} NOT NULL,
      policy ${t.text} NOT NULL,
      sort_order ${t.bigint} NOT NULL,
      comment ${t.text} NOT NULL DEFAULT '',
      ip_from ${t.text} NOT NULL DEFAULT '',
      ip_to ${t.text} NOT NULL DEFAULT '',
      protocol ${t.text} NOT NULL,
      port_from ${t.text},
      port_to ${t.text},
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX device_firewall_device ON device_firewall_policies (device_id, sort_order)`,
    // PENDING -> COMMENCED -> COMPLETED, or FAILED with a readable status_info. One device's
    // transactions run one at a time, in id order.
    `CREATE TABLE transactions (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      obj_type ${t.text} NOT NULL,
      obj_id ${t.bigint} NOT NULL,
      type ${t.text} NOT NULL,
      -- the client's data string as sent (STARTUP: JSON with cloudInit), or null
      data ${t.text},
      confirmation ${t.bigint} NOT NULL,
      status ${t.text} NOT NULL,
      status_info ${t.text} NOT NULL DEFAULT '',
      due_at ${t.bigint},
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX transactions_obj ON transactions (obj_type, obj_id, id)`,
    `CREATE INDEX transactions_customer ON transactions (customer_id, id)`,
    `CREATE INDEX transactions_due ON transactions (status, due_at)`,
  ],
};

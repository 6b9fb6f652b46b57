// The provisioning worker's own state (issue 15): the simulated driver's machines, kept in the store
// so a restart finds them as they were, and how often the worker has retried a step.
import type { Migration } from '../../platform/db/migrate.js';

export const infraProvisioning: Migration = {
  version: 25,
  name: 'infra provisioning',
  up: (t) => [
    // drivers/sim.ts: one row per machine the sim driver made (name = devices.machine_name).
    `CREATE TABLE sim_machines (
      name ${t.text} PRIMARY KEY,
      -- ONLINE | OFFLINE
      power ${t.text} NOT NULL,
      -- the MachineSpec it was made or last reconfigured with (JSON, without credentials)
      spec ${t.text} NOT NULL,
      -- the cloud-init data of its last start (JSON), or null
      cloud_init ${t.text},
      starts ${t.bigint} NOT NULL DEFAULT 0,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    // Retryable driver failures (DriverError.retryable) of the step under way: bounded retries.
    `ALTER TABLE transactions ADD COLUMN attempts ${t.bigint} NOT NULL DEFAULT 0`,
    `ALTER TABLE contracts ADD COLUMN attempts ${t.bigint} NOT NULL DEFAULT 0`,
    // Why a contract FAILED (its machine could not be made), for contractInfo.
    `ALTER TABLE contracts ADD COLUMN status_info ${t.text} NOT NULL DEFAULT ''`,
  ],
};

// Load balancers (issue 15): the Go client's objects (rackcorp-api-go loadbalancer.go). The columns
// are what lists filter on; everything else of the object (backends, ports, regions, aliases,
// refresh patterns, ACLs) is kept as the checked JSON the API shows.
import type { Migration } from '../../platform/db/migrate.js';

export const infraLoadBalancers: Migration = {
  version: 23,
  name: 'infra load balancers',
  up: (t) => [
    `CREATE TABLE load_balancers (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      name ${t.text} NOT NULL,
      hostname ${t.text} NOT NULL,
      -- CDN | GLB | HTTP | TCP | UDP
      type ${t.text} NOT NULL,
      -- the rest of the object (JSON): see commands/loadbalancer.ts LoadBalancerConfig
      config ${t.text} NOT NULL,
      version ${t.bigint} NOT NULL,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX load_balancers_customer ON load_balancers (customer_id, id)`,
  ],
};

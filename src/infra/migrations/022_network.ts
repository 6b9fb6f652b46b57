// SSH keys and networks (issue 15): a customer's public keys, which the provisioning worker installs
// on its devices through cloud-init, and its VLANs and IP networks per data centre. Addresses handed
// out from a network to a device are rows of device_ips (migration 21) with network_id set, so the
// device view shows them like any other address.
import type { Migration } from '../../platform/db/migrate.js';

export const infraNetwork: Migration = {
  version: 22,
  name: 'infra ssh keys and networks',
  up: (t) => [
    `CREATE TABLE ssh_keys (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      name ${t.text} NOT NULL,
      -- ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256 ...
      key_type ${t.text} NOT NULL,
      -- "<type> <base64 blob>", without the comment: what authorized_keys gets
      public_key ${t.text} NOT NULL,
      comment ${t.text} NOT NULL DEFAULT '',
      -- SHA256:<unpadded base64>, as ssh-keygen -l shows it
      fingerprint ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX ssh_keys_customer ON ssh_keys (customer_id, id)`,
    `CREATE TABLE vlans (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      dc_id ${t.bigint} NOT NULL,
      -- the 802.1Q tag, 1..4094; unique per customer and data centre
      tag ${t.bigint} NOT NULL,
      name ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX vlans_customer ON vlans (customer_id, id)`,
    `CREATE UNIQUE INDEX vlans_tag ON vlans (customer_id, dc_id, tag)`,
    `CREATE TABLE ip_networks (
      id ${t.id},
      customer_id ${t.bigint} NOT NULL REFERENCES customers(id),
      dc_id ${t.bigint} NOT NULL,
      vlan_id ${t.bigint} REFERENCES vlans(id),
      -- 4 or 6
      family ${t.bigint} NOT NULL,
      -- the network address in canonical form (RFC 5952 for IPv6) and the prefix length
      address ${t.text} NOT NULL,
      prefix_length ${t.bigint} NOT NULL,
      gateway ${t.text} NOT NULL DEFAULT '',
      name ${t.text} NOT NULL,
      date_created ${t.bigint} NOT NULL,
      date_modified ${t.bigint} NOT NULL
    )`,
    `CREATE INDEX ip_networks_customer ON ip_networks (customer_id, id)`,
    `CREATE INDEX device_ips_network ON device_ips (network_id)`,
  ],
};

// A device's firewall policies in the store: device.firewall.update's changes (add, replace by id,
// remove with policy "DELETED") and the policies an order asked for, which the provisioning worker
// gives the device it makes (addOrderedPolicies).
import type { Transaction } from 'kysely';
import { infraErrors, infraProblems as P, problemsFault } from '../errors.js';
import { checkFirewallPolicy, MAX_FIREWALL_POLICIES, type FirewallPolicyIn, type FirewallPolicySpec, type OrderDetails, type Problems } from '../orders-details.js';
import type { InfraTables } from '../tables.js';

type Trx = Transaction<InfraTables>;

/** Applies a firewall update to one device, in the caller's transaction; throws the FAULT before any write. */
export async function applyFirewall(trx: Trx, deviceId: number, policies: FirewallPolicyIn[], now: number): Promise<void> {
  const problems: Problems = {};
  const existing = await trx.selectFrom('device_firewall_policies').select('id').where('device_id', '=', deviceId).execute();
  const have = new Set(existing.map((r) => r.id));
  const deleted = new Set<number>(policies.filter((x) => x.policy === 'DELETED' && x.id).map((x) => x.id!));
  const updates: [number, FirewallPolicySpec][] = [];
  const adds: FirewallPolicySpec[] = [];
  policies.forEach((x, i) => {
    const field = `firewallPolicies.${i}`;
    if (x.policy === 'DELETED' && !x.id) problems[`${field}.id`] = P.policyIdRequired();
    const spec = checkFirewallPolicy(x, field, problems);
    if (!spec) return;
    // A policy sent with the id of one this request deletes is a new one (Terraform sends a changed
    // rule as the new rule plus the old one DELETED).
    if (x.id && !deleted.has(x.id)) {
      if (!have.has(x.id)) throw infraErrors.firewallPolicyNotFound({ id: x.id, deviceId });
      updates.push([x.id, spec]);
    } else adds.push(spec);
  });
  // Deleting a policy that is already gone is done: a retried request changes nothing more.
  const remaining = [...have].filter((id) => !deleted.has(id)).length + adds.length;
  if (remaining > MAX_FIREWALL_POLICIES) problems.firewallPolicies = P.tooManyPolicies({ max: MAX_FIREWALL_POLICIES });
  if (Object.keys(problems).length) throw problemsFault(problems);
  if (deleted.size)
    await trx
      .deleteFrom('device_firewall_policies')
      .where('device_id', '=', deviceId)
      .where('id', 'in', [...deleted])
      .execute();
  for (const [id, s] of updates) {
    await trx.updateTable('device_firewall_policies').set(policyColumns(s, now)).where('id', '=', id).where('device_id', '=', deviceId).execute();
  }
  for (const s of adds) {
    await trx
      .insertInto('device_firewall_policies')
      .values({ device_id: deviceId, ...policyColumns(s, now), date_created: now })
      .execute();
  }
  await trx.updateTable('devices').set({ date_modified: now }).where('id', '=', deviceId).execute();
}

function policyColumns(s: FirewallPolicySpec, now: number) {
  return {
    direction: s.direction,
    policy: s.policy,
    sort_order: s.order,
    comment: s.comment,
    ip_from: s.ipAddressFrom,
    ip_to: s.ipAddressTo,
    protocol: s.protocol,
    port_from: s.portFrom,
    port_to: s.portTo,
    date_modified: now,
  };
}

/** The worker, making a device: the policies its order asked for (already checked by order.create). */
export async function addOrderedPolicies(trx: Trx, deviceId: number, details: Pick<OrderDetails, 'firewallPolicies'>, now: number): Promise<void> {
  for (const s of details.firewallPolicies.slice(0, MAX_FIREWALL_POLICIES)) {
    await trx
      .insertInto('device_firewall_policies')
      .values({ device_id: deviceId, ...policyColumns(s, now), date_created: now })
      .execute();
  }
}

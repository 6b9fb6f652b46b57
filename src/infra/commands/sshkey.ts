// sshkey.*: a customer's SSH public keys. The provisioning worker installs them on the customer's
// devices through cloud-init (customerSshKeys below). The provider's doc pages show the sshkey
// family in lower case (`customerid`) with `matches` + `results` lists and a default window of 50000.
import Type from 'typebox';
import type { Selectable } from 'kysely';
import { defineCommand, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { pagingParams, RES_WINDOW_MAX } from '../params.js';
import { unixSeconds } from '../../platform/clock.js';
import type { Queryable } from '../../platform/db/database.js';
import type { InfraTables, SshKeyRow } from '../tables.js';
import { parseSshPublicKey, SSH_KEY_TYPES, type ParsedSshKey } from '../network/ssh-public-key.js';
import { actingCustomer, seenCustomers } from '../network/scope.js';

/** Keys go into every new device's authorized_keys: a few dozen is plenty, 100 is generous. */
export const MAX_SSH_KEYS_PER_CUSTOMER = 100;
/** One create at a time across the store: the bound is counted and the row added in one step. */
const LOCK = 7250;
/** An RSA key of 16384 bits is about 2.8 KB of base64; a long comment fits too. */
const KEY_TEXT_MAX = 8192;

const Id = Type.Integer({ minimum: 1, description: 'SSH key id' });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const PublicKey = Type.String({ minLength: 1, maxLength: KEY_TEXT_MAX, description: `OpenSSH public key: "<type> <base64> [comment]", type one of ${SSH_KEY_TYPES.join(', ')}` });
const CustomerId = Type.Integer({ minimum: 1, description: "customer id (customerid or customerId); defaults to the caller's" });

function present(row: Selectable<SshKeyRow>) {
  return {
    id: row.id,
    customerid: row.customer_id,
    name: row.name,
    type: row.key_type,
    publickey: row.comment ? `${row.public_key} ${row.comment}` : row.public_key,
    comment: row.comment,
    fingerprint: row.fingerprint,
    datecreated: row.date_created,
    datemodified: row.date_modified,
  };
}

/** The key or a FAULT on `publicKey` saying what is wrong with it. */
function checkedKey(text: string): ParsedSshKey {
  const k = parseSshPublicKey(text);
  if ('publicKey' in k) return k;
  const problem =
    k.kind === 'shape'
      ? P.sshKeyShape()
      : k.kind === 'type'
        ? P.sshKeyType({ type: k.type, types: SSH_KEY_TYPES.join(', ') })
        : k.kind === 'base64'
          ? P.sshKeyBase64()
          : k.kind === 'mismatch'
            ? P.sshKeyMismatch({ written: k.written, embedded: k.embedded })
            : k.kind === 'rsaBits'
              ? P.sshKeyRsaBits({ bits: k.bits, min: 1024, max: 16384 })
              : P.sshKeyBlob({ type: k.type });
  throw infraErrors.invalidParameter({ name: 'publicKey', problem });
}

async function findSeen(call: Call, id: number): Promise<Selectable<SshKeyRow>> {
  const customers = await seenCustomers(call);
  const row = await call.services.db.kysely.selectFrom('ssh_keys').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.sshKeyNotFound();
  return row;
}

/**
 * The authorized_keys lines of a customer's keys, oldest first: what the provisioning worker puts in
 * cloud-init's `ssh_authorized_keys` when it builds a device's MachineSpec (call it then, so a key
 * added after the order still reaches the device). Only the device's own customer's keys.
 */
export async function customerSshKeys(db: Queryable<InfraTables>, customerId: number): Promise<string[]> {
  const rows = await db.selectFrom('ssh_keys').select(['public_key', 'comment']).where('customer_id', '=', customerId).orderBy('id').execute();
  return rows.map((r) => (r.comment ? `${r.public_key} ${r.comment}` : r.public_key));
}

export const sshkeyCommands: Command[] = [
  defineCommand({
    cmd: 'sshkey.getall',
    summary: "List the customer's SSH keys (and its sub-customers')",
    rest: { method: 'GET', path: '/sshkey' },
    params: Type.Object({
      ...pagingParams(RES_WINDOW_MAX),
      customerid: Type.Optional(CustomerId),
      id: Type.Optional(Id),
      name: Type.Optional(Type.String({ maxLength: 200, description: 'only keys whose name contains this (any case)' })),
      fingerprint: Type.Optional(Type.String({ maxLength: 100 })),
    }),
    async handler(call, p) {
      const customers = await seenCustomers(call, p.customerid);
      if (customers.length === 0) return { message: 'SSHKeys Retrieved Successfully', data: [], matches: 0, top: { results: [] } };
      let q = call.services.db.kysely.selectFrom('ssh_keys').where('customer_id', 'in', customers);
      if (p.id !== undefined) q = q.where('id', '=', p.id);
      if (p.fingerprint !== undefined) q = q.where('fingerprint', '=', p.fingerprint);
      const rows = (await q.selectAll().orderBy('id').execute()).filter((r) => p.name === undefined || r.name.toLowerCase().includes(p.name.toLowerCase()));
      const start = p.resStart ?? 0;
      const list = rows.slice(start, start + (p.resWindow ?? RES_WINDOW_MAX)).map(present);
      return { message: 'SSHKeys Retrieved Successfully', data: list, matches: rows.length, top: { results: list } };
    },
  }),
  defineCommand({
    cmd: 'sshkey.get',
    summary: 'One SSH key',
    rest: { method: 'GET', path: '/sshkey/{id}' },
    params: Type.Object({ id: Id }),
    async handler(call, p) {
      const sshkey = present(await findSeen(call, p.id));
      return { message: 'SSHKey Retrieved Successfully', data: sshkey, top: { sshkey } };
    },
  }),
  defineCommand({
    cmd: 'sshkey.create',
    summary: 'Store an SSH public key; new devices of the customer get it through cloud-init',
    rest: { method: 'POST', path: '/sshkey' },
    params: Type.Object({ name: Name, publicKey: PublicKey, customerid: Type.Optional(CustomerId) }),
    async handler(call, p) {
      const key = checkedKey(p.publicKey);
      const customerId = await actingCustomer(call, p.customerid);
      const now = unixSeconds(call.services.clock);
      const row = await call.services.db.exclusive(LOCK, async (trx) => {
        const held = await countKeys(trx, customerId);
        if (held >= MAX_SSH_KEYS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_SSH_KEYS_PER_CUSTOMER, things: 'SSH keys' });
        return trx
          .insertInto('ssh_keys')
          .values({ customer_id: customerId, name: p.name, key_type: key.type, public_key: key.publicKey, comment: key.comment, fingerprint: key.fingerprint, date_created: now, date_modified: now })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      const sshkey = present(row);
      return { message: 'SSHKey Created Successfully', data: sshkey, top: { sshkey } };
    },
  }),
  defineCommand({
    cmd: 'sshkey.update',
    summary: 'Rename an SSH key or replace its public key (devices made before keep what they got)',
    rest: { method: 'PUT', path: '/sshkey/{id}' },
    params: Type.Object({ id: Id, name: Type.Optional(Name), publicKey: Type.Optional(PublicKey) }),
    async handler(call, p) {
      const key = p.publicKey === undefined ? undefined : checkedKey(p.publicKey);
      const row = await findSeen(call, p.id);
      const changes: Partial<Selectable<SshKeyRow>> = { date_modified: unixSeconds(call.services.clock) };
      if (p.name !== undefined) changes.name = p.name;
      if (key) Object.assign(changes, { key_type: key.type, public_key: key.publicKey, comment: key.comment, fingerprint: key.fingerprint });
      const updated = await call.services.db.kysely.updateTable('ssh_keys').set(changes).where('id', '=', row.id).returningAll().executeTakeFirst();
      if (!updated) throw infraErrors.sshKeyNotFound();
      const sshkey = present(updated);
      return { message: 'SSHKey Updated Successfully', data: sshkey, top: { sshkey } };
    },
  }),
  defineCommand({
    cmd: 'sshkey.delete',
    summary: 'Delete an SSH key (devices made before keep it)',
    rest: { method: 'DELETE', path: '/sshkey/{id}' },
    params: Type.Object({ id: Id }),
    async handler(call, p) {
      const row = await findSeen(call, p.id);
      await call.services.db.kysely.deleteFrom('ssh_keys').where('id', '=', row.id).execute();
      return { message: 'SSHKey Deleted Successfully' };
    },
  }),
];

async function countKeys(db: Queryable<InfraTables>, customerId: number): Promise<number> {
  const r = await db
    .selectFrom('ssh_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('customer_id', '=', customerId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

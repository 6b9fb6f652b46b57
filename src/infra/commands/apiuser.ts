// apiuser.*: the customer's API keys (uuid + secret) and what each may do.
import Type from 'typebox';
import { sql, type Kysely, type Selectable } from 'kysely';
import { defineCommand, requirePrincipal, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems } from '../errors.js';
import { pagingParams } from '../params.js';
import { newApiKey, parsePermissions } from '../accounts.js';
import { systemPermissions } from '../permissions.js';
import { requireMayGrant, requireMayManage } from '../credential-rules.js';
import { unixSeconds } from '../../platform/clock.js';
import { preparedQuery } from '../../platform/db/fast/prepared.js';
import type { ApiUserRow, InfraTables } from '../tables.js';

const Paging = pagingParams(20);
/** Each key is a row and a credential to check; a customer's are bounded like the rest of what it holds. */
export const MAX_API_USERS_PER_CUSTOMER = 1000;
const Id = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ minLength: 1, maxLength: 64 })], { description: 'API user id, or its uuid' });
const Permissions = Type.Union([Type.Array(Type.String()), Type.String()], {
  description: 'list of permissions (or one comma-separated string): "*", "family.*" or command names; see apiuser.permissions.system',
});
const Status = Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]);

/** The columns an answer shows: all but the secret's hash, which is read only to check a key. */
const SHOWN = ['id', 'uuid', 'name', 'customer_id', 'permissions', 'status', 'date_created', 'date_modified'] as const;
type ShownRow = Pick<Selectable<ApiUserRow>, (typeof SHOWN)[number]>;

function present(row: ShownRow) {
  return {
    id: row.id,
    uuid: row.uuid,
    name: row.name,
    customerId: row.customer_id,
    permissions: parsePermissions(row.permissions),
    status: row.status,
    active: row.status === 'ACTIVE',
    dateCreated: row.date_created,
    dateModified: row.date_modified,
  };
}

/** Checks requested permissions exist and that the caller holds them. */
function grantable(call: Call, all: string[], value: string[] | string): string[] {
  const list = (Array.isArray(value) ? value : value.split(',')).map((p) => p.trim()).filter((p) => p !== '');
  const known = new Set(all);
  for (const p of list) {
    if (!known.has(p)) throw infraErrors.invalidParameter({ name: 'permissions', problem: infraProblems.unknownPermission({ permission: p }) });
  }
  requireMayGrant(requirePrincipal(call), list);
  return [...new Set(list)];
}

const ownById = preparedQuery((db: Kysely<InfraTables>, customerId: number, id: number) => db.selectFrom('api_users').select(SHOWN).where('customer_id', '=', customerId).where('id', '=', id));
const ownByUuid = preparedQuery((db: Kysely<InfraTables>, customerId: number, uuid: string) => db.selectFrom('api_users').select(SHOWN).where('customer_id', '=', customerId).where('uuid', '=', uuid));

async function findOwn(call: Call, id: number | string) {
  const { customerId } = requirePrincipal(call);
  const db = call.services.db.kysely;
  const byNumber = typeof id === 'number' || /^\d+$/.test(id);
  // An id no row can have (beyond 2^53) is simply not found; the store is not asked.
  if (byNumber && !Number.isSafeInteger(Number(id))) throw infraErrors.apiUserNotFound();
  const [row] = byNumber ? await ownById(db, customerId, Number(id)) : await ownByUuid(db, customerId, id);
  if (!row) throw infraErrors.apiUserNotFound();
  return row;
}

export function apiuserCommands(allCommandNames: () => string[]): Command[] {
  const all = () => systemPermissions(allCommandNames());
  return [
    defineCommand({
      cmd: 'apiuser.getall',
      summary: "List the customer's API users",
      rest: { method: 'GET', path: '/apiusers' },
      params: Type.Object({
        ...Paging,
        name: Type.Optional(Type.String({ maxLength: 200, description: 'only API users whose name contains this' })),
        status: Type.Optional(Status),
      }),
      async handler(call, p) {
        const { customerId } = requirePrincipal(call);
        let q = call.services.db.kysely.selectFrom('api_users').where('customer_id', '=', customerId);
        if (p.name) q = q.where(sql<boolean>`lower(name) like ${'%' + p.name.toLowerCase().replace(/[\\%_]/g, '\\$&') + '%'} escape '\\'`);
        if (p.status) q = q.where('status', '=', p.status);
        const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        const rows = await q
          .select(SHOWN)
          .orderBy('id')
          .limit(p.resWindow ?? 20)
          .offset(p.resStart ?? 0)
          .execute();
        const list = rows.map(present);
        return { message: 'API Users Retrieved Successfully', data: list, matches: Number(total.n), top: { apiusers: list } };
      },
    }),
    defineCommand({
      cmd: 'apiuser.create',
      summary: 'Create an API user; its secret is returned once',
      rest: { method: 'POST', path: '/apiusers' },
      params: Type.Object({
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        permissions: Type.Optional(Permissions),
        status: Type.Optional(Status),
      }),
      async handler(call, p) {
        const { customerId } = requirePrincipal(call);
        const permissions = grantable(call, all(), p.permissions ?? []);
        const now = unixSeconds(call.services.clock);
        const key = newApiKey();
        const db = call.services.db.kysely;
        const held = await db
          .selectFrom('api_users')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('customer_id', '=', customerId)
          .executeTakeFirstOrThrow();
        if (Number(held.n) >= MAX_API_USERS_PER_CUSTOMER) throw infraErrors.limitReached({ limit: MAX_API_USERS_PER_CUSTOMER, things: 'API users' });
        const row = await db
          .insertInto('api_users')
          .values({
            customer_id: customerId,
            uuid: key.uuid,
            secret_hash: key.secretHash,
            name: p.name ?? `API user ${key.uuid.slice(0, 8)}`,
            permissions: JSON.stringify(permissions),
            status: p.status ?? 'ACTIVE',
            date_created: now,
            date_modified: now,
          })
          .returning(SHOWN)
          .executeTakeFirstOrThrow();
        const apiuser = { ...present(row), secret: key.secret };
        return { message: 'API User Created Successfully', data: apiuser, top: { apiuser } };
      },
    }),
    defineCommand({
      cmd: 'apiuser.permissions.system',
      summary: 'Every permission that exists: "*", each "family.*" and each command name',
      rest: { method: 'GET', path: '/apiusers/permissions/system' },
      params: Type.Object({}),
      async handler() {
        const permissions = all();
        return { message: 'Permissions Retrieved Successfully', data: permissions, matches: permissions.length, top: { permissions } };
      },
    }),
    defineCommand({
      cmd: 'apiuser.get',
      summary: 'One API user of the customer',
      rest: { method: 'GET', path: '/apiusers/{id}' },
      params: Type.Object({ id: Id, ...Paging }),
      async handler(call, p) {
        const apiuser = present(await findOwn(call, p.id));
        return { message: 'API User Retrieved Successfully', data: apiuser, top: { apiuser } };
      },
    }),
    defineCommand({
      cmd: 'apiuser.update',
      summary: 'Change an API user: name, permissions, ACTIVE/DISABLED, or a new secret (returned once)',
      rest: { method: 'PUT', path: '/apiusers/{id}' },
      params: Type.Object({
        id: Id,
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        permissions: Type.Optional(Permissions),
        status: Type.Optional(Status),
        active: Type.Optional(Type.Boolean({ description: 'false disables the key, like status DISABLED' })),
        newSecret: Type.Optional(Type.Boolean({ description: 'true replaces the secret; the new one is returned once' })),
      }),
      async handler(call, p) {
        const row = await findOwn(call, p.id);
        // A key may be changed only by a caller holding everything it holds (credential-rules.ts).
        requireMayManage(requirePrincipal(call), parsePermissions(row.permissions), `API user ${row.id}`);
        if (p.status !== undefined && p.active !== undefined && (p.status === 'ACTIVE') !== p.active) {
          throw infraErrors.invalidParameter({ name: 'active', problem: infraProblems.contradictsStatus({ status: p.status }) });
        }
        const changes: Partial<Selectable<ApiUserRow>> = {};
        if (p.name !== undefined) changes.name = p.name;
        if (p.permissions !== undefined) changes.permissions = JSON.stringify(grantable(call, all(), p.permissions));
        if (p.status !== undefined) changes.status = p.status;
        if (p.active !== undefined) changes.status = p.active ? 'ACTIVE' : 'DISABLED';
        let secret: string | undefined;
        if (p.newSecret) {
          const key = newApiKey();
          secret = key.secret;
          changes.secret_hash = key.secretHash;
        }
        changes.date_modified = unixSeconds(call.services.clock);
        // Only if its permissions are still those just judged: were it raised meanwhile, the caller
        // could otherwise rotate (and read) the secret of a key it may no longer manage.
        const updated = await call.services.db.kysely.updateTable('api_users').set(changes).where('id', '=', row.id).where('permissions', '=', row.permissions).returning(SHOWN).executeTakeFirst();
        if (!updated) throw infraErrors.apiUserChanged({ id: row.id });
        const apiuser = secret ? { ...present(updated), secret } : present(updated);
        return { message: 'API User Updated Successfully', data: apiuser, top: { apiuser } };
      },
    }),
  ];
}

// Code playgrounds: adding and removing them (administrators); the list is in register
// (realm_playgrounds) and every change publishes it again.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { adminRequired, playgroundExists, playgroundNotFound } from '../errors.js';
import { isAdmin } from '../domain/roles.js';
import { checkPlayground, playgroundsNotice } from '../domain/playgrounds.js';
import { checkRoom } from '../domain/bounds.js';

export const addPlayground = defineEndpoint({
  method: 'POST',
  path: '/realm/playgrounds',
  summary: 'Add a code playground',
  auth: 'user',
  params: Type.Object({ name: Type.String(), pygments_language: Type.String(), url_template: Type.String() }),
  async handler(call, p) {
    if (!isAdmin(requireUser(call).role)) throw adminRequired();
    const { db, events } = call.services;
    const realmId = call.realm.id;
    const checked = checkPlayground(p);
    const id = await events.write(
      () =>
        db.transaction(async (trx) => {
          const same = await trx
            .selectFrom('realm_playgrounds')
            .select('id')
            .where('realm_id', '=', realmId)
            .where('pygments_language', '=', checked.pygments_language)
            .where('name', '=', checked.name)
            .executeTakeFirst();
          if (same) throw playgroundExists();
          await checkRoom(trx, 'playgroundsPerRealm', realmId, 1);
          const row = await trx
            .insertInto('realm_playgrounds')
            .values({ realm_id: realmId, ...checked })
            .returning('id')
            .executeTakeFirstOrThrow();
          return Number(row.id);
        }),
      () => playgroundsNotice(db.kysely, realmId),
    );
    return { id };
  },
});

export const removePlayground = defineEndpoint({
  method: 'DELETE',
  path: '/realm/playgrounds/{playground_id}',
  summary: 'Remove a code playground',
  auth: 'user',
  params: Type.Object({ playground_id: Type.Integer() }),
  async handler(call, p) {
    if (!isAdmin(requireUser(call).role)) throw adminRequired();
    const { db, events } = call.services;
    const realmId = call.realm.id;
    await events.write(
      async () => {
        const r = await db.kysely.deleteFrom('realm_playgrounds').where('id', '=', p.playground_id).where('realm_id', '=', realmId).executeTakeFirst();
        if (Number(r.numDeletedRows) === 0) throw playgroundNotFound();
      },
      () => playgroundsNotice(db.kysely, realmId),
    );
    return {};
  },
});

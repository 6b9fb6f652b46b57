// Realm data exports (Zulip's zerver/views/realm_export.py), for administrators: POST /export/realm
// records a requested export (Zulip's limits: 5 per realm in 7 days; no self-service export of more
// than 250,000 messages or 10 GiB of uploads) that the background writer (chat/exports/worker.ts)
// turns into a tarball; GET lists them; DELETE removes a finished one's file; GET
// /export/realm/consents says who allows their private data to be exported. Every change sends
// realm_export (the whole list) to the administrators after its commit. The tarball itself is served
// at its export_url by chat/http.ts (exports/download.ts), to administrators only.
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { adminRequired, exportAlreadyDeleted, exportFailedNothingToDelete, exportInProgress, exportRateLimited, exportTooLarge, invalidExportId, paramNotInList } from '../errors.js';
import { isAdmin } from '../domain/roles.js';
import {
  EXPORT_LIMIT,
  EXPORT_LIMIT_WINDOW_MS,
  EXPORT_STATUS,
  EXPORT_TYPE,
  exportConsents,
  exportObjects,
  MAX_EXPORT_MESSAGES,
  MAX_EXPORT_UPLOAD_BYTES,
  realmExportNotice,
} from '../domain/realm-exports.js';

function requireAdmin(call: ChatCall): void {
  if (!isAdmin(requireUser(call).role)) throw adminRequired();
}

export const createRealmExport = defineEndpoint({
  method: 'POST',
  path: '/export/realm',
  summary: 'Create a data export',
  auth: 'user',
  params: Type.Object({ export_type: Type.Integer({ default: EXPORT_TYPE.public }) }),
  async handler(call, p) {
    requireAdmin(call);
    const me = requireUser(call);
    if (p.export_type !== EXPORT_TYPE.public && p.export_type !== EXPORT_TYPE.fullWithConsent) throw paramNotInList({ name: 'export_type', var_name: 'export_type' });
    const { db, events, clock } = call.services;
    const realm = call.realm;
    const now = clock.now();
    const row = await events.write(
      () =>
        db.transaction(async (trx) => {
          const recent = await trx
            .selectFrom('realm_exports')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('realm_id', '=', realm.id)
            .where('date_requested', '>=', now - EXPORT_LIMIT_WINDOW_MS)
            .executeTakeFirstOrThrow();
          if (Number(recent.n) >= EXPORT_LIMIT) throw exportRateLimited();
          const messages = await trx
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('realm_id', '=', realm.id)
            .executeTakeFirstOrThrow();
          const uploads = await trx
            .selectFrom('attachments')
            .select((eb) => eb.fn.sum<number | string | null>('size').as('bytes'))
            .where('realm_id', '=', realm.id)
            .executeTakeFirstOrThrow();
          if (Number(messages.n) > MAX_EXPORT_MESSAGES || Number(uploads.bytes ?? 0) > MAX_EXPORT_UPLOAD_BYTES) throw exportTooLarge({ email: 'the server administrator' });
          return trx
            .insertInto('realm_exports')
            .values({ realm_id: realm.id, acting_user_id: me.id, type: p.export_type, status: EXPORT_STATUS.requested, date_requested: now })
            .returning('id')
            .executeTakeFirstOrThrow();
        }),
      () => realmExportNotice(db.kysely, realm, call.services.realmUrl(realm)),
    );
    call.services.exports?.kick();
    return { id: Number(row.id) };
  },
});

export const getRealmExports = defineEndpoint({
  method: 'GET',
  path: '/export/realm',
  summary: 'Get all data exports',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    requireAdmin(call);
    return { exports: await exportObjects(call.services.db.kysely, call.realm, call.services.realmUrl(call.realm)) };
  },
});

export const deleteRealmExport = defineEndpoint({
  method: 'DELETE',
  path: '/export/realm/{export_id}',
  summary: 'Delete a data export',
  auth: 'user',
  params: Type.Object({ export_id: Type.Integer() }),
  async handler(call, p) {
    requireAdmin(call);
    const { db, events, clock, files } = call.services;
    const realm = call.realm;
    const path = await events.write(
      () =>
        db.transaction(async (trx) => {
          const row = await trx.selectFrom('realm_exports').selectAll().where('id', '=', p.export_id).where('realm_id', '=', realm.id).executeTakeFirst();
          if (!row) throw invalidExportId();
          if (row.status === EXPORT_STATUS.deleted) throw exportAlreadyDeleted();
          if (row.status === EXPORT_STATUS.failed) throw exportFailedNothingToDelete();
          if (row.status !== EXPORT_STATUS.succeeded) throw exportInProgress();
          await trx.updateTable('realm_exports').set({ status: EXPORT_STATUS.deleted, date_deleted: clock.now() }).where('id', '=', row.id).execute();
          return row.export_path;
        }),
      () => realmExportNotice(db.kysely, realm, call.services.realmUrl(realm)),
    );
    // The row says deleted first: the file is no longer served, whether or not its removal succeeds now.
    if (path) await files.delete(path).catch((err: Error) => call.services.log.warn('realm export file not removed', { path, error: err.message }));
    return {};
  },
});

export const getRealmExportConsents = defineEndpoint({
  method: 'GET',
  path: '/export/realm/consents',
  summary: 'Get data export consent state',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    requireAdmin(call);
    return { export_consents: await exportConsents(call.services.db.kysely, call.realm.id) };
  },
});

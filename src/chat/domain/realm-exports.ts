// Realm data exports (Zulip's RealmExport, zerver/views/realm_export.py and zerver/lib/export.py):
// the rules of a request (who, how often, how large), the export objects clients see, and the
// realm_export events administrators receive. The tarball itself is written by chat/exports/.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, Realm, RealmExportRow } from '../tables.js';
import type { Selectable } from 'kysely';
import type { Notice } from '../events/hub.js';
import { isAdmin } from './roles.js';
import { settingOf } from './user-settings.js';

/** Zulip's export types: public data only, or public data and the private data of consenting users. */
export const EXPORT_TYPE = { public: 1, fullWithConsent: 2 } as const;
/** Zulip's RealmExport status numbers. */
export const EXPORT_STATUS = { requested: 1, started: 2, succeeded: 3, failed: 4, deleted: 5 } as const;
/** Zulip's limit: at most 5 exports requested per realm in any 7 days. */
export const EXPORT_LIMIT = 5;
export const EXPORT_LIMIT_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** Zulip refuses self-service exports of realms with more history than this (MAX_MESSAGE_HISTORY). */
export const MAX_EXPORT_MESSAGES = 250_000;
/** And of realms whose uploads take more than this (MAX_UPLOAD_QUOTA, 10 GiB). */
export const MAX_EXPORT_UPLOAD_BYTES = 10 * 1024 ** 3;
/** Under /user_avatars/ (Zulip's local-storage URL of export tarballs), the file store key of every tarball starts so. */
export const EXPORT_KEY_PREFIX = 'exports';

type Row = Selectable<RealmExportRow>;

/** The URL an export is downloaded from: Zulip's local-storage form, `<realm url>/user_avatars/<export_path>`. */
export function exportUrl(realmUrl: string, exportPath: string): string {
  return `${realmUrl}/user_avatars/${exportPath.split('/').map(encodeURIComponent).join('/')}`;
}

/** One RealmExport object (Zulip's get_realm_exports_serialized). Timestamps in seconds, with fractions. */
export function exportObject(row: Row, realmUrl: string): Record<string, unknown> {
  return {
    id: row.id,
    export_time: row.date_requested / 1000,
    acting_user_id: row.acting_user_id,
    export_url: row.status === EXPORT_STATUS.succeeded && row.export_path ? exportUrl(realmUrl, row.export_path) : null,
    deleted_timestamp: row.date_deleted === null ? null : row.date_deleted / 1000,
    failed_timestamp: row.date_failed === null ? null : row.date_failed / 1000,
    pending: row.status === EXPORT_STATUS.requested || row.status === EXPORT_STATUS.started,
    export_type: row.type,
  };
}

/** Every export of the realm that a user asked for, by id (as Zulip lists them). */
export async function exportObjects(db: Queryable<ChatTables>, realm: Realm, realmUrl: string): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom('realm_exports').selectAll().where('realm_id', '=', realm.id).where('acting_user_id', 'is not', null).orderBy('id').execute();
  return rows.map((r) => exportObject(r, realmUrl));
}

/** The realm's active human administrators (owners included): who receives realm_export events. */
export async function humanAdminIds(db: Queryable<ChatTables>, realmId: number): Promise<number[]> {
  const rows = await db.selectFrom('chat_users').select(['id', 'role']).where('realm_id', '=', realmId).where('is_active', '=', 1).where('is_bot', '=', 0).execute();
  return rows.filter((r) => isAdmin(r.role)).map((r) => r.id);
}

/** realm_export: the whole list again, to every administrator (Zulip's notify_realm_export). */
export async function realmExportNotice(db: Queryable<ChatTables>, realm: Realm, realmUrl: string): Promise<Notice[]> {
  const exports = await exportObjects(db, realm, realmUrl);
  const event = { type: 'realm_export', exports };
  return [{ type: 'realm_export', userIds: await humanAdminIds(db, realm.id), render: () => event }];
}

/** realm_export_consent: a user's allow_private_data_export changed (Zulip 10, feature level 312), to the administrators. */
export async function exportConsentNotice(db: Queryable<ChatTables>, realmId: number, userId: number, consented: boolean): Promise<Notice[]> {
  const event = { type: 'realm_export_consent', user_id: userId, consented };
  return [{ type: 'realm_export_consent', userIds: await humanAdminIds(db, realmId), render: () => event }];
}

/** GET /export/realm/consents: every active human user's allow_private_data_export (Zulip's get_users_export_consents). */
export async function exportConsents(db: Queryable<ChatTables>, realmId: number): Promise<{ user_id: number; consented: boolean }[]> {
  const rows = await db.selectFrom('chat_users').select(['id', 'settings', 'timezone']).where('realm_id', '=', realmId).where('is_active', '=', 1).where('is_bot', '=', 0).orderBy('id').execute();
  return rows.map((u) => ({ user_id: u.id, consented: settingOf(u, 'allow_private_data_export') === true }));
}

/** The ids of the realm's users who allow administrators to export their private data. */
export async function consentingUserIds(db: Queryable<ChatTables>, realmId: number): Promise<Set<number>> {
  return new Set((await exportConsents(db, realmId)).filter((c) => c.consented).map((c) => c.user_id));
}

// The download of a finished export, at its export_url (`<realm url>/user_avatars/exports/...`,
// Zulip's local-storage form): only for the realm's administrators, authenticated as every API call
// is (chat/http.ts serves it outside /api/v1 and asks here). A deleted, failed or unknown export,
// or another realm's, is not found.
import type { Readable } from 'node:stream';
import type { ChatServices } from '../endpoint.js';
import type { ChatUser, Realm } from '../tables.js';
import { adminRequired, routeNotFound } from '../errors.js';
import { isAdmin } from '../domain/roles.js';
import { EXPORT_KEY_PREFIX, EXPORT_STATUS } from '../domain/realm-exports.js';

/** Requests under this path are export downloads. */
export const EXPORT_URL_PREFIX = `/user_avatars/${EXPORT_KEY_PREFIX}/`;

export interface ExportFile {
  stream: Readable;
  size: number;
  name: string;
}

/** The file an administrator asked for, or a ChatError thrown. `target` is the request target (path and maybe a query). */
export async function exportFile(services: ChatServices, realm: Realm, user: ChatUser, target: string): Promise<ExportFile> {
  if (!isAdmin(user.role)) throw adminRequired();
  const pathname = target.split('?')[0];
  let key: string;
  try {
    key = pathname.slice('/user_avatars/'.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    throw routeNotFound();
  }
  const row = await services.db.kysely
    .selectFrom('realm_exports')
    .select(['id'])
    .where('realm_id', '=', realm.id)
    .where('export_path', '=', key)
    .where('status', '=', EXPORT_STATUS.succeeded)
    .executeTakeFirst();
  if (!row) throw routeNotFound();
  const found = await services.files.read(key);
  if (!found) throw routeNotFound();
  return { stream: found.stream, size: found.file.size, name: key.slice(key.lastIndexOf('/') + 1) };
}

// Uploaded files, as Zulip keeps them: the bytes in the file store under a path_id of
// `<realm id>/<24 random characters>/<sanitised name>`, a row in `attachments` (migration 26), and the
// URL `/user_uploads/<path_id>` that messages link. POST /user_uploads, the tus endpoint and custom
// emoji all store through here, so every upload is bounded, recorded and found the same way.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Database } from '../../platform/db/database.js';
import type { FileStore } from '../../platform/files/file-store.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';

/**
 * Zulip's sanitize_name for file names: NFKC, then only word characters, spaces, dots and hyphens
 * kept, trimmed, runs of spaces and hyphens made one hyphen; an empty, '.' or '..' result becomes
 * "uploaded-file". Unicode letters stay (Python's \w is Unicode-aware).
 */
export function sanitizeFileName(name: string): string {
  let v = name.normalize('NFKC');
  v = v.replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, '').trim();
  v = v.replace(/[-\s]+/gu, '-');
  if (v === '' || v === '.' || v === '..') return 'uploaded-file';
  // A name over a file system's 255 bytes is cut, keeping its extension where it can.
  while (Buffer.byteLength(v) > 200) {
    const dot = v.lastIndexOf('.');
    v = dot > 0 && v.length - dot <= 16 ? v.slice(0, dot - 1) + v.slice(dot) : v.slice(0, -1);
  }
  return v;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new path_id for a file of this realm: the random part makes it unguessable (24 characters, as Zulip's). */
export function newPathId(realmId: number, fileName: string): string {
  const bytes = randomBytes(24);
  let random = '';
  for (const b of bytes) random += ALPHABET[b % ALPHABET.length];
  return `${realmId}/${random}/${sanitizeFileName(fileName)}`;
}

/** The URL messages link for a path_id (relative to the realm, as Zulip answers it). */
export function uploadUrl(pathId: string): string {
  return `/user_uploads/${pathId.split('/').map(encodeURIComponent).join('/')}`;
}

export interface StoredUpload {
  id: number;
  pathId: string;
  url: string;
  fileName: string;
  size: number;
}

/**
 * Streams one upload into the file store, then records it. The file is written first: a crash
 * between the two leaves an orphan file (never a row without its bytes). `maxBytes` is the realm's
 * max_file_upload_size_mib; passing it rejects with FileTooLargeError and stores nothing.
 */
export async function storeUpload(
  services: { db: Database<ChatTables>; files: FileStore; clock: { now(): number } },
  realm: Realm,
  owner: ChatUser,
  file: { name: string; contentType: string | null; body: Readable | Buffer; maxBytes: number },
): Promise<StoredUpload> {
  const pathId = newPathId(realm.id, file.name);
  const stored = await services.files.put(pathId, file.body, { maxBytes: file.maxBytes });
  try {
    const row = await services.db.kysely
      .insertInto('attachments')
      .values({
        realm_id: realm.id,
        owner_id: owner.id,
        path_id: pathId,
        file_name: file.name,
        content_type: file.contentType,
        size: stored.size,
        create_time: Math.floor(services.clock.now() / 1000),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { id: Number(row.id), pathId, url: uploadUrl(pathId), fileName: file.name, size: stored.size };
  } catch (err) {
    await services.files.delete(pathId).catch(() => {});
    throw err;
  }
}

// Uploaded files, as Zulip keeps them: the bytes in the file store under a path_id of
// `<realm id>/<24 random characters>/<sanitised name>`, a row in `attachments` (migration 26), and the
// URL `/user_uploads/<path_id>` that messages link. POST /user_uploads, the tus endpoint and custom
// emoji all store through here, so every upload is bounded, recorded and found the same way.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeySeal } from './api-keys.js';
import type { Readable } from 'node:stream';
import type { Database, Queryable } from '../../platform/db/database.js';
import type { FileStore } from '../../platform/files/file-store.js';
import type { AttachmentRow, ChatTables, ChatUser, Message, Realm } from '../tables.js';
import type { Selectable } from 'kysely';
import type { Notice } from '../events/hub.js';
import { checkRoom } from './bounds.js';
import { fetchByIds } from './messages.js';
import { webPublicAccess } from './spectators.js';
import { THUMBNAIL_FORMATS } from './thumbnails.js';
import { invalidAttachment, uploadQuotaReached } from '../errors.js';

export type Attachment = Selectable<AttachmentRow>;

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
 * Records a file already in the store under `pathId` (its owner's quota checked in the same
 * transaction); on any refusal or failure the file is removed, so no bytes stay without a row.
 */
export async function recordUpload(
  services: { db: Database<ChatTables>; files: FileStore; clock: { now(): number } },
  realm: Realm,
  owner: ChatUser,
  file: { pathId: string; name: string; contentType: string | null; size: number },
): Promise<StoredUpload> {
  try {
    const id = await services.db.transaction(async (trx) => {
      await checkUploadRoom(trx, owner.id, file.size);
      const row = await trx
        .insertInto('attachments')
        .values({
          realm_id: realm.id,
          owner_id: owner.id,
          path_id: file.pathId,
          file_name: file.name,
          content_type: file.contentType,
          size: file.size,
          create_time: Math.floor(services.clock.now() / 1000),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return Number(row.id);
    });
    return { id, pathId: file.pathId, url: uploadUrl(file.pathId), fileName: file.name, size: file.size };
  } catch (err) {
    await services.files.delete(file.pathId).catch(() => {});
    throw err;
  }
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
  return recordUpload(services, realm, owner, { pathId, name: file.name, contentType: file.contentType, size: stored.size });
}

const TYPES_BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  png: 'image/png',
  apng: 'image/apng',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  heic: 'image/heic',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  svg: 'image/svg+xml',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  wav: 'audio/wav',
  flac: 'audio/flac',
  aac: 'audio/aac',
  mp4: 'video/mp4',
  webm: 'video/webm',
};

/** A file name's media type by its extension (Python's mimetypes.guess_type for the common ones), else undefined. */
export function guessType(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : TYPES_BY_EXTENSION[name.slice(dot + 1).toLowerCase()];
}

/**
 * Zulip's get_file_info: the part's Content-Type, else one guessed from the name, else
 * application/octet-stream. Keel keeps the bare type (no parameters a client sent). The multipart
 * reader reports a part without a Content-Type (Python's requests sends none) as text/plain, so
 * text/plain and application/octet-stream are taken as "not said": the name decides, and a name
 * without a known extension gets application/octet-stream (served as an attachment).
 */
export function uploadContentType(sent: string | undefined, name: string): string {
  const bare = (sent ?? '').split(';')[0].trim().toLowerCase();
  if (bare && !READER_DEFAULTS.has(bare) && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(bare)) return bare;
  // Not said (or said as the reader's defaults): the name decides, else the safe default.
  return guessType(name) ?? 'application/octet-stream';
}

/** What the multipart reader (busboy) reports for a part without a Content-Type: indistinguishable from a type sent. */
const READER_DEFAULTS = new Set(['text/plain', 'application/octet-stream']);

/**
 * The types Zulip serves inline (zerver/lib/mime_types.py INLINE_MIME_TYPES): anything else is sent
 * as an attachment, so a browser never renders an uploaded page or script on the realm's origin.
 */
export const INLINE_MIME_TYPES = new Set([
  'application/pdf',
  'audio/aac',
  'audio/flac',
  'audio/mp4',
  'audio/mpeg',
  'audio/wav',
  'audio/webm',
  'image/apng',
  'image/avif',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  'text/plain',
  'video/mp4',
  'video/webm',
]);

// ---- Limits --------------------------------------------------------------------------------

/**
 * Zulip's MAX_FILE_UPLOAD_SIZE, register's `max_file_upload_size_mib`: the default of
 * --chat-max-upload-mib (ChatServices.maxFileUploadMib), Zulip's long-standing 25 MiB.
 */
export const MAX_FILE_UPLOAD_SIZE_MIB = 25;

/**
 * Keel's quota on one user's uploads, in bytes (Zulip has a per-realm quota only on its paid plans;
 * a self-hosted server has none). The count of files is bounded too (bounds.ts attachmentsPerUser).
 */
export const UPLOAD_BYTES_PER_USER = 10 * 1024 * 1024 * 1024;

/** Throws unless the owner may keep `adding` more bytes (and one more file): run inside the transaction that records the file. */
export async function checkUploadRoom(db: Queryable<ChatTables>, ownerId: number, adding: number): Promise<void> {
  await checkRoom(db, 'attachmentsPerUser', ownerId, 1);
  const used = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.sum<number | string | null>('size').as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  if (Number(used.n ?? 0) + adding > UPLOAD_BYTES_PER_USER) throw uploadQuotaReached({ limit: UPLOAD_BYTES_PER_USER / (1024 * 1024) });
}

/** The realm's `upload_space_used`: the bytes of every file its users uploaded (Zulip's currently_used_upload_space_bytes). */
export async function uploadSpaceUsed(db: Queryable<ChatTables>, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.sum<number | string | null>('size').as('n'))
    .where('realm_id', '=', realmId)
    .executeTakeFirstOrThrow();
  return Number(row.n ?? 0);
}

// ---- Attachment objects and events ---------------------------------------------------------

/** Zulip's Attachment.to_dict(): times in milliseconds, the messages that link the file. */
export interface AttachmentObject {
  id: number;
  name: string;
  path_id: string;
  size: number;
  create_time: number;
  messages: { id: number; date_sent: number }[];
}

/** The attachment objects of these rows, with the messages that link each (one query for all). */
export async function attachmentObjects(db: Queryable<ChatTables>, rows: Pick<Attachment, 'id' | 'file_name' | 'path_id' | 'size' | 'create_time'>[]): Promise<AttachmentObject[]> {
  if (!rows.length) return [];
  const links = await db
    .selectFrom('attachment_messages as am')
    .innerJoin('messages as m', 'm.id', 'am.message_id')
    .select(['am.attachment_id', 'm.id', 'm.date_sent'])
    .where(
      'am.attachment_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('m.id')
    .execute();
  const byAttachment = new Map<number, { id: number; date_sent: number }[]>();
  for (const l of links) {
    const list = byAttachment.get(Number(l.attachment_id)) ?? [];
    list.push({ id: Number(l.id), date_sent: Number(l.date_sent) * 1000 });
    byAttachment.set(Number(l.attachment_id), list);
  }
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.file_name,
    path_id: r.path_id,
    size: Number(r.size),
    create_time: Number(r.create_time) * 1000,
    messages: byAttachment.get(Number(r.id)) ?? [],
  }));
}

/** A user's uploads (GET /attachments), oldest first. */
export async function attachmentsOf(db: Queryable<ChatTables>, ownerId: number): Promise<AttachmentObject[]> {
  const rows = await db.selectFrom('attachments').selectAll().where('owner_id', '=', ownerId).orderBy('id').execute();
  return attachmentObjects(db, rows);
}

/** Zulip's `attachment` event (notify_attachment_update), to the one user it concerns. */
export async function attachmentNotices(
  db: Queryable<ChatTables>,
  realmId: number,
  userId: number,
  op: 'add' | 'update' | 'remove',
  attachments: (AttachmentObject | { id: number })[],
): Promise<Notice[]> {
  if (!attachments.length) return [];
  const used = await uploadSpaceUsed(db, realmId);
  return attachments.map((attachment) => {
    const body = { type: 'attachment', op, attachment, upload_space_used: used };
    return { type: 'attachment', userIds: [userId], render: () => body };
  });
}

/** The `update` notices of attachments a message just claimed, to its sender. */
export async function claimNotices(db: Queryable<ChatTables>, realmId: number, senderId: number, claimed: readonly number[] | undefined): Promise<Notice[]> {
  if (!claimed?.length) return [];
  const rows = await db
    .selectFrom('attachments')
    .selectAll()
    .where('id', 'in', [...claimed])
    .orderBy('id')
    .execute();
  return attachmentNotices(db, realmId, senderId, 'update', await attachmentObjects(db, rows));
}

// ---- Access -----------------------------------------------------------------------------------

/** What a request for a file may see: nothing (404), the row but not the bytes (403), or both. */
export type FileAccess = { kind: 'missing' } | { kind: 'denied'; attachment: Attachment } | { kind: 'allowed'; attachment: Attachment };

/**
 * Zulip's validate_attachment_request: the uploader; anyone who may read a message that links the
 * file (a direct message they received, a channel message they received or whose channel's history
 * they may read); a spectator (no user) only for a file linked from a web-public channel of the realm
 * while the realm lets spectators in. Keel decides from the linking messages themselves rather than
 * from the cached is_realm_public / is_web_public flags, so a channel made private, or a message
 * moved out of a public channel, takes access away at once.
 */
export async function fileAccess(db: Queryable<ChatTables>, realm: Realm, user: ChatUser | undefined, pathId: string): Promise<FileAccess> {
  const attachment = await db.selectFrom('attachments').selectAll().where('path_id', '=', pathId).executeTakeFirst();
  if (!attachment) return { kind: 'missing' };
  return (await mayRead(db, realm, user, attachment)) ? { kind: 'allowed', attachment } : { kind: 'denied', attachment };
}

async function mayRead(db: Queryable<ChatTables>, realm: Realm, user: ChatUser | undefined, a: Attachment): Promise<boolean> {
  if (Number(a.realm_id) !== realm.id) return false;
  if (user) return userMayRead(db, realm.id, user, a);
  if (!(await webPublicAccess(db, realm))) return false;
  const linked = await db
    .selectFrom('attachment_messages as am')
    .innerJoin('messages as m', 'm.id', 'am.message_id')
    .innerJoin('streams as s', 's.id', 'm.stream_id')
    .select('m.id')
    .where('am.attachment_id', '=', a.id)
    .where('s.is_web_public', '=', 1)
    .where('s.invite_only', '=', 0)
    .limit(1)
    .executeTakeFirst();
  return linked !== undefined;
}

/** The rule for a user of the realm: the uploader, or a reader of any message linking the file. */
export async function userMayRead(db: Queryable<ChatTables>, realmId: number, user: ChatUser, a: Attachment): Promise<boolean> {
  if (Number(a.realm_id) !== realmId) return false;
  if (Number(a.owner_id) === user.id) return true;
  const ids = (await db.selectFrom('attachment_messages').select('message_id').where('attachment_id', '=', a.id).execute()).map((r) => Number(r.message_id));
  if (!ids.length) return false;
  const found = await fetchByIds(db, realmId, user, { conditions: [], history: true }, ids);
  return found.ids.length > 0;
}

// ---- Claiming -----------------------------------------------------------------------------------

const UPLOAD_LINK = /href="([^"]*)"/g;

/**
 * The path_ids a rendered message links (Zulip's potential_attachment_path_ids): every link to
 * `/user_uploads/<path_id>`, relative or on the realm's own URL, %-escapes decoded. Thumbnail and
 * temporary URLs are not uploads.
 */
export function linkedPathIds(rendered: string, realmUrl?: string): string[] {
  if (!rendered.includes('/user_uploads/')) return [];
  const found = new Set<string>();
  for (const m of rendered.matchAll(UPLOAD_LINK)) {
    let href = m[1].replaceAll('&amp;', '&');
    if (realmUrl && href.startsWith(realmUrl)) href = href.slice(realmUrl.length);
    if (!href.startsWith('/user_uploads/')) continue;
    const tail = href.slice('/user_uploads/'.length).split(/[?#]/)[0];
    if (tail.startsWith('thumbnail/') || tail.startsWith('temporary/')) continue;
    try {
      found.add(decodeURIComponent(tail));
    } catch {
      // A broken escape names no upload.
    }
  }
  return [...found];
}

/**
 * Zulip's do_claim_attachments, inside the send's or edit's transaction: each linked upload the sender
 * may read is recorded as linked from the message, and becomes realm-public (web-public) when the
 * message is in a public (web-public) channel. Links to files the sender may not read, or to no file,
 * are left alone. Returns the attachments claimed.
 */
export async function claimAttachments(db: Queryable<ChatTables>, realmId: number, sender: ChatUser, messageId: number, streamId: number | null, pathIds: string[]): Promise<number[]> {
  if (!pathIds.length) return [];
  const stream = streamId === null ? undefined : await db.selectFrom('streams').select(['invite_only', 'is_web_public']).where('id', '=', streamId).executeTakeFirst();
  const claimed: number[] = [];
  for (const pathId of pathIds) {
    const a = await db.selectFrom('attachments').selectAll().where('path_id', '=', pathId).executeTakeFirst();
    if (!a || !(await userMayRead(db, realmId, sender, a))) continue;
    const have = await db.selectFrom('attachment_messages').select('message_id').where('attachment_id', '=', a.id).where('message_id', '=', messageId).executeTakeFirst();
    if (!have) await db.insertInto('attachment_messages').values({ attachment_id: a.id, message_id: messageId }).execute();
    const realmPublic = stream !== undefined && stream.invite_only === 0;
    const webPublic = realmPublic && stream.is_web_public === 1;
    if ((realmPublic && a.is_realm_public !== 1) || (webPublic && a.is_web_public !== 1)) {
      await db
        .updateTable('attachments')
        .set({ is_realm_public: realmPublic || a.is_realm_public === 1 ? 1 : 0, is_web_public: webPublic || a.is_web_public === 1 ? 1 : 0 })
        .where('id', '=', a.id)
        .execute();
    }
    claimed.push(Number(a.id));
  }
  return claimed;
}

/** What an edit did to a message's uploads: those it claimed, and its sender's that no message links any more. */
export interface AttachmentChange {
  claimed: number[];
  detached: AttachmentObject[];
}

/**
 * Zulip's check_attachment_reference_change for an edit of the message's content: links dropped are
 * unrecorded, new ones claimed (for the message's sender); `detached` lists the sender's uploads that
 * the edit left linked from no message (PATCH /messages' detached_uploads).
 */
export async function relinkAttachments(db: Queryable<ChatTables>, message: Message, rendered: string, realmUrl?: string): Promise<AttachmentChange> {
  const before = await db
    .selectFrom('attachment_messages as am')
    .innerJoin('attachments as a', 'a.id', 'am.attachment_id')
    .select(['a.id', 'a.path_id'])
    .where('am.message_id', '=', message.id)
    .execute();
  const now = new Set(linkedPathIds(rendered, realmUrl));
  const dropped = before.filter((b) => !now.has(b.path_id)).map((b) => Number(b.id));
  const added = [...now].filter((p) => !before.some((b) => b.path_id === p));
  if (dropped.length) await db.deleteFrom('attachment_messages').where('message_id', '=', message.id).where('attachment_id', 'in', dropped).execute();
  const detachedRows = dropped.length
    ? await db
        .selectFrom('attachments as a')
        .selectAll('a')
        .where('a.id', 'in', dropped)
        .where('a.owner_id', '=', message.sender_id)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('attachment_messages as am').select('am.message_id').whereRef('am.attachment_id', '=', 'a.id'))))
        .orderBy('a.id')
        .execute()
    : [];
  let claimed: number[] = [];
  if (added.length) {
    const sender = await db.selectFrom('chat_users').selectAll().where('id', '=', message.sender_id).executeTakeFirst();
    if (sender) claimed = await claimAttachments(db, Number(message.realm_id), sender, message.id, message.stream_id === null ? null : Number(message.stream_id), added);
  }
  return { claimed, detached: await attachmentObjects(db, detachedRows) };
}

/**
 * After messages moved between channels: the realm-public and web-public marks of the uploads they
 * link, worked out again from every message linking each (Zulip clears them to be recomputed).
 */
export async function refreshAttachmentMarks(db: Queryable<ChatTables>, messageIds: number[]): Promise<void> {
  if (!messageIds.length) return;
  const ids = (await db.selectFrom('attachment_messages').select('attachment_id').distinct().where('message_id', 'in', messageIds).execute()).map((r) => Number(r.attachment_id));
  for (const id of ids) {
    const channels = await db
      .selectFrom('attachment_messages as am')
      .innerJoin('messages as m', 'm.id', 'am.message_id')
      .innerJoin('streams as s', 's.id', 'm.stream_id')
      .select(['s.invite_only', 's.is_web_public'])
      .where('am.attachment_id', '=', id)
      .where('s.invite_only', '=', 0)
      .execute();
    await db
      .updateTable('attachments')
      .set({ is_realm_public: channels.length ? 1 : 0, is_web_public: channels.some((c) => c.is_web_public === 1) ? 1 : 0 })
      .where('id', '=', id)
      .execute();
  }
}

// ---- Removal --------------------------------------------------------------------------------------

/** The thumbnails Keel may have made of an upload (thumbnails.ts), removed with it. */
export function thumbnailKeys(pathId: string): string[] {
  return THUMBNAIL_FORMATS.map((f) => `thumbnail/${pathId}/${f}`);
}

/** The owner's attachment, or Zulip's "Invalid attachment" (access_attachment_by_id with needs_owner). */
export async function ownAttachment(db: Queryable<ChatTables>, owner: ChatUser, id: number): Promise<Attachment> {
  const row = await db.selectFrom('attachments').selectAll().where('id', '=', id).where('owner_id', '=', owner.id).executeTakeFirst();
  if (!row) throw invalidAttachment();
  return row;
}

/** Removes the file and its thumbnails from the store (after the row is gone: a crash leaves an orphan file, never a row without bytes). */
export async function removeStoredFiles(files: FileStore, pathId: string): Promise<void> {
  for (const key of [pathId, ...thumbnailKeys(pathId)]) await files.delete(key);
}

// ---- Temporary URLs ----------------------------------------------------------------------------

/** How long a temporary URL serves its file (Zulip's SIGNED_ACCESS_TOKEN_VALIDITY_IN_SECONDS default). */
export const TEMPORARY_URL_SECONDS = 60;

const TOKEN_PURPOSE = 'user_uploads temporary url';

/**
 * GET /api/v1/user_uploads/...'s answer: `/user_uploads/temporary/<token>/<file name>`, the token the
 * hex of `<path_id>:<time>:<signature>` (Zulip's TimestampSigner, base16), signed under the server's key.
 */
export function temporaryUrl(seal: ApiKeySeal, pathId: string, nowMs: number): string {
  const signed = `${pathId}:${Math.floor(nowMs / 1000).toString(36)}`;
  const token = Buffer.from(`${signed}:${seal.mac(TOKEN_PURPOSE, signed)}`)
    .toString('hex')
    .toUpperCase();
  return `/user_uploads/temporary/${token}/${encodeURIComponent(pathId.split('/').pop()!)}`;
}

/** The path_id a temporary URL's token names, or undefined when it is not ours, is broken, or has expired. */
export function pathIdOfToken(seal: ApiKeySeal, token: string, nowMs: number): string | undefined {
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(token) || token.length > 4096) return undefined;
  const text = Buffer.from(token, 'hex').toString('utf8');
  const sigAt = text.lastIndexOf(':');
  const timeAt = text.lastIndexOf(':', sigAt - 1);
  if (timeAt <= 0) return undefined;
  const signed = text.slice(0, sigAt);
  const expected = Buffer.from(seal.mac(TOKEN_PURPOSE, signed));
  const given = Buffer.from(text.slice(sigAt + 1));
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  const issued = Number.parseInt(text.slice(timeAt + 1, sigAt), 36);
  if (!Number.isFinite(issued) || nowMs / 1000 - issued > TEMPORARY_URL_SECONDS) return undefined;
  return text.slice(0, timeAt);
}

// ---- Text charsets ---------------------------------------------------------------------------------

/** How much of a text file is read to tell its charset (Zulip's maybe_add_charset stops at 32 KiB). */
export const CHARSET_SNIFF_BYTES = 32 * 1024;

/**
 * The charset Zulip's maybe_add_charset would add to a text/plain upload, for the cases that matter:
 * `ascii` for a file seen whole with no byte over 0x7f (chardet's confident answer; a longer file
 * that is ASCII so far gets none, as Zulip's early abort), `utf-8` for valid UTF-8 with other
 * characters, and none for anything else (Keel does not guess legacy encodings).
 */
export function textCharset(head: Buffer, whole: boolean): string | undefined {
  let ascii = true;
  for (const b of head) {
    if (b > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) return whole ? 'ascii' : undefined;
  try {
    // A cut through a character at the end of a partial read is no error (stream: true keeps it pending).
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !whole });
    return 'utf-8';
  } catch {
    return undefined;
  }
}

/** The charset of a stored text file, from its first CHARSET_SNIFF_BYTES (textCharset). */
export async function sniffCharset(files: FileStore, pathId: string, size: number): Promise<string | undefined> {
  if (size === 0) return undefined;
  try {
    const read = await files.read(pathId, { start: 0, end: Math.min(size, CHARSET_SNIFF_BYTES) - 1 });
    if (!read) return undefined;
    const parts: Buffer[] = [];
    for await (const chunk of read.stream) parts.push(chunk as Buffer);
    return textCharset(Buffer.concat(parts), size <= CHARSET_SNIFF_BYTES);
  } catch {
    // A charset is a nicety: a read that fails leaves the type as it is.
    return undefined;
  }
}

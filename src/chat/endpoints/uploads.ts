// Uploaded files (Zulip's zerver/views/upload.py and attachments.py): POST /user_uploads streams one
// file to the file store, GET /user_uploads/{realm_id_str}/{filename} answers a temporary URL for it,
// GET /attachments lists the caller's uploads and DELETE /attachments/{attachment_id} removes one.
// Each change is an `attachment` event to the owner's queues. The files themselves are served
// outside /api/v1 (chat/uploads-http.ts).
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { readUpload } from '../forms.js';
import { FileTooLargeError } from '../../platform/files/file-store.js';
import {
  sniffCharset,
  attachmentNotices,
  attachmentObjects,
  attachmentsOf,
  fileAccess,
  newPathId,
  ownAttachment,
  recordUpload,
  removeStoredFiles,
  temporaryUrl,
  uploadContentType,
  uploadSpaceUsed,
} from '../domain/uploads.js';
import { noFileToUpload, oneFileAtATime, uploadForbidden, uploadMissing, uploadTooLarge } from '../errors.js';

/** What a multipart body may carry beside its file (part headers, boundaries, small fields). */
const MULTIPART_OVERHEAD = 1024 * 1024;

export const uploadFile = defineEndpoint({
  method: 'POST',
  path: '/user_uploads',
  summary: 'Upload a file',
  auth: 'user',
  streamsBody: true,
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    const { files, maxFileUploadMib } = call.services;
    // The limit register reports (--chat-max-upload-mib).
    const maxBytes = maxFileUploadMib * 1024 * 1024;
    const tooLarge = () => uploadTooLarge({ max_size: maxFileUploadMib });
    const read = call.request
      ? await readUpload(call.request, {
          maxFileBytes: maxBytes,
          limit: maxBytes + MULTIPART_OVERHEAD,
          tooLarge,
          async store(part) {
            // Zulip keeps the name as sent (%-escapes decoded) and sanitises only the path_id's copy.
            let name = part.filename;
            try {
              name = decodeURIComponent(name);
            } catch {
              // Not an escaped name: kept as sent.
            }
            const pathId = newPathId(call.realm.id, name);
            let contentType = uploadContentType(part.mimeType, name);
            try {
              const stored = await files.put(pathId, part.stream, { maxBytes });
              // A text file's charset, told from its first bytes read back (Zulip's maybe_add_charset).
              if (contentType === 'text/plain') {
                const charset = await sniffCharset(files, pathId, stored.size);
                if (charset) contentType = `${contentType}; charset=${charset}`;
              }
              return { pathId, name, contentType, size: stored.size };
            } catch (err) {
              throw err instanceof FileTooLargeError ? tooLarge() : err;
            }
          },
          discard: (stored) => files.delete(stored.pathId),
        })
      : { stored: undefined, files: 0 };
    const file = read.stored;
    if (!file) throw noFileToUpload();
    if (read.files > 1) {
      await files.delete(file.pathId);
      throw oneFileAtATime();
    }
    if (file.size > maxBytes) throw tooLarge();
    const { db, events } = call.services;
    const made = await events.write(
      () => recordUpload(call.services, call.realm, me, file),
      async (u) => {
        const rows = await db.kysely.selectFrom('attachments').selectAll().where('id', '=', u.id).execute();
        return attachmentNotices(db.kysely, call.realm.id, me.id, 'add', await attachmentObjects(db.kysely, rows));
      },
    );
    // `uri` is Zulip's deprecated alias of `url`, still sent.
    return { uri: made.url, url: made.url, filename: made.fileName };
  },
});

export const getFileTemporaryUrl = defineEndpoint({
  method: 'GET',
  path: '/user_uploads/{realm_id_str}/{filename}',
  summary: 'Get public temporary URL',
  auth: 'user',
  params: Type.Object({ realm_id_str: Type.String(), filename: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const access = await fileAccess(call.services.db.kysely, call.realm, me, `${p.realm_id_str}/${p.filename}`);
    // Zulip answers these two as its HTML pages (404, 403); an API client is told in JSON.
    if (access.kind === 'missing') throw uploadMissing();
    if (access.kind === 'denied') throw uploadForbidden();
    return { url: temporaryUrl(call.services.apiKeySeal, access.attachment.path_id, call.services.clock.now()) };
  },
});

export const getAttachments = defineEndpoint({
  method: 'GET',
  path: '/attachments',
  summary: 'Get attachments',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    const db = call.services.db.kysely;
    return { attachments: await attachmentsOf(db, me.id), upload_space_used: await uploadSpaceUsed(db, call.realm.id) };
  },
});

export const removeAttachment = defineEndpoint({
  method: 'DELETE',
  path: '/attachments/{attachment_id}',
  summary: 'Delete an attachment',
  auth: 'user',
  params: Type.Object({ attachment_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events, files } = call.services;
    const removed = await events.write(
      () =>
        db.transaction(async (trx) => {
          const a = await ownAttachment(trx, me, p.attachment_id);
          await trx.deleteFrom('attachment_messages').where('attachment_id', '=', a.id).execute();
          await trx.deleteFrom('attachments').where('id', '=', a.id).execute();
          return a;
        }),
      (a) => attachmentNotices(db.kysely, call.realm.id, me.id, 'remove', [{ id: Number(a.id) }]),
    );
    // The bytes go after the row (a crash between leaves an orphan file, never a row without bytes).
    await removeStoredFiles(files, removed.path_id);
    return {};
  },
});

// The paths outside /api/v1 that serve uploaded files, as Zulip's do (zerver/views/upload.py): the
// ones clients open and messages link. They are no endpoint definitions (they answer files, not
// Zulip's JSON), so http.ts hands every GET or HEAD under /user_uploads/ here:
//   /user_uploads/<path_id>                      the file, to those who may read it
//   /user_uploads/download/<path_id>             the same, always as an attachment
//   /user_uploads/thumbnail/<path_id>/<format>   an image's thumbnail (domain/thumbnails.ts)
//   /user_uploads/temporary/<token>/<file name>  a signed, short-lived URL: no credentials needed
// Credentials are an API key by HTTP Basic or a browser's session cookie (domain/sessions.ts);
// without any, the caller is a spectator. Files stream from the file store, with Range requests answered.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { ChatServices } from './endpoint.js';
import type { ChatUser, Realm } from './tables.js';
import { ChatError, internalServerError, invalidUploadFilename, invalidUploadToken } from './errors.js';
import { type Attachment, fileAccess, guessType, INLINE_MIME_TYPES, pathIdOfToken } from './domain/uploads.js';
import { ensureThumbnail, parseThumbnailFormat } from './domain/thumbnails.js';
import type { FileRange } from '../platform/files/file-store.js';

/** What the file paths need of the Chat listener: its services, the realm and user lookups, and its JSON error writer. */
export interface UploadServing {
  services: ChatServices;
  realm(host: string | undefined): Realm | Promise<Realm>;
  user(realm: Realm, authorization: string | undefined): ChatUser | Promise<ChatUser>;
  /** The user of the browser session a Cookie header carries (domain/sessions.ts); undefined for none that counts. */
  sessionUser(realm: Realm, cookie: string | undefined): Promise<ChatUser | undefined>;
  writeError(res: ServerResponse, err: ChatError): Promise<void>;
}

// Zulip's answers for a file that is not there, or not the caller's to see (HTML: a browser opened it).
const NOT_FOUND_HTML = '<p>This file does not exist or has been deleted.</p>';
const FORBIDDEN_HTML = '<p>You are not authorized to view this file.</p>';
const NO_BYTES_HTML = '<p>File not found</p>';

/** Served files never run as a page of the realm's origin, whatever their type says (Zulip's nginx adds the like). */
const FILE_SECURITY = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; media-src 'self'; object-src 'self'; style-src 'unsafe-inline'" };

function html(res: ServerResponse, status: number, text: string, head: boolean): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(text), vary: 'Accept' });
  res.end(head ? undefined : text);
}

/** Decoded path segments, or undefined when one is not valid %-escaped UTF-8 or is empty. */
function segmentsOf(path: string): string[] | undefined {
  const out: string[] = [];
  for (const raw of path.split('/')) {
    try {
      const s = decodeURIComponent(raw);
      if (s === '' || s === '.' || s === '..') return undefined;
      out.push(s);
    } catch {
      return undefined;
    }
  }
  return out;
}

/**
 * Django's content_disposition_header: `attachment` or `inline`, the file name quoted when it is
 * ASCII, else as RFC 5987's filename*.
 */
export function contentDisposition(asAttachment: boolean, fileName: string): string {
  const kind = asAttachment ? 'attachment' : 'inline';
  if (/^[\x00-\x7f]*$/.test(fileName)) return `${kind}; filename="${fileName.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  return `${kind}; filename*=utf-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** A Range header's one range within `size` bytes; 'whole' to send everything (none, or several ranges); 'unsatisfiable' for 416. */
export function parseRange(header: string | undefined, size: number): FileRange | 'whole' | 'unsatisfiable' {
  if (!header) return 'whole';
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges, or another unit: served whole, as RFC 9110 allows.
  if (!m) return 'whole';
  const [, a, b] = m;
  if (a === '' && b === '') return 'whole';
  let start: number;
  let end: number;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== '' && Number(b) < start) return 'whole';
  }
  if (start >= size || size === 0) return 'unsatisfiable';
  return { start, end };
}

/** Streams a stored file (or the range asked for) with its headers; a file gone from the store is Zulip's "File not found". */
async function sendFile(s: UploadServing, req: IncomingMessage, res: ServerResponse, key: string, headers: OutgoingHttpHeaders): Promise<void> {
  const head = req.method === 'HEAD';
  const stat = await s.services.files.stat(key);
  if (!stat) return html(res, 404, NO_BYTES_HTML, head);
  const range = parseRange(req.headers.range, stat.size);
  const common: OutgoingHttpHeaders = {
    ...headers,
    ...FILE_SECURITY,
    'accept-ranges': 'bytes',
    'last-modified': new Date(stat.modifiedMs).toUTCString(),
    // Zulip's patch_cache_control(private=True, immutable=True): a path_id never names other bytes.
    'cache-control': 'private, immutable',
  };
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...common, 'content-range': `bytes */${stat.size}`, 'content-length': 0 });
    res.end();
    return;
  }
  const part = range === 'whole' ? undefined : range;
  const length = part ? part.end - part.start + 1 : stat.size;
  const status = part ? 206 : 200;
  const out: OutgoingHttpHeaders = { ...common, 'content-length': length };
  if (part) out['content-range'] = `bytes ${part.start}-${part.end}/${stat.size}`;
  if (head) {
    res.writeHead(status, out);
    res.end();
    return;
  }
  const read = await s.services.files.read(key, part);
  if (!read) return html(res, 404, NO_BYTES_HTML, head);
  res.writeHead(status, out);
  try {
    await pipeline(read.stream, res);
  } catch {
    // The client went away, or the disk failed part way: the connection is cut (its length was promised).
    res.destroy();
  }
}

/** An upload's own headers: its stored type, inline only for Zulip's safe types (or always attachment when downloading). */
function uploadHeaders(a: Attachment, forceDownload: boolean): OutgoingHttpHeaders {
  const type = a.content_type ?? guessType(a.file_name) ?? 'application/octet-stream';
  const inline = !forceDownload && INLINE_MIME_TYPES.has(type.split(';')[0].trim().toLowerCase());
  return { 'content-type': type, 'content-disposition': contentDisposition(!inline, a.file_name) };
}

/** Serves one GET or HEAD under /user_uploads/. Never rejects: a failure is logged and answered 500. */
export async function serveUploadPath(s: UploadServing, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const head = req.method === 'HEAD';
  try {
    const path = req.url!.split('?')[0].slice('/user_uploads/'.length);
    const segments = segmentsOf(path);
    const realmOrRead = s.realm(req.headers.host);
    const realm = realmOrRead instanceof Promise ? await realmOrRead : realmOrRead;
    if (!segments) return html(res, 404, NOT_FOUND_HTML, head);
    const [first] = segments;
    if (first === 'temporary') {
      // Zulip's serve_file_unauthed_from_token: no credentials; the token is the proof.
      if (segments.length !== 3) return html(res, 404, NOT_FOUND_HTML, head);
      const pathId = pathIdOfToken(s.services.apiKeySeal, segments[1], s.services.clock.now());
      if (pathId === undefined) throw invalidUploadToken();
      if (pathId.split('/').pop() !== segments[2]) throw invalidUploadFilename();
      const a = await s.services.db.kysely.selectFrom('attachments').selectAll().where('path_id', '=', pathId).executeTakeFirst();
      if (!a || Number(a.realm_id) !== realm.id) throw invalidUploadToken();
      return await sendFile(s, req, res, pathId, uploadHeaders(a, false));
    }
    // An API key sent is always checked; else a browser's session (one that does not count is none,
    // as Zulip's session middleware makes it an anonymous user); neither makes a spectator.
    const userOrRead = req.headers.authorization ? s.user(realm, req.headers.authorization) : req.headers.cookie ? s.sessionUser(realm, req.headers.cookie) : undefined;
    const user = userOrRead instanceof Promise ? await userOrRead : userOrRead;
    const thumbnail = first === 'thumbnail';
    const download = first === 'download';
    const rest = thumbnail || download ? segments.slice(1) : segments;
    const format = thumbnail ? rest.pop() : undefined;
    if (rest.length < 2) return html(res, 404, NOT_FOUND_HTML, head);
    const access = await fileAccess(s.services.db.kysely, realm, user, rest.join('/'));
    if (access.kind === 'missing') return html(res, 404, NOT_FOUND_HTML, head);
    if (access.kind === 'denied') return html(res, 403, FORBIDDEN_HTML, head);
    const a = access.attachment;
    if (!thumbnail) return await sendFile(s, req, res, a.path_id, uploadHeaders(a, download));
    const asked = format === undefined ? undefined : parseThumbnailFormat(format);
    const made = asked && (await ensureThumbnail(s.services.files, a.path_id, a.content_type, asked));
    if (!made) return html(res, 404, NOT_FOUND_HTML, head);
    return await sendFile(s, req, res, made.key, { 'content-type': 'image/webp', 'content-disposition': contentDisposition(false, made.format) });
  } catch (err) {
    if (err instanceof ChatError) {
      await s.writeError(res, err);
      return;
    }
    s.services.log.error('chat upload request failed', { method: req.method, path: req.url, error: (err as Error).stack });
    if (!res.headersSent) await s.writeError(res, internalServerError());
    else res.destroy();
  }
}

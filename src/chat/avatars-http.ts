// GET /user_avatars/<path>: the images Keel makes of uploads (domain/images.ts: custom emoji, avatars,
// the realm icon and logos), public as Zulip's nginx serves its avatars directory. Every file's name
// changes with each upload (a random part), so answers may be cached for good.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadFileKeyError, type FileStore } from '../platform/files/file-store.js';
import { avatarsKey, SERVED_TYPES } from './domain/images.js';

export const AVATARS_PREFIX = '/user_avatars/';

/** Answers one GET or HEAD under /user_avatars/; a file that is not there is a plain 404. */
export async function serveAvatarFile(files: FileStore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').slice(AVATARS_PREFIX.length).split('?')[0];
  let key: string;
  try {
    key = avatarsKey(path.split('/').map(decodeURIComponent).join('/'));
  } catch {
    return notFound(res);
  }
  let found;
  try {
    found = await files.read(key);
  } catch (err) {
    if (err instanceof BadFileKeyError) return notFound(res);
    throw err;
  }
  if (!found) return notFound(res);
  const ext = /\.([a-z0-9]+)$/.exec(key)?.[1] ?? '';
  const type = SERVED_TYPES[ext];
  res.writeHead(200, {
    'content-type': type ?? 'application/octet-stream',
    'content-length': found.file.size,
    'cache-control': 'public, max-age=31536000, immutable',
    'x-content-type-options': 'nosniff',
    // Originals (`.original`) are never shown inline: only the images Keel made are.
    ...(type ? {} : { 'content-disposition': 'attachment' }),
  });
  if (req.method === 'HEAD') {
    found.stream.destroy();
    res.end();
    return;
  }
  found.stream.on('error', () => res.destroy());
  found.stream.pipe(res);
}

function notFound(res: ServerResponse): void {
  const body = 'Not Found';
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'content-length': body.length });
  res.end(body);
}

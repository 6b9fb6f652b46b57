// The multipart body of an image upload (custom emoji, avatar, realm icon and logo): Zulip reads
// request.FILES, each file whole, and checks their count and size after. Here the first file's bytes
// are kept (up to the limit and one byte more, so "too large" can be told), later files only counted,
// text fields set aside; the body as a whole is bounded at BODY_LIMIT.
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { BodyTooLarge, ClientGone } from '../platform/http/body.js';
import { BODY_LIMIT, BodyError, mediaType, pipeMultipart } from './forms.js';
import { bodyTooLargeWithKey, malformedBody, prototypeFieldName } from './errors.js';

export interface ImageUpload {
  /** How many file parts came (with a file name or not: Django counts every file part). */
  files: number;
  /** The text fields, by name (the last of a repeated name). */
  fields: Map<string, string>;
  /** The first file: its bytes (at most maxBytes + 1), whether it was longer than maxBytes, and its type. */
  first?: { data: Buffer; tooLarge: boolean; contentType: string | undefined; filename: string };
}

/** Reads an image upload's multipart body; a body of another type holds no files. */
export function readImageUpload(req: IncomingMessage, maxBytes: number): Promise<ImageUpload> {
  const type = mediaType(req.headers['content-type'] ?? '');
  if (type !== 'multipart/form-data') {
    req.resume();
    return Promise.resolve({ files: 0, fields: new Map() });
  }
  const length = req.headers['content-length'];
  if (length !== undefined && req.headers['transfer-encoding'] === undefined && Number(length) > BODY_LIMIT) return Promise.reject(new BodyTooLarge(BODY_LIMIT));
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fields: 1000, parts: 1000, fieldSize: 64 * 1024 } });
    } catch (err) {
      reject(new BodyError(malformedBody({ reason: (err as Error).message })));
      return;
    }
    const out: ImageUpload = { files: 0, fields: new Map() };
    let received = 0;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.off('data', count);
      if (err) reject(err);
      else resolve(out);
    };
    const count = (c: Buffer) => {
      received += c.length;
      if (received > BODY_LIMIT) finish(new BodyTooLarge(BODY_LIMIT));
    };
    parser.on('field', (name, value) => {
      if (name in Object.prototype) return finish(new BodyError(prototypeFieldName()));
      out.fields.set(name, value);
    });
    parser.on('file', (name, file, info) => {
      file.on('error', () => {});
      if (name in Object.prototype) {
        file.resume();
        return finish(new BodyError(prototypeFieldName()));
      }
      out.files++;
      if (out.first) {
        file.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const first = { data: Buffer.alloc(0), tooLarge: false, contentType: info.mimeType || undefined, filename: info.filename ?? '' };
      out.first = first;
      file.on('data', (c: Buffer) => {
        if (first.tooLarge) return;
        size += c.length;
        if (size > maxBytes) first.tooLarge = true;
        else chunks.push(c);
      });
      file.on('end', () => {
        first.data = Buffer.concat(chunks);
      });
    });
    pipeMultipart(req, parser, {
      received: () => received,
      count,
      refuse: (err) => finish(new BodyError(err)),
      done: () => finish(),
      gone: () => finish(new ClientGone()),
    });
  });
}

/**
 * The image upload of a call (an endpoint with `streamsBody`), its read failures made the refusals
 * clients have had for a broken or oversized body. A call without a multipart body holds no files.
 */
export async function readImageOf(request: IncomingMessage | undefined, maxBytes: number): Promise<ImageUpload> {
  if (!request) return { files: 0, fields: new Map() };
  try {
    return await readImageUpload(request, maxBytes);
  } catch (err) {
    if (err instanceof BodyError) throw err.refusal;
    if (err instanceof BodyTooLarge) throw bodyTooLargeWithKey();
    if (err instanceof ClientGone) throw malformedBody({ reason: 'the client went away' });
    throw err;
  }
}

// Chat's request forms, as Zulip reads parameters: the query, a urlencoded body or a multipart one
// (streamed through busboy), the last of a repeated key winning. Refusals of a broken body keep the
// texts and statuses clients have had.
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { BodyTooLarge, ClientGone, readBody } from '../platform/http/body.js';
import { type ChatError, fileTooLarge, invalidJsonPart, malformedBody, partsLimit, prototypeFieldName, unsupportedMediaType } from './errors.js';

/** The body limit of a request whose headers carry a valid API key (OPEN_BODY_LIMIT before that); a multipart file's too. */
export const BODY_LIMIT = 25 * 1024 * 1024;

/** A request's form as read from its body, and whether the body was read to its end. */
export interface ReadForm {
  params: URLSearchParams | Form | undefined;
  whole: boolean;
}

const NO_FORM: ReadForm = { params: undefined, whole: true };

/** A form's or multipart body's text values, by name: the last of a repeated key (Django's QueryDict.get); a file or JSON part is no text. */
export type Form = Map<string, string | undefined>;

/** Adds the text values of a query or form to `out`: the last of a repeated key wins, as Django's QueryDict.get does. */
export function addTextParams(out: Record<string, string>, source: URLSearchParams | Form | undefined): void {
  if (source instanceof URLSearchParams) {
    source.forEach((v, k) => (out[k] = v));
  } else if (source) {
    for (const [k, v] of source) {
      if (v !== undefined) out[k] = v;
    }
  }
}

/** A request's body that could not be read: 4xx with the reader's status and message, else 400. */
export class BodyError extends Error {
  /** The refusal from the catalog (chat/errors), answered as it is. */
  readonly refusal: ChatError;
  constructor(refusal: ChatError) {
    super(refusal.message);
    this.refusal = refusal;
  }
}

/** The media type of a Content-Type header, lower-cased; undefined when it is no `type/subtype`. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/;
export function mediaType(header: string): string | undefined {
  const semi = header.indexOf(';');
  const type = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  return TOKEN.test(type) ? type : undefined;
}

/**
 * A multipart body's fields, streamed through busboy: text fields by name (a JSON part is parsed
 * and, being no text, not a parameter), files read and dropped. Refusals keep the texts and statuses
 * clients have had: 413 at 1000 parts or fields or a file over BODY_LIMIT, 400 for a field named
 * after an Object.prototype member, 406 for a JSON part that does not parse, 400 for a broken body.
 */
export function readMultipart(req: IncomingMessage, limit = BODY_LIMIT): Promise<ReadForm> {
  const length = req.headers['content-length'];
  const expected = length === undefined || req.headers['transfer-encoding'] !== undefined ? -1 : Number(length);
  // The whole body is bounded as any other body is (a file alone by fileSize): busboy keeps up to
  // 1 MiB of each of 1,000 fields in memory, so parts alone would not bound a request.
  if (expected > limit) return Promise.reject(new BodyTooLarge(limit));
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { fileSize: BODY_LIMIT, fields: 1000, parts: 1000 } });
    } catch (err) {
      reject(new BodyError(malformedBody({ reason: (err as Error).message })));
      return;
    }
    const form: Form = new Map();
    let received = 0;
    let failed: Error | undefined;
    let settled = false;
    const count = (c: Buffer) => {
      received += c.length;
      if (received > limit) fail(new BodyTooLarge(limit));
    };
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.off('data', count);
      if (err) reject(err);
      // The parser may finish before the request does (bytes after the closing boundary). The
      // parser's `complete` can lag the last bytes, so an announced length is checked as well.
      else resolve({ params: form, whole: req.complete || (expected >= 0 && received >= expected) });
    };
    // The first refusal is answered; the body goes on being parsed to its end (or is dropped after the answer).
    const fail = (err: Error) => {
      failed ??= err;
      finish(failed);
    };
    parser.on('field', (name, value, info) => {
      if (name in Object.prototype) return fail(new BodyError(prototypeFieldName()));
      if (info.mimeType.startsWith('application/json')) {
        if (info.valueTruncated) return fail(new BodyError(invalidJsonPart()));
        try {
          JSON.parse(value);
        } catch {
          return fail(new BodyError(invalidJsonPart()));
        }
        form.set(name, undefined);
        return;
      }
      form.set(name, value);
    });
    parser.on('file', (name, file) => {
      if (name in Object.prototype) {
        file.resume();
        return fail(new BodyError(prototypeFieldName()));
      }
      file.on('limit', () => fail(new BodyError(fileTooLarge())));
      file.on('error', () => {});
      file.resume();
      form.set(name, undefined);
    });
    pipeMultipart(req, parser, {
      received: () => received,
      count,
      refuse: (err) => fail(new BodyError(err)),
      done: () => finish(),
      gone: () => finish(new ClientGone()),
    });
  });
}

/**
 * The body's form, read as its Content-Type says: a urlencoded form, multipart fields, or anything
 * else read and set aside (Zulip reads parameters only from forms). GET and HEAD bodies are not
 * read (Zulip reads their parameters from the query): node drops them after the answer.
 */
export async function readForm(req: IncomingMessage, limit = BODY_LIMIT): Promise<ReadForm> {
  if (req.method === 'GET' || req.method === 'HEAD') return NO_FORM;
  const header = req.headers['content-type'];
  const type = header === undefined ? '' : mediaType(header);
  if (type === undefined) throw new BodyError(unsupportedMediaType());
  if (type === 'multipart/form-data') return readMultipart(req, limit);
  // Read to its announced length or its end: whole.
  const body = await readBody(req, limit);
  return type === 'application/x-www-form-urlencoded' ? { params: new URLSearchParams(body.toString('utf8')), whole: true } : NO_FORM;
}

/** One file part of a streamed upload, as readUpload hands it to its store. */
export interface FilePart {
  /** The part's file name, as the client sent it (busboy decodes RFC 2231/5987 names). */
  filename: string;
  /** The part's Content-Type, if it sent one. */
  mimeType: string | undefined;
  /** The bytes, read from the request as the store consumes them (never held whole). */
  stream: Readable;
}

/** What readUpload read: the first file part's stored result, and how many file parts came. */
export interface ReadUpload<T> {
  stored: T | undefined;
  files: number;
}

/**
 * A multipart body whose one file is streamed into a store as it arrives (POST /user_uploads), never
 * held whole in memory. `store` consumes the first file part (with a non-empty file name); later file
 * parts are read and dropped, and counted, for the caller's "one file at a time" refusal. Text fields
 * are read and set aside (busboy's limits hold them small). The body is bounded at `limit` bytes and
 * the file at `maxFileBytes` (`tooLarge` is the refusal for both); any refusal after the file was
 * stored discards it (`discard`), so nothing stays of a refused request.
 */
export function readUpload<T>(
  req: IncomingMessage,
  options: { maxFileBytes: number; limit: number; tooLarge: () => ChatError; store: (part: FilePart) => Promise<T>; discard: (stored: T) => Promise<void> },
): Promise<ReadUpload<T>> {
  const type = mediaType(req.headers['content-type'] ?? '');
  if (type !== 'multipart/form-data') return Promise.resolve({ stored: undefined, files: 0 });
  const length = req.headers['content-length'];
  const expected = length === undefined || req.headers['transfer-encoding'] !== undefined ? -1 : Number(length);
  if (expected > options.limit) return Promise.reject(options.tooLarge());
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: options.maxFileBytes, fields: 1000, parts: 1000, fieldSize: 64 * 1024 } });
    } catch (err) {
      reject(new BodyError(malformedBody({ reason: (err as Error).message })).refusal);
      return;
    }
    let received = 0;
    let files = 0;
    let storing: Promise<T> | undefined;
    let current: Readable | undefined;
    let settled = false;
    const finish = async (err?: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.off('data', count);
      if (err) {
        // The file being written stops there (the store removes its partial file); one already stored goes.
        current?.destroy();
        if (storing) {
          const stored = await storing.catch(() => undefined);
          if (stored !== undefined) await options.discard(stored).catch(() => {});
        }
        reject(err);
        return;
      }
      try {
        resolve({ stored: storing ? await storing : undefined, files });
      } catch (e) {
        reject(e);
      }
    };
    const count = (c: Buffer) => {
      received += c.length;
      if (received > options.limit) void finish(options.tooLarge());
    };
    parser.on('field', (name) => {
      if (name in Object.prototype) void finish(prototypeFieldName());
    });
    parser.on('file', (name, file, info) => {
      file.on('error', () => {});
      if (name in Object.prototype) {
        file.resume();
        void finish(prototypeFieldName());
        return;
      }
      // A part without a file name is no file (Django's MultiPartParser skips it too).
      if (!info.filename) {
        file.resume();
        return;
      }
      files++;
      file.on('limit', () => void finish(options.tooLarge()));
      if (storing) {
        file.resume();
        return;
      }
      current = file;
      storing = options.store({ filename: info.filename, mimeType: info.mimeType || undefined, stream: file });
      // A store that fails (the disk, or the file over its limit) ends the request with its error.
      storing.catch((err) => void finish(err));
    });
    pipeMultipart(req, parser, {
      received: () => received,
      count,
      refuse: (err) => void finish(err),
      done: () => void finish(),
      // A client gone part way: the stored part is dropped; the refusal reaches no one, and is no server error to log.
      gone: () => void finish(malformedBody({ reason: 'the client closed the connection' })),
    });
  });
}

/**
 * What every multipart reader wires the same way (this file's readers and image-form.ts): busboy's
 * part, file and field limits refused with Zulip's texts, a parse error as a malformed body (an
 * empty body is an empty form, not truncated multipart data), the end of the parse, a client gone
 * before the body's end; then the body piped in, counted as it comes.
 */
export function pipeMultipart(req: IncomingMessage, parser: busboy.Busboy, on: { received(): number; count(chunk: Buffer): void; refuse(err: ChatError): void; done(): void; gone(): void }): void {
  parser.on('partsLimit', () => on.refuse(partsLimit({ what: 'parts' })));
  parser.on('filesLimit', () => on.refuse(partsLimit({ what: 'files' })));
  parser.on('fieldsLimit', () => on.refuse(partsLimit({ what: 'fields' })));
  parser.on('error', (err: Error) => {
    if (on.received() === 0 && err.message === 'Unexpected end of multipart data') on.done();
    else on.refuse(malformedBody({ reason: err.message }));
  });
  parser.on('close', () => on.done());
  req.on('data', on.count);
  req.on('close', () => {
    if (!req.complete) on.gone();
  });
  req.pipe(parser);
}

// Where uploaded files live: never in the database (docs/design.md), but in a file store behind this
// interface. The local directory (local-store.ts) is the default; an S3-compatible backend can
// implement the same interface later. Keys are relative paths of safe segments, chosen by Keel
// (never by a client): `<realm id>/<random>/<file name>` for Chat uploads, for example.
import type { Readable } from 'node:stream';

export interface StoredFile {
  /** Size in bytes. */
  size: number;
  /** When it was written, in milliseconds since the epoch. */
  modifiedMs: number;
}

export interface FileRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive (as HTTP's Range header counts). */
  end: number;
}

export interface FileStore {
  /**
   * Streams `body` into the file `key` and resolves once it is durably stored (fsync'd and renamed
   * into place: a reader never sees half a file, a crash leaves none). Rejects, storing nothing,
   * when the body errors or passes `maxBytes` (with FileTooLargeError). An existing file is replaced.
   */
  put(key: string, body: Readable | Buffer, options?: { maxBytes?: number }): Promise<StoredFile>;
  /** The file's size and time, or undefined when there is none. */
  stat(key: string): Promise<StoredFile | undefined>;
  /** A stream of the file (or of one range of it), or undefined when there is none. */
  read(key: string, range?: FileRange): Promise<{ stream: Readable; file: StoredFile } | undefined>;
  /** Removes the file; removing one that is not there is no error. */
  delete(key: string): Promise<void>;
  /**
   * The file's path on this machine when the store is a local directory (for libraries that need a
   * path, such as an image decoder or a tus store), else undefined.
   */
  localPath(key: string): string | undefined;
}

/** A body longer than the put's maxBytes. */
export class FileTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`file is larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/** A key that is not a relative path of safe segments: a bug in the caller, never client input. */
export class BadFileKeyError extends Error {}

// Any characters but '/', NUL and control characters (file names are Unicode, as Zulip keeps them);
// at most 255 bytes, a segment's limit on common file systems.
const SEGMENT = /^[^/\x00-\x1f\x7f]+$/u;

/**
 * Checks a key: 1 to 8 segments joined by '/', none empty, '.' or '..', none over 255 bytes, and
 * the first not starting with a dot (the store's own `.partial` directory is there).
 */
export function checkFileKey(key: string): string[] {
  const segments = key.split('/');
  if (segments.length < 1 || segments.length > 8) throw new BadFileKeyError(`bad file key ${JSON.stringify(key)}`);
  for (const s of segments) {
    if (!SEGMENT.test(s) || s === '.' || s === '..' || Buffer.byteLength(s) > 255) throw new BadFileKeyError(`bad file key ${JSON.stringify(key)}`);
  }
  if (segments[0].startsWith('.')) throw new BadFileKeyError(`bad file key ${JSON.stringify(key)}`);
  return segments;
}

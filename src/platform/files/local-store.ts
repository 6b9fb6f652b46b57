// The default file store: a directory (by default `uploads/` in the data dir), owner-only like the
// rest of the data dir. A write goes to a temporary file in `.partial/`, is fsync'd, then renamed into
// place, and the directory fsync'd: an acknowledged upload survives kill -9 and power loss, and a
// reader never sees half a file. Temporary files a crash left behind are removed at open.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../file-modes.js';
import { checkFileKey, type FileRange, type FileStore, FileTooLargeError, type StoredFile } from './file-store.js';

const PARTIAL = '.partial';

export class LocalFileStore implements FileStore {
  readonly root: string;
  private readonly partialDir: string;

  constructor(root: string) {
    this.root = root;
    this.partialDir = path.join(root, PARTIAL);
    fs.mkdirSync(this.partialDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    for (const name of fs.readdirSync(this.partialDir)) fs.rmSync(path.join(this.partialDir, name), { force: true });
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...checkFileKey(key));
  }

  localPath(key: string): string {
    return this.pathOf(key);
  }

  async put(key: string, body: Readable | Buffer, options: { maxBytes?: number } = {}): Promise<StoredFile> {
    const target = this.pathOf(key);
    const temp = path.join(this.partialDir, randomBytes(12).toString('hex'));
    const max = options.maxBytes ?? Number.POSITIVE_INFINITY;
    let size = 0;
    const handle = await fsp.open(temp, 'wx', PRIVATE_FILE_MODE);
    try {
      const source = Buffer.isBuffer(body) ? [body] : body;
      for await (const chunk of source) {
        const bytes = chunk as Buffer;
        size += bytes.length;
        if (size > max) throw new FileTooLargeError(max);
        await handle.write(bytes);
      }
      await handle.sync();
    } catch (err) {
      if (!Buffer.isBuffer(body)) body.destroy();
      await handle.close().catch(() => {});
      await fsp.rm(temp, { force: true });
      throw err;
    }
    await handle.close();
    try {
      await fsp.mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
      await fsp.rename(temp, target);
      await syncDir(path.dirname(target));
    } catch (err) {
      await fsp.rm(temp, { force: true });
      throw err;
    }
    const st = await fsp.stat(target);
    return { size: st.size, modifiedMs: st.mtimeMs };
  }

  async stat(key: string): Promise<StoredFile | undefined> {
    try {
      const st = await fsp.stat(this.pathOf(key));
      return st.isFile() ? { size: st.size, modifiedMs: st.mtimeMs } : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async read(key: string, range?: FileRange): Promise<{ stream: Readable; file: StoredFile } | undefined> {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.pathOf(key), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const st = await handle.stat();
    // The stream owns the handle from here: it closes it at the end or on destroy.
    const stream = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    return { stream, file: { size: st.size, modifiedMs: st.mtimeMs } };
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }
}

/** fsync of a directory, so a rename in it survives power loss (a no-op where the platform refuses it). */
async function syncDir(dir: string): Promise<void> {
  let h: fsp.FileHandle | undefined;
  try {
    h = await fsp.open(dir, 'r');
    await h.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic there.
  } finally {
    await h?.close();
  }
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { BadFileKeyError, FileTooLargeError } from '../../../src/platform/files/file-store.js';
import { LocalFileStore } from '../../../src/platform/files/local-store.js';

const dirs: string[] = [];
function store(): LocalFileStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-files-'));
  dirs.push(dir);
  return new LocalFileStore(path.join(dir, 'uploads'));
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function text(stream: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString();
}

describe('the local file store', () => {
  it('writes a stream, reads it whole and by range, and deletes it', async () => {
    const s = store();
    const put = await s.put('2/ab/notes.txt', Readable.from([Buffer.from('hello '), Buffer.from('world')]));
    assert.equal(put.size, 11);
    assert.equal((await s.stat('2/ab/notes.txt'))?.size, 11);
    const whole = await s.read('2/ab/notes.txt');
    assert.equal(await text(whole!.stream), 'hello world');
    const part = await s.read('2/ab/notes.txt', { start: 6, end: 10 });
    assert.equal(await text(part!.stream), 'world');
    assert.equal(fs.statSync(s.localPath('2/ab/notes.txt')).mode & 0o077, 0);
    await s.delete('2/ab/notes.txt');
    assert.equal(await s.stat('2/ab/notes.txt'), undefined);
    assert.equal(await s.read('2/ab/notes.txt'), undefined);
    await s.delete('2/ab/notes.txt');
  });

  it('refuses a body over maxBytes and leaves nothing behind', async () => {
    const s = store();
    await assert.rejects(s.put('1/big', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), { maxBytes: 1000 }), FileTooLargeError);
    assert.equal(await s.stat('1/big'), undefined);
    assert.deepEqual(fs.readdirSync(path.join(s.root, '.partial')), []);
  });

  it('leaves the old file whole when a replacement fails midway', async () => {
    const s = store();
    await s.put('1/f', Buffer.from('old'));
    const failing = new Readable({
      read() {
        this.push(Buffer.from('new-'));
        this.destroy(new Error('client went away'));
      },
    });
    await assert.rejects(s.put('1/f', failing), /client went away/);
    assert.equal(await text((await s.read('1/f'))!.stream), 'old');
  });

  it('refuses keys that could leave its directory', async () => {
    const s = store();
    for (const key of ['.partial/x', '../x', 'a/../../x', '/etc/passwd', 'a//b', '.', 'a/.partial/../b', '']) {
      await assert.rejects(s.put(key, Buffer.from('x')), BadFileKeyError);
    }
  });

  it('clears temporary files a crash left behind when it opens', () => {
    const s = store();
    fs.writeFileSync(path.join(s.root, '.partial', 'leftover'), 'x');
    const again = new LocalFileStore(s.root);
    assert.deepEqual(fs.readdirSync(path.join(again.root, '.partial')), []);
  });
});

// The secret key module: its text form, its file (made 0600, never replaced) and the keys derived from it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { createKeyFile, deriveKeys, parseSecretKey, readKeyFile, SecretKeyError } from '../../../src/platform/auth/secret-key.js';

it('derives distinct keys under distinct labels, the same ones from the same key', () => {
  const master = Buffer.alloc(32, 7);
  const a = deriveKeys(master);
  const b = deriveKeys(Buffer.from(master));
  assert.deepEqual(a, b);
  assert.equal(a.jwt.length, 32);
  assert.equal(a.seal.length, 32);
  const all = [a.jwt.toString('hex'), a.seal.toString('hex'), a.check, master.toString('hex')];
  assert.equal(new Set(all).size, 4, 'no derived key equals another or the master');
  assert.notEqual(deriveKeys(Buffer.alloc(32, 8)).check, a.check);
});

it('reads 64 hex characters and refuses anything else without echoing it', () => {
  assert.deepEqual(parseSecretKey(` ${'ab'.repeat(32)}\n`, 'X'), Buffer.alloc(32, 0xab));
  for (const bad of ['', 'ab'.repeat(31), 'zz'.repeat(32), 'ab'.repeat(33)]) {
    assert.throws(
      () => parseSecretKey(bad, 'the file F'),
      (err: Error) =>
        err instanceof SecretKeyError &&
        err.message === 'the secret key in the file F must be 64 hexadecimal characters (make one with: openssl rand -hex 32)' &&
        (bad === '' || !err.message.includes(bad)),
    );
  }
});

it('makes a key file 0600 in a 0700 directory, and never replaces one', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-key-'));
  try {
    const file = path.join(dir, 'sub', 'secret.key');
    assert.equal(readKeyFile(file), undefined);
    const made = createKeyFile(file);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
    assert.deepEqual(readKeyFile(file), made);
    assert.deepEqual(createKeyFile(file), made, 'a second maker gets the key already there');
    assert.equal(readFileSync(file, 'utf8'), made.toString('hex') + '\n');
    writeFileSync(path.join(dir, 'bad.key'), 'nope');
    assert.throws(() => readKeyFile(path.join(dir, 'bad.key')), SecretKeyError);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

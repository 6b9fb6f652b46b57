// The server's secret key: one random 256-bit master secret kept outside the store (a key file, by
// default `<data-dir>/secret.key`, or KEEL_SECRET_KEY). Every key Keel signs or seals with is derived
// from it (HKDF-SHA256, one label each), so a copy of the database alone can neither forge tokens
// nor unseal what was sealed. The store keeps only a check value, derived under a label of its own,
// that tells whether a key is the one the store was set up with and reveals nothing of it.
import { hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** A missing, malformed or wrong secret key: a clear one-line start-up error. */
export class SecretKeyError extends Error {}

export const DEFAULT_KEY_FILE = 'secret.key';
const KEY_BYTES = 32;
export const MAKE_A_KEY = 'openssl rand -hex 32';

/** The key's text form: 64 hexadecimal characters (surrounding white space ignored). */
export function parseSecretKey(text: string, where: string): Buffer {
  const hex = text.trim();
  // Never echo the text: it may be a key with a typo.
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new SecretKeyError(`the secret key in ${where} must be 64 hexadecimal characters (make one with: ${MAKE_A_KEY})`);
  }
  return Buffer.from(hex, 'hex');
}

/** The key in a file, or undefined when there is no such file. */
export function readKeyFile(file: string): Buffer | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SecretKeyError(`cannot read the secret key file ${file}: ${(err as Error).message}`);
  }
  return parseSecretKey(text, file);
}

/**
 * Writes a new random key to `file` (mode 0600; its directory, when made here, 0700). The file appears
 * whole or not at all (written aside, then linked into place), and never replaces one: when another
 * process made it first, that key is the one returned.
 */
export function createKeyFile(file: string): Buffer {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = fs.openSync(aside, 'wx', 0o600);
    try {
      fs.writeSync(fd, key.toString('hex') + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.linkSync(aside, file);
    // The store will soon need this key: its directory entry must survive a power cut too.
    const dir = fs.openSync(path.dirname(file), 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readKeyFile(file)!;
  } finally {
    fs.rmSync(aside, { force: true });
  }
  return key;
}

/** The keys derived from the master secret. */
export interface DerivedKeys {
  /** HS256 key of the JWTs the Infra API issues. */
  jwt: Buffer;
  /** AES-256-GCM key that seals chat API keys in the store. */
  seal: Buffer;
  /** Kept in the store: tells a wrong key from the right one (hex). */
  check: string;
}

const derive = (master: Buffer, label: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `keel ${label} v1`, KEY_BYTES));

export function deriveKeys(master: Buffer): DerivedKeys {
  return { jwt: derive(master, 'jwt hs256'), seal: derive(master, 'chat api key seal'), check: derive(master, 'secret key check').toString('hex') };
}

export function sameCheck(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

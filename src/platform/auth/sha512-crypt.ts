// SHA-512 crypt ("$6$", Ulrich Drepper's SHA-crypt specification, the glibc/libxcrypt format):
// the password hash cloud-init's `hashed_passwd` and /etc/shadow take, so an ordered server's root
// password is stored and handed on only as this hash. No maintained npm package is installed for it,
// so it is written here from the published algorithm on node:crypto's SHA-512.
import { createHash, randomBytes } from 'node:crypto';

export const ROUNDS_DEFAULT = 5000;
const ROUNDS_MIN = 1000;
const ROUNDS_MAX = 999_999_999;
const SALT_MAX = 16;
const B64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function sha512(...parts: Buffer[]): Buffer {
  const h = createHash('sha512');
  for (const p of parts) h.update(p);
  return h.digest();
}

/** `length` bytes of `digest` repeated (the spec's "for each block of 64 bytes, then the rest"). */
function repeated(digest: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += 64) digest.copy(out, i, 0, Math.min(64, length - i));
  return out;
}

/** The spec's base-64 of three bytes at a time (little end first), with its own alphabet. */
function b64From(b2: number, b1: number, b0: number, n: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let s = '';
  for (let i = 0; i < n; i++) {
    s += B64[w & 0x3f];
    w >>>= 6;
  }
  return s;
}

/** The byte order in which the final digest is written (the spec's step 22). */
const ORDER: [number, number, number][] = [
  [0, 21, 42],
  [22, 43, 1],
  [44, 2, 23],
  [3, 24, 45],
  [25, 46, 4],
  [47, 5, 26],
  [6, 27, 48],
  [28, 49, 7],
  [50, 8, 29],
  [9, 30, 51],
  [31, 52, 10],
  [53, 11, 32],
  [12, 33, 54],
  [34, 55, 13],
  [56, 14, 35],
  [15, 36, 57],
  [37, 58, 16],
  [59, 17, 38],
  [18, 39, 60],
  [40, 61, 19],
  [62, 20, 41],
];

/**
 * crypt(3) of `password` with a setting such as "$6$salt" or "$6$rounds=10000$salt" (a full hash
 * works too: its salt and rounds are used). Rounds outside 1000..999999999 are clamped, as the spec says.
 */
export function sha512Crypt(password: string, setting: string): string {
  const m = /^\$6\$(?:rounds=(\d+)\$)?([^$]*)/.exec(setting);
  if (!m) throw new Error('not a SHA-512 crypt setting ($6$...)');
  const explicit = m[1] !== undefined;
  const rounds = explicit ? Math.min(ROUNDS_MAX, Math.max(ROUNDS_MIN, Number(m[1]))) : ROUNDS_DEFAULT;
  const saltText = m[2].slice(0, SALT_MAX);
  const key = Buffer.from(password, 'utf8');
  const salt = Buffer.from(saltText, 'utf8');

  const b = sha512(key, salt, key);
  const aParts: Buffer[] = [key, salt, repeated(b, key.length)];
  for (let n = key.length; n > 0; n >>= 1) aParts.push(n & 1 ? b : key);
  const a = sha512(...aParts);

  const dpParts: Buffer[] = [];
  for (let i = 0; i < key.length; i++) dpParts.push(key);
  const p = repeated(sha512(...dpParts), key.length);
  const dsParts: Buffer[] = [];
  for (let i = 0; i < 16 + a[0]; i++) dsParts.push(salt);
  const s = repeated(sha512(...dsParts), salt.length);

  let c = a;
  for (let i = 0; i < rounds; i++) {
    const parts: Buffer[] = [i & 1 ? p : c];
    if (i % 3) parts.push(s);
    if (i % 7) parts.push(p);
    parts.push(i & 1 ? c : p);
    c = sha512(...parts);
  }

  let out = '';
  for (const [x, y, z] of ORDER) out += b64From(c[x], c[y], c[z], 4);
  out += b64From(0, 0, c[63], 2);
  return `$6$${explicit ? `rounds=${rounds}$` : ''}${saltText}$${out}`;
}

/** A new "$6$" hash of `password` with a random 16-character salt and the default rounds. */
export function hashSha512Crypt(password: string): string {
  const bytes = randomBytes(SALT_MAX);
  let salt = '';
  for (const byte of bytes) salt += B64[byte & 0x3f];
  return sha512Crypt(password, `$6$${salt}`);
}

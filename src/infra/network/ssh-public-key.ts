// OpenSSH public keys as authorized_keys holds them: "<type> <base64 blob> [comment]". The blob is
// the RFC 4253 wire form (string type, then the key's fields); it is read whole, so a key whose
// embedded type differs from the written one, or with fields missing or left over, is refused
// rather than handed to cloud-init, where sshd would skip it silently.
import { createHash } from 'node:crypto';

export const SSH_KEY_TYPES = ['ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521'] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

/** ECDSA point sizes (uncompressed: 0x04 then x and y). */
const ECDSA_POINT: Record<string, number> = { nistp256: 65, nistp384: 97, nistp521: 133 };
/** ssh-keygen refuses RSA below 1024 bits; above 16384 it makes none either. */
const RSA_MIN_BITS = 1024;
const RSA_MAX_BITS = 16384;

export interface ParsedSshKey {
  type: SshKeyType;
  /** "<type> <base64>": what a device's authorized_keys gets (the comment is kept apart). */
  publicKey: string;
  comment: string;
  /** As `ssh-keygen -l` shows it: SHA256:<base64 of the blob's SHA-256, unpadded>. */
  fingerprint: string;
  bits: number;
}

/** Why a text is not a usable key, in words for a FAULT's problem. */
export type SshKeyProblem =
  | { kind: 'shape' }
  | { kind: 'type'; type: string }
  | { kind: 'base64' }
  | { kind: 'mismatch'; written: string; embedded: string }
  | { kind: 'blob'; type: string }
  | { kind: 'rsaBits'; bits: number };

class Reader {
  private at = 0;
  private readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }
  /** An RFC 4251 string (uint32 length, bytes), or undefined past the end. */
  string(): Buffer | undefined {
    if (this.at + 4 > this.buf.length) return undefined;
    const n = this.buf.readUInt32BE(this.at);
    if (this.at + 4 + n > this.buf.length) return undefined;
    const out = this.buf.subarray(this.at + 4, this.at + 4 + n);
    this.at += 4 + n;
    return out;
  }
  done(): boolean {
    return this.at === this.buf.length;
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function parseSshPublicKey(text: string): ParsedSshKey | SshKeyProblem {
  const parts = text.trim().split(/[ \t]+/);
  if (parts.length < 2) return { kind: 'shape' };
  const [written, b64, ...rest] = parts;
  if (!(SSH_KEY_TYPES as readonly string[]).includes(written)) return { kind: 'type', type: written };
  if (!BASE64.test(b64) || b64.length % 4 !== 0) return { kind: 'base64' };
  const blob = Buffer.from(b64, 'base64');
  // Base64 with stray bits (a character changed at the end) decodes to the same bytes; a key is its
  // blob, so the text must be the blob's own encoding.
  if (blob.toString('base64') !== b64) return { kind: 'base64' };
  const r = new Reader(blob);
  const embedded = r.string()?.toString('latin1');
  if (embedded === undefined) return { kind: 'blob', type: written };
  if (embedded !== written) return { kind: 'mismatch', written, embedded };
  let bits: number;
  if (written === 'ssh-ed25519') {
    const pk = r.string();
    if (pk?.length !== 32) return { kind: 'blob', type: written };
    bits = 256;
  } else if (written === 'ssh-rsa') {
    const e = r.string();
    const n = r.string();
    if (!e || !n || e.length === 0 || n.length === 0 || (n[0] & 0x80) !== 0) return { kind: 'blob', type: written };
    let i = 0;
    while (i < n.length && n[i] === 0) i++;
    bits = (n.length - i) * 8 - (i < n.length ? Math.clz32(n[i]) - 24 : 0);
    if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS) return { kind: 'rsaBits', bits };
  } else {
    const curve = written.slice('ecdsa-sha2-'.length);
    const named = r.string()?.toString('latin1');
    const q = r.string();
    if (named !== curve || !q || q.length !== ECDSA_POINT[curve] || q[0] !== 4) return { kind: 'blob', type: written };
    bits = Number(curve.slice('nistp'.length));
  }
  if (!r.done()) return { kind: 'blob', type: written };
  const fingerprint = 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  return { type: written as SshKeyType, publicKey: `${written} ${b64}`, comment: rest.join(' '), fingerprint, bits };
}

// Random secrets and their storage form. API secrets are 256-bit random tokens, so a plain SHA-256
// is enough to store them (no slow hash needed) and keeps authentication cheap on every request.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('hex');
}

/** A readable random password: 20 characters from an alphabet without look-alikes. */
export function randomPassword(length = 20): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

export function sha256Hex(value: string): string {
  // One-shot: no Hash object per call (this runs on every authenticated request).
  return hash('sha256', value, 'hex');
}

/**
 * The SHA-256 of a credential as a cache key: base64 is 44 characters against hex's 64, and a map
 * hashes every character of a new key string on each lookup.
 */
export function sha256Key(value: string): string {
  return hash('sha256', value, 'base64');
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ba.length !== bb.length) {
    timingSafeEqual(ba, ba);
    return false;
  }
  return timingSafeEqual(ba, bb);
}

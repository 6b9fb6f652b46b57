// Chat API keys. Zulip shows a user the same key again (fetch_api_key), so the key cannot only be
// hashed: it is stored sealed for showing (AES-256-GCM under a key derived from the server's secret
// key, which is kept outside the store), and as SHA-256 for finding the user on each request,
// compared in constant time.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomInt } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import { sha256Hex } from '../../platform/auth/secrets.js';
import type { ChatTables } from '../tables.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** 32 letters and digits, the shape Zulip's clients expect (and check) of an API key. */
export function newApiKey(): string {
  let key = '';
  for (let i = 0; i < 32; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

export function isWellFormedApiKey(key: string): boolean {
  return /^[A-Za-z0-9]{32}$/.test(key);
}

export function apiKeyHash(key: string): string {
  return sha256Hex(`chat-api-key:${key}`);
}

/**
 * Seals chat API keys for storage (AES-256-GCM: random IV, then tag, then ciphertext, base64) under
 * the seal key, which is derived from the server's secret key and never stored (platform/auth/secret-key.ts).
 */
export class ApiKeySeal {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('the API key seal key must be 32 bytes');
    this.key = key;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /**
   * An HMAC-SHA256 of `data` under a key derived from the seal key for `purpose` (the signed,
   * short-lived upload URLs of domain/uploads.ts): base64url.
   */
  mac(purpose: string, data: string): string {
    const key = createHmac('sha256', this.key).update(`keel mac: ${purpose}`).digest();
    return createHmac('sha256', key).update(data).digest('base64url');
  }

  /** Throws when the sealed text was not sealed under this key (or was changed). */
  unseal(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/**
 * Gives a user a new API key (POST /users/me/api_key/regenerate, /bots/{id}/api_key/regenerate):
 * the old one stops matching from the commit on. Returns the new key; the caller holds the transaction.
 */
export async function regenerateApiKey(db: Queryable<ChatTables>, sealer: ApiKeySeal, userId: number): Promise<string> {
  const { apiKey, api_key_hash, api_key_sealed } = issueApiKey(sealer);
  await db.updateTable('chat_users').set({ api_key_hash, api_key_sealed }).where('id', '=', userId).execute();
  return apiKey;
}

/** The columns a new user's key is stored in, and the key itself (to show once). */
export function issueApiKey(sealer: ApiKeySeal): { apiKey: string; api_key_hash: string; api_key_sealed: string } {
  const apiKey = newApiKey();
  return { apiKey, api_key_hash: apiKeyHash(apiKey), api_key_sealed: sealer.seal(apiKey) };
}

/**
 * Seals every user's stored key again, from one seal key to another (a key rotation, or the upgrade
 * that took the seal key out of the store); the caller holds the transaction. Returns how many.
 */
export async function resealApiKeys(trx: Queryable<ChatTables>, from: ApiKeySeal, to: ApiKeySeal): Promise<number> {
  const users = await trx.selectFrom('chat_users').select(['id', 'api_key_sealed']).where('api_key_sealed', '!=', '').execute();
  for (const u of users) {
    let plain: string;
    try {
      plain = from.unseal(u.api_key_sealed);
    } catch {
      throw new Error(`the stored API key of chat user ${u.id} cannot be unsealed with the current key; nothing was changed`);
    }
    await trx
      .updateTable('chat_users')
      .set({ api_key_sealed: to.seal(plain) })
      .where('id', '=', u.id)
      .execute();
  }
  return users.length;
}

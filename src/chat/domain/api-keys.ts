// Chat API keys. Zulip shows a user the same key again (fetch_api_key), so the key cannot only be
// hashed: it is stored sealed (AES-256-GCM under a server key kept in server_secrets) for showing,
// and as SHA-256 for finding the user on each request, compared in constant time.
import { createCipheriv, createDecipheriv, randomBytes, randomInt } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import { sha256Hex } from '../../platform/auth/secrets.js';
import type { ChatTables } from '../tables.js';

export const SEAL_KEY_NAME = 'chat_api_key_seal_key';
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

export function seal(keyHex: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

export function unseal(keyHex: string, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

export async function sealKey(db: Queryable<ChatTables>): Promise<string> {
  const row = await db.selectFrom('server_secrets').select('value').where('name', '=', SEAL_KEY_NAME).executeTakeFirst();
  if (!row) throw new Error('the chat API key seal key is missing from the database');
  return row.value;
}

/**
 * Gives a user a new API key (POST /users/me/api_key/regenerate, /bots/{id}/api_key/regenerate):
 * the old one stops matching from the commit on. Returns the new key; the caller holds the transaction.
 */
export async function regenerateApiKey(db: Queryable<ChatTables>, userId: number): Promise<string> {
  const { apiKey, api_key_hash, api_key_sealed } = await issueApiKey(db);
  await db.updateTable('chat_users').set({ api_key_hash, api_key_sealed }).where('id', '=', userId).execute();
  return apiKey;
}

/** The columns a new user's key is stored in, and the key itself (to show once). */
export async function issueApiKey(db: Queryable<ChatTables>): Promise<{ apiKey: string; api_key_hash: string; api_key_sealed: string }> {
  const apiKey = newApiKey();
  return { apiKey, api_key_hash: apiKeyHash(apiKey), api_key_sealed: seal(await sealKey(db), apiKey) };
}

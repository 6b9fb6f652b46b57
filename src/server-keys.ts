// The server's keys and its store: which secret key this process uses (KEEL_SECRET_KEY, else the
// file --secret-key-file names, else <data-dir>/secret.key, made on first start), whether it is the
// key the store uses (the store keeps a check value, never a key), the one-time move of
// the keys older versions kept in the store (server_secrets) out of it, and key rotation.
import path from 'node:path';
import type { Config } from './config/config.js';
import type { Database, Queryable } from './platform/db/database.js';
import type { Logger } from './platform/log.js';
import { createKeyFile, DEFAULT_KEY_FILE, deriveKeys, MAKE_A_KEY, readKeyFile, sameCheck, SecretKeyError } from './platform/auth/secret-key.js';
import { ApiKeySeal, resealApiKeys } from './chat/domain/api-keys.js';
import type { ChatTables } from './chat/tables.js';
import { resealS3Secrets } from './infra/s3/buckets.js';
import type { InfraTables } from './infra/tables.js';

/** The server_secrets row holding the check value of the secret key the store uses. */
export const KEY_CHECK_NAME = 'secret_key_check';
/** Where Keel kept its keys before they moved out of the store: beside the data they protect. */
export const LEGACY_KEY_NAMES = { jwt: 'jwt_hs256_key', seal: 'chat_api_key_seal_key' } as const;

const SAME_KEY_ON_EVERY_NODE = 'every Keel node sharing a PostgreSQL database must be given the same key';

export interface ServerKeys {
  /** HS256 key of the Infra API's JWTs. */
  jwt: Buffer;
  /** Seals and unseals chat API keys. */
  apiKeySeal: ApiKeySeal;
  /** The key's check value, as the store keeps it. */
  check: string;
  /** Where the key came from, for messages (a path, or KEEL_SECRET_KEY). */
  source: string;
  /** Set when this start made the key file (a new store, or one whose keys were moved out of it). */
  createdFile?: string;
}

/** What to tell the operator of a key file just made, with the first-run secrets. */
export function keepTheKeyFile(file: string, postgres: boolean): string {
  return (
    `the secret key that signs tokens and seals chat API keys is in ${file} (mode 0600): back it up apart from the database, which cannot be used without it` +
    (postgres ? `; ${SAME_KEY_ON_EVERY_NODE} (copy this file to each, or use --secret-key-file or KEEL_SECRET_KEY)` : '')
  );
}

/** The key file this configuration reads (absent when the key comes from KEEL_SECRET_KEY). */
export function secretKeyFile(config: Config): string | undefined {
  if (config.secretKey) return undefined;
  return config.secretKeyFile ?? path.join(config.dataDir, DEFAULT_KEY_FILE);
}

interface StoredKeys {
  check?: string;
  legacySeal?: string;
  legacy: boolean;
}

async function storedKeys(db: Queryable<ChatTables>): Promise<StoredKeys> {
  const rows = await db.selectFrom('server_secrets').select(['name', 'value']).where('name', 'in', [KEY_CHECK_NAME, LEGACY_KEY_NAMES.jwt, LEGACY_KEY_NAMES.seal]).execute();
  const value = (name: string) => rows.find((r) => r.name === name)?.value;
  return { check: value(KEY_CHECK_NAME), legacySeal: value(LEGACY_KEY_NAMES.seal), legacy: rows.some((r) => r.name !== KEY_CHECK_NAME) };
}

/** One transaction, taken by one node at a time on PostgreSQL (several may start at once). */
function keyTransaction<T>(db: Database<ChatTables>, fn: (trx: Queryable<ChatTables>) => Promise<T>): Promise<T> {
  return db.exclusive(7034, fn);
}

function needKey(config: Config, file: string): SecretKeyError {
  const where = config.databaseUrl ? `; ${SAME_KEY_ON_EVERY_NODE}` : '';
  return new SecretKeyError(
    `this database was set up with a secret key, and there is none at ${file}: give Keel that key (restore the file, or use --secret-key-file FILE or KEEL_SECRET_KEY)${where}`,
  );
}

/** The master secret: from the configuration, else the key file, made on a store that has no key yet. */
function masterKey(config: Config, stored: StoredKeys): { key: Buffer; source: string; created?: boolean } {
  if (config.secretKey) return { key: config.secretKey, source: 'KEEL_SECRET_KEY' };
  const file = secretKeyFile(config)!;
  const found = readKeyFile(file);
  if (found) return { key: found, source: file };
  if (stored.check !== undefined) throw needKey(config, file);
  if (config.secretKeyFile) throw new SecretKeyError(`the secret key file ${file} (--secret-key-file) does not exist; make one with: ${MAKE_A_KEY} > ${file}; chmod 600 ${file}`);
  let key: Buffer;
  try {
    key = createKeyFile(file);
  } catch (err) {
    throw new SecretKeyError(`cannot create the secret key file ${file}: ${(err as Error).message}`);
  }
  return { key, source: file, created: true };
}

function wrongKey(config: Config, source: string): SecretKeyError {
  return new SecretKeyError(
    `the secret key from ${source} is not the one this database uses (a database copied without its key, the wrong key, or an old key rotated away): give Keel the key the database uses` +
      (config.databaseUrl ? `; ${SAME_KEY_ON_EVERY_NODE}` : ''),
  );
}

/**
 * The keys this process signs and seals with, checked against the store: a store set up with another
 * key refuses to start (it could neither verify its tokens nor unseal its chat API keys). A new store
 * records the key's check value. A store whose keys are still in server_secrets (Keel before this
 * change) is moved over in one transaction: every chat API key is unsealed with the old seal key and
 * sealed again under the derived one, and the old rows are deleted; JWTs issued under the old
 * signing key stop verifying (their holders log in again).
 */
export async function bindServerKeys<S>(store: Database<S>, config: Config, log?: Logger): Promise<ServerKeys> {
  const db = store as unknown as Database<ChatTables>;
  const seen = await storedKeys(db.kysely);
  const { key, source, created } = masterKey(config, seen);
  const derived = deriveKeys(key);
  const apiKeySeal = new ApiKeySeal(derived.seal);
  const keys = { jwt: derived.jwt, apiKeySeal, check: derived.check, source, ...(created && { createdFile: source }) };
  // The usual start: the store is set up with this key and nothing is to be moved (no write, no lock).
  if (seen.check !== undefined && !seen.legacy) {
    if (!sameCheck(seen.check, derived.check)) throw wrongKey(config, source);
    return keys;
  }
  const moved = await keyTransaction(db, async (trx) => {
    const stored = await storedKeys(trx);
    if (stored.check !== undefined) {
      if (!sameCheck(stored.check, derived.check)) throw wrongKey(config, source);
      // Old key rows beside a check value (a restore mixing backups) are of no use and still a leak.
      if (stored.legacy) await trx.deleteFrom('server_secrets').where('name', 'in', [LEGACY_KEY_NAMES.jwt, LEGACY_KEY_NAMES.seal]).execute();
      return undefined;
    }
    let resealed = 0;
    if (stored.legacySeal !== undefined) {
      try {
        resealed = await resealApiKeys(trx, new ApiKeySeal(Buffer.from(stored.legacySeal, 'hex')), apiKeySeal);
      } catch (err) {
        throw new SecretKeyError(`cannot move the keys out of the database: ${(err as Error).message}`);
      }
    }
    await trx.deleteFrom('server_secrets').where('name', 'in', [LEGACY_KEY_NAMES.jwt, LEGACY_KEY_NAMES.seal]).execute();
    await trx.insertInto('server_secrets').values({ name: KEY_CHECK_NAME, value: derived.check }).execute();
    return stored.legacy ? resealed : undefined;
  });
  if (moved !== undefined) {
    log?.warn(
      `moved the JWT signing key and the chat API key seal key out of the database: both now derive from the secret key in ${source}; ` +
        `${moved} chat API keys sealed again (they still work); JWTs issued before this start no longer verify, so their holders must log in again`,
    );
  }
  return keys;
}

/**
 * Replaces the secret key: every chat API key is sealed again under the new key and the store's
 * check value changes, in one transaction. The new key comes from `newKeyFile`, made (0600) when it
 * does not exist. Every node must then be restarted with the new key; JWTs issued before stop verifying.
 */
export async function rotateSecretKey<S>(store: Database<S>, config: Config, newKeyFile: string): Promise<{ resealed: number; createdFile: boolean }> {
  const db = store as unknown as Database<ChatTables>;
  const current = await bindServerKeys(db, config);
  const existing = readKeyFile(newKeyFile);
  const next = deriveKeys(existing ?? createKeyFile(newKeyFile));
  if (sameCheck(next.check, current.check)) throw new SecretKeyError(`the key in ${newKeyFile} is the one in use already; give a new key (or a file that does not exist yet, to have one made)`);
  const resealed = await keyTransaction(db, async (trx) => {
    const stored = await storedKeys(trx);
    if (stored.check === undefined || !sameCheck(stored.check, current.check)) throw wrongKey(config, current.source);
    const n = await resealApiKeys(trx, current.apiKeySeal, new ApiKeySeal(next.seal));
    // S3 credentials' secrets (issue 17) are sealed with the same key.
    await resealS3Secrets(trx as unknown as Queryable<InfraTables>, current.apiKeySeal, new ApiKeySeal(next.seal));
    await trx.updateTable('server_secrets').set({ value: next.check }).where('name', '=', KEY_CHECK_NAME).execute();
    return n;
  });
  return { resealed, createdFile: existing === undefined };
}

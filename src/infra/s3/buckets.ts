// Buckets and credentials, shared by the storage.s3.* commands and the S3 endpoint: S3's bucket name
// rules, the per-customer bounds, and creating or deleting a bucket (one path for both, so the
// bounds and rules cannot differ between them).
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Database, Queryable } from '../../platform/db/database.js';
import type { FileStore } from '../../platform/files/file-store.js';
import type { InfraTables, S3BucketRow } from '../tables.js';

/**
 * Seals a credential's secret for the store and opens it again (the server's AES-256-GCM seal, the
 * one Chat's API keys use: app.ts passes it in; SigV4 needs the secret itself, a hash would not do).
 */
export interface SecretSeal {
  seal(plain: string): string;
  unseal(sealed: string): string;
}

/** AWS's default bucket quota per account. */
export const MAX_S3_BUCKETS_PER_CUSTOMER = 100;
/** Access keys per customer: AWS allows 2 per IAM user; a customer holds several users' worth. */
export const MAX_S3_CREDENTIALS_PER_CUSTOMER = 50;
/** Multipart uploads in progress per bucket (AWS has no such bound; Keel keeps every store bounded). */
export const MAX_S3_UPLOADS_PER_BUCKET = 1000;
/** One create at a time across the store: counted and added in one step. */
const BUCKET_LOCK = 7260;
const CREDENTIAL_LOCK = 7261;

/** Why a bucket name breaks S3's rules, or undefined when it keeps them. */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return 'must be 3 to 63 characters long';
  if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(name)) return 'may hold only lower-case letters, digits, dots and hyphens, and must begin and end with a letter or digit';
  if (name.includes('..') || name.includes('.-') || name.includes('-.')) return 'must not hold two dots, or a dot next to a hyphen';
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return 'must not look like an IP address';
  if (name.startsWith('xn--') || name.endsWith('-s3alias')) return 'must not begin with xn-- or end with -s3alias';
  return undefined;
}

export type BucketCreation = { ok: Selectable<S3BucketRow> } | { taken: 'yours' | 'theirs' } | { limit: number };

/** Makes a bucket for a customer, unless the name is taken or the customer is at its bound. */
export async function createBucket(db: Database<InfraTables>, customerId: number, name: string, regionId: number, now: number): Promise<BucketCreation> {
  return db.exclusive(BUCKET_LOCK, async (trx) => {
    const existing = await trx.selectFrom('s3_buckets').select(['customer_id']).where('name', '=', name).executeTakeFirst();
    if (existing) return { taken: existing.customer_id === customerId ? 'yours' : 'theirs' };
    const n = await trx
      .selectFrom('s3_buckets')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirstOrThrow();
    if (Number(n.n) >= MAX_S3_BUCKETS_PER_CUSTOMER) return { limit: MAX_S3_BUCKETS_PER_CUSTOMER };
    const row = await trx
      .insertInto('s3_buckets')
      .values({ customer_id: customerId, name, region_id: regionId, status: 'ACTIVE', date_created: now, date_modified: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ok: row };
  });
}

/**
 * Deletes an empty bucket with the multipart uploads still open in it (their parts' files too).
 * 'notEmpty' when it holds an object; 'gone' when another request deleted it first.
 */
export async function deleteBucket(db: Database<InfraTables>, files: FileStore, bucketId: number): Promise<'deleted' | 'notEmpty' | 'gone'> {
  const partFiles: string[] = [];
  const outcome = await db.transaction(async (trx) => {
    const one = await trx.selectFrom('s3_objects').select('id').where('bucket_id', '=', bucketId).limit(1).executeTakeFirst();
    if (one) return 'notEmpty' as const;
    const uploads = await trx.selectFrom('s3_uploads').select('id').where('bucket_id', '=', bucketId).execute();
    const ids = uploads.map((u) => u.id);
    if (ids.length) {
      const parts = await trx.selectFrom('s3_parts').select('file_key').where('upload_id', 'in', ids).execute();
      partFiles.push(...parts.map((p) => p.file_key));
      await trx.deleteFrom('s3_parts').where('upload_id', 'in', ids).execute();
      await trx.deleteFrom('s3_uploads').where('id', 'in', ids).execute();
    }
    const r = await trx.deleteFrom('s3_buckets').where('id', '=', bucketId).executeTakeFirst();
    return Number(r.numDeletedRows) ? ('deleted' as const) : ('gone' as const);
  });
  for (const f of partFiles) await files.delete(f).catch(() => {});
  return outcome;
}

/** An access key id as AWS shapes them: 20 upper-case letters and digits (Keel's begin with KEEL). */
export function newAccessKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bytes = randomBytes(16);
  let s = 'KEEL';
  for (const b of bytes) s += alphabet[b & 31];
  return s;
}

/** A secret access key as AWS shapes them: 40 characters of base64 (240 random bits). */
export function newSecretKey(): string {
  return randomBytes(30).toString('base64');
}

export type CredentialCreation = { ok: { id: number; accessKey: string; secret: string; row: Selectable<InfraTables['s3_credentials']> } } | { limit: number };

export async function createCredential(db: Database<InfraTables>, seal: (plain: string) => string, customerId: number, name: string, now: number): Promise<CredentialCreation> {
  const accessKey = newAccessKey();
  const secret = newSecretKey();
  return db.exclusive(CREDENTIAL_LOCK, async (trx) => {
    const n = await trx
      .selectFrom('s3_credentials')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('customer_id', '=', customerId)
      .executeTakeFirstOrThrow();
    if (Number(n.n) >= MAX_S3_CREDENTIALS_PER_CUSTOMER) return { limit: MAX_S3_CREDENTIALS_PER_CUSTOMER };
    const row = await trx
      .insertInto('s3_credentials')
      .values({ customer_id: customerId, name, access_key: accessKey, secret_sealed: seal(secret), status: 'ACTIVE', date_created: now, date_modified: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ok: { id: row.id, accessKey, secret, row } };
  });
}

/** Seals every stored S3 secret again, from one seal to another (`keel admin rotate-secret-key`); the caller holds the transaction. */
export async function resealS3Secrets(trx: Queryable<InfraTables>, from: SecretSeal, to: SecretSeal): Promise<number> {
  const rows = await trx.selectFrom('s3_credentials').select(['id', 'secret_sealed']).execute();
  for (const r of rows)
    await trx
      .updateTable('s3_credentials')
      .set({ secret_sealed: to.seal(from.unseal(r.secret_sealed)) })
      .where('id', '=', r.id)
      .execute();
  return rows.length;
}

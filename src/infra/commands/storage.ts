// storage.s3.*: a customer's buckets and access credentials on the S3-compatible endpoint Keel
// serves (infra/s3/). The provider's doc pages name the commands and their parameters (s3BucketName,
// s3BucketID, s3RegionID, s3CredentialName, customerid; infra-clients.md 2.6) and give s3 lists a
// default window of 20 with `count` + a plural key. A credential's secret is shown once, by create;
// it is kept sealed under a key derived from the server's secret key, because SigV4 needs it.
import Type from 'typebox';
import type { Selectable } from 'kysely';
import { defineCommand, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems as P } from '../errors.js';
import { unixSeconds } from '../../platform/clock.js';
import type { S3BucketRow, S3CredentialRow } from '../tables.js';
import { actingCustomer, seenCustomers } from '../network/scope.js';
import { bucketNameProblem, createBucket, createCredential, deleteBucket } from '../s3/buckets.js';

/** The provider's s3 lists: "default 20". */
const S3_WINDOW_DEFAULT = 20;
const S3_WINDOW_MAX = 1000;
const paging = {
  resStart: Type.Optional(Type.Integer({ minimum: 0, description: 'first result (0-based)' })),
  resWindow: Type.Optional(Type.Integer({ minimum: 1, maximum: S3_WINDOW_MAX, description: `results per page (default ${S3_WINDOW_DEFAULT})` })),
};
const CustomerId = Type.Integer({ minimum: 1, description: "customer id (customerid or customerId); defaults to the caller's" });
const BucketId = Type.Integer({ minimum: 1, description: 'bucket id' });
const CredentialId = Type.Integer({ minimum: 1, description: 'credential id' });
const Status = Type.Union([Type.Literal('ACTIVE')], { description: 'only ACTIVE exists: a deleted bucket or credential is gone' });

function presentBucket(row: Selectable<S3BucketRow>) {
  return {
    s3BucketID: row.id,
    customerid: row.customer_id,
    s3BucketName: row.name,
    s3RegionID: row.region_id,
    s3BucketStatus: row.status,
    dateCreated: row.date_created,
    dateModified: row.date_modified,
  };
}

function presentCredential(row: Selectable<S3CredentialRow>) {
  return {
    s3CredentialID: row.id,
    customerid: row.customer_id,
    s3CredentialName: row.name,
    accessKey: row.access_key,
    s3CredentialStatus: row.status,
    dateCreated: row.date_created,
    dateModified: row.date_modified,
  };
}

async function findBucket(call: Call, id: number): Promise<Selectable<S3BucketRow>> {
  const customers = await seenCustomers(call);
  const row = await call.services.db.kysely.selectFrom('s3_buckets').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.s3BucketNotFound();
  return row;
}

async function findCredential(call: Call, id: number): Promise<Selectable<S3CredentialRow>> {
  const customers = await seenCustomers(call);
  const row = await call.services.db.kysely.selectFrom('s3_credentials').selectAll().where('id', '=', id).where('customer_id', 'in', customers).executeTakeFirst();
  if (!row) throw infraErrors.s3CredentialNotFound();
  return row;
}

export const storageCommands: Command[] = [
  defineCommand({
    cmd: 'storage.s3.bucket.getall',
    summary: "List the customer's S3 buckets (and its sub-customers')",
    rest: { method: 'GET', path: '/storage/s3/bucket' },
    params: Type.Object({
      ...paging,
      customerid: Type.Optional(CustomerId),
      s3BucketID: Type.Optional(BucketId),
      s3BucketName: Type.Optional(Type.String({ maxLength: 63, description: 'only buckets whose name contains this' })),
      s3BucketStatus: Type.Optional(Status),
      s3RegionID: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
    async handler(call, p) {
      const customers = await seenCustomers(call, p.customerid);
      if (customers.length === 0) return { message: 'Buckets Retrieved Successfully', data: [], count: 0, top: { count: 0, buckets: [] } };
      let q = call.services.db.kysely.selectFrom('s3_buckets').where('customer_id', 'in', customers);
      if (p.s3BucketID !== undefined) q = q.where('id', '=', p.s3BucketID);
      if (p.s3BucketStatus !== undefined) q = q.where('status', '=', p.s3BucketStatus);
      if (p.s3RegionID !== undefined) q = q.where('region_id', '=', p.s3RegionID);
      const rows = (await q.selectAll().orderBy('id').execute()).filter((r) => p.s3BucketName === undefined || r.name.includes(p.s3BucketName.toLowerCase()));
      const start = p.resStart ?? 0;
      const list = rows.slice(start, start + (p.resWindow ?? S3_WINDOW_DEFAULT)).map(presentBucket);
      return { message: 'Buckets Retrieved Successfully', data: list, count: rows.length, top: { count: rows.length, buckets: list } };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.bucket.get',
    summary: 'One S3 bucket',
    rest: { method: 'GET', path: '/storage/s3/bucket/{s3BucketID}' },
    params: Type.Object({ s3BucketID: BucketId }),
    async handler(call, p) {
      const bucket = presentBucket(await findBucket(call, p.s3BucketID));
      return { message: 'Bucket Retrieved Successfully', data: bucket, top: { bucket } };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.bucket.create',
    summary: "Create an S3 bucket for the customer (S3's naming rules; names are unique across the endpoint)",
    rest: { method: 'POST', path: '/storage/s3/bucket' },
    params: Type.Object({
      s3BucketName: Type.String({ minLength: 1, maxLength: 255, description: '3 to 63 lower-case letters, digits, dots and hyphens' }),
      s3RegionID: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'kept and shown; Keel serves one region' })),
      customerid: Type.Optional(CustomerId),
    }),
    async handler(call, p) {
      const problem = bucketNameProblem(p.s3BucketName);
      if (problem) throw infraErrors.invalidParameter({ name: 's3BucketName', problem: P.s3BucketName({ problem }) });
      const customerId = await actingCustomer(call, p.customerid);
      const made = await createBucket(call.services.db, customerId, p.s3BucketName, p.s3RegionID ?? 0, unixSeconds(call.services.clock));
      if ('limit' in made) throw infraErrors.limitReached({ limit: made.limit, things: 'S3 buckets' });
      if ('taken' in made) throw infraErrors.s3BucketTaken({ name: p.s3BucketName });
      const bucket = presentBucket(made.ok);
      return { message: 'Bucket Created Successfully', data: bucket, top: { bucket } };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.bucket.delete',
    summary: 'Delete an empty S3 bucket (multipart uploads still open in it are aborted)',
    rest: { method: 'DELETE', path: '/storage/s3/bucket/{s3BucketID}' },
    params: Type.Object({ s3BucketID: BucketId }),
    async handler(call, p) {
      const row = await findBucket(call, p.s3BucketID);
      const outcome = await deleteBucket(call.services.db, call.services.s3Files, row.id);
      if (outcome === 'notEmpty') throw infraErrors.s3BucketNotEmpty({ name: row.name });
      if (outcome === 'gone') throw infraErrors.s3BucketNotFound();
      return { message: 'Bucket Deleted Successfully' };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.credential.getall',
    summary: "List the customer's S3 credentials (access key ids; never the secrets)",
    rest: { method: 'GET', path: '/storage/s3/credential' },
    params: Type.Object({
      ...paging,
      customerid: Type.Optional(CustomerId),
      s3CredentialName: Type.Optional(Type.String({ maxLength: 200, description: 'only credentials whose name contains this (any case)' })),
      s3CredentialStatus: Type.Optional(Status),
    }),
    async handler(call, p) {
      const customers = await seenCustomers(call, p.customerid);
      if (customers.length === 0) return { message: 'Credentials Retrieved Successfully', data: [], count: 0, top: { count: 0, credentials: [] } };
      let q = call.services.db.kysely.selectFrom('s3_credentials').where('customer_id', 'in', customers);
      if (p.s3CredentialStatus !== undefined) q = q.where('status', '=', p.s3CredentialStatus);
      const needle = p.s3CredentialName?.toLowerCase();
      const rows = (await q.selectAll().orderBy('id').execute()).filter((r) => needle === undefined || r.name.toLowerCase().includes(needle));
      const start = p.resStart ?? 0;
      const list = rows.slice(start, start + (p.resWindow ?? S3_WINDOW_DEFAULT)).map(presentCredential);
      return { message: 'Credentials Retrieved Successfully', data: list, count: rows.length, top: { count: rows.length, credentials: list } };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.credential.get',
    summary: 'One S3 credential (its access key id; never the secret)',
    rest: { method: 'GET', path: '/storage/s3/credential/{s3CredentialID}' },
    params: Type.Object({ s3CredentialID: CredentialId }),
    async handler(call, p) {
      const credential = presentCredential(await findCredential(call, p.s3CredentialID));
      return { message: 'Credential Retrieved Successfully', data: credential, top: { credential } };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.credential.create',
    summary: 'Make an S3 access key id and secret for the customer; the secret is shown this once',
    rest: { method: 'POST', path: '/storage/s3/credential' },
    params: Type.Object({ s3CredentialName: Type.String({ minLength: 1, maxLength: 200 }), customerid: Type.Optional(CustomerId) }),
    async handler(call, p) {
      const customerId = await actingCustomer(call, p.customerid);
      const seal = call.services.s3Seal;
      const made = await createCredential(call.services.db, (s) => seal.seal(s), customerId, p.s3CredentialName, unixSeconds(call.services.clock));
      if ('limit' in made) throw infraErrors.limitReached({ limit: made.limit, things: 'S3 credentials' });
      const credential = { ...presentCredential(made.ok.row), secretKey: made.ok.secret };
      return { message: 'Credential Created Successfully', data: credential, top: { credential } };
    },
  }),
  defineCommand({
    cmd: 'storage.s3.credential.delete',
    summary: 'Delete an S3 credential: requests signed with it are refused from now on',
    rest: { method: 'DELETE', path: '/storage/s3/credential/{s3CredentialID}' },
    params: Type.Object({ s3CredentialID: CredentialId }),
    async handler(call, p) {
      const row = await findCredential(call, p.s3CredentialID);
      await call.services.db.kysely.deleteFrom('s3_credentials').where('id', '=', row.id).execute();
      return { message: 'Credential Deleted Successfully' };
    },
  }),
];

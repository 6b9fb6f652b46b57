// The S3-compatible endpoint (issue 17): its own HTTP listener (--s3-listen), buckets addressed in
// the Host header (`<bucket>.<s3 domain>`, virtual-host style) or in the path (path style), SigV4 on
// every request (s3/sigv4.ts), objects streamed to the file store (`<data dir>/s3`) with their
// metadata in the store (s3_objects). A bucket belongs to the credential's customer; another
// customer's bucket answers AccessDenied, as S3 answers for a bucket of another account.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { PassThrough, Readable, Transform } from 'node:stream';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Database } from '../../platform/db/database.js';
import { type FileStore, FileTooLargeError } from '../../platform/files/file-store.js';
import type { Logger } from '../../platform/log.js';
import type { InfraTables, S3BucketRow, S3ObjectRow } from '../tables.js';
import { type SecretSeal, bucketNameProblem, createBucket, deleteBucket, MAX_S3_UPLOADS_PER_BUCKET } from './buckets.js';
import { awsEncode, parseQuery, readSignature, UNSIGNED, verifySignature } from './sigv4.js';
import { el, errorXml, readCompleteParts, readDeleteKeys, S3_NS, S3Error, xmlDoc } from './xml.js';

/** S3's largest single PUT and largest part: 5 GiB. */
export const MAX_OBJECT_BYTES = 5 * 1024 ** 3;
const MIN_PART_BYTES = 5 * 1024 ** 2;
const MAX_PARTS = 10_000;
const MAX_KEY_BYTES = 1024;
/** x-amz-meta-* names and values together (S3's 2 KB). */
const MAX_METADATA_BYTES = 2048;
/** CreateBucket's and CompleteMultipartUpload's XML bodies (10,000 parts fit). */
const MAX_XML_BYTES = 1024 * 1024;
const OBJECT_LOCK = 7262;
/** Keys sort in byte order; this sorts after every key that begins with a given prefix. */
const AFTER_ALL = '\u{10FFFF}';

export interface S3Services {
  db: Database<InfraTables>;
  clock: Clock;
  log: Logger;
  files: FileStore;
  seal: SecretSeal;
  /** Virtual-host addressing: `<bucket>.<domain>` in the Host header. */
  domain: string;
}

interface Caller {
  customerId: number;
  accessKey: string;
}

interface Req {
  http: http.IncomingMessage;
  method: string;
  bucket: string;
  key: string;
  query: Map<string, string>;
  payloadHash: string;
  caller: Caller;
}

export function createS3Server(s: S3Services) {
  const server = http.createServer({ keepAliveTimeout: 5000, requestTimeout: 0 }, (req, res) => {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    res.setHeader('x-amz-request-id', requestId);
    res.setHeader('server', 'Keel');
    handle(s, req, res).catch((err: unknown) => {
      let e = err instanceof S3Error ? err : undefined;
      if (!e && err instanceof FileTooLargeError) e = new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed object size.');
      if (!e) {
        s.log.error('s3 request failed', { method: req.method, url: req.url, error: (err as Error).stack });
        e = new S3Error(500, 'InternalError', 'We encountered an internal error. Please try again.');
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // The body may not have been read: the client is told to start afresh on a new connection.
      if (!req.complete) res.setHeader('connection', 'close');
      const body = req.method === 'HEAD' ? '' : errorXml(e, (req.url ?? '/').split('?')[0], requestId);
      res.writeHead(e.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  return {
    server,
    listen(host: string, port: number): Promise<void> {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port, backlog: 4096 }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      });
    },
  };
}

export type S3Server = ReturnType<typeof createS3Server>;

async function handle(s: S3Services, hreq: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  let url = hreq.url ?? '/';
  // The absolute form (RFC 9112 3.2.2), as a client sends it through a proxy: only its path and query count.
  const absolute = /^https?:\/\/[^/?#]*/i.exec(url);
  if (absolute) url = url.slice(absolute[0].length) || '/';
  if (!url.startsWith('/')) throw new S3Error(400, 'InvalidURI', "Couldn't parse the specified URI.");
  const q = url.indexOf('?');
  const rawPath = q < 0 ? url : url.slice(0, q);
  const queryList = parseQuery(q < 0 ? '' : url.slice(q + 1));
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    throw new S3Error(400, 'InvalidURI', "Couldn't parse the specified URI.");
  }
  const host = (hreq.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
  let bucket: string;
  let key: string;
  if (s.domain && host.endsWith(`.${s.domain}`)) {
    bucket = host.slice(0, -s.domain.length - 1);
    key = path.slice(1);
  } else {
    const slash = path.indexOf('/', 1);
    bucket = slash < 0 ? path.slice(1) : path.slice(1, slash);
    key = slash < 0 ? '' : path.slice(slash + 1);
  }
  const sig = readSignature(hreq.headers, queryList);
  if (!sig) throw new S3Error(403, 'AccessDenied', 'Access Denied');
  if (sig.payloadHash.startsWith('STREAMING-'))
    throw new S3Error(400, 'InvalidRequest', 'aws-chunked (STREAMING-*) uploads are not supported by this endpoint; send UNSIGNED-PAYLOAD or the payload SHA-256.');
  if (sig.payloadHash !== UNSIGNED && !/^[0-9a-f]{64}$/.test(sig.payloadHash)) throw new S3Error(400, 'InvalidArgument', 'x-amz-content-sha256 must be UNSIGNED-PAYLOAD or a SHA-256 in hexadecimal.');
  const cred = await s.db.kysely.selectFrom('s3_credentials').select(['customer_id', 'secret_sealed', 'status']).where('access_key', '=', sig.accessKey).executeTakeFirst();
  if (!cred || cred.status !== 'ACTIVE') throw new S3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  verifySignature(sig, s.seal.unseal(cred.secret_sealed), { method: hreq.method ?? 'GET', rawPath, query: queryList, rawHeaders: hreq.rawHeaders }, s.clock.now());
  const query = new Map(queryList);
  const req: Req = {
    http: hreq,
    method: hreq.method ?? 'GET',
    bucket,
    key,
    query,
    payloadHash: sig.presigned ? UNSIGNED : sig.payloadHash,
    caller: { customerId: cred.customer_id, accessKey: sig.accessKey },
  };
  if (!bucket) {
    if (req.method === 'GET') return listBuckets(s, req, res);
    throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  }
  if (!key) return bucketOp(s, req, res);
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new S3Error(400, 'KeyTooLongError', 'Your key is too long.');
  if (/[\x00]/.test(key)) throw new S3Error(400, 'InvalidArgument', 'Object keys must not hold NUL characters.');
  return objectOp(s, req, res);
}

const NOT_IMPLEMENTED = [
  'acl',
  'policy',
  'cors',
  'lifecycle',
  'versioning',
  'tagging',
  'website',
  'logging',
  'notification',
  'replication',
  'encryption',
  'versions',
  'object-lock',
  'retention',
  'legal-hold',
  'torrent',
  'attributes',
  'accelerate',
  'requestPayment',
  'analytics',
  'inventory',
  'metrics',
  'ownershipControls',
  'publicAccessBlock',
  'intelligent-tiering',
  'restore',
  'select',
];

function notImplemented(query: Map<string, string>, also: string[] = []): void {
  for (const name of [...NOT_IMPLEMENTED, ...also]) {
    if (query.has(name)) throw new S3Error(400, 'NotImplemented', `Keel's S3 endpoint does not implement the ?${name} operation yet.`);
  }
}

function sendXml(res: http.ServerResponse, status: number, body: string): void {
  const text = xmlDoc(body);
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function empty(res: http.ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-length': 0 });
  res.end();
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '.000Z');

async function listBuckets(s: S3Services, req: Req, res: http.ServerResponse): Promise<void> {
  const rows = await s.db.kysely.selectFrom('s3_buckets').selectAll().where('customer_id', '=', req.caller.customerId).orderBy('name').execute();
  const owner = `<Owner>${el('ID', String(req.caller.customerId))}${el('DisplayName', `customer ${req.caller.customerId}`)}</Owner>`;
  const buckets = rows.map((b) => `<Bucket>${el('Name', b.name)}${el('CreationDate', iso(b.date_created * 1000))}</Bucket>`).join('');
  sendXml(res, 200, `<ListAllMyBucketsResult xmlns="${S3_NS}">${owner}<Buckets>${buckets}</Buckets></ListAllMyBucketsResult>`);
}

/** The caller's bucket by name: NoSuchBucket when there is none, AccessDenied when it is another customer's. */
async function ownBucket(s: S3Services, req: Req, name = req.bucket): Promise<Selectable<S3BucketRow>> {
  const row = await s.db.kysely.selectFrom('s3_buckets').selectAll().where('name', '=', name).executeTakeFirst();
  if (!row) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
  if (row.customer_id !== req.caller.customerId) throw new S3Error(403, 'AccessDenied', 'Access Denied');
  return row;
}

/** A small body (XML), read whole up to MAX_XML_BYTES and checked against the signed hash. */
async function smallBody(req: Req): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req.http) {
    size += (c as Buffer).length;
    if (size > MAX_XML_BYTES) throw new S3Error(400, 'MaxMessageLengthExceeded', 'Your request was too big.');
    chunks.push(c as Buffer);
  }
  const body = Buffer.concat(chunks);
  if (req.payloadHash !== UNSIGNED && createHash('sha256').update(body).digest('hex') !== req.payloadHash) {
    throw new S3Error(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.");
  }
  return body.toString('utf8');
}

async function bucketOp(s: S3Services, req: Req, res: http.ServerResponse): Promise<void> {
  notImplemented(req.query);
  const m = req.method;
  if (m === 'POST' && req.query.has('delete')) return deleteObjects(s, req, res);
  if (req.query.has('delete')) throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
  if (m === 'PUT') {
    await smallBody(req);
    const problem = bucketNameProblem(req.bucket);
    if (problem) throw new S3Error(400, 'InvalidBucketName', `The specified bucket is not valid: it ${problem}.`);
    const made = await createBucket(s.db, req.caller.customerId, req.bucket, 0, Math.floor(s.clock.now() / 1000));
    if ('limit' in made) throw new S3Error(400, 'TooManyBuckets', `You have attempted to create more buckets than allowed (${made.limit}).`);
    if ('taken' in made) {
      if (made.taken === 'yours') throw new S3Error(409, 'BucketAlreadyOwnedByYou', 'Your previous request to create the named bucket succeeded and you already own it.');
      throw new S3Error(
        409,
        'BucketAlreadyExists',
        'The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.',
      );
    }
    return empty(res, 200, { location: `/${req.bucket}` });
  }
  if (m === 'DELETE') {
    if (req.query.has('uploads')) throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
    const bucket = await ownBucket(s, req);
    const outcome = await deleteBucket(s.db, s.files, bucket.id);
    if (outcome === 'notEmpty') throw new S3Error(409, 'BucketNotEmpty', 'The bucket you tried to delete is not empty');
    if (outcome === 'gone') throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
    return empty(res, 204);
  }
  if (m === 'HEAD') {
    await ownBucket(s, req);
    return empty(res, 200, { 'x-amz-bucket-region': 'us-east-1' });
  }
  if (m === 'GET') {
    notImplemented(req.query);
    const bucket = await ownBucket(s, req);
    if (req.query.has('uploads')) return listUploads(s, req, res, bucket);
    if (req.query.has('location')) return sendXml(res, 200, `<LocationConstraint xmlns="${S3_NS}"></LocationConstraint>`);
    return listObjects(s, req, res, bucket);
  }
  throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
}

// ---- listing -------------------------------------------------------------------------------------

async function listObjects(s: S3Services, req: Req, res: http.ServerResponse, bucket: Selectable<S3BucketRow>): Promise<void> {
  const q = req.query;
  const v2 = q.get('list-type') === '2';
  if (q.has('list-type') && !v2) throw new S3Error(400, 'InvalidArgument', 'list-type must be 2.');
  const prefix = q.get('prefix') ?? '';
  const delimiter = q.get('delimiter') ?? '';
  const encodingType = q.get('encoding-type');
  if (encodingType !== undefined && encodingType !== 'url') throw new S3Error(400, 'InvalidArgument', 'Invalid Encoding Method specified in Request');
  const enc = (x: string) => (encodingType === 'url' ? awsEncode(x).replace(/%2F/g, '/') : x);
  const maxText = q.get('max-keys') ?? '1000';
  if (!/^\d{1,9}$/.test(maxText)) throw new S3Error(400, 'InvalidArgument', 'max-keys must be a whole number from 0.');
  const maxKeys = Math.min(Number(maxText), 1000);
  // Where to start: strictly after this key (a continuation token, start-after or marker).
  let after = '';
  const token = q.get('continuation-token');
  if (v2 && token !== undefined) {
    const decoded = Buffer.from(token, 'base64url').toString('utf8');
    if (!token || !decoded.startsWith('k:')) throw new S3Error(400, 'InvalidArgument', 'The continuation token provided is incorrect');
    after = decoded.slice(2);
  } else if (v2) after = q.get('start-after') ?? '';
  else after = q.get('marker') ?? '';
  const contents: Selectable<S3ObjectRow>[] = [];
  const prefixes: string[] = [];
  let truncated = false;
  let last = '';
  let cursor = after;
  let cursorInclusive = false;
  if (prefix > cursor) {
    cursor = prefix;
    cursorInclusive = true;
  }
  outer: while (true) {
    const rows = await s.db.kysely
      .selectFrom('s3_objects')
      .selectAll()
      .where('bucket_id', '=', bucket.id)
      .where('object_key', cursorInclusive ? '>=' : '>', cursor)
      .orderBy('object_key')
      .limit(1001)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const k = row.object_key;
      if (!k.startsWith(prefix)) break outer;
      const rest = k.slice(prefix.length);
      const at = delimiter ? rest.indexOf(delimiter) : -1;
      const common = at >= 0 ? prefix + rest.slice(0, at + delimiter.length) : undefined;
      if (contents.length + prefixes.length >= maxKeys) {
        truncated = true;
        break outer;
      }
      if (common !== undefined) {
        prefixes.push(common);
        last = common;
        // Skip every other key under this common prefix.
        cursor = common + AFTER_ALL;
        cursorInclusive = false;
        continue outer;
      }
      contents.push(row);
      last = k;
      cursor = k;
      cursorInclusive = false;
    }
    if (rows.length < 1001) break;
  }
  // A page that ends on a common prefix continues after everything under it.
  const resumeFrom = prefixes.length && last === prefixes[prefixes.length - 1] ? last + AFTER_ALL : last;
  const parts: string[] = [el('Name', bucket.name), el('Prefix', enc(prefix))];
  if (delimiter) parts.push(el('Delimiter', enc(delimiter)));
  parts.push(el('MaxKeys', maxKeys));
  if (encodingType) parts.push(el('EncodingType', encodingType));
  parts.push(el('IsTruncated', truncated));
  if (v2) {
    parts.push(el('KeyCount', contents.length + prefixes.length));
    if (token !== undefined) parts.push(el('ContinuationToken', token));
    if (q.has('start-after')) parts.push(el('StartAfter', enc(q.get('start-after')!)));
    if (truncated) parts.push(el('NextContinuationToken', Buffer.from(`k:${resumeFrom}`).toString('base64url')));
  } else {
    parts.push(el('Marker', enc(q.get('marker') ?? '')));
    if (truncated) parts.push(el('NextMarker', enc(resumeFrom)));
  }
  for (const o of contents) {
    parts.push(`<Contents>${el('Key', enc(o.object_key))}${el('LastModified', iso(o.modified_ms))}${el('ETag', `"${o.etag}"`)}${el('Size', o.size)}${el('StorageClass', 'STANDARD')}</Contents>`);
  }
  for (const p of prefixes) parts.push(`<CommonPrefixes>${el('Prefix', enc(p))}</CommonPrefixes>`);
  sendXml(res, 200, `<ListBucketResult xmlns="${S3_NS}">${parts.join('')}</ListBucketResult>`);
}

// ---- objects -------------------------------------------------------------------------------------

function userMetadata(req: Req): Record<string, string> {
  const meta: Record<string, string> = {};
  let size = 0;
  for (const [name, value] of Object.entries(req.http.headers)) {
    if (!name.startsWith('x-amz-meta-') || value === undefined) continue;
    const v = Array.isArray(value) ? value.join(',') : value;
    meta[name.slice('x-amz-meta-'.length)] = v;
    size += name.length - 'x-amz-meta-'.length + Buffer.byteLength(v);
  }
  if (size > MAX_METADATA_BYTES) throw new S3Error(400, 'MetadataTooLarge', 'Your metadata headers exceed the maximum allowed metadata size.');
  return meta;
}

function contentType(req: Req): string {
  const t = req.http.headers['content-type'];
  if (t === undefined || t === '') return 'binary/octet-stream';
  if (t.length > 1024) throw new S3Error(400, 'InvalidArgument', 'Content-Type is too long.');
  return t;
}

const newFileKey = (bucketId: number) => `o/${bucketId}/${randomBytes(16).toString('hex')}`;

/**
 * Streams the request body into a new file of the store, checking its size, its Content-MD5 and the
 * signed payload hash; returns the file key, size and hex MD5. A failed check stores nothing.
 */
async function receiveBody(s: S3Services, req: Req, fileKey: string, maxBytes: number): Promise<{ size: number; md5: string }> {
  const declared = req.http.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) throw new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed object size.');
  const md5 = createHash('md5');
  const sha = req.payloadHash === UNSIGNED ? undefined : createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      md5.update(chunk);
      sha?.update(chunk);
      done(null, chunk);
    },
  });
  req.http.on('error', (e) => hashing.destroy(e));
  req.http.pipe(hashing);
  const stored = await s.files.put(fileKey, hashing, { maxBytes });
  const digest = md5.digest();
  const fail = async (e: S3Error) => {
    await s.files.delete(fileKey);
    throw e;
  };
  if (!req.http.complete) await fail(new S3Error(400, 'IncompleteBody', 'You did not provide the number of bytes specified by the Content-Length HTTP header.'));
  if (sha && sha.digest('hex') !== req.payloadHash) await fail(new S3Error(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed."));
  const contentMd5 = req.http.headers['content-md5'] === undefined ? undefined : String(req.http.headers['content-md5']);
  if (contentMd5 !== undefined) {
    if (Buffer.from(contentMd5, 'base64').length !== 16) await fail(new S3Error(400, 'InvalidDigest', 'The Content-MD5 you specified was invalid.'));
    if (Buffer.from(contentMd5, 'base64').toString('hex') !== digest.toString('hex')) await fail(new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.'));
  }
  return { size: stored.size, md5: digest.toString('hex') };
}

/** Writes an object's row (a new key, or a new version replacing the old, whose file is then removed). */
async function storeObject(s: S3Services, bucketId: number, key: string, v: { size: number; etag: string; contentType: string; metadata: Record<string, string>; fileKey: string }): Promise<number> {
  const now = s.clock.now();
  let old: string | undefined;
  try {
    await s.db.exclusive(OBJECT_LOCK, async (trx) => {
      const bucket = await trx.selectFrom('s3_buckets').select('id').where('id', '=', bucketId).executeTakeFirst();
      if (!bucket) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist');
      const prev = await trx.selectFrom('s3_objects').select(['id', 'file_key']).where('bucket_id', '=', bucketId).where('object_key', '=', key).executeTakeFirst();
      const values = { size: v.size, etag: v.etag, content_type: v.contentType, metadata: JSON.stringify(v.metadata), file_key: v.fileKey, modified_ms: now };
      if (prev) {
        old = prev.file_key;
        await trx.updateTable('s3_objects').set(values).where('id', '=', prev.id).execute();
      } else {
        await trx
          .insertInto('s3_objects')
          .values({ bucket_id: bucketId, object_key: key, ...values })
          .execute();
      }
    });
  } catch (err) {
    await s.files.delete(v.fileKey);
    throw err;
  }
  if (old) await s.files.delete(old).catch(() => {});
  return now;
}

async function findObject(s: S3Services, bucketId: number, key: string): Promise<Selectable<S3ObjectRow>> {
  const row = await s.db.kysely.selectFrom('s3_objects').selectAll().where('bucket_id', '=', bucketId).where('object_key', '=', key).executeTakeFirst();
  if (!row) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
  return row;
}

function objectHeaders(o: Selectable<S3ObjectRow>): Record<string, string | number> {
  const h: Record<string, string | number> = {
    'content-type': o.content_type,
    etag: `"${o.etag}"`,
    'last-modified': new Date(o.modified_ms).toUTCString(),
    'accept-ranges': 'bytes',
  };
  for (const [k, v] of Object.entries(JSON.parse(o.metadata) as Record<string, string>)) h[`x-amz-meta-${k}`] = v;
  return h;
}

/** A single byte range of a Range header, or undefined for the whole object (absent, or a form S3 ignores). */
function byteRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (header === undefined) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable');
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size) throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable');
  return { start, end };
}

/** DeleteObjects (POST /<bucket>?delete): each key deleted as DeleteObject would; a missing one counts as deleted, as in S3. */
async function deleteObjects(s: S3Services, req: Req, res: http.ServerResponse): Promise<void> {
  const bucket = await ownBucket(s, req);
  const { keys, quiet } = readDeleteKeys(await smallBody(req));
  const done: string[] = [];
  for (const key of keys) {
    if (Buffer.byteLength(key) > MAX_KEY_BYTES || key.includes('\x00')) continue;
    const row = await s.db.kysely.selectFrom('s3_objects').select(['id', 'file_key']).where('bucket_id', '=', bucket.id).where('object_key', '=', key).executeTakeFirst();
    if (row) {
      await s.db.kysely.deleteFrom('s3_objects').where('id', '=', row.id).execute();
      await s.files.delete(row.file_key).catch(() => {});
    }
    done.push(key);
  }
  const failed = keys.filter((k) => !done.includes(k));
  const body = [
    ...(quiet ? [] : done.map((k) => `<Deleted>${el('Key', k)}</Deleted>`)),
    ...failed.map((k) => `<Error>${el('Key', k)}${el('Code', 'KeyTooLongError')}${el('Message', 'Your key is too long.')}</Error>`),
  ].join('');
  sendXml(res, 200, `<DeleteResult xmlns="${S3_NS}">${body}</DeleteResult>`);
}

async function objectOp(s: S3Services, req: Req, res: http.ServerResponse): Promise<void> {
  notImplemented(req.query);
  const m = req.method;
  const uploadId = req.query.get('uploadId');
  if (m === 'POST' && req.query.has('uploads')) return createUpload(s, req, res);
  if (uploadId !== undefined) {
    if (m === 'PUT') return uploadPart(s, req, res, uploadId);
    if (m === 'POST') return completeUpload(s, req, res, uploadId);
    if (m === 'DELETE') return abortUpload(s, req, res, uploadId);
    if (m === 'GET') return listParts(s, req, res, uploadId);
  }
  const bucket = await ownBucket(s, req);
  if (m === 'PUT') {
    if (req.http.headers['x-amz-copy-source'] !== undefined) return copyObject(s, req, res, bucket);
    const metadata = userMetadata(req);
    const type = contentType(req);
    const fileKey = newFileKey(bucket.id);
    const got = await receiveBody(s, req, fileKey, MAX_OBJECT_BYTES);
    await storeObject(s, bucket.id, req.key, { size: got.size, etag: got.md5, contentType: type, metadata, fileKey });
    return empty(res, 200, { etag: `"${got.md5}"` });
  }
  if (m === 'GET' || m === 'HEAD') {
    const o = await findObject(s, bucket.id, req.key);
    const range = byteRange(req.http.headers.range, o.size);
    const headers = objectHeaders(o);
    if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${o.size}`;
    headers['content-length'] = range ? range.end - range.start + 1 : o.size;
    if (m === 'HEAD' || o.size === 0) {
      res.writeHead(range ? 206 : 200, headers);
      res.end();
      return;
    }
    const file = await s.files.read(o.file_key, range);
    if (!file) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
    res.writeHead(range ? 206 : 200, headers);
    file.stream.on('error', () => res.destroy());
    file.stream.pipe(res);
    return;
  }
  if (m === 'DELETE') {
    const row = await s.db.kysely.selectFrom('s3_objects').select(['id', 'file_key']).where('bucket_id', '=', bucket.id).where('object_key', '=', req.key).executeTakeFirst();
    if (row) {
      await s.db.kysely.deleteFrom('s3_objects').where('id', '=', row.id).execute();
      await s.files.delete(row.file_key).catch(() => {});
    }
    return empty(res, 204);
  }
  throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
}

async function copyObject(s: S3Services, req: Req, res: http.ServerResponse, bucket: Selectable<S3BucketRow>): Promise<void> {
  const header = String(req.http.headers['x-amz-copy-source']);
  let source: string;
  try {
    source = decodeURIComponent(header.split('?')[0]);
  } catch {
    throw new S3Error(400, 'InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
  }
  if (source.startsWith('/')) source = source.slice(1);
  const slash = source.indexOf('/');
  if (slash <= 0 || slash === source.length - 1) throw new S3Error(400, 'InvalidArgument', 'Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
  const from = await ownBucket(s, req, source.slice(0, slash));
  const fromKey = source.slice(slash + 1);
  const directive = req.http.headers['x-amz-metadata-directive'] ?? 'COPY';
  if (directive !== 'COPY' && directive !== 'REPLACE') throw new S3Error(400, 'InvalidArgument', 'Unknown metadata directive.');
  if (from.id === bucket.id && fromKey === req.key && directive === 'COPY') {
    throw new S3Error(
      400,
      'InvalidRequest',
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    );
  }
  const o = await findObject(s, from.id, fromKey);
  await smallBody(req);
  const file = await s.files.read(o.file_key);
  if (!file) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.');
  const fileKey = newFileKey(bucket.id);
  const stored = await s.files.put(fileKey, file.stream);
  const replace = directive === 'REPLACE';
  const modified = await storeObject(s, bucket.id, req.key, {
    size: stored.size,
    etag: o.etag,
    contentType: replace ? contentType(req) : o.content_type,
    metadata: replace ? userMetadata(req) : (JSON.parse(o.metadata) as Record<string, string>),
    fileKey,
  });
  sendXml(res, 200, `<CopyObjectResult xmlns="${S3_NS}">${el('LastModified', iso(modified))}${el('ETag', `"${o.etag}"`)}</CopyObjectResult>`);
}

// ---- multipart uploads ---------------------------------------------------------------------------

async function createUpload(s: S3Services, req: Req, res: http.ServerResponse): Promise<void> {
  const bucket = await ownBucket(s, req);
  const metadata = userMetadata(req);
  const type = contentType(req);
  await smallBody(req);
  const uploadId = randomBytes(24).toString('base64url');
  await s.db.exclusive(OBJECT_LOCK, async (trx) => {
    const n = await trx
      .selectFrom('s3_uploads')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('bucket_id', '=', bucket.id)
      .executeTakeFirstOrThrow();
    if (Number(n.n) >= MAX_S3_UPLOADS_PER_BUCKET)
      throw new S3Error(400, 'InvalidRequest', `A bucket holds at most ${MAX_S3_UPLOADS_PER_BUCKET} multipart uploads in progress; complete or abort one first.`);
    await trx
      .insertInto('s3_uploads')
      .values({ upload_id: uploadId, bucket_id: bucket.id, object_key: req.key, content_type: type, metadata: JSON.stringify(metadata), date_created: Math.floor(s.clock.now() / 1000) })
      .execute();
  });
  sendXml(res, 200, `<InitiateMultipartUploadResult xmlns="${S3_NS}">${el('Bucket', bucket.name)}${el('Key', req.key)}${el('UploadId', uploadId)}</InitiateMultipartUploadResult>`);
}

async function findUpload(s: S3Services, req: Req, uploadId: string) {
  const bucket = await ownBucket(s, req);
  const up = await s.db.kysely.selectFrom('s3_uploads').selectAll().where('upload_id', '=', uploadId).executeTakeFirst();
  if (!up || up.bucket_id !== bucket.id || up.object_key !== req.key) {
    throw new S3Error(404, 'NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.');
  }
  return { bucket, up };
}

async function uploadPart(s: S3Services, req: Req, res: http.ServerResponse, uploadId: string): Promise<void> {
  const n = req.query.get('partNumber') ?? '';
  if (!/^\d{1,5}$/.test(n) || Number(n) < 1 || Number(n) > MAX_PARTS) throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive');
  if (req.http.headers['x-amz-copy-source'] !== undefined) throw new S3Error(400, 'NotImplemented', "Keel's S3 endpoint does not implement UploadPartCopy yet.");
  const { up } = await findUpload(s, req, uploadId);
  const partNumber = Number(n);
  const fileKey = `p/${up.id}/${partNumber}-${randomBytes(8).toString('hex')}`;
  const got = await receiveBody(s, req, fileKey, MAX_OBJECT_BYTES);
  let old: string | undefined;
  try {
    await s.db.exclusive(OBJECT_LOCK, async (trx) => {
      const still = await trx.selectFrom('s3_uploads').select('id').where('id', '=', up.id).executeTakeFirst();
      if (!still) throw new S3Error(404, 'NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.');
      const prev = await trx.selectFrom('s3_parts').select('file_key').where('upload_id', '=', up.id).where('part_number', '=', partNumber).executeTakeFirst();
      if (prev) {
        old = prev.file_key;
        await trx.updateTable('s3_parts').set({ size: got.size, etag: got.md5, file_key: fileKey }).where('upload_id', '=', up.id).where('part_number', '=', partNumber).execute();
      } else {
        await trx.insertInto('s3_parts').values({ upload_id: up.id, part_number: partNumber, size: got.size, etag: got.md5, file_key: fileKey }).execute();
      }
    });
  } catch (err) {
    await s.files.delete(fileKey);
    throw err;
  }
  if (old) await s.files.delete(old).catch(() => {});
  empty(res, 200, { etag: `"${got.md5}"` });
}

async function completeUpload(s: S3Services, req: Req, res: http.ServerResponse, uploadId: string): Promise<void> {
  const { bucket, up } = await findUpload(s, req, uploadId);
  const listed = readCompleteParts(await smallBody(req));
  const stored = new Map((await s.db.kysely.selectFrom('s3_parts').selectAll().where('upload_id', '=', up.id).execute()).map((p) => [p.part_number, p]));
  const chosen: { part_number: number; size: number; etag: string; file_key: string }[] = [];
  for (let i = 0; i < listed.length; i++) {
    const l = listed[i];
    if (i > 0 && l.partNumber <= listed[i - 1].partNumber)
      throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order. The parts list must be specified in order by part number.');
    const p = stored.get(l.partNumber);
    if (!p || p.etag !== l.etag)
      throw new S3Error(
        400,
        'InvalidPart',
        "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.",
      );
    chosen.push(p);
  }
  for (const p of chosen.slice(0, -1)) {
    if (p.size < MIN_PART_BYTES) throw new S3Error(400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.');
  }
  const total = chosen.reduce((a, p) => a + p.size, 0);
  if (total > MAX_OBJECT_BYTES * 1000) throw new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed object size.');
  const files = s.files;
  async function* concatenated() {
    for (const p of chosen) {
      const f = await files.read(p.file_key);
      if (!f) throw new S3Error(400, 'InvalidPart', 'One or more of the specified parts could not be found.');
      yield* f.stream;
    }
  }
  const fileKey = newFileKey(bucket.id);
  const body = new PassThrough();
  Readable.from(concatenated())
    .on('error', (e) => body.destroy(e))
    .pipe(body);
  const written = await files.put(fileKey, body);
  const etag = `${createHash('md5')
    .update(Buffer.concat(chosen.map((p) => Buffer.from(p.etag, 'hex'))))
    .digest('hex')}-${chosen.length}`;
  // The upload ends here: a second Complete (or an Abort) racing this one finds no upload.
  const claimed = await s.db.transaction(async (trx) => {
    const parts = await trx.selectFrom('s3_parts').select('file_key').where('upload_id', '=', up.id).execute();
    await trx.deleteFrom('s3_parts').where('upload_id', '=', up.id).execute();
    const r = await trx.deleteFrom('s3_uploads').where('id', '=', up.id).executeTakeFirst();
    return Number(r.numDeletedRows) ? parts.map((p) => p.file_key) : undefined;
  });
  if (!claimed) {
    await files.delete(fileKey);
    throw new S3Error(404, 'NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.');
  }
  await storeObject(s, bucket.id, up.object_key, { size: written.size, etag, contentType: up.content_type, metadata: JSON.parse(up.metadata) as Record<string, string>, fileKey });
  for (const f of claimed) await files.delete(f).catch(() => {});
  sendXml(
    res,
    200,
    `<CompleteMultipartUploadResult xmlns="${S3_NS}">${el('Location', `/${bucket.name}/${up.object_key}`)}${el('Bucket', bucket.name)}${el('Key', up.object_key)}${el('ETag', `"${etag}"`)}</CompleteMultipartUploadResult>`,
  );
}

async function abortUpload(s: S3Services, req: Req, res: http.ServerResponse, uploadId: string): Promise<void> {
  const { up } = await findUpload(s, req, uploadId);
  const files = await s.db.transaction(async (trx) => {
    const parts = await trx.selectFrom('s3_parts').select('file_key').where('upload_id', '=', up.id).execute();
    await trx.deleteFrom('s3_parts').where('upload_id', '=', up.id).execute();
    await trx.deleteFrom('s3_uploads').where('id', '=', up.id).execute();
    return parts.map((p) => p.file_key);
  });
  for (const f of files) await s.files.delete(f).catch(() => {});
  empty(res, 204);
}

/** A whole number query parameter from 0, at most `max` (S3 clamps page sizes to 1000). */
function pageSize(query: Map<string, string>, name: string): number {
  const text = query.get(name) ?? '1000';
  if (!/^\d{1,9}$/.test(text)) throw new S3Error(400, 'InvalidArgument', `${name} must be a whole number from 0.`);
  return Math.min(Number(text), 1000);
}

/** ListParts (GET ?uploadId): the parts uploaded so far, by number, paged with part-number-marker. */
async function listParts(s: S3Services, req: Req, res: http.ServerResponse, uploadId: string): Promise<void> {
  const { bucket, up } = await findUpload(s, req, uploadId);
  const max = pageSize(req.query, 'max-parts');
  const markerText = req.query.get('part-number-marker') ?? '0';
  if (!/^\d{1,5}$/.test(markerText)) throw new S3Error(400, 'InvalidArgument', 'part-number-marker must be a part number.');
  const rows = await s.db.kysely
    .selectFrom('s3_parts')
    .selectAll()
    .where('upload_id', '=', up.id)
    .where('part_number', '>', Number(markerText))
    .orderBy('part_number')
    .limit(max + 1)
    .execute();
  const page = rows.slice(0, max);
  const truncated = rows.length > max;
  const parts = page.map((p) => `<Part>${el('PartNumber', p.part_number)}${el('ETag', `"${p.etag}"`)}${el('Size', p.size)}</Part>`).join('');
  sendXml(
    res,
    200,
    `<ListPartsResult xmlns="${S3_NS}">${el('Bucket', bucket.name)}${el('Key', up.object_key)}${el('UploadId', uploadId)}${el('PartNumberMarker', Number(markerText))}${el('NextPartNumberMarker', page.at(-1)?.part_number ?? 0)}${el('MaxParts', max)}${el('IsTruncated', truncated)}${el('StorageClass', 'STANDARD')}${parts}</ListPartsResult>`,
  );
}

/** ListMultipartUploads (GET /<bucket>?uploads): uploads in progress by key, then age; `prefix`, `max-uploads`, `key-marker` + `upload-id-marker`. */
async function listUploads(s: S3Services, req: Req, res: http.ServerResponse, bucket: Selectable<S3BucketRow>): Promise<void> {
  const q = req.query;
  if (q.get('delimiter')) throw new S3Error(400, 'NotImplemented', "Keel's S3 endpoint does not implement ListMultipartUploads with a delimiter yet.");
  const max = pageSize(q, 'max-uploads');
  const prefix = q.get('prefix') ?? '';
  const keyMarker = q.get('key-marker') ?? '';
  const idMarker = q.get('upload-id-marker') ?? '';
  let markerRow = 0;
  if (keyMarker && idMarker) {
    const m = await s.db.kysely.selectFrom('s3_uploads').select('id').where('upload_id', '=', idMarker).where('bucket_id', '=', bucket.id).executeTakeFirst();
    markerRow = m?.id ?? 0;
  }
  const rows = await s.db.kysely
    .selectFrom('s3_uploads')
    .selectAll()
    .where('bucket_id', '=', bucket.id)
    .where((eb) =>
      keyMarker ? eb.or([eb('object_key', '>', keyMarker), eb.and([eb('object_key', '=', keyMarker), eb('id', '>', markerRow || Number.MAX_SAFE_INTEGER)])]) : eb('object_key', '>=', prefix),
    )
    .orderBy('object_key')
    .orderBy('id')
    .limit(MAX_S3_UPLOADS_PER_BUCKET + 1)
    .execute();
  const matching = rows.filter((r) => r.object_key.startsWith(prefix));
  const page = matching.slice(0, max);
  const truncated = matching.length > max;
  const last = page.at(-1);
  const uploads = page.map((u) => `<Upload>${el('Key', u.object_key)}${el('UploadId', u.upload_id)}${el('Initiated', iso(u.date_created * 1000))}${el('StorageClass', 'STANDARD')}</Upload>`).join('');
  sendXml(
    res,
    200,
    `<ListMultipartUploadsResult xmlns="${S3_NS}">${el('Bucket', bucket.name)}${el('KeyMarker', keyMarker)}${el('UploadIdMarker', idMarker)}${el('NextKeyMarker', last?.object_key ?? '')}${el('NextUploadIdMarker', last?.upload_id ?? '')}${el('Prefix', prefix)}${el('MaxUploads', max)}${el('IsTruncated', truncated)}${uploads}</ListMultipartUploadsResult>`,
  );
}

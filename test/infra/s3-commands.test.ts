// Black-box: storage.s3.bucket.* and storage.s3.credential.* through json.php and REST on both
// engines (scoping by customer, the bounds, S3's bucket name rules, the secret shown once), and the
// S3 endpoint's protocol rules with requests signed by AWS's own SigV4 signer (@smithy/signature-v4):
// S3's XML errors, another customer's bucket, ranges, listings with delimiters and pages, copy.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { forEachEngine } from '../helpers/engines.js';
import { networkWorld, type NetworkWorld } from '../helpers/network-world.js';
import { MAX_S3_BUCKETS_PER_CUSTOMER, MAX_S3_CREDENTIALS_PER_CUSTOMER } from '../../src/infra/s3/buckets.js';

interface Cred {
  accessKey: string;
  secretKey: string;
}

/** One S3 request signed by AWS's SigV4 signer; status, headers and body text. */
async function s3(
  port: number,
  cred: Cred,
  method: string,
  path: string,
  opts: { body?: Buffer | string; headers?: Record<string, string>; query?: Record<string, string>; unsigned?: boolean; presign?: boolean } = {},
) {
  const signer = new SignatureV4({
    credentials: { accessKeyId: cred.accessKey, secretAccessKey: cred.secretKey },
    region: 'us-east-1',
    service: 's3',
    sha256: Hash.bind(null, 'sha256') as unknown as new () => InstanceType<typeof Hash>,
    uriEscapePath: false,
  });
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  const { createHash } = await import('node:crypto');
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...opts.headers };
  if (opts.presign) headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
  else
    headers['x-amz-content-sha256'] = opts.unsigned
      ? 'UNSIGNED-PAYLOAD'
      : createHash('sha256')
          .update(body ?? Buffer.alloc(0))
          .digest('hex');
  const request = { method, protocol: 'http:', hostname: '127.0.0.1', port, path, query: opts.query ?? {}, headers, body };
  const signed = opts.presign ? await signer.presign(request, { expiresIn: 60, unhoistableHeaders: new Set(['x-amz-content-sha256']) }) : await signer.sign(request);
  const qs = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  const h = { ...(signed.headers as Record<string, string>) };
  delete h.host;
  const r = await fetch(`http://127.0.0.1:${port}${path}${qs ? `?${qs}` : ''}`, { method, headers: h, body });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

const codeOf = (xml: string) => /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];

await forEachEngine('storage.s3 commands and the S3 endpoint', (engine) => {
  let w: NetworkWorld;
  let port: number;
  before(async () => {
    w = await networkWorld(engine);
    await w.infra.ctx.s3Server.listen('127.0.0.1', 0);
    port = (w.infra.ctx.s3Server.server.address() as { port: number }).port;
  });
  after(async () => {
    await w?.infra.ctx.s3Server.close();
    await w?.close();
  });

  it('creates, gets, lists and deletes buckets by command and by REST', async () => {
    const made = await w.owner.cmd('storage.s3.bucket.create', { s3BucketName: 'alpha-1', s3RegionID: 3 });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    assert.equal(made.message, 'Bucket Created Successfully');
    assert.deepEqual(Object.keys(made.bucket).sort(), ['customerid', 'dateCreated', 'dateModified', 's3BucketID', 's3BucketName', 's3BucketStatus', 's3RegionID']);
    assert.deepEqual([made.bucket.s3BucketName, made.bucket.s3RegionID, made.bucket.s3BucketStatus, made.bucket.customerid], ['alpha-1', 3, 'ACTIVE', w.owner.customerId]);
    const rest = await w.owner.rest('POST', '/storage/s3/bucket', { s3BucketName: 'beta.2' });
    assert.equal(rest.code, 'OK', JSON.stringify(rest));
    const all = await w.owner.cmd('storage.s3.bucket.getall', {});
    assert.deepEqual([all.count, all.buckets.map((b: any) => b.s3BucketName)], [2, ['alpha-1', 'beta.2']]);
    const page = await w.owner.cmd('storage.s3.bucket.getall', { resStart: 1, resWindow: 1 });
    assert.deepEqual([page.count, page.buckets.length, page.buckets[0].s3BucketName], [2, 1, 'beta.2']);
    assert.equal((await w.owner.cmd('storage.s3.bucket.getall', { s3BucketName: 'ALPHA' })).count, 1);
    assert.equal((await w.owner.rest('GET', `/storage/s3/bucket/${rest.data.s3BucketID}`)).data.s3BucketName, 'beta.2');
    assert.equal((await w.owner.cmd('storage.s3.bucket.get', { s3BucketID: made.bucket.s3BucketID })).bucket.s3BucketName, 'alpha-1');
    assert.deepEqual(await w.owner.rest('DELETE', `/storage/s3/bucket/${rest.data.s3BucketID}`), { code: 'OK', message: 'Bucket Deleted Successfully' });
    assert.deepEqual(await w.owner.cmd('storage.s3.bucket.get', { s3BucketID: rest.data.s3BucketID }), { code: 'ERROR', message: 'Could not find bucket' });
    assert.deepEqual(await w.owner.cmd('storage.s3.bucket.delete', { s3BucketID: made.bucket.s3BucketID }), { code: 'OK', message: 'Bucket Deleted Successfully' });
  });

  it("checks S3's bucket name rules, unique names, and writes nothing for a bad one", async () => {
    for (const bad of ['ab', 'UPPER', '-dash', 'dot.', 'a..b', '192.168.1.1', 'x'.repeat(64), 'under_score', 'xn--punycode']) {
      const r = await w.owner.cmd('storage.s3.bucket.create', { s3BucketName: bad });
      assert.equal(r.code, 'FAULT', `${bad}: ${JSON.stringify(r)}`);
      assert.ok(r.error.s3BucketName, JSON.stringify(r));
    }
    assert.equal((await w.owner.cmd('storage.s3.bucket.getall', {})).count, 0);
    assert.equal((await w.other.cmd('storage.s3.bucket.create', { s3BucketName: 'taken-name' })).code, 'OK');
    assert.deepEqual(await w.owner.cmd('storage.s3.bucket.create', { s3BucketName: 'taken-name' }), {
      code: 'ERROR',
      message: 'Bucket name taken-name is taken; bucket names are unique across the endpoint',
    });
    assert.equal((await w.owner.cmd('storage.s3.bucket.create', { s3BucketName: 'x', s3RegionID: -1 })).code, 'FAULT');
  });

  it("scopes by customer: another customer's bucket or credential answers like a missing one; a parent acts for its sub-customer", async () => {
    const theirs = (await w.other.cmd('storage.s3.bucket.create', { s3BucketName: 'theirs-bucket' })).bucket;
    const theirCred = (await w.other.cmd('storage.s3.credential.create', { s3CredentialName: 'theirs' })).credential;
    for (const t of [w.owner, w.child]) {
      for (const cmd of ['storage.s3.bucket.get', 'storage.s3.bucket.delete'])
        assert.deepEqual(await t.cmd(cmd, { s3BucketID: theirs.s3BucketID }), { code: 'ERROR', message: 'Could not find bucket' });
      for (const cmd of ['storage.s3.credential.get', 'storage.s3.credential.delete']) {
        assert.deepEqual(await t.cmd(cmd, { s3CredentialID: theirCred.s3CredentialID }), { code: 'ERROR', message: 'Could not find S3 credential' });
      }
      assert.equal((await t.cmd('storage.s3.bucket.getall', { customerid: w.other.customerId })).count, 0);
    }
    const forChild = await w.owner.cmd('storage.s3.bucket.create', { s3BucketName: 'for-child', customerid: w.child.customerId });
    assert.equal(forChild.bucket.customerid, w.child.customerId);
    assert.equal((await w.child.cmd('storage.s3.bucket.get', { s3BucketID: forChild.bucket.s3BucketID })).code, 'OK');
    assert.equal((await w.child.cmd('storage.s3.bucket.create', { s3BucketName: 'up-there', customerid: w.owner.customerId })).code, 'ERROR');
  });

  it('makes credentials whose secret is shown once and which sign S3 requests until deleted', async () => {
    const made = await w.owner.rest('POST', '/storage/s3/credential', { s3CredentialName: 'ci' });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    const cred = made.data;
    assert.match(cred.accessKey, /^KEEL[A-Z2-7]{16}$/);
    assert.equal(cred.secretKey.length, 40);
    const got = await w.owner.cmd('storage.s3.credential.get', { s3CredentialID: cred.s3CredentialID });
    assert.equal(got.credential.accessKey, cred.accessKey);
    assert.equal(got.credential.secretKey, undefined);
    const all = await w.owner.cmd('storage.s3.credential.getall', { s3CredentialName: 'C' });
    assert.ok(all.credentials.every((c: any) => c.secretKey === undefined) && all.count >= 1);
    // Stored sealed: the secret's text is nowhere in the row.
    const row = await w.infra.ctx.db.kysely.selectFrom('s3_credentials').selectAll().where('id', '=', cred.s3CredentialID).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(cred.secretKey));
    assert.equal((await s3(port, cred, 'GET', '/')).status, 200);
    assert.deepEqual(await w.owner.cmd('storage.s3.credential.delete', { s3CredentialID: cred.s3CredentialID }), { code: 'OK', message: 'Credential Deleted Successfully' });
    const refused = await s3(port, cred, 'GET', '/');
    assert.deepEqual([refused.status, codeOf(refused.text)], [403, 'InvalidAccessKeyId']);
  });

  it('bounds buckets and credentials per customer', async () => {
    const held = (await w.other.cmd('storage.s3.bucket.getall', {})).count;
    for (let i = held; i < MAX_S3_BUCKETS_PER_CUSTOMER; i++) assert.equal((await w.other.cmd('storage.s3.bucket.create', { s3BucketName: `bound-${i}` })).code, 'OK');
    assert.deepEqual(await w.other.cmd('storage.s3.bucket.create', { s3BucketName: 'one-too-many' }), {
      code: 'ERROR',
      message: `Limit reached: a customer has at most ${MAX_S3_BUCKETS_PER_CUSTOMER} S3 buckets; delete one first`,
    });
    const creds = (await w.other.cmd('storage.s3.credential.getall', {})).count;
    for (let i = creds; i < MAX_S3_CREDENTIALS_PER_CUSTOMER; i++) assert.equal((await w.other.cmd('storage.s3.credential.create', { s3CredentialName: `c${i}` })).code, 'OK');
    assert.equal((await w.other.cmd('storage.s3.credential.create', { s3CredentialName: 'too many' })).code, 'ERROR');
  });

  it("answers in S3's XML error dialect and keeps to S3's rules", async () => {
    const cred = (await w.child.cmd('storage.s3.credential.create', { s3CredentialName: 'proto' })).credential as Cred;
    const anon = await fetch(`http://127.0.0.1:${port}/`);
    assert.deepEqual([anon.status, codeOf(await anon.text())], [403, 'AccessDenied']);
    const wrong = await s3(port, { ...cred, secretKey: 'x'.repeat(40) }, 'GET', '/');
    assert.deepEqual([wrong.status, codeOf(wrong.text)], [403, 'SignatureDoesNotMatch']);
    assert.match(wrong.headers.get('content-type') ?? '', /application\/xml/);
    assert.equal(codeOf((await s3(port, cred, 'GET', '/no-such-bucket')).text), 'NoSuchBucket');
    // Another customer's bucket: AccessDenied, as S3 answers for another account's.
    const foreign = await s3(port, cred, 'GET', '/theirs-bucket');
    assert.deepEqual([foreign.status, codeOf(foreign.text)], [403, 'AccessDenied']);
    assert.deepEqual([(await s3(port, cred, 'PUT', '/theirs-bucket')).status], [409]);
    assert.equal(codeOf((await s3(port, cred, 'PUT', '/Bad_Name')).text), 'InvalidBucketName');
    assert.equal((await s3(port, cred, 'PUT', '/proto-b')).status, 200);
    assert.equal(codeOf((await s3(port, cred, 'PUT', '/proto-b')).text), 'BucketAlreadyOwnedByYou');
    assert.equal(codeOf((await s3(port, cred, 'GET', '/proto-b/missing')).text), 'NoSuchKey');
    const bad = await s3(port, cred, 'PUT', '/proto-b/k', { body: 'abc', headers: { 'content-md5': Buffer.alloc(16).toString('base64') } });
    assert.deepEqual([bad.status, codeOf(bad.text)], [400, 'BadDigest']);
    // Signed with one payload hash, sent with another body.
    const swapped = await fetch(`http://127.0.0.1:${port}/proto-b/k`, { method: 'PUT', body: 'abc' });
    assert.equal(swapped.status, 403);
    for (const k of ['a/1', 'a/2', 'a/b/3', 'b/4', 'c', 'ü/5'])
      assert.equal((await s3(port, cred, 'PUT', `/proto-b/${encodeURIComponent(k).replace(/%2F/g, '/')}`, { body: `body of ${k}`, unsigned: true })).status, 200);
    const list = await s3(port, cred, 'GET', '/proto-b', { query: { 'list-type': '2', delimiter: '/' } });
    assert.deepEqual(
      [...list.text.matchAll(/<Prefix>([^<]+)<\/Prefix>/g)].map((m) => m[1]),
      ['a/', 'b/', 'ü/'],
    );
    assert.deepEqual(
      [...list.text.matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]),
      ['c'],
    );
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3(port, cred, 'GET', '/proto-b', { query: { 'list-type': '2', prefix: 'a/', delimiter: '/', 'max-keys': '1', ...(token ? { 'continuation-token': token } : {}) } });
      seen.push(...[...page.text.matchAll(/<(?:Key|Prefix)>([^<]+)<\/(?:Key|Prefix)>/g)].map((m) => m[1]).filter((x) => x !== 'a/'));
      token = /<NextContinuationToken>([^<]+)</.exec(page.text)?.[1];
    } while (token);
    assert.deepEqual(seen, ['a/1', 'a/2', 'a/b/']);
    const range = await s3(port, cred, 'GET', '/proto-b/c', { headers: { range: 'bytes=-3' } });
    assert.deepEqual([range.status, range.text, range.headers.get('content-range')], [206, 'f c', 'bytes 6-8/9']);
    assert.equal(codeOf((await s3(port, cred, 'GET', '/proto-b/c', { headers: { range: 'bytes=50-' } })).text), 'InvalidRange');
    const copy = await s3(port, cred, 'PUT', '/proto-b/copied', { headers: { 'x-amz-copy-source': '/proto-b/c' } });
    assert.equal(copy.status, 200, copy.text);
    assert.equal((await s3(port, cred, 'GET', '/proto-b/copied')).text, 'body of c');
    assert.equal(codeOf((await s3(port, cred, 'PUT', '/proto-b/c', { headers: { 'x-amz-copy-source': '/proto-b/c' } })).text), 'InvalidRequest');
    const presigned = await s3(port, cred, 'GET', '/proto-b/c', { presign: true });
    assert.deepEqual([presigned.status, presigned.text], [200, 'body of c']);
    assert.equal(codeOf((await s3(port, cred, 'DELETE', '/proto-b')).text), 'BucketNotEmpty');
    assert.equal(codeOf((await s3(port, cred, 'GET', '/proto-b', { query: { acl: '' } })).text), 'NotImplemented');
    assert.equal(codeOf((await s3(port, cred, 'PUT', '/proto-b/x', { query: { partNumber: '1', uploadId: 'nope' }, body: 'x' })).text), 'NoSuchUpload');
    assert.equal(codeOf((await s3(port, cred, 'PUT', '/proto-b/x', { query: { partNumber: '0', uploadId: 'nope' }, body: 'x' })).text), 'InvalidArgument');
    // Objects made through S3 keep their bucket from being deleted by command too.
    const id = (await w.child.cmd('storage.s3.bucket.getall', { s3BucketName: 'proto-b' })).buckets[0].s3BucketID;
    assert.deepEqual(await w.child.cmd('storage.s3.bucket.delete', { s3BucketID: id }), { code: 'ERROR', message: 'Bucket proto-b still holds objects; delete them first' });
  });

  it("answers malformed requests with a 4xx in S3's dialect, never a 5xx", async () => {
    const cred = (await w.child.cmd('storage.s3.credential.create', { s3CredentialName: 'fuzz' })).credential as Cred;
    assert.equal((await s3(port, cred, 'PUT', '/fuzz-b')).status, 200);
    const raw = async (path: string, headers: Record<string, string> = {}, method = 'GET') => (await fetch(`http://127.0.0.1:${port}${path}`, { method, headers })).status;
    for (const [path, headers] of [
      ['/fuzz-b/%E0%A4%A', {}],
      ['/fuzz-b?prefix=%ZZ', {}],
      ['/', { authorization: 'AWS4-HMAC-SHA256 nonsense' }],
      ['/', { authorization: 'AWS AKID:sig' }],
      ['/', { authorization: 'AWS4-HMAC-SHA256 Credential=KEELX/2024/us/s3/aws4_request, SignedHeaders=host, Signature=00' }],
      ['/', { authorization: 'AWS4-HMAC-SHA256 Credential=KEELX/20240101/us/s3/aws4_request, SignedHeaders=host, Signature=00', 'x-amz-date': 'x', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }],
      ['/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=99999999', {}],
      ['/?X-Amz-Algorithm=HMAC', {}],
    ] as [string, Record<string, string>][]) {
      const status = await raw(path, headers);
      assert.ok(status >= 400 && status < 500, `${path} ${JSON.stringify(headers)}: ${status}`);
    }
    const signed = async (method: string, path: string, o: Parameters<typeof s3>[4] = {}) => (await s3(port, cred, method, path, o)).status;
    for (const [method, path, o] of [
      ['POST', '/fuzz-b/k', { query: { uploadId: 'none' }, body: '<x/>' }],
      ['GET', '/fuzz-b', { query: { 'max-keys': '-1' } }],
      ['GET', '/fuzz-b', { query: { 'list-type': '3' } }],
      ['GET', '/fuzz-b', { query: { 'list-type': '2', 'continuation-token': '!!!' } }],
      ['GET', '/fuzz-b', { query: { 'encoding-type': 'base64' } }],
      ['PUT', '/fuzz-b/k', { headers: { 'x-amz-copy-source': 'nothing' } }],
      ['PUT', '/fuzz-b/k', { headers: { 'x-amz-copy-source': '/fuzz-b/%E0' } }],
      ['PUT', '/fuzz-b/k', { headers: { 'x-amz-copy-source': '/theirs-bucket/x' } }],
      ['PUT', '/fuzz-b/k', { headers: { 'content-md5': 'short' }, body: 'x' }],
      ['PUT', `/fuzz-b/${'k'.repeat(1100)}`, { body: 'x' }],
      ['PUT', '/fuzz-b/k', { headers: { 'x-amz-meta-big': 'v'.repeat(3000) }, body: 'x' }],
      ['DELETE', '/fuzz-b', { query: { uploads: '' } }],
      ['POST', '/fuzz-b', {}],
      ['PATCH', '/fuzz-b/k', {}],
      ['PUT', '/', {}],
    ] as [string, string, Parameters<typeof s3>[4]][]) {
      const status = await signed(method, path, o);
      assert.ok(status >= 400 && status < 500, `${method} ${path} ${JSON.stringify(o)}: ${status}`);
    }
    // A CompleteMultipartUpload body that is not XML, or lists no parts.
    const init = await s3(port, cred, 'POST', '/fuzz-b/m', { query: { uploads: '' } });
    const uploadId = /<UploadId>([^<]+)</.exec(init.text)![1];
    for (const body of [
      'not xml <',
      '<CompleteMultipartUpload></CompleteMultipartUpload>',
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"x"</ETag></Part></CompleteMultipartUpload>',
    ]) {
      const r = await s3(port, cred, 'POST', '/fuzz-b/m', { query: { uploadId }, body });
      assert.ok(['MalformedXML', 'InvalidPart'].includes(codeOf(r.text)!), r.text);
    }
    assert.equal((await s3(port, cred, 'DELETE', '/fuzz-b/m', { query: { uploadId } })).status, 204);
  });
});

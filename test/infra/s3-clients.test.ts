// Black-box: unmodified S3 clients from Debian's packages against Keel's S3 endpoint, with a
// credential made by storage.s3.credential.create: boto3 (Debian's /usr/bin/python3) for the whole
// cycle (buckets, put/get/head/list/delete, ranges, multipart, copy, a presigned GET, S3's error
// codes) and rclone's RackCorp provider (mkdir, copy, ls, cat, delete, rmdir). rclone's RackCorp
// provider always addresses buckets in the host name (`<bucket>.<s3 domain>`); the test sends it
// through Keel's endpoint as its HTTP proxy, so no DNS name is needed. Each skips, saying why, when
// its tool is absent.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { networkWorld, type NetworkWorld } from '../helpers/network-world.js';

const PYTHON = '/usr/bin/python3';
const HERE = path.dirname(fileURLToPath(import.meta.url));
const boto3Missing = spawnSync(PYTHON, ['-c', 'import boto3'], { encoding: 'utf8' }).status === 0 ? undefined : `${PYTHON} with boto3 is not installed (apt-get install python3-boto3)`;
const rcloneMissing = spawnSync('rclone', ['version'], { encoding: 'utf8' }).status === 0 ? undefined : 'rclone is not installed (apt-get install rclone)';
if (boto3Missing) console.log(`# skipping the boto3 cycle: ${boto3Missing}`);
if (rcloneMissing) console.log(`# skipping the rclone cycle: ${rcloneMissing}`);

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as NodeJS.ErrnoException & { code?: number }).code as unknown as number) || 1 : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

await forEachEngine('S3 endpoint with real clients', (engine) => {
  let w: NetworkWorld;
  let port: number;
  let key: string;
  let secret: string;
  let dir: string;
  before(async () => {
    w = await networkWorld(engine);
    await w.infra.ctx.s3Server.listen('127.0.0.1', 0);
    port = (w.infra.ctx.s3Server.server.address() as { port: number }).port;
    const made = await w.owner.cmd('storage.s3.credential.create', { s3CredentialName: 'clients' });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    key = made.credential.accessKey;
    secret = made.credential.secretKey;
    dir = mkdtempSync(path.join(os.tmpdir(), 'keel-s3-clients-'));
  });
  after(async () => {
    await w?.infra.ctx.s3Server.close();
    await w?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes the boto3 cycle', { skip: boto3Missing }, async () => {
    const r = await run(PYTHON, [path.join(HERE, 's3', 'boto3-cycle.py')], {
      PATH: process.env.PATH,
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_KEY: key,
      S3_SECRET: secret,
      S3_BUCKET: `boto-${engine}`,
      NO_PROXY: '*',
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const body = Buffer.from('hello from boto3\n'.repeat(100));
    const { createHash } = await import('node:crypto');
    assert.equal(out.put_etag, `"${createHash('md5').update(body).digest('hex')}"`);
    assert.deepEqual(out.buckets, [`boto-${engine}`]);
    assert.equal(out.get_ok, true);
    assert.equal(out.get_type, 'text/plain');
    assert.deepEqual(out.get_meta, { colour: 'blue' });
    assert.deepEqual([out.range, out.range_status], ['from ', 206]);
    assert.equal(out.head_length, body.length);
    assert.deepEqual(out.list_keys, ['dir/hello.txt']);
    assert.deepEqual(out.list_prefixes, ['dir/sub/']);
    assert.deepEqual(out.paged_keys, ['dir/hello.txt', 'dir/sub/deep.txt', 'top.txt']);
    assert.match(out.mp_etag, /^"[0-9a-f]{32}-3"$/);
    assert.equal(out.mp_ok, true);
    assert.equal(out.mp_type, 'application/x-test');
    assert.deepEqual(out.list_parts, [
      [1, 1],
      [2, 2],
    ]);
    assert.deepEqual(out.list_uploads, [['aborted.bin', true]]);
    assert.equal(out.copy_ok, true);
    assert.equal(out.presigned_ok, true);
    assert.equal(out.tampered, 403);
    assert.deepEqual([out.no_key, out.no_bucket, out.not_empty], ['NoSuchKey', 'NoSuchBucket', 'BucketNotEmpty']);
    assert.deepEqual(out.batch_deleted, ['big.bin', 'copy.txt', 'never-there', 'top.txt']);
    assert.equal(out.after_delete, 0);
    assert.deepEqual(out.buckets_after, []);
    // What the endpoint made and removed, the commands saw.
    assert.equal((await w.owner.cmd('storage.s3.bucket.getall', {})).count, 0);
    assert.equal(await w.infra.ctx.db.kysely.selectFrom('s3_uploads').select('id').executeTakeFirst(), undefined);
  });

  it('passes the rclone cycle (its RackCorp provider, buckets in the host name)', { skip: rcloneMissing }, async () => {
    const local = path.join(dir, 'local.txt');
    const text = 'hello from rclone\n'.repeat(1000);
    writeFileSync(local, text);
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      RCLONE_CONFIG: path.join(dir, 'none.conf'),
      RCLONE_CONFIG_K_TYPE: 's3',
      RCLONE_CONFIG_K_PROVIDER: 'RackCorp',
      RCLONE_CONFIG_K_ACCESS_KEY_ID: key,
      RCLONE_CONFIG_K_SECRET_ACCESS_KEY: secret,
      RCLONE_CONFIG_K_ENDPOINT: `http://s3.keel.localhost:${port}`,
      // <bucket>.s3.keel.localhost has no DNS name here: Keel's endpoint is the proxy, and reads the absolute URL.
      HTTP_PROXY: `http://127.0.0.1:${port}`,
      http_proxy: `http://127.0.0.1:${port}`,
    };
    const bucket = `rclone-${engine}`;
    const hosts = new Set<string>();
    w.infra.ctx.s3Server.server.on('request', (req) => hosts.add(String(req.headers.host)));
    const rc = (...args: string[]) => run('rclone', ['--low-level-retries', '1', '--retries', '1', ...args], env);
    let r = await rc('mkdir', `k:${bucket}`);
    assert.equal(r.code, 0, r.stderr);
    const buckets = await w.owner.cmd('storage.s3.bucket.getall', {});
    assert.deepEqual(
      buckets.buckets.map((b: any) => b.s3BucketName),
      [bucket],
    );
    r = await rc('copy', local, `k:${bucket}/dir/`);
    assert.equal(r.code, 0, r.stderr);
    r = await rc('ls', `k:${bucket}`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `${text.length} dir/local.txt`);
    r = await rc('lsd', `k:${bucket}`);
    assert.match(r.stdout, / dir$/m);
    r = await rc('cat', `k:${bucket}/dir/local.txt`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, text);
    r = await rc('check', dir, `k:${bucket}/dir/`, '--include', 'local.txt');
    assert.equal(r.code, 0, r.stderr);
    r = await rc('delete', `k:${bucket}/dir/local.txt`);
    assert.equal(r.code, 0, r.stderr);
    r = await rc('ls', `k:${bucket}`);
    assert.equal(r.stdout.trim(), '');
    r = await rc('rmdir', `k:${bucket}`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await w.owner.cmd('storage.s3.bucket.getall', {})).count, 0);
    // rclone addressed the bucket in the Host header, as its RackCorp provider does.
    assert.ok(hosts.has(`${bucket}.s3.keel.localhost:${port}`), [...hosts].join(' '));
  });
});

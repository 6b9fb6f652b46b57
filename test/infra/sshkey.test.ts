// Black-box: sshkey.* (the sshkey family's dialect: `matches` + `results`, lower-case customerid),
// OpenSSH public key checks with fingerprints exactly as ssh-keygen -l prints them, scoping by
// customer, validation with nothing written, the per-customer bound, and customerSshKeys, which the
// provisioning worker reads to install keys through cloud-init.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { goProblems, networkWorld, type GoType, type NetworkWorld } from '../helpers/network-world.js';
import { customerSshKeys, MAX_SSH_KEYS_PER_CUSTOMER } from '../../src/infra/commands/sshkey.js';
import { parseSshPublicKey } from '../../src/infra/network/ssh-public-key.js';

/** Made with OpenSSH's ssh-keygen; the fingerprints are its `ssh-keygen -lf` output. */
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAID/pOuiJq72+8lGESVQhmv3YheRn54SYGOp7ftF5XUEV alice@example';
const ED25519_FP = 'SHA256:AukrIAeJhREvUv8xtVU53H8EJCyLY2otdTpRZG2vlmY';
const RSA =
  'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC2SQatVcMk5BycR/9pVil/g5HjSPj0M1jTa6dbzbDsHJOlofdWrw3UWtOq1MoJUMY2o4jNJrp2gLEZEkgUYxzfPMe4OWR9pxfHBUXAgYYdi0mFz3pbJeIFv12yJuBaEeA6BVbzYDtfmi5BBa/E1skWHhF9cRbkh0b0xBGx7e7p/P/rXZjjFmgGs7LPNIgwY6ui9XykqX5vWhUCUjm7KAYgF8GuxoTOuR/QEpUKZdXcir/mmMRpPC/KJfN49jkDYetWPZ1ZJKTPmtUOowDypAk21uT24mp0g/m4vIxEqwH7C78TyRAadQVb/jfxKATUnRQTYDzwJeAXZzUAiYzgXSwT bob';
const RSA_FP = 'SHA256:xk7liBcDiUyGGjXLmDocsk65SywtRHaQfYaxgUszj7U';
const ECDSA384 =
  'ecdsa-sha2-nistp384 AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzODQAAABhBDLCUPuAzGn4cYug79OaKr1rCdFqptqZ2jCrS43Wgtj/eeqq/zhzTP+iC2KPFZeG1QJfS7t10dl5UCmWvcympQRylZouqVj2U1XgfKSUZG8Nj6bK6aPSA3cdyjI15qQ6KQ==';
const ECDSA384_FP = 'SHA256:Dnzxd9dGkedUvMXnXF7PT/nm4yfRHCl+8IDZKNdFSKw';

/** RFC 4251 string and mpint, to build key blobs in the test. */
const str = (b: Buffer | string) => {
  const data = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, data]);
};
const mpint = (b64url: string) => {
  const raw = Buffer.from(b64url, 'base64url');
  return str(raw[0] & 0x80 ? Buffer.concat([Buffer.from([0]), raw]) : raw);
};
const line = (type: string, ...fields: Buffer[]) => `${type} ${Buffer.concat([str(type), ...fields]).toString('base64')}`;

function rsaKey(bits: number): string {
  const jwk = generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ format: 'jwk' });
  return line('ssh-rsa', mpint(jwk.e!), mpint(jwk.n!));
}

const SSHKEY: GoType = { id: 'int', customerid: 'int', name: 'string', type: 'string', publickey: 'string', comment: 'string', fingerprint: 'string', datecreated: 'int', datemodified: 'int' };

it('reads OpenSSH public keys and fingerprints them as ssh-keygen does', () => {
  for (const [text, fp, type] of [
    [ED25519, ED25519_FP, 'ssh-ed25519'],
    [RSA, RSA_FP, 'ssh-rsa'],
    [ECDSA384, ECDSA384_FP, 'ecdsa-sha2-nistp384'],
  ]) {
    const k = parseSshPublicKey(text);
    assert.ok('fingerprint' in k, JSON.stringify(k));
    assert.equal(k.fingerprint, fp);
    assert.equal(k.type, type);
  }
  const ed = parseSshPublicKey(`  ${ED25519}  `);
  assert.ok('comment' in ed && ed.comment === 'alice@example' && ed.publicKey === ED25519.replace(' alice@example', ''));
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(p256.x!, 'base64url'), Buffer.from(p256.y!, 'base64url')]);
  assert.ok('fingerprint' in parseSshPublicKey(line('ecdsa-sha2-nistp256', str('nistp256'), str(point))));
  assert.deepEqual(parseSshPublicKey(line('ecdsa-sha2-nistp256', str('nistp384'), str(point))), { kind: 'blob', type: 'ecdsa-sha2-nistp256' });
  assert.ok('fingerprint' in parseSshPublicKey(rsaKey(2048)));
  assert.deepEqual(parseSshPublicKey(rsaKey(512)), { kind: 'rsaBits', bits: 512 });
  const edBlob = ED25519.split(' ')[1];
  assert.deepEqual(parseSshPublicKey(`ssh-rsa ${edBlob}`), { kind: 'mismatch', written: 'ssh-rsa', embedded: 'ssh-ed25519' });
  assert.deepEqual(parseSshPublicKey(`ssh-dss ${edBlob}`), { kind: 'type', type: 'ssh-dss' });
  assert.deepEqual(parseSshPublicKey('ssh-ed25519'), { kind: 'shape' });
  assert.deepEqual(parseSshPublicKey('ssh-ed25519 not*base64'), { kind: 'base64' });
  assert.deepEqual(parseSshPublicKey(`ssh-ed25519 ${edBlob.slice(0, -4)}`), { kind: 'blob', type: 'ssh-ed25519' });
  assert.deepEqual(parseSshPublicKey(line('ssh-ed25519', str(Buffer.alloc(32)), str('extra'))), { kind: 'blob', type: 'ssh-ed25519' });
});

await forEachEngine('sshkey commands', (engine) => {
  let w: NetworkWorld;
  before(async () => {
    w = await networkWorld(engine);
  });
  after(() => w?.close());

  it('creates, gets, lists, updates and deletes by command and by REST', async () => {
    const made = await w.owner.cmd('sshkey.create', { name: 'alice', publicKey: ED25519 });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    assert.deepEqual(goProblems(SSHKEY, made.sshkey), []);
    assert.equal(made.sshkey.fingerprint, ED25519_FP);
    assert.equal(made.sshkey.publickey, ED25519);
    assert.equal(made.sshkey.customerid, w.owner.customerId);
    const rest = await w.owner.rest('POST', '/sshkey', { name: 'bob', publickey: RSA });
    assert.equal(rest.code, 'OK', JSON.stringify(rest));
    assert.equal(rest.data.fingerprint, RSA_FP);
    const all = await w.owner.cmd('sshkey.getall', {});
    assert.deepEqual(goProblems({ matches: 'int', results: [SSHKEY] }, all), []);
    assert.equal(all.message, 'SSHKeys Retrieved Successfully');
    assert.deepEqual(
      all.results.map((k: any) => k.name),
      ['alice', 'bob'],
    );
    const page = await w.owner.cmd('sshkey.getall', { resStart: 1, resWindow: 1 });
    assert.deepEqual([page.matches, page.results.length, page.results[0].name], [2, 1, 'bob']);
    assert.equal((await w.owner.cmd('sshkey.getall', { fingerprint: RSA_FP })).matches, 1);
    assert.equal((await w.owner.rest('GET', '/sshkeys?name=ALI')).data[0].name, 'alice');
    assert.equal((await w.owner.rest('GET', `/sshkey/${rest.data.id}`)).data.name, 'bob');
    const renamed = await w.owner.cmd('sshkey.update', { id: made.sshkey.id, name: 'alice2', publicKey: ECDSA384 });
    assert.equal(renamed.code, 'OK', JSON.stringify(renamed));
    assert.deepEqual([renamed.sshkey.name, renamed.sshkey.fingerprint, renamed.sshkey.type, renamed.sshkey.comment], ['alice2', ECDSA384_FP, 'ecdsa-sha2-nistp384', '']);
    assert.deepEqual(await customerSshKeys(w.infra.ctx.db.kysely, w.owner.customerId), [ECDSA384, RSA]);
    assert.deepEqual(await w.owner.rest('DELETE', `/sshkey/${rest.data.id}`), { code: 'OK', message: 'SSHKey Deleted Successfully' });
    assert.deepEqual(await w.owner.cmd('sshkey.get', { id: rest.data.id }), { code: 'ERROR', message: 'Could not find SSH key' });
    assert.deepEqual(await w.owner.cmd('sshkey.delete', { id: made.sshkey.id }), { code: 'OK', message: 'SSHKey Deleted Successfully' });
    assert.deepEqual(await customerSshKeys(w.infra.ctx.db.kysely, w.owner.customerId), []);
    const empty = await w.owner.cmd('sshkey.getall', {});
    assert.deepEqual([empty.matches, empty.results], [0, []]);
  });

  it("scopes by customer: another customer's key answers like a missing one; a parent acts for its sub-customer", async () => {
    const theirs = (await w.other.cmd('sshkey.create', { name: 'theirs', publicKey: ED25519 })).sshkey;
    for (const t of [w.owner, w.child]) {
      for (const cmd of ['sshkey.get', 'sshkey.delete']) assert.deepEqual(await t.cmd(cmd, { id: theirs.id }), { code: 'ERROR', message: 'Could not find SSH key' });
      assert.deepEqual(await t.cmd('sshkey.update', { id: theirs.id, name: 'mine now' }), { code: 'ERROR', message: 'Could not find SSH key' });
      assert.equal((await t.cmd('sshkey.getall', {})).results.filter((k: any) => k.id === theirs.id).length, 0);
    }
    const forChild = await w.owner.cmd('sshkey.create', { name: 'for child', publicKey: RSA, customerid: w.child.customerId });
    assert.equal(forChild.sshkey.customerid, w.child.customerId);
    assert.equal((await w.child.cmd('sshkey.get', { id: forChild.sshkey.id })).sshkey.name, 'for child');
    assert.equal((await w.owner.cmd('sshkey.getall', { customerId: w.child.customerId })).matches, 1);
    assert.deepEqual(await w.owner.cmd('sshkey.create', { name: 'x', publicKey: RSA, customerid: w.other.customerId }), { code: 'ERROR', message: 'Could not find customer' });
    assert.deepEqual(await w.child.cmd('sshkey.create', { name: 'x', publicKey: RSA, customerid: w.owner.customerId }), { code: 'ERROR', message: 'Could not find customer' });
    // The worker installs a device's own customer's keys only.
    assert.deepEqual(await customerSshKeys(w.infra.ctx.db.kysely, w.child.customerId), [RSA]);
    assert.deepEqual(await customerSshKeys(w.infra.ctx.db.kysely, w.owner.customerId), []);
    assert.deepEqual(await customerSshKeys(w.infra.ctx.db.kysely, w.other.customerId), [ED25519]);
    await w.owner.cmd('sshkey.delete', { id: forChild.sshkey.id });
    await w.other.cmd('sshkey.delete', { id: theirs.id });
  });

  it('refuses what is not a usable key with a FAULT naming publicKey, writing nothing', async () => {
    const edBlob = ED25519.split(' ')[1];
    const cases: [string, RegExp][] = [
      ['hello', /must be an OpenSSH public key/],
      [`ssh-dss ${edBlob}`, /key type "ssh-dss"/],
      [`ssh-rsa ${edBlob}`, /says ssh-rsa but its key data holds a ssh-ed25519 key/],
      ['ssh-ed25519 %%%%', /not valid base64/],
      [`ssh-ed25519 ${edBlob.slice(0, 20)}`, /not valid base64|not a well-formed ssh-ed25519 key/],
      [rsaKey(512), /RSA key of 512 bits/],
      [`-----BEGIN OPENSSH PRIVATE KEY-----`, /must be an OpenSSH public key|key type/],
    ];
    const before = await w.count('ssh_keys');
    for (const [publicKey, why] of cases) {
      const r = await w.owner.cmd('sshkey.create', { name: 'bad', publicKey });
      assert.equal(r.code, 'FAULT', `${publicKey}: ${JSON.stringify(r)}`);
      assert.match(r.error.publicKey, why);
      assert.match(r.message, /^Invalid parameter publicKey: /);
    }
    for (const [params, field] of [
      [{ publicKey: ED25519 }, 'name'],
      [{ name: 'n' }, 'publicKey'],
      [{ name: '', publicKey: ED25519 }, 'name'],
      [{ name: 'n', publicKey: 42 }, 'publicKey'],
    ] as const) {
      const r = await w.owner.cmd('sshkey.create', params);
      assert.equal(r.code, 'FAULT');
      assert.ok(field in r.error, JSON.stringify(r));
    }
    assert.equal(await w.count('ssh_keys'), before);
    const k = (await w.owner.cmd('sshkey.create', { name: 'keep', publicKey: ED25519 })).sshkey;
    assert.equal((await w.owner.cmd('sshkey.update', { id: k.id, name: 'changed', publicKey: 'nope' })).code, 'FAULT');
    assert.deepEqual((await w.owner.cmd('sshkey.get', { id: k.id })).sshkey, k, 'a refused update changes nothing');
    await w.owner.cmd('sshkey.delete', { id: k.id });
  });

  it("needs the command in the API key's permissions (sshkey.* or the name)", async () => {
    const made = await w.owner.cmd('apiuser.create', { name: 'reader', permissions: ['sshkey.get', 'sshkey.getall', 'network.vlan.*'] });
    assert.equal(made.code, 'OK', JSON.stringify(made));
    const reader = w.as(w.owner.customerId, made.apiuser.uuid, made.apiuser.secret);
    assert.equal((await reader.cmd('sshkey.getall', {})).code, 'OK');
    assert.equal((await reader.cmd('network.vlan.getall', {})).code, 'OK');
    const before = await w.count('ssh_keys');
    for (const [cmd, params] of [
      ['sshkey.create', { name: 'x', publicKey: ED25519 }],
      ['network.ip.create', { network: '10.1.0.0/24', dcId: 19 }],
      ['loadbalancer.create', { name: 'x' }],
    ] as const) {
      const r = await reader.cmd(cmd, params);
      assert.equal(r.code, 'ACCESS_DENIED', `${cmd}: ${JSON.stringify(r)}`);
    }
    assert.equal(await w.count('ssh_keys'), before);
  });

  it(`holds at most ${MAX_SSH_KEYS_PER_CUSTOMER} keys a customer`, async () => {
    const db = w.infra.ctx.db.kysely;
    const k = parseSshPublicKey(ED25519);
    assert.ok('fingerprint' in k);
    const rows = Array.from({ length: MAX_SSH_KEYS_PER_CUSTOMER - 1 }, (_, i) => ({
      customer_id: w.other.customerId,
      name: `bulk${i}`,
      key_type: k.type,
      public_key: k.publicKey,
      comment: '',
      fingerprint: k.fingerprint,
      date_created: 0,
      date_modified: 0,
    }));
    await db.insertInto('ssh_keys').values(rows).execute();
    assert.equal((await w.other.cmd('sshkey.create', { name: 'last', publicKey: RSA })).code, 'OK');
    assert.deepEqual(await w.other.cmd('sshkey.create', { name: 'over', publicKey: RSA }), {
      code: 'ERROR',
      message: `Limit reached: a customer has at most ${MAX_SSH_KEYS_PER_CUSTOMER} SSH keys; delete one first`,
    });
    assert.equal((await w.other.cmd('sshkey.getall', {})).matches, MAX_SSH_KEYS_PER_CUSTOMER);
    assert.equal((await w.owner.cmd('sshkey.create', { name: 'unaffected', publicKey: RSA })).code, 'OK');
  });
});

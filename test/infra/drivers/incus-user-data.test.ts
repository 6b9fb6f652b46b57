// The cloud-init document the incus driver gives a machine, without a daemon: what an order's spec
// becomes (users, keys, hashes, the post-install script) and how a STARTUP's own user data is combined
// with it. The incus test shows cloud-init acting on it in a real guest.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createIncusDriver, userData } from '../../../src/infra/drivers/incus.js';
import { conformanceSpec } from './conformance.js';

const HASH = '$6$keelsalt$XWcFLcyXqQgrqF12OUONn3DLnW583rSEbBWmmHONu2qW3lJ8JuhveV5YvGhskUEnYVZFLix5MqQYmjYP.5CtP/';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKeelUserDataTestKey test@keel';

function parts(doc: string): { headers: string; body: string }[] {
  const boundary = /boundary="([^"]+)"/.exec(doc)?.[1];
  assert.ok(boundary, 'a multipart document names its boundary');
  return doc
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((chunk) => {
      const [headers, b64] = chunk.trim().split('\n\n');
      return { headers, body: Buffer.from(b64.replace(/\n/g, ''), 'base64').toString('utf8') };
    });
}

it('makes a cloud-config with the hostname, each credential as a user with the keys, and the default user keyed', () => {
  const doc = userData(
    conformanceSpec(
      'keel-7',
      {},
      {
        hostname: 'web1.example.com',
        sshKeys: [KEY],
        credentials: [
          { username: 'admin', password: HASH },
          { username: 'root', password: 'plain "secret"' },
        ],
      },
    ),
  );
  assert.ok(doc.startsWith('#cloud-config\n'));
  assert.match(doc, /^hostname: "web1"$/m);
  assert.match(doc, /^fqdn: "web1.example.com"$/m);
  assert.match(doc, /^ssh_deletekeys: false$/m);
  assert.match(doc, /^ {2}- default$/m);
  assert.match(
    doc,
    /^ {2}- name: "admin"\n {4}lock_passwd: false\n {4}hashed_passwd: "\$6\$keelsalt\$[^"]+"\n {4}shell: \/bin\/bash\n {4}sudo: "ALL=\(ALL\) NOPASSWD:ALL"\n {4}ssh_authorized_keys:\n {6}- "ssh-ed25519 [^"]+"$/m,
  );
  // Not a hash: cloud-init's plain text field, quoted as YAML; root keeps its own shell and no sudo line.
  assert.match(doc, /^ {2}- name: "root"\n {4}lock_passwd: false\n {4}plain_text_passwd: "plain \\"secret\\""\n {4}ssh_authorized_keys:/m);
  assert.match(doc, /^ssh_authorized_keys:\n {2}- "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKeelUserDataTestKey test@keel"$/m);
  assert.doesNotMatch(doc, /write_files|runcmd/, 'no post-install script, nothing to run');
});

it('writes the post-install script and runs it once (a marker file), by its interpreter line or with sh', () => {
  const withShebang = userData(conformanceSpec('keel-8', {}, { postInstallScript: '#!/bin/bash\necho hi\n' }));
  const b64 = /content: (\S+)/.exec(withShebang)?.[1] ?? '';
  assert.equal(Buffer.from(b64, 'base64').toString('utf8'), '#!/bin/bash\necho hi\n');
  assert.match(withShebang, /runcmd:\n {2}- \[sh, -c, "\[ -e \/var\/lib\/keel\/post-install\.done \] \|\| \{ \/var\/lib\/keel\/post-install; touch/);
  const bare = userData(conformanceSpec('keel-9', {}, { postInstallScript: 'echo hi' }));
  assert.match(bare, /\{ sh \/var\/lib\/keel\/post-install; touch/);
});

it("puts a STARTUP's user data first in a multipart document and merges the order's into it, lists appended", () => {
  const theirs = '#cloud-config\nwrite_files:\n  - path: /x\n    content: y\n';
  const doc = userData(conformanceSpec('keel-10', {}, { postInstallScript: 'true' }), theirs);
  assert.match(doc, /^Content-Type: multipart\/mixed; boundary="keel-[0-9a-f-]+"\nMIME-Version: 1.0\n\n/);
  const [first, second] = parts(doc);
  assert.equal(first.body, theirs);
  assert.match(first.headers, /Content-Type: text\/cloud-config/);
  assert.doesNotMatch(first.headers, /Merge-Type/);
  assert.ok(second.body.startsWith('#cloud-config\n') && second.body.includes('/var/lib/keel/post-install'));
  assert.match(second.headers, /Merge-Type: list\(append\)\+dict\(no_replace,recurse_list\)\+str\(\)/);
  const script = parts(userData(conformanceSpec('keel-11', {}), '#!/bin/sh\ntouch /y\n'))[0];
  assert.match(script.headers, /Content-Type: text\/x-shellscript/);
});

it("takes the worker's shape of a credential (passwordHash) and leaves a user without a password locked", () => {
  const doc = userData({
    hostname: 'db1',
    sshKeys: [KEY],
    credentials: [{ username: 'ops', passwordHash: HASH }, { username: 'deploy' }],
  });
  assert.match(doc, /^ {2}- name: "ops"\n {4}lock_passwd: false\n {4}hashed_passwd: "\$6\$keelsalt\$/m);
  assert.match(doc, /^ {2}- name: "deploy"\n {4}shell: \/bin\/bash\n/m);
  assert.doesNotMatch(doc, /fqdn/, 'a short hostname has no fqdn');
});

it('is what the driver factory builds for --infra-driver incus', async () => {
  const driver = createIncusDriver({ socketPath: '/nonexistent/unix.socket' });
  try {
    assert.equal(driver.kind, 'incus');
    assert.equal(driver.stepMs('create'), 0);
  } finally {
    await driver.close();
  }
});

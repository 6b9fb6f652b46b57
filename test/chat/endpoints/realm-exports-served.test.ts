// Realm exports on a real `keel serve`, on both engines, over raw HTTP as Zulip's Python client sends
// it (every answer checked against Zulip's OpenAPI): the export writer runs with the server (started
// and stopped by it, kicked by the request), the export turns up in GET /export/realm with its
// export_url, and the tarball downloads from there with the administrator's API key only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import * as tar from 'tar';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';

forEachEngine('realm exports on a served realm', (engine) => {
  let r: ServedRealm;
  before(async () => {
    r = await servedRealm(engine, { members: ['ann'], channel: { name: 'lobby', subscribers: ['owner', 'ann'] } });
  });
  after(() => r.stop());

  it('writes the export in the background and serves it at export_url to administrators', async () => {
    const sent = await r.owner.call('POST', '/messages', { type: 'stream', to: 'lobby', topic: 'hi', content: 'hello from the served realm' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const asked = await r.owner.call('POST', '/export/realm', { export_type: 1 });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    const id = asked.body.id as number;
    let entry: Record<string, any> | undefined;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const listed = await r.owner.call('GET', '/export/realm');
      assert.equal(listed.status, 200);
      entry = (listed.body.exports as Record<string, any>[]).find((e) => e.id === id);
      if (entry && !entry.pending) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(entry && !entry.pending, 'the export was written without another request');
    assert.equal(entry.failed_timestamp, null);
    // The realm URL is the chat listener's address here: export_url is fetched as it stands.
    const target = entry.export_url as string;
    assert.ok(target.startsWith(`${r.server.chatUrl}/user_avatars/exports/`), target);
    const auth = (email: string, key: string) => ({ authorization: 'Basic ' + Buffer.from(`${email}:${key}`).toString('base64') });
    const ann = r.members.ann.client;
    assert.equal((await fetch(target, { headers: auth(ann.email, ann.apiKey) })).status, 400, 'a member may not download it');
    assert.equal((await fetch(target)).status, 401, 'nor anyone unauthenticated');
    const res = await fetch(target, { headers: auth(r.owner.email, r.owner.apiKey) });
    assert.equal(res.status, 200);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 2)], [0x1f, 0x8b], 'gzip');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-served-export-'));
    try {
      writeFileSync(path.join(dir, 'x.tar.gz'), bytes);
      const names: string[] = [];
      await tar.t({ file: path.join(dir, 'x.tar.gz'), onReadEntry: (e) => names.push(e.path.split('/').slice(1).join('/')) });
      for (const n of ['realm.json', 'attachment.json', 'messages-000001.json', 'uploads/records.json', 'emoji/records.json', 'avatars/records.json']) assert.ok(names.includes(n), n);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

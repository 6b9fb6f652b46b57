// Presence as a Zulip client sees it through Keel's cached answers (domain/presence-answers.ts), on
// a real `keel serve`, driven as Zulip's Python client sends: form-encoded bodies, JSON-encoded
// non-string values, HTTP Basic auth. One user pings every time, as a client does each minute; what
// another user does (coming online, going invisible, being deactivated, coming back) must show in
// the very next answer, in the legacy, slim and last_update_id forms alike.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../helpers/chat-realm.js';
import type { ChatClient } from '../helpers/chat-client.js';

await forEachEngine('presence through the cached answer, as a client', (engine) => {
  let realm: ServedRealm;
  let ann: ChatClient, annId: number;
  let ben: ChatClient, benId: number;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'ben'] });
    ({ client: ann, id: annId } = realm.members.ann);
    ({ client: ben, id: benId } = realm.members.ben);
  });
  after(async () => {
    await realm?.stop();
  });

  /** Ann's ping, as the Python client's update_presence sends it. */
  async function annPing(extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const r = await ann.call('POST', '/users/me/presence', { status: 'active', new_user_input: true, ping_only: false, ...extra });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  }
  async function ok(c: ChatClient, method: string, path: string, params: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const r = await c.call(method, path, params);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  }

  it("shows another user's presence from their first ping, in every form", async () => {
    const alone = await annPing();
    assert.deepEqual(Object.keys(alone.presences), ['ann@example.com']);
    // The same answer again (served from the cache), still without ben.
    assert.deepEqual((await annPing()).presences, alone.presences);
    const slimBefore = await annPing({ slim_presence: true });
    const seen = slimBefore.presence_last_update_id as number;
    assert.deepEqual(Object.keys(slimBefore.presences), [String(annId)]);

    await ok(ben, 'POST', '/users/me/presence', { status: 'idle', ping_only: true });
    const legacy = await annPing();
    assert.deepEqual(Object.keys(legacy.presences).sort(), ['ann@example.com', 'ben@example.com']);
    const b = legacy.presences['ben@example.com'];
    assert.deepEqual(Object.keys(b).sort(), ['aggregated', 'website']);
    assert.equal(b.website.client, 'website');
    assert.equal(b.website.pushable, false);
    const slim = await annPing({ slim_presence: true });
    assert.deepEqual(Object.keys(slim.presences).sort(), [String(annId), String(benId)].sort());
    assert.equal(typeof slim.presences[String(benId)].idle_timestamp, 'number');
    assert.equal(typeof slim.presences[String(benId)].active_timestamp, 'number', "Zulip's date_joined stands in for an active time never reported");
    // Changes since what ann had: ben only, and a newer update id.
    const since = await annPing({ last_update_id: seen });
    assert.deepEqual(Object.keys(since.presences), [String(benId)]);
    assert.ok(since.presence_last_update_id > seen);
    // Nothing newer: the client's own value back.
    const none = await annPing({ last_update_id: since.presence_last_update_id });
    assert.deepEqual(none.presences, {});
    assert.equal(none.presence_last_update_id, since.presence_last_update_id);
    const reg = await ok(ann, 'POST', '/register', { fetch_event_types: ['presence'], slim_presence: true });
    assert.deepEqual(reg.presences, slim.presences);
    const realmWide = await ok(ann, 'GET', '/realm/presence');
    assert.deepEqual(realmWide.presences, legacy.presences);
  });

  it('drops a user who goes invisible at once, and shows them again when they come back', async () => {
    await annPing();
    await ok(ben, 'PATCH', '/settings', { presence_enabled: false });
    assert.deepEqual(Object.keys((await annPing()).presences), ['ann@example.com']);
    assert.deepEqual(Object.keys((await annPing({ slim_presence: true })).presences), [String(annId)]);
    await ok(ben, 'PATCH', '/settings', { presence_enabled: true });
    assert.deepEqual(Object.keys((await annPing()).presences).sort(), ['ann@example.com', 'ben@example.com']);
  });

  it('drops a deactivated user at once, and shows them again when reactivated', async () => {
    await annPing();
    await ok(realm.owner, 'DELETE', `/users/${benId}`);
    assert.deepEqual(Object.keys((await annPing()).presences), ['ann@example.com']);
    await ok(realm.owner, 'POST', `/users/${benId}/reactivate`);
    assert.deepEqual(Object.keys((await annPing()).presences).sort(), ['ann@example.com', 'ben@example.com']);
  });

  it('gives nothing for history_limit_days=0, as Zulip', async () => {
    const r = await annPing({ slim_presence: true, history_limit_days: 0 });
    assert.deepEqual(r.presences, {});
    assert.equal(r.presence_last_update_id, -1);
  });
});

// The rule for who may read an uploaded file (domain/uploads.ts fileAccess, Zulip's
// validate_attachment_request), in process: the uploader; readers of a direct message or of a channel
// message that links it (a public channel's history for members, not guests; a private channel's for
// its subscribers); spectators only through a web-public channel; claiming only what the sender may read.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { checkUploadRoom, fileAccess, UPLOAD_BYTES_PER_USER } from '../../../src/chat/domain/uploads.js';
import type { ChatUser, Realm } from '../../../src/chat/tables.js';

forEachEngine('upload access rule', (engine) => {
  let realm: InProcessRealm;
  const db = () => realm.chat.ctx.chatDb.kysely;
  const user = async (id: number) => (await db().selectFrom('chat_users').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as ChatUser;
  const theRealm = async () => (await db().selectFrom('realms').selectAll().executeTakeFirstOrThrow()) as Realm;
  let n = 0;
  /** An upload row of `ownerId` (the rule never reads the bytes). */
  const uploadOf = async (ownerId: number) => {
    const r = await theRealm();
    const pathId = `${r.id}/AccessTest${String(++n).padStart(14, '0')}/f${n}.txt`;
    await db()
      .insertInto('attachments')
      .values({ realm_id: r.id, owner_id: ownerId, path_id: pathId, file_name: `f${n}.txt`, content_type: 'text/plain', size: 1, create_time: 1 })
      .execute();
    return pathId;
  };
  const access = async (pathId: string, userId: number | null) => (await fileAccess(db(), await theRealm(), userId === null ? undefined : await user(userId), pathId)).kind;
  const linked = async (pathId: string) =>
    (await db().selectFrom('attachment_messages as am').innerJoin('attachments as a', 'a.id', 'am.attachment_id').select('am.message_id').where('a.path_id', '=', pathId).execute()).length;

  before(async () => {
    realm = await inProcessRealm(engine, { members: ['ann', 'bob', ['gus', 600]], channel: { name: 'open', subscribers: ['owner', 'ann', 'gus'] } });
    const made = await realm.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true, principals: [realm.ownerId, realm.members.ann.id] });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal((await realm.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'plain' }] })).status, 200);
    await db().updateTable('realms').set({ enable_spectator_access: 1 }).execute();
    const web = await realm.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'web' }], is_web_public: true });
    assert.equal(web.status, 200, JSON.stringify(web.body));
  });
  after(() => realm.close());

  it('lets the uploader alone read an unlinked file, and knows no file that is not there', async () => {
    const p = await uploadOf(realm.ownerId);
    assert.equal(await access(p, realm.ownerId), 'allowed');
    assert.equal(await access(p, realm.members.ann.id), 'denied');
    assert.equal(await access(p, null), 'denied');
    assert.equal(await access(`${p}x`, realm.ownerId), 'missing');
  });

  it('opens a file to the recipients of a direct message that links it', async () => {
    const p = await uploadOf(realm.ownerId);
    const sent = await realm.owner.call('POST', '/messages', { type: 'direct', to: [realm.members.ann.id], content: `[f](/user_uploads/${p})` });
    assert.equal(sent.status, 200);
    assert.equal(await access(p, realm.members.ann.id), 'allowed');
    assert.equal(await access(p, realm.members.bob.id), 'denied');
  });

  it("opens a private channel's file to its subscribers only", async () => {
    const p = await uploadOf(realm.ownerId);
    await realm.owner.call('POST', '/messages', { type: 'stream', to: 'secret', topic: 't', content: `[f](/user_uploads/${p})` });
    assert.equal(await access(p, realm.members.ann.id), 'allowed');
    assert.equal(await access(p, realm.members.bob.id), 'denied');
    const row = await db().selectFrom('attachments').selectAll().where('path_id', '=', p).executeTakeFirstOrThrow();
    assert.equal(row.is_realm_public, 0);
  });

  it("opens a public channel's file to members, not to a guest who is not subscribed, nor to spectators but through a web-public channel", async () => {
    const p = await uploadOf(realm.ownerId);
    await realm.owner.call('POST', '/messages', { type: 'stream', to: 'web', topic: 't', content: `[f](/user_uploads/${p})` });
    assert.equal(await access(p, realm.members.bob.id), 'allowed', 'a member reads public history');
    // Keel lets a guest read a web-public channel's history (domain/receipt.ts): its files with it.
    assert.equal(await access(p, realm.members.gus.id), 'allowed', 'a guest reads web-public history');
    const row = await db().selectFrom('attachments').selectAll().where('path_id', '=', p).executeTakeFirstOrThrow();
    assert.equal(row.is_realm_public, 1);
    assert.equal(row.is_web_public, 1);
    await db().updateTable('realms').set({ enable_spectator_access: 0 }).execute();
    assert.equal(await access(p, null), 'denied', 'spectators are off');
    await db().updateTable('realms').set({ enable_spectator_access: 1 }).execute();
    assert.equal(await access(p, null), 'allowed', 'a web-public channel, spectators on');
    const q = await uploadOf(realm.ownerId);
    await realm.owner.call('POST', '/messages', { type: 'stream', to: 'open', topic: 't', content: `[f](/user_uploads/${q})` });
    assert.equal(await access(q, null), 'denied', 'public is not web-public');
    assert.equal(await access(q, realm.members.gus.id), 'allowed', 'a subscribed guest');
    const r = await uploadOf(realm.ownerId);
    await realm.owner.call('POST', '/messages', { type: 'stream', to: 'plain', topic: 't', content: `[f](/user_uploads/${r})` });
    assert.equal(await access(r, realm.members.bob.id), 'allowed', 'a member, not subscribed');
    assert.equal(await access(r, realm.members.gus.id), 'denied', 'a guest, not subscribed');
  });

  it('claims only what the sender may read, and drops a deleted message from the links', async () => {
    const p = await uploadOf(realm.ownerId);
    const sent = await realm.members.bob.client.call('POST', '/messages', { type: 'stream', to: 'open', topic: 't', content: `[stolen](/user_uploads/${p})` });
    assert.equal(sent.status, 200);
    assert.equal(await linked(p), 0, 'bob may not read the file: his link claims nothing');
    assert.equal(await access(p, realm.members.ann.id), 'denied');
    const mine = await realm.owner.call('POST', '/messages', { type: 'stream', to: 'open', topic: 't', content: `[f](/user_uploads/${p})` });
    assert.equal(await linked(p), 1);
    assert.equal((await realm.owner.call('DELETE', `/messages/${mine.body.id}`)).status, 200);
    assert.equal(await linked(p), 0);
    assert.equal(await access(p, realm.members.ann.id), 'denied');
  });

  it("refuses an upload past the owner's quota, in bytes", async () => {
    const r = await theRealm();
    await db()
      .insertInto('attachments')
      .values({
        realm_id: r.id,
        owner_id: realm.members.bob.id,
        path_id: `${r.id}/QuotaTest0000000000000000/big.bin`,
        file_name: 'big.bin',
        content_type: null,
        size: UPLOAD_BYTES_PER_USER - 10,
        create_time: 1,
      })
      .execute();
    await checkUploadRoom(db(), realm.members.bob.id, 10);
    await assert.rejects(checkUploadRoom(db(), realm.members.bob.id, 11), { message: 'Upload would exceed your upload quota (10240 MiB).' });
    await checkUploadRoom(db(), realm.members.ann.id, 11);
  });

  it('follows a message moved from a public channel to a private one', async () => {
    const p = await uploadOf(realm.ownerId);
    const sent = await realm.owner.call('POST', '/messages', { type: 'stream', to: 'open', topic: 'mv', content: `[f](/user_uploads/${p})` });
    assert.equal(await access(p, realm.members.bob.id), 'allowed');
    const secret = (await realm.owner.call('GET', '/get_stream_id', { stream: 'secret' })).body.stream_id;
    const moved = await realm.owner.call('PATCH', `/messages/${sent.body.id}`, { stream_id: secret });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(await access(p, realm.members.bob.id), 'denied');
    const row = await db().selectFrom('attachments').selectAll().where('path_id', '=', p).executeTakeFirstOrThrow();
    assert.equal(row.is_realm_public, 0);
  });
});

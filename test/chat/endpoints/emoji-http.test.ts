// Black-box: Zulip's emoji names as clients meet them on a real `keel serve`. Reactions by Zulip's own
// names through unmodified zulip-js (reactions.add/remove) and raw HTTP as the Python client sends it
// (form bodies, Basic auth), `:smile:` rendered as Zulip renders it, register's emoji data (the file
// server_emoji_data_url names, realm_emoji) and reactions with a realm's custom emoji.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { MIGRATIONS } from '../../../src/app.js';
import type { ChatTables } from '../../../src/chat/tables.js';

await forEachEngine('chat emoji names over HTTP and zulip-js', (engine) => {
  let realm: ServedRealm;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let annJs: any;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'ben'], channel: { name: 'general', subscribers: ['owner', 'ann', 'ben'] } });
    const ann = realm.members.ann.client;
    annJs = await zulip({ realm: realm.server.chatUrl, username: ann.email, apiKey: ann.apiKey });
  });
  after(async () => {
    await realm?.stop();
  });

  async function send(content: string): Promise<number> {
    const sent = await realm.owner.post('/messages', { type: 'stream', to: 'general', topic: 'emoji', content });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    return sent.body.id;
  }

  async function reactionsOf(id: number): Promise<Record<string, unknown>[]> {
    const got = await realm.owner.get(`/messages/${id}`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    return (got.body.message.reactions as Record<string, unknown>[]).map(({ user, ...r }) => r);
  }

  it("zulip-js reacts by Zulip's names; emoji-datasource's own names are unknown", async () => {
    const id = await send('react to me');
    const added = await annJs.reactions.add({ message_id: id, emoji_name: 'thumbs_up' });
    assert.equal(added.result, 'success', JSON.stringify(added));
    for (const name of ['working_on_it', 'check']) assert.equal((await annJs.reactions.add({ message_id: id, emoji_name: name })).result, 'success', name);
    const unknown = await annJs.reactions.add({ message_id: id, emoji_name: 'slightly_smiling_face' });
    assert.deepEqual([unknown.result, unknown.msg], ['error', "Emoji 'slightly_smiling_face' does not exist"]);
    // +1 is the same emoji as thumbs_up: a second reaction of Ann's with it already exists.
    const again = await annJs.reactions.add({ message_id: id, emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
    assert.deepEqual([again.result, again.code], ['error', 'REACTION_ALREADY_EXISTS']);
    const annId = realm.members.ann.id;
    assert.deepEqual(await reactionsOf(id), [
      { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: annId },
      { emoji_name: 'working_on_it', emoji_code: '1f6e0', reaction_type: 'unicode_emoji', user_id: annId },
      { emoji_name: 'check', emoji_code: '2705', reaction_type: 'unicode_emoji', user_id: annId },
    ]);
    const removed = await annJs.reactions.remove({ message_id: id, emoji_name: 'check', emoji_code: '2705', reaction_type: 'unicode_emoji' });
    assert.equal(removed.result, 'success', JSON.stringify(removed));
  });

  it("raw HTTP: a name with the wrong code is refused, and the seed's service_extra_emoji is zulip_extra_emoji", async () => {
    const id = await send('more reactions');
    const ben = realm.members.ben.client;
    const wrong = await ben.post(`/messages/${id}/reactions`, { emoji_name: 'smile', emoji_code: '1f604' });
    assert.deepEqual([wrong.status, wrong.body.msg], [400, 'Invalid emoji name.']);
    const notEmoji = await ben.post(`/messages/${id}/reactions`, { emoji_name: 'smile', emoji_code: '1f550' });
    assert.deepEqual([notEmoji.status, notEmoji.body.msg], [400, 'Invalid emoji code.']);
    assert.equal((await ben.post(`/messages/${id}/reactions`, { emoji_name: 'smile', emoji_code: '1f642' })).status, 200);
    const extra = await ben.post(`/messages/${id}/reactions`, { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'service_extra_emoji' });
    assert.equal(extra.status, 200, JSON.stringify(extra.body));
    const benId = realm.members.ben.id;
    assert.deepEqual(await reactionsOf(id), [
      { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji', user_id: benId },
      { emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji', user_id: benId },
    ]);
    const gone = await ben.call('DELETE', `/messages/${id}/reactions`, { emoji_name: 'zulip', reaction_type: 'service_extra_emoji' });
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
  });

  it(':smile: and typed emoji render with Zulip names and codes', async () => {
    const id = await send(':smile: :thumbs_up: 😄 :slightly_smiling_face:');
    const got = await annJs.messages.getById({ message_id: id });
    assert.equal(got.result, 'success', JSON.stringify(got));
    assert.equal(
      got.message.content,
      '<p><span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> ' +
        '<span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span> ' +
        '<span aria-label="big smile" class="emoji emoji-1f604" role="img" title="big smile">:big_smile:</span> :slightly_smiling_face:</p>',
    );
  });

  it("register names the emoji data file: Zulip's code_to_names, canonical name first", async () => {
    const reg = await annJs.queues.register({ fetch_event_types: ['realm', 'realm_emoji'] });
    assert.equal(reg.result, 'success', JSON.stringify(reg));
    assert.deepEqual(reg.realm_emoji, {});
    const url = new URL(reg.server_emoji_data_url);
    assert.equal(url.origin, new URL(realm.server.chatUrl).origin);
    // Fetched as a client does, without credentials.
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(res.headers.get('cache-control') ?? '', /max-age=\d+/);
    const data = (await res.json()) as { code_to_names: Record<string, string[]> };
    assert.deepEqual(Object.keys(data), ['code_to_names']);
    assert.deepEqual(data.code_to_names['1f44d'], ['+1', 'thumbs_up', 'like']);
    assert.deepEqual(data.code_to_names['1f642'], ['smile']);
    assert.equal(Object.values(data.code_to_names).flat().length, 3308);
    assert.equal((await fetch(new URL('/static/generated/emoji/emoji_api.json', url))).status, 404);
  });

  it("reactions name a realm's custom emoji by name or by id, as Zulip checks them; removal as Zulip's remove_reaction", async () => {
    // Keel has no upload endpoint for emoji yet: the row an upload would make is written directly.
    const db = await openDatabase<ChatTables>({ dataDir: realm.storage.dataDir, databaseUrl: realm.storage.databaseUrl, migrations: MIGRATIONS });
    let id: number;
    let old: number;
    try {
      const r = await db.kysely.selectFrom('realms').select('id').executeTakeFirstOrThrow();
      const row = { realm_id: r.id, author_id: realm.ownerId, file_name: '1.png', is_animated: 0, date_created: 0 };
      // A custom emoji named as a Unicode one takes its place, as in Zulip.
      id = (
        await db.kysely
          .insertInto('realm_emoji')
          .values({ ...row, name: 'check', deactivated: 0 })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
      old = (
        await db.kysely
          .insertInto('realm_emoji')
          .values({ ...row, name: 'retired', deactivated: 1 })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    } finally {
      await db.close();
    }
    const message = await send('custom');
    const ben = realm.members.ben.client;
    // Refused while nobody has reacted with the emoji (a code already used on the message is a vote).
    const refusals: [Record<string, string>, string][] = [
      [{ emoji_name: 'check', emoji_code: '99999', reaction_type: 'realm_emoji' }, 'Invalid custom emoji.'],
      [{ emoji_name: 'tick', emoji_code: String(id), reaction_type: 'realm_emoji' }, 'Invalid custom emoji name.'],
      [{ emoji_name: 'retired', emoji_code: String(old), reaction_type: 'realm_emoji' }, 'This custom emoji has been deactivated.'],
      [{ emoji_name: 'retired' }, "Emoji 'retired' does not exist"],
    ];
    for (const [params, msg] of refusals) {
      const r = await ben.post(`/messages/${message}/reactions`, params);
      assert.deepEqual([r.status, r.body.msg], [400, msg], JSON.stringify(params));
    }
    assert.equal((await ben.post(`/messages/${message}/reactions`, { emoji_name: 'check' })).status, 200);
    // The Unicode check mark is still there by its code.
    assert.equal((await ben.post(`/messages/${message}/reactions`, { emoji_name: 'check', emoji_code: '2705', reaction_type: 'unicode_emoji' })).status, 200);
    assert.deepEqual(
      (await reactionsOf(message)).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type]),
      [
        ['check', String(id), 'realm_emoji'],
        ['check', '2705', 'unicode_emoji'],
      ],
    );
    // Removal checks nothing but that the reaction exists: a custom emoji deactivated since is removable.
    assert.equal((await realm.owner.call('DELETE', '/realm/emoji/check')).status, 200);
    assert.equal((await ben.call('DELETE', `/messages/${message}/reactions`, { emoji_code: String(id), reaction_type: 'realm_emoji' })).status, 200);
    // A name alone finds its code (now the Unicode check mark's); the type is unicode_emoji unless given.
    assert.equal((await ben.call('DELETE', `/messages/${message}/reactions`, { emoji_name: 'check' })).status, 200);
    assert.deepEqual(await reactionsOf(message), []);
    assert.equal((await ben.post(`/messages/${message}/reactions`, { emoji_name: 'zulip' })).status, 200);
    const untyped = await ben.call('DELETE', `/messages/${message}/reactions`, { emoji_name: 'zulip' });
    assert.deepEqual([untyped.status, untyped.body.code], [400, 'REACTION_DOES_NOT_EXIST']);
    assert.equal((await ben.call('DELETE', `/messages/${message}/reactions`, { emoji_name: 'zulip', reaction_type: 'zulip_extra_emoji' })).status, 200);
  });
});

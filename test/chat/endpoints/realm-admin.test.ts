// Black-box: organization settings against a real `keel serve` — linkifiers (administrators change
// them, everyone's new messages are rendered with them, realm_linkifiers to capable clients) and
// custom emoji (listing, deactivation, realm_emoji) — over raw HTTP and through zulip-js.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm } from '../../helpers/chat-realm.js';
import type { RunningServer, Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { MIGRATIONS } from '../../../src/app.js';
import type { ChatTables } from '../../../src/chat/tables.js';

type Ev = Record<string, any>;

await forEachEngine('chat organization settings', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let ann: ChatClient, annId: number;
  let ben: ChatClient;

  before(async () => {
    const realm = await servedRealm(engine, { members: ['ann', 'ben'], channel: { name: 'general', subscribers: ['ann'] } });
    ({ storage, server, owner } = realm);
    ({ client: ann, id: annId } = realm.members.ann);
    ({ client: ben } = realm.members.ben);
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  const linkifiers = async () => (await ann.get('/realm/linkifiers')).body.linkifiers as Ev[];

  it('adds linkifiers for administrators only, refusing bad ones and changing nothing', async () => {
    const capable = await register(ann, { event_types: ['realm_linkifiers'], client_capabilities: { notification_settings_null: false, linkifier_url_template: true } });
    const legacy = await register(ben, { event_types: ['realm_linkifiers'] });
    const r = await owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = r.body.id;
    assert.deepEqual(await linkifiers(), [{ pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}', id }]);
    const events = await drain(ann, capable.queue_id);
    assert.deepEqual(
      events.map((e) => [e.type, e.realm_linkifiers]),
      [['realm_linkifiers', await linkifiers()]],
    );
    assert.deepEqual(await drain(ben, legacy.queue_id), [], 'no realm_linkifiers without linkifier_url_template');

    refused(await ann.post('/realm/filters', { pattern: 'x(?P<id>[0-9]+)', url_template: 'https://x.example/{id}' }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    refused(await owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+', url_template: 'https://x.example/{id}' }), 'BAD_REQUEST', 'Bad regular expression: missing ): #(?P<id>[0-9]+');
    refused(
      await owner.post('/realm/filters', { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://x.example/{ticket}' }),
      'BAD_REQUEST',
      "Group 'ticket' in URL template is not present in linkifier pattern.",
    );
    refused(await owner.post('/realm/filters', { pattern: 'T(?P<id>[0-9]+)', url_template: 'x.example/{id' }), 'BAD_REQUEST', 'Invalid URL template.');
    refused(
      await owner.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' }),
      'BAD_REQUEST',
      'Linkifier with this Pattern and URL template already exists.',
    );
    refused(await owner.post('/realm/filters', { pattern: 'T(?P<id>[0-9]+)' }), 'REQUEST_VARIABLE_MISSING', "Missing 'url_template' argument");
    assert.equal((await linkifiers()).length, 1);
    assert.deepEqual(await drain(ann, capable.queue_id, 0), [], 'refusals send nothing');
  });

  it('renders new messages with the linkifiers, in their order', async () => {
    const sent = await ann.post('/messages', { type: 'stream', to: 'general', topic: 'bugs', content: 'fixes #42, not a#42' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const m = (await ann.get(`/messages/${sent.body.id}`)).body.message;
    const href = 'https://github.com/zulip/zulip/issues/42';
    assert.equal(m.content, `<p>fixes <a href="${href}">#42</a>, not a#42</p>`);
    assert.deepEqual(m.topic_links, []);
    const inTopic = await ann.post('/messages', { type: 'stream', to: 'general', topic: 'crash #42 (https://logs.example/1)', content: 'x' });
    const shown = (await ann.get('/messages', { anchor: inTopic.body.id, num_before: 0, num_after: 0 })).body.messages[0];
    assert.deepEqual(shown.topic_links, [
      { text: '#42', url: href },
      { text: 'https://logs.example/1', url: 'https://logs.example/1' },
    ]);
    assert.equal((await ann.post('/messages/render', { content: 'see #7' })).body.rendered, '<p>see <a href="https://github.com/zulip/zulip/issues/7">#7</a></p>');
  });

  it('updates, reorders and removes linkifiers (realm_linkifiers each time)', async () => {
    const [first] = await linkifiers();
    const second = (await owner.post('/realm/filters', { pattern: '#(?P<n>[0-9]+)', url_template: 'https://tracker.example/{n}' })).body.id;
    const queue = await register(ann, { event_types: ['realm_linkifiers'], client_capabilities: { notification_settings_null: false, linkifier_url_template: true } });
    const state = await register(ann, { fetch_event_types: ['realm_linkifiers', 'realm_filters'], client_capabilities: { notification_settings_null: false, linkifier_url_template: true } });
    assert.deepEqual(
      state.realm_linkifiers.map((l: Ev) => l.id),
      [first.id, second],
    );
    assert.deepEqual(state.realm_filters, []);
    assert.deepEqual((await register(ben, { fetch_event_types: ['realm_linkifiers'] })).realm_linkifiers, [], 'empty without the capability');

    refused(await owner.call('PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [second] }), 'BAD_REQUEST', 'The ordered list must enumerate all existing linkifiers exactly once');
    refused(await owner.call('PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [second, second, first.id] }), 'BAD_REQUEST', 'The ordered list must not contain duplicated linkifiers');
    refused(await ann.call('PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [second, first.id] }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    assert.equal((await owner.call('PATCH', '/realm/linkifiers', { ordered_linkifier_ids: [second, first.id] })).status, 200);
    assert.deepEqual(
      (await linkifiers()).map((l) => l.id),
      [second, first.id],
    );
    const rendered = (await ann.post('/messages/render', { content: '#9' })).body.rendered;
    assert.match(rendered, /href="https:\/\/tracker\.example\/9"/, 'the first linkifier wins now');

    refused(await owner.call('PATCH', '/realm/filters/9999', { pattern: 'a(?P<x>b)', url_template: 'https://a.example/{x}' }), 'BAD_REQUEST', 'Linkifier not found.');
    refused(
      await owner.call('PATCH', `/realm/filters/${second}`, { pattern: '#(?P<n>[0-9]+)', url_template: 'https://tracker.example/{m}' }),
      'BAD_REQUEST',
      "Group 'm' in URL template is not present in linkifier pattern.",
    );
    assert.equal((await owner.call('PATCH', `/realm/filters/${second}`, { pattern: 'T-(?P<n>[0-9]+)', url_template: 'https://tracker.example/t/{n}' })).status, 200);
    refused(await owner.call('DELETE', '/realm/filters/9999'), 'BAD_REQUEST', 'Linkifier not found.');
    refused(await ann.call('DELETE', `/realm/filters/${second}`), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    assert.equal((await owner.call('DELETE', `/realm/filters/${first.id}`)).status, 200);
    assert.deepEqual(await linkifiers(), [{ pattern: 'T-(?P<n>[0-9]+)', url_template: 'https://tracker.example/t/{n}', id: second }]);
    assert.equal((await ann.post('/messages/render', { content: '#9' })).body.rendered, '<p>#9</p>');

    const events = await drain(ann, queue.queue_id);
    assert.deepEqual(
      events.map((e) => e.realm_linkifiers.map((l: Ev) => l.id)),
      [[second, first.id], [second, first.id], [second]],
    );
    assert.equal(events[1].realm_linkifiers[0].url_template, 'https://tracker.example/t/{n}');
  });

  it('works through zulip-js: multipart linkifier and group creation, custom emoji listing', async () => {
    const js = await zulip({ realm: server.chatUrl, username: server.chatSecrets!.email, apiKey: server.chatSecrets!.apiKey });
    const added = await js.callEndpoint('/realm/filters', 'POST', { pattern: 'PR(?P<pr>[0-9]+)', url_template: 'https://git.example/pr/{pr}' });
    assert.equal(added.result, 'success', JSON.stringify(added));
    assert.ok((await js.callEndpoint('/realm/linkifiers', 'GET', {})).linkifiers.some((l: Ev) => l.id === added.id));
    const group = await js.callEndpoint('/user_groups/create', 'POST', { name: 'js team', description: 'From zulip-js', members: [annId] });
    assert.equal(group.result, 'success', JSON.stringify(group));
    const groups = await js.callEndpoint('/user_groups', 'GET', {});
    assert.deepEqual(groups.user_groups.find((g: Ev) => g.id === group.group_id).members, [annId]);
    const emoji = await js.emojis.retrieve();
    assert.deepEqual([emoji.result, emoji.emoji], ['success', {}]);
  });

  it('lists custom emoji and deactivates them (realm_emoji)', async () => {
    assert.deepEqual((await ann.get('/realm/emoji')).body.emoji, {});
    assert.deepEqual((await register(ann, { fetch_event_types: ['realm_emoji'] })).realm_emoji, {});
    const missing = await ann.call('DELETE', '/realm/emoji/green_tick');
    assert.deepEqual([missing.status, missing.body.code, missing.body.msg], [404, 'BAD_REQUEST', "Emoji 'green_tick' does not exist"]);
    // Keel has no upload endpoint for emoji yet: the row an upload would make is written directly.
    const db = await openDatabase<ChatTables>({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, migrations: MIGRATIONS });
    let id: number;
    try {
      const realm = await db.kysely.selectFrom('realms').select('id').executeTakeFirstOrThrow();
      id = (
        await db.kysely
          .insertInto('realm_emoji')
          .values({ realm_id: realm.id, name: 'green_tick', author_id: annId, file_name: '1.png', is_animated: 0, deactivated: 0, date_created: 0 })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    } finally {
      await db.close();
    }
    const listed = (await ben.get('/realm/emoji')).body.emoji;
    assert.deepEqual(Object.keys(listed), [String(id)]);
    assert.deepEqual({ ...listed[id], source_url: undefined }, { id: String(id), name: 'green_tick', source_url: undefined, still_url: null, deactivated: false, author_id: annId });
    assert.match(listed[id].source_url, /^\/user_avatars\/\d+\/emoji\/images\/1\.png$/);

    const queue = await register(ben, { event_types: ['realm_emoji'] });
    refused(await ben.call('DELETE', '/realm/emoji/green_tick'), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator or emoji author');
    assert.equal((await ann.call('DELETE', '/realm/emoji/green_tick')).status, 200, 'the author may');
    const events = await drain(ben, queue.queue_id);
    assert.deepEqual(
      events.map((e) => [e.type, e.op, e.realm_emoji[id].deactivated]),
      [['realm_emoji', 'update', true]],
    );
    assert.equal((await ann.call('DELETE', '/realm/emoji/green_tick')).status, 404, 'a deactivated emoji is gone');
    assert.equal((await ann.get('/realm/emoji')).body.emoji[id].deactivated, true);
  });
});

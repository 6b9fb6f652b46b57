// GET /messages serves each message's shared object from a cache (domain/messages.ts messagesJson)
// and the reader's narrow, shared-history channels and spans from another (domain/reader-cache.ts).
// These tests fetch the same pages again and again, as clients do, and check that nothing cached
// leaks between readers or presentations, and that a change written through this node counts on
// the very next fetch (one written by another node once READ_CACHE_TTL_MS has passed).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, type InProcessClient } from '../../helpers/in-process-chat.js';
import { openDatabase } from '../../../src/platform/db/open.js';
import { MIGRATIONS } from '../../../src/app.js';
import { READ_CACHE_TTL_MS } from '../../../src/platform/db/fast/read-cache.js';
import type { ChatTables } from '../../../src/chat/tables.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;

await forEachEngine('chat message fetch caches', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let alice: InProcessClient;
  let bob: InProcessClient;
  let aliceId: number;
  let bobId: number;

  const page = (who: InProcessClient, narrow: unknown[], extra: Record<string, unknown> = {}) => who.call('GET', '/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow, ...extra });
  const topic = (name: string) => [
    ['stream', 'cached'],
    ['topic', name],
  ];
  const send = async (who: InProcessClient, t: string, content: string) => {
    const r = await who.call('POST', '/messages', { type: 'stream', to: 'cached', topic: t, content });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id as number;
  };

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob'], channel: { name: 'cached', subscribers: ['alice', 'bob'] } });
    ({ storage, chat } = realm);
    ({ client: alice, id: aliceId } = realm.members.alice);
    ({ client: bob, id: bobId } = realm.members.bob);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  it('gives each reader their own flags on a page built once', async () => {
    const id = await send(alice, 'flags', 'star me');
    await send(alice, 'flags', 'leave me');
    assert.equal((await page(bob, topic('flags'))).status, 200);
    assert.equal((await alice.call('POST', '/messages/flags', { messages: [id], op: 'add', flag: 'starred' })).status, 200);
    const forAlice = (await page(alice, topic('flags'))).body.messages;
    const forBob = (await page(bob, topic('flags'))).body.messages;
    assert.deepEqual(
      forAlice.map((m: any) => m.flags),
      [['read', 'starred'], ['read']],
    );
    assert.deepEqual(
      forBob.map((m: any) => m.flags),
      [[], []],
    );
    // The same page again, now surely from the cache: still each reader's own.
    assert.deepEqual((await page(bob, topic('flags'))).body.messages, forBob);
    assert.deepEqual((await page(alice, topic('flags'))).body.messages, forAlice);
    const { flags: _a, ...sharedAlice } = forAlice[0];
    const { flags: _b, ...sharedBob } = forBob[0];
    assert.deepEqual(sharedAlice, sharedBob);
  });

  it('keeps presentations apart: markdown or not, gravatar or not, empty topic names', async () => {
    await send(alice, '', '*plain* me');
    const narrow = [
      ['stream', 'cached'],
      ['topic', ''],
    ];
    const html = (await page(bob, narrow)).body.messages[0];
    const raw = (await page(bob, narrow, { apply_markdown: false, client_gravatar: false })).body.messages[0];
    const empty = (await page(bob, narrow, { allow_empty_topic_name: true })).body.messages[0];
    assert.deepEqual([html.content, html.content_type, html.avatar_url], ['<p><em>plain</em> me</p>', 'text/html', null]);
    assert.equal(raw.content, '*plain* me');
    assert.equal(raw.content_type, 'text/x-markdown');
    assert.match(raw.avatar_url, /^https:/);
    assert.notEqual(html.subject, '');
    assert.equal(empty.subject, '');
    // Asked again in the first form: the other forms did not replace it.
    assert.deepEqual((await page(bob, narrow)).body.messages[0], html);
  });

  it('shows a renamed sender on the very next fetch, in channels and direct messages', async () => {
    await send(alice, 'rename', 'who am I');
    const dm = await alice.call('POST', '/messages', { type: 'direct', to: [bobId], content: 'psst' });
    assert.equal(dm.status, 200);
    const dmNarrow = [['dm', 'alice@example.com']];
    assert.equal((await page(bob, topic('rename'))).body.messages[0].sender_full_name, 'Alice');
    assert.equal((await page(bob, dmNarrow)).body.messages[0].sender_full_name, 'Alice');
    assert.equal((await chat.owner.call('PATCH', `/users/${aliceId}`, { full_name: 'Alice Renamed' })).status, 200);
    assert.equal((await page(bob, topic('rename'))).body.messages[0].sender_full_name, 'Alice Renamed');
    const direct = (await page(bob, dmNarrow)).body.messages[0];
    assert.equal(direct.sender_full_name, 'Alice Renamed');
    assert.deepEqual(direct.display_recipient.map((u: any) => u.full_name).sort(), ['Alice Renamed', 'Bob']);
  });

  it('shows a message changed by another node once the TTL has passed', async () => {
    const id = await send(alice, 'elsewhere', 'before');
    assert.equal((await page(bob, topic('elsewhere'))).body.messages[0].content, '<p>before</p>');
    const other = await openDatabase<ChatTables>({ dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, migrations: MIGRATIONS });
    try {
      await other.kysely.updateTable('messages').set({ content: 'after', rendered_content: '<p>after</p>' }).where('id', '=', id).execute();
    } finally {
      await other.close();
    }
    chat.clock.advance(READ_CACHE_TTL_MS);
    assert.equal((await page(bob, topic('elsewhere'))).body.messages[0].content, '<p>after</p>');
  });

  it('refuses a private channel narrow to others, and to the reader on the very next fetch once unsubscribed', async () => {
    const ownerId = (await chat.owner.call('GET', '/users/me')).body.user_id;
    const made = await chat.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'hidden' }], principals: [ownerId, bobId], invite_only: true });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal((await chat.owner.call('POST', '/messages', { type: 'stream', to: 'hidden', topic: 't', content: 'secret' })).status, 200);
    const narrow = [['stream', 'hidden']];
    assert.equal((await page(bob, narrow)).body.messages.length, 1);
    assert.equal((await page(bob, narrow)).body.messages.length, 1);
    // Bob's narrow, just built, is no one else's.
    assert.equal((await page(alice, narrow)).body.code, 'BAD_NARROW');
    const gone = await chat.owner.call('DELETE', '/users/me/subscriptions', { subscriptions: ['hidden'], principals: [bobId] });
    assert.equal(gone.status, 200, JSON.stringify(gone.body));
    const refused = await page(bob, narrow);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'BAD_NARROW');
  });

  it("reads a one-channel page's flags from the reader's rows where they have one, and narrows on flags in it", async () => {
    const starred = await send(alice, 'split', 'one');
    const read = await send(alice, 'split', 'two');
    const plain = await send(alice, 'split', 'three');
    assert.equal((await bob.call('POST', '/messages/flags', { messages: [starred], op: 'add', flag: 'starred' })).status, 200);
    assert.equal((await bob.call('POST', '/messages/flags', { messages: [read], op: 'add', flag: 'read' })).status, 200);
    const flagsIn = async (narrow: unknown[], extra: Record<string, unknown> = {}) => {
      const r = await page(bob, narrow, extra);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.messages.map((m: any) => [m.id, m.flags]);
    };
    assert.deepEqual(await flagsIn(topic('split')), [
      [starred, ['starred']],
      [read, ['read']],
      [plain, []],
    ]);
    assert.deepEqual(
      await flagsIn([
        ['stream', 'cached'],
        ['search', 'three'],
      ]),
      [[plain, []]],
    );
    assert.deepEqual(await flagsIn([...topic('split'), ['is', 'starred']]), [[starred, ['starred']]]);
    assert.deepEqual(await flagsIn([...topic('split'), ['is', 'unread']]), [
      [starred, ['starred']],
      [plain, []],
    ]);
    const unread = await page(bob, topic('split'), { anchor: undefined, use_first_unread_anchor: true, num_before: 0, num_after: 5 });
    assert.equal(unread.body.anchor, starred);
  });

  it('highlights a search in cached messages for each search', async () => {
    await send(alice, 'search', 'the quick fox');
    const first = (
      await page(bob, [
        ['stream', 'cached'],
        ['search', 'quick'],
      ])
    ).body.messages;
    const second = (
      await page(bob, [
        ['stream', 'cached'],
        ['search', 'fox'],
      ])
    ).body.messages;
    assert.equal(first.length, 1);
    assert.match(first[0].match_content, /<span class="highlight">quick<\/span>/);
    assert.doesNotMatch(first[0].match_content, /highlight">fox/);
    assert.match(second[0].match_content, /<span class="highlight">fox<\/span>/);
    const plain = (await page(bob, topic('search'))).body.messages[0];
    assert.equal('match_content' in plain, false);
  });
});

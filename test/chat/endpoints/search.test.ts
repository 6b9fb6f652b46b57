// Black-box: the `search` narrow operator as Zulip's (stems, stop words, phrases, case, negation,
// topics, access rules) with Zulip's match_content/match_subject highlights, and
// GET /messages/matches_narrow; requests as the Python client sends them (helpers/chat-client.ts).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs, type RunningServer, type Storage } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

await forEachEngine('chat search', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let ann: ChatClient;
  let annId: number;
  const ids: Record<string, number> = {};

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    const r = await runKeel(['admin', 'create-user', '--email', 'ann@example.com', '--full-name', 'Ann', '--json', ...storageArgs(storage)]);
    assert.equal(r.code, 0, r.stderr);
    const made = JSON.parse(r.stdout);
    ann = new ChatClient(server.chatUrl, made.email, made.apiKey);
    annId = made.userId;
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'kitchen' }], principals: [annId] });
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], invite_only: true });
    const send = async (key: string, to: string, topic: string, content: string) => {
      const s = await owner.post('/messages', { type: 'stream', to, topic, content });
      assert.equal(s.status, 200, JSON.stringify(s.body));
      ids[key] = s.body.id;
    };
    await send('cafe', 'kitchen', 'Breakfast plans', 'Meet at the **Café** tomorrow, bring COFFEE beans');
    await send('beans', 'kitchen', 'lunch', 'coffee and beans are separate words here: beans then coffee');
    await send('topicOnly', 'kitchen', 'Coffee machine', 'it is broken again');
    await send('link', 'kitchen', 'links', 'see https://docs.example.com/guide for the guide');
    await send('hidden', 'secret', 'plans', 'coffee in the vault');
    await send('deploys', 'kitchen', 'Deploying today', 'The server deploys, and is deploying again: [release notes](https://deploy.example/notes)');
    const dm = await owner.post('/messages', { type: 'direct', to: [annId], content: 'private coffee chat' });
    ids.dm = dm.body.id;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  async function search(client: ChatClient, narrow: unknown[]): Promise<Record<string, any>[]> {
    const r = await client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.messages;
  }
  const idsOf = (ms: Record<string, any>[]) => ms.map((m) => m.id);

  it('matches every word by its stem, in content or topic, ignoring case; stop words are ignored', async () => {
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'coffee' }])), [ids.cafe, ids.beans, ids.topicOnly, ids.hidden, ids.dm]);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'café BEAN' }])), [ids.cafe]);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'CAFÉ' }])), [ids.cafe]);
    // As PostgreSQL's English configuration: accents are not folded.
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'cafe' }])), []);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'deployed servers' }])), [ids.deploys]);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'the' }])), [], 'only stop words: nothing');
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'the coffee is' }])), idsOf(await search(owner, [['search', 'coffee']])));
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'breakfast beans' }])), [ids.cafe], 'topic word and content word');
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'coff' }])), [], 'whole words only');
    // Parts of URLs are words too, on both engines.
    assert.deepEqual(idsOf(await search(owner, [['search', 'docs example']])), [ids.link]);
  });

  it('matches quoted phrases only as typed (case aside), besides their stems', async () => {
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: '"server DEPLOYS"' }])), [ids.deploys]);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: '"server deploying"' }])), []);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: '"coffee beans"' }])), [ids.cafe]);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: '"beans coffee"' }])), []);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: '"then coffee" separate' }])), [ids.beans]);
  });

  it('combines with other operators and negation', async () => {
    assert.deepEqual(
      idsOf(
        await search(owner, [
          ['stream', 'kitchen'],
          ['search', 'coffee'],
        ]),
      ),
      [ids.cafe, ids.beans, ids.topicOnly],
    );
    assert.deepEqual(
      idsOf(
        await search(owner, [
          { operator: 'channel', operand: 'kitchen' },
          { operator: 'search', operand: 'coffee', negated: true },
        ]),
      ),
      [ids.link, ids.deploys],
    );
    assert.deepEqual(
      idsOf(
        await search(owner, [
          ['is', 'dm'],
          ['search', 'coffee'],
        ]),
      ),
      [ids.dm],
    );
  });

  it('finds only messages the user may read', async () => {
    // Ann received the kitchen messages and the direct one, never the private channel's.
    assert.deepEqual(idsOf(await search(ann, [['search', 'coffee']])), [ids.cafe, ids.beans, ids.topicOnly, ids.dm]);
  });

  it('highlights matched words in match_content and match_subject', async () => {
    const [cafe] = await search(owner, [['search', 'CAFÉ breakfast']]);
    assert.equal(cafe.match_content, '<p>Meet at the <strong><span class="highlight">Café</span></strong> tomorrow, bring COFFEE beans</p>');
    assert.equal(cafe.match_subject, '<span class="highlight">Breakfast</span> plans');
    assert.equal(cafe.content, '<p>Meet at the <strong>Café</strong> tomorrow, bring COFFEE beans</p>', 'content itself is unchanged');
    const plain = await search(owner, [['stream', 'kitchen']]);
    assert.ok(
      plain.every((m) => !('match_content' in m) && !('match_subject' in m)),
      'only search narrows carry match fields',
    );
  });

  it('highlights every word whose stem matches, as zulip.english_us_search does, never link targets', async () => {
    // Exactly the narrow a Zulip client sends for a search box holding "deploy".
    const [m] = await search(owner, [{ operator: 'search', operand: 'deploy' }]);
    assert.equal(m.id, ids.deploys);
    // The link's markup is Markdown's business (its attributes); here only the highlights count.
    assert.match(m.content, /^<p>The server deploys, and is deploying again: <a href="https:\/\/deploy\.example\/notes"[^>]*>release notes<\/a><\/p>$/);
    assert.equal(m.match_content, m.content.replace('deploys', '<span class="highlight">deploys</span>').replace('deploying', '<span class="highlight">deploying</span>'));
    assert.equal(m.match_subject, '<span class="highlight">Deploying</span> today');
    // A link's target is not indexed: Zulip indexes the rendered text.
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'notes release' }])), [ids.deploys]);
    assert.deepEqual(idsOf(await search(owner, [{ operator: 'search', operand: 'deploy example' }])), []);
    // Stop words in the operand are never highlighted.
    const [again] = await search(owner, [{ operator: 'search', operand: 'the server' }]);
    assert.equal(again.match_content.startsWith('<p>The <span class="highlight">server</span> deploys'), true, again.match_content);
  });

  it('refuses a search operand that is not text', async () => {
    const r = await owner.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'search', operand: 5 }] });
    assert.deepEqual([r.status, r.body.code], [400, 'BAD_NARROW']);
  });

  it('GET /messages/matches_narrow reports the matching ids with highlights', async () => {
    const r = await owner.get('/messages/matches_narrow', { msg_ids: [ids.cafe, ids.beans, ids.link, 999999], narrow: [{ operator: 'search', operand: 'beans' }] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      Object.keys(r.body.messages)
        .map(Number)
        .sort((a, b) => a - b),
      [ids.cafe, ids.beans],
    );
    assert.equal(r.body.messages[ids.beans].match_subject, 'lunch');
    assert.match(r.body.messages[ids.beans].match_content, /^<p>coffee and <span class="highlight">beans<\/span> are separate words here: <span class="highlight">beans<\/span> then coffee<\/p>$/);
    const link = await owner.get('/messages/matches_narrow', { msg_ids: [ids.link, ids.dm], narrow: [['stream', 'kitchen']] });
    assert.deepEqual(Object.keys(link.body.messages).map(Number), [ids.link]);
    assert.equal(link.body.messages[ids.link].match_content.includes('highlight'), false);
    assert.equal(link.body.messages[ids.link].match_subject, 'links');
    // Ann cannot learn about the private channel's message this way.
    const hidden = await ann.get('/messages/matches_narrow', { msg_ids: [ids.hidden], narrow: [] });
    assert.deepEqual(hidden.body.messages, {});
    const missing = await owner.get('/messages/matches_narrow', { msg_ids: [ids.cafe] });
    assert.deepEqual([missing.status, missing.body.code, missing.body.var_name], [400, 'REQUEST_VARIABLE_MISSING', 'narrow']);
    const bad = await owner.get('/messages/matches_narrow', { msg_ids: [ids.cafe], narrow: [['bogus', 'x']] });
    assert.equal(bad.body.code, 'BAD_NARROW');
  });

  it('follows edits and topic moves', async () => {
    const sent = await owner.post('/messages', { type: 'stream', to: 'kitchen', topic: 'Quarterly', content: 'budgeting session' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const id = sent.body.id;
    assert.deepEqual(idsOf(await search(owner, [['search', 'budget quarterly']])), [id]);
    const edit = await owner.call('PATCH', `/messages/${id}`, { content: 'revised planning', topic: 'Roadmaps' });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.deepEqual(idsOf(await search(owner, [['search', 'budget']])), []);
    assert.deepEqual(idsOf(await search(owner, [['search', 'quarterly']])), []);
    assert.deepEqual(idsOf(await search(owner, [['search', 'plans roadmap revise']])), [id]);
  });

  it('highlights follow an edit, for every reader (highlights are kept per message and words between writes)', async () => {
    const sent = await owner.post('/messages', { type: 'stream', to: 'kitchen', topic: 'Garden', content: 'tomato seedlings' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const id = sent.body.id;
    const found = async (client: ChatClient) => (await search(client, [['search', 'tomato']])).find((m) => m.id === id)!;
    const before = '<p><span class="highlight">tomato</span> seedlings</p>';
    assert.equal((await found(owner)).match_content, before);
    // Another reader, the same words: the same highlights (made once, served to both).
    assert.equal((await found(ann)).match_content, before);
    assert.equal((await found(ann)).match_subject, 'Garden');
    const edit = await owner.call('PATCH', `/messages/${id}`, { content: 'more tomato plants', topic: 'Tomato beds' });
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    for (const client of [ann, owner]) {
      const m = await found(client);
      assert.equal(m.match_content, '<p>more <span class="highlight">tomato</span> plants</p>');
      assert.equal(m.match_subject, '<span class="highlight">Tomato</span> beds');
    }
  });
});

// The reader's subscription spans decide what a search of a private channel without shared history
// finds (receipt.ts, written into the page query as id ranges): messages sent while subscribed, not
// those sent between an unsubscription and a resubscription.
await forEachEngine('chat search over subscription spans', (engine) => {
  let storage: Storage;
  let server: RunningServer;
  let owner: ChatClient;
  let bo: ChatClient;
  let boId: number;

  before(async () => {
    storage = await createStorage(engine);
    server = await startServer(storage);
    owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    const r = await runKeel(['admin', 'create-user', '--email', 'bo@example.com', '--full-name', 'Bo', '--json', ...storageArgs(storage)]);
    const made = JSON.parse(r.stdout);
    bo = new ChatClient(server.chatUrl, made.email, made.apiKey);
    boId = made.userId;
  });
  after(async () => {
    await server?.stop();
    await storage?.dispose();
  });

  it('finds what was sent while the reader was subscribed, and not what was sent between', async () => {
    const sub = await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], invite_only: true, history_public_to_subscribers: false });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], principals: [boId] })).status, 200);
    const send = async (content: string) => {
      const r = await owner.post('/messages', { type: 'stream', to: 'vault', topic: 't', content });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.id as number;
    };
    const first = await send('walnut one');
    assert.equal((await owner.call('DELETE', '/users/me/subscriptions', { subscriptions: ['vault'], principals: [boId] })).status, 200);
    await send('walnut two');
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'vault' }], principals: [boId] })).status, 200);
    const third = await send('walnut three');
    const found = await bo.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'search', operand: 'walnut' }] });
    assert.equal(found.status, 200, JSON.stringify(found.body));
    assert.deepEqual(
      found.body.messages.map((m: { id: number }) => m.id),
      [first, third],
    );
  });
});

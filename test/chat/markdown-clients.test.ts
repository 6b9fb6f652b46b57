// Black-box: messages people actually write, sent over raw HTTP as Zulip's Python client sends them
// and by zulip-js, come back rendered as Zulip renders them; a quote-reply (the web app's "Quote
// and reply") notifies nobody it quotes (issue 14 item 9).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { ChatClient } from '../helpers/chat-client.js';
import { servedRealm, type ServedRealm } from '../helpers/chat-realm.js';
import zulip from '../helpers/zulip-js.js';

let realm: ServedRealm;
let realmUrl: string;
let ann: { client: ChatClient; id: number };
let bob: { client: ChatClient; id: number };

before(async () => {
  realm = await servedRealm('sqlite', { members: ['ann', 'bob'], channel: { name: 'general', subscribers: ['owner', 'ann', 'bob'] } });
  ann = realm.members.ann;
  bob = realm.members.bob;
  realmUrl = (await realm.owner.get('/server_settings')).body.realm_url;
});

after(async () => {
  await realm?.stop();
});

async function send(client: ChatClient, content: string, topic = 'markdown'): Promise<number> {
  const r = await client.post('/messages', { type: 'stream', to: 'general', topic, content });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.id;
}

async function read(client: ChatClient, id: number): Promise<{ content: string; flags: string[] }> {
  const r = await client.get(`/messages/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return { content: r.body.message.content, flags: r.body.message.flags.sort() };
}

it('a quote-reply renders the quoted mention silent and does not flag the quoted user', async () => {
  const asked = await send(bob.client, '@**ann** can you look at this?');
  assert.deepEqual((await read(ann.client, asked)).flags, ['mentioned']);
  // What the web app's quote-and-reply writes: a silent mention, a link to the message, the quote.
  const link = `${realmUrl}/#narrow/channel/${realm.channelId}-general/topic/markdown/near/${asked}`;
  const reply = await send(realm.owner, `@_**bob|${bob.id}** [said](${link}):\n\`\`\`quote\n@**ann** can you look at this?\n\`\`\`\nLooking now.`);
  const seen = await read(ann.client, reply);
  assert.deepEqual(seen.flags, [], 'quoting a mention does not notify again');
  assert.deepEqual((await read(bob.client, reply)).flags, [], 'a silent mention does not notify');
  assert.equal(
    seen.content,
    `<p><span class="user-mention silent" data-user-id="${bob.id}">bob</span> <a href="#narrow/channel/${realm.channelId}-general/topic/markdown/near/${asked}">said</a>:</p>\n` +
      `<blockquote>\n<p><span class="user-mention silent" data-user-id="${ann.id}">ann</span> can you look at this?</p>\n</blockquote>\n<p>Looking now.</p>`,
  );
  const arrow = await send(realm.owner, '> @**ann** wrote this\n\n@**bob** see above');
  assert.deepEqual((await read(ann.client, arrow)).flags, []);
  assert.deepEqual((await read(bob.client, arrow)).flags, ['mentioned']);
});

it('renders links, code, lists and math as Zulip does', async () => {
  const id = await send(
    ann.client,
    'See example.com, mail ops@example.org or [the docs](https://docs.example.org/a), and [](https://e.org/x).\n\n' +
      '    indented code\n\n```py2\nprint "hi"\n```\n' +
      'Steps:\n1. one\n  2. nested\n* mixed\n- bullets\n\n$$x^2$$',
  );
  const { content } = await read(bob.client, id);
  const [prose, rest] = content.split('\n<div class="codehilite"><pre>');
  assert.equal(
    prose,
    '<p>See <a href="http://example.com">example.com</a>, mail <a href="mailto:ops@example.org">ops@example.org</a> or ' +
      '<a href="https://docs.example.org/a">the docs</a>, and <a href="https://e.org/x">https://e.org/x</a>.</p>',
  );
  assert.ok(
    rest.startsWith(
      '<span></span><code>indented code\n</code></pre></div>\n<div class="codehilite" data-code-language="Python 2.x"><pre><span></span><code>print &quot;hi&quot;\n</code></pre></div>\n' +
        '<p>Steps:</p>\n<ol>\n<li>one<ol start="2">\n<li>nested</li>\n</ol>\n</li>\n</ol>\n<ul>\n<li>mixed</li>\n<li>bullets</li>\n</ul>\n<p><span class="katex">',
    ),
    rest,
  );
  assert.doesNotMatch(content, /target=|title=/, 'links carry no target or title');
});

it('zulip-js sends and renders the same way, and /messages/render previews it', async () => {
  const client = await zulip({ realm: realm.server.chatUrl, username: realm.server.chatSecrets!.email, apiKey: realm.server.chatSecrets!.apiKey });
  const sent = await client.messages.send({ to: 'general', type: 'stream', topic: 'js', content: `> @**ann** hi\n\n${realmUrl}/#narrow/dm/${ann.id}` });
  assert.equal(sent.result, 'success', JSON.stringify(sent));
  const expected = `<blockquote>\n<p><span class="user-mention silent" data-user-id="${ann.id}">ann</span> hi</p>\n</blockquote>\n<p><a href="#narrow/dm/${ann.id}">${realmUrl}/#narrow/dm/${ann.id}</a></p>`;
  assert.equal((await read(ann.client, sent.id)).content, expected);
  assert.deepEqual((await read(ann.client, sent.id)).flags, []);
  const preview = await realm.owner.post('/messages/render', { content: `> @**ann** hi\n\n${realmUrl}/#narrow/dm/${ann.id}` });
  assert.equal(preview.body.rendered, expected);
});

it('emoticons become emoji only for a sender who turned translate_emoticons on (off by default, as in Zulip)', async () => {
  const plain = await send(ann.client, 'thanks :) <3');
  assert.equal((await read(ann.client, plain)).content, '<p>thanks :) &lt;3</p>');
  const on = await ann.client.call('PATCH', '/settings', { translate_emoticons: true });
  assert.equal(on.status, 200, JSON.stringify(on.body));
  const translated = await send(ann.client, 'thanks :) <3');
  assert.match(
    (await read(ann.client, translated)).content,
    /^<p>thanks <span aria-label="[a-z ]+" class="emoji emoji-[0-9a-f-]+" role="img" title="[a-z ]+">:smile:<\/span> <span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:<\/span><\/p>$/,
  );
});

it("a deactivated user's mention renders silent", async () => {
  const gone = await realm.owner.call('DELETE', `/users/${bob.id}`);
  assert.equal(gone.status, 200, JSON.stringify(gone.body));
  const id = await send(ann.client, 'ping @**bob**');
  assert.equal((await read(ann.client, id)).content, `<p>ping <span class="user-mention silent" data-user-id="${bob.id}">bob</span></p>`);
});

// Black-box: uploaded images on a real `keel serve`, sent as clients send them (multipart bodies with
// Basic auth). Custom emoji: Zulip's name rules, who may add, one file, the 5 MiB limit, images cut to
// 64x64 (an animated GIF keeps its frames and gets a still), the original kept, the realm_emoji
// event, the image served at register's source_url, then the emoji used in a reaction and in Markdown.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import sharp from 'sharp';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import type { ChatClient } from '../../helpers/chat-client.js';

const png = (w: number, h: number) =>
  sharp({ create: { width: w, height: h, channels: 4, background: '#ff8800' } })
    .png()
    .toBuffer();

async function animatedGif(): Promise<Buffer> {
  const a = await sharp({ create: { width: 120, height: 80, channels: 4, background: '#ff0000' } })
    .png()
    .toBuffer();
  const b = await sharp({ create: { width: 120, height: 80, channels: 4, background: '#0000ff' } })
    .png()
    .toBuffer();
  return sharp([a, b], { join: { animated: true } })
    .gif()
    .toBuffer();
}

/** A multipart POST (or other method) as python-zulip's requests sends a file. */
async function upload(client: ChatClient, method: string, path: string, files: { data: Buffer; type: string; name: string }[]) {
  const form = new FormData();
  files.forEach((f, i) => form.append(`file-${i}`, new Blob([new Uint8Array(f.data)], { type: f.type }), f.name));
  const res = await fetch(client.base + path, { method, headers: { authorization: `Basic ${Buffer.from(`${client.email}:${client.apiKey}`).toString('base64')}` }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

void forEachEngine('uploaded images: custom emoji', (engine) => {
  let realm: ServedRealm;
  let base: string;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', ['gus', 600]], channel: { name: 'general', subscribers: ['owner', 'ann'] } });
    base = realm.server.chatUrl;
  });
  after(() => realm.stop());

  it('adds an emoji from a PNG, cut to 64x64, served where register says, with the realm_emoji event', async () => {
    const ann = realm.members.ann.client;
    const queue = await ann.post('/register', { event_types: JSON.stringify(['realm_emoji']) });
    assert.equal(queue.status, 200);
    const original = await png(200, 100);
    const up = await upload(ann, 'POST', '/realm/emoji/Party%20Parrot', [{ data: original, type: 'image/png', name: 'parrot.png' }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual(up.body, { result: 'success', msg: '' });

    const listed = await ann.get('/realm/emoji');
    const emoji = Object.values(listed.body.emoji as Record<string, any>).find((e) => e.name === 'party_parrot');
    assert.ok(emoji, JSON.stringify(listed.body));
    assert.equal(emoji.author_id, realm.members.ann.id);
    assert.equal(emoji.still_url, null);
    assert.match(emoji.source_url, /^\/user_avatars\/\d+\/emoji\/images\/[0-9a-f]{8}\.png$/);

    const served = await fetch(base + emoji.source_url);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height], [64, 64]);
    // The original is kept beside it, never shown inline.
    const kept = await fetch(`${base}${emoji.source_url}.original`);
    assert.equal(kept.status, 200);
    assert.deepEqual(Buffer.from(await kept.arrayBuffer()), original);
    assert.equal((await fetch(`${base}/user_avatars/${emoji.source_url.split('/')[2]}/emoji/images/nope.png`)).status, 404);

    const got = await ann.get('/events', { queue_id: queue.body.queue_id, last_event_id: -1 });
    const event = (got.body.events as any[]).find((e) => e.type === 'realm_emoji');
    assert.ok(event, JSON.stringify(got.body));
    assert.equal(event.op, 'update');
    assert.equal(event.realm_emoji[emoji.id].name, 'party_parrot');

    const reg = await ann.post('/register', { fetch_event_types: JSON.stringify(['realm_emoji']) });
    assert.equal(reg.body.realm_emoji[emoji.id].source_url, emoji.source_url);
  });

  it('lets the new emoji be used in a reaction and in Markdown', async () => {
    const listed = await realm.owner.get('/realm/emoji');
    const emoji = Object.values(listed.body.emoji as Record<string, any>).find((e) => e.name === 'party_parrot');
    const sent = await realm.owner.post('/messages', { type: 'stream', to: 'general', topic: 'emoji', content: 'look :party_parrot:' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const reacted = await realm.members.ann.client.post(`/messages/${sent.body.id}/reactions`, { emoji_name: 'party_parrot' });
    assert.equal(reacted.status, 200, JSON.stringify(reacted.body));
    const message = (await realm.owner.get(`/messages/${sent.body.id}`)).body.message;
    assert.deepEqual(
      message.reactions.map((r: any) => [r.emoji_name, r.emoji_code, r.reaction_type]),
      [['party_parrot', emoji.id, 'realm_emoji']],
    );
    assert.ok(message.content.includes(`<img alt=":party_parrot:" class="emoji" src="${emoji.source_url}" title="party parrot">`), message.content);
  });

  it('keeps an animated GIF animated, with a still first frame', async () => {
    const up = await upload(realm.owner, 'POST', '/realm/emoji/blink', [{ data: await animatedGif(), type: 'image/gif', name: 'blink.gif' }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const emoji = Object.values((await realm.owner.get('/realm/emoji')).body.emoji as Record<string, any>).find((e) => e.name === 'blink');
    assert.match(emoji.source_url, /\.gif$/);
    assert.match(emoji.still_url, /\/still\/[0-9a-f]{8}\.png$/);
    const anim = await sharp(Buffer.from(await (await fetch(base + emoji.source_url)).arrayBuffer()), { animated: true }).metadata();
    assert.deepEqual([anim.format, anim.width, anim.pageHeight, anim.pages], ['gif', 64, 64, 2]);
    const still = await sharp(Buffer.from(await (await fetch(base + emoji.still_url)).arrayBuffer())).metadata();
    assert.deepEqual([still.format, still.width, still.height], ['png', 64, 64]);
  });

  it('refuses as Zulip does: names, permission, files, type, content and size', async () => {
    const ann = realm.members.ann.client;
    const image = [{ data: await png(10, 10), type: 'image/png', name: 'a.png' }];
    const refused = async (client: ChatClient, name: string, files: { data: Buffer; type: string; name: string }[], msg: string, code = 'BAD_REQUEST') => {
      const r = await upload(client, 'POST', `/realm/emoji/${encodeURIComponent(name)}`, files);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.deepEqual([r.body.msg, r.body.code], [msg, code], name);
    };
    await refused(ann, 'ends_', image, 'Emoji names must end with either a letter or digit.');
    await refused(ann, 'bad!', image, 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
    await refused(realm.members.gus.client, 'guest', image, 'Insufficient permission');
    await refused(ann, 'party_parrot', image, 'A custom emoji with this name already exists.');
    await refused(ann, 'nofile', [], 'You must upload exactly one file.');
    await refused(ann, 'twofiles', [...image, ...image], 'You must upload exactly one file.');
    await refused(ann, 'smile', image, 'Only administrators can override built-in emoji.');
    await refused(ann, 'zz-text', [{ data: Buffer.from('hello'), type: 'text/plain', name: 'a.txt' }], 'Invalid image format', 'BAD_IMAGE');
    await refused(ann, 'zz-corrupt', [{ data: Buffer.from('not a png at all'), type: 'image/png', name: 'a.png' }], 'Could not decode image; did you upload an image file?', 'BAD_IMAGE');
    await refused(ann, 'zz-huge', [{ data: Buffer.alloc(5 * 1024 * 1024 + 1), type: 'image/png', name: 'a.png' }], 'Uploaded file is larger than the allowed limit of 5 MiB');
    const names = Object.values((await ann.get('/realm/emoji')).body.emoji as Record<string, any>).map((e) => e.name);
    assert.deepEqual(names.sort(), ['blink', 'party_parrot']);
    // An administrator may override a built-in emoji's name.
    const smile = await upload(realm.owner, 'POST', '/realm/emoji/smile', image);
    assert.equal(smile.status, 200, JSON.stringify(smile.body));
  });
});

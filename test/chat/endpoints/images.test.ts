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

void forEachEngine('uploaded images: avatar, realm icon and logos', (engine) => {
  let realm: ServedRealm;
  let base: string;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann'] });
    base = realm.server.chatUrl;
  });
  after(() => realm.stop());

  it('changes avatar_url in GET /users/me and register, serves 100 and 500 pixel PNGs, and sends realm_user update', async () => {
    const ann = realm.members.ann.client;
    const watcher = await realm.owner.post('/register', { event_types: JSON.stringify(['realm_user']) });
    const before = (await ann.get('/users/me')).body;
    assert.match(before.avatar_url, /^https:\/\/secure\.gravatar\.com\//);
    const up = await upload(ann, 'POST', '/users/me/avatar', [{ data: await png(300, 200), type: 'image/png', name: 'me.png' }]);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.match(up.body.avatar_url, /^\/user_avatars\/\d+\/[0-9a-f]{40}\.png\?version=2$/);

    const me = (await ann.get('/users/me')).body;
    assert.equal(me.avatar_url, up.body.avatar_url);
    assert.equal(me.avatar_version, before.avatar_version + 1);
    // client_gravatar changes nothing for an uploaded avatar.
    const listed = (await realm.owner.get('/users', { client_gravatar: 'true' })).body.members.find((u: any) => u.user_id === realm.members.ann.id);
    assert.equal(listed.avatar_url, up.body.avatar_url);
    const reg = (await ann.post('/register', { fetch_event_types: JSON.stringify(['realm_user']) })).body;
    assert.equal(reg.avatar_source, 'U');
    assert.equal(reg.avatar_url, up.body.avatar_url);
    assert.equal(reg.avatar_url_medium, up.body.avatar_url.replace('.png?', '-medium.png?'));

    for (const [url, size] of [
      [reg.avatar_url, 100],
      [reg.avatar_url_medium, 500],
    ] as const) {
      const res = await fetch(base + url);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers.get('content-type'), 'image/png');
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      assert.deepEqual([meta.width, meta.height], [size, size]);
    }

    const events = (await realm.owner.get('/events', { queue_id: watcher.body.queue_id, last_event_id: -1 })).body.events as any[];
    const update = events.find((e) => e.type === 'realm_user' && e.op === 'update');
    assert.deepEqual(update?.person, {
      user_id: realm.members.ann.id,
      avatar_source: 'U',
      avatar_url: up.body.avatar_url,
      avatar_url_medium: reg.avatar_url_medium,
      avatar_version: me.avatar_version,
    });

    // DELETE goes back to the hash-based avatar, one version further; the uploaded files go.
    const del = await ann.call('DELETE', '/users/me/avatar');
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.match(del.body.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=3$/);
    assert.equal((await ann.get('/users/me')).body.avatar_url, del.body.avatar_url);
    assert.equal((await fetch(base + reg.avatar_url)).status, 404);
  });

  it('refuses an avatar upload without exactly one image', async () => {
    const ann = realm.members.ann.client;
    const none = await upload(ann, 'POST', '/users/me/avatar', []);
    assert.deepEqual([none.status, none.body.msg], [400, 'You must upload exactly one avatar.']);
    const text = await upload(ann, 'POST', '/users/me/avatar', [{ data: Buffer.from('x'), type: 'text/plain', name: 'a.txt' }]);
    assert.deepEqual([text.status, text.body.msg, text.body.code], [400, 'Invalid image format', 'BAD_IMAGE']);
  });

  it('sets the realm icon and logos (administrators), with register fields and update_dict events', async () => {
    const watcher = await realm.owner.post('/register', { event_types: JSON.stringify(['realm']) });
    const image = [{ data: await png(1600, 400), type: 'image/png', name: 'logo.png' }];
    const notAdmin = await upload(realm.members.ann.client, 'POST', '/realm/icon', image);
    assert.deepEqual([notAdmin.status, notAdmin.body.msg], [400, 'Must be an organization administrator']);

    const icon = await upload(realm.owner, 'POST', '/realm/icon', image);
    assert.equal(icon.status, 200, JSON.stringify(icon.body));
    assert.match(icon.body.icon_url, /^\/user_avatars\/\d+\/realm\/icon\.png\?version=2$/);
    const iconMeta = await sharp(Buffer.from(await (await fetch(base + icon.body.icon_url)).arrayBuffer())).metadata();
    assert.deepEqual([iconMeta.width, iconMeta.height], [100, 100]);

    const night = await upload(realm.owner, 'POST', '/realm/logo?night=true', image);
    assert.equal(night.status, 200, JSON.stringify(night.body));
    const day = await upload(realm.owner, 'POST', '/realm/logo?night=false', image);
    assert.equal(day.status, 200, JSON.stringify(day.body));
    const noNight = await upload(realm.owner, 'POST', '/realm/logo', image);
    assert.deepEqual([noNight.status, noNight.body.msg], [400, "Missing 'night' argument"]);

    const reg = (await realm.owner.post('/register', { fetch_event_types: JSON.stringify(['realm']) })).body;
    assert.equal(reg.realm_icon_url, icon.body.icon_url);
    assert.equal(reg.realm_icon_source, 'U');
    assert.match(reg.realm_logo_url, /^\/user_avatars\/\d+\/realm\/logo\.png\?version=1$/);
    assert.equal(reg.realm_logo_source, 'U');
    assert.match(reg.realm_night_logo_url, /^\/user_avatars\/\d+\/realm\/night_logo\.png\?version=1$/);
    // A logo is shrunk to fit 800x100, its aspect kept.
    const logoMeta = await sharp(Buffer.from(await (await fetch(base + reg.realm_logo_url)).arrayBuffer())).metadata();
    assert.deepEqual([logoMeta.width, logoMeta.height], [400, 100]);

    const events = (await realm.owner.get('/events', { queue_id: watcher.body.queue_id, last_event_id: -1 })).body.events as any[];
    const dicts = events.filter((e) => e.type === 'realm' && e.op === 'update_dict').map((e) => [e.property, e.data]);
    assert.deepEqual(dicts, [
      ['icon', { icon_url: icon.body.icon_url, icon_source: 'U' }],
      ['night_logo', { logo_url: reg.realm_night_logo_url, logo_source: 'U' }],
      ['logo', { logo_url: reg.realm_logo_url, logo_source: 'U' }],
    ]);

    const delIcon = await realm.owner.call('DELETE', '/realm/icon');
    assert.match(delIcon.body.icon_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&s=100$/);
    assert.equal((await realm.owner.call('DELETE', '/realm/logo', { night: true })).status, 200);
    const after = (await realm.owner.post('/register', { fetch_event_types: JSON.stringify(['realm']) })).body;
    assert.deepEqual([after.realm_icon_source, after.realm_night_logo_source, after.realm_night_logo_url], ['G', 'D', '/static/images/logo/zulip-org-logo.svg?version=0']);
    assert.equal(after.realm_logo_source, 'U');
  });
});

// Issue 16's odd endpoints on a real `keel serve`, black box, on both engines, over HTTP as Zulip's
// Python client sends it: the loud warning of --dev-mode on stderr and POST /dev_fetch_api_key, an
// APNs token and a test notification that reaches a local fake of the push notification service
// (--push-url, node:http), a BigBlueButton link, and an administrator deleting a topic.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { ChatClient } from '../../helpers/chat-client.js';

await forEachEngine('chat misc endpoints on keel serve', (engine) => {
  let realm: ServedRealm;
  let bouncer: Server;
  const arrived: { path: string; body: string }[] = [];

  before(async () => {
    bouncer = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        arrived.push({ path: req.url!, body });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"result":"success","msg":""}');
      });
    });
    await new Promise<void>((resolve) => bouncer.listen(0, '127.0.0.1', resolve));
    const pushUrl = `http://org:key@127.0.0.1:${(bouncer.address() as AddressInfo).port}`;
    realm = await servedRealm(engine, {
      members: ['ann'],
      channel: { name: 'garden', subscribers: ['owner', 'ann'] },
      serverArgs: ['--dev-mode', 'on', '--push-url', pushUrl, '--bigbluebutton-url', 'https://bbb.example.com/bigbluebutton/', '--bigbluebutton-secret', 'shh'],
    });
  });
  after(async () => {
    await realm?.stop();
    bouncer?.close();
  });

  it('warns loudly that development mode is on, and hands out API keys without a password', async () => {
    assert.match(realm.server.stderr(), /DEVELOPMENT MODE IS ON/);
    const ann = realm.members.ann.client;
    const anon = new ChatClient(realm.server.chatUrl, '', '');
    const r = await anon.call('POST', '/dev_fetch_api_key', { username: ann.email }, null);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.user_id, realm.members.ann.id);
    const me = await new ChatClient(realm.server.chatUrl, r.body.email, r.body.api_key).call('GET', '/users/me');
    assert.equal(me.body.user_id, realm.members.ann.id);
  });

  it('registers an APNs token and sends its test notification through the push service', async () => {
    const ann = realm.members.ann.client;
    assert.equal((await ann.call('POST', '/users/me/apns_device_token', { token: 'c2VjcmV0', appid: 'org.zulip.Zulip' })).status, 200);
    assert.equal((await ann.call('POST', '/mobile_push/test_notification', { token: 'c2VjcmV0' })).status, 200);
    assert.deepEqual(
      arrived.map((a) => a.path),
      ['/api/v1/remotes/push/register', '/api/v1/remotes/push/test_notification'],
    );
    assert.equal(JSON.parse(arrived[1].body).token, 'c2VjcmV0');
    assert.equal((await ann.call('DELETE', '/users/me/apns_device_token', { token: 'c2VjcmV0' })).status, 200);
  });

  it('makes a BigBlueButton link', async () => {
    const r = await realm.members.ann.client.call('GET', '/calls/bigbluebutton/create', { meeting_name: 'standup', voice_only: false });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.url, /^\/calls\/bigbluebutton\/join\?bigbluebutton=/);
  });

  it('lets an administrator, and only one, delete a topic', async () => {
    const ann = realm.members.ann.client;
    for (let i = 0; i < 3; i++) assert.equal((await ann.call('POST', '/messages', { type: 'stream', to: 'garden', topic: 'old news', content: `m${i}` })).status, 200);
    const path = `/streams/${realm.channelId}/delete_topic`;
    const refused = await ann.call('POST', path, { topic_name: 'old news' });
    assert.deepEqual([refused.status, refused.body.code], [400, 'UNAUTHORIZED_PRINCIPAL']);
    const done = await realm.owner.call('POST', path, { topic_name: 'old news' });
    assert.deepEqual([done.status, done.body.complete], [200, true]);
    const left = await ann.call('GET', '/messages', {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [
        { operator: 'channel', operand: realm.channelId },
        { operator: 'topic', operand: 'old news' },
      ],
    });
    assert.deepEqual(left.body.messages, []);
  });
});

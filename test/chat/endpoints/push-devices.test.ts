// Mobile push notifications, in process on both engines, with requests as Zulip's Python client
// sends them: the device token rules (Zulip's texts), idempotent registration, removal, the bound
// on a user's devices, the test notification's refusal when no push service is configured, and,
// with --push-url naming a local fake of the push notification service's HTTP API (node:http),
// what arrives there (register, unregister, test_notification: path, credentials, fields) and how
// its refusals and failures come back to the client.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { pythonBase64Decodes } from '../../../src/chat/domain/push-devices.js';
import { parsePushUrl } from '../../../src/config/config.js';
import { BOUNDS } from '../../../src/chat/domain/bounds.js';

type Ev = Record<string, any>;

interface Arrived {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The push service's HTTP API as far as Keel uses it; a token names how it answers. */
async function fakeBouncer(): Promise<{ server: Server; url: string; arrived: Arrived[] }> {
  const arrived: Arrived[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      arrived.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      const token = req.headers['content-type']?.startsWith('application/json') ? JSON.parse(body).token : new URLSearchParams(body).get('token');
      const answer = (status: number, json: Record<string, unknown>) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (token === 'Ym91bmNlci11bmtub3du' && req.url!.endsWith('/test_notification'))
        return answer(400, { result: 'error', code: 'INVALID_REMOTE_PUSH_DEVICE_TOKEN', msg: 'Device not recognized by the push bouncer' });
      if (token === 'cmVmdXNlZA==') return answer(400, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid APNS token' });
      if (token === 'Ym9vbQ==') return answer(500, { result: 'error', msg: 'boom' });
      answer(200, { result: 'success', msg: '' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://org-id:org%20key@127.0.0.1:${port}/`, arrived };
}

describe('push tokens and the push service address', () => {
  it("accepts an APNs token exactly when Python's base64 decoding does", () => {
    // Each verdict is Python 3's base64.b64decode's (validate=False), which Zulip's check calls.
    const cases: [string, boolean][] = [
      ['apple-tokenbb', true],
      ['abc', false],
      ['a===', false],
      ['ab==', true],
      ['ab=c', false],
      ['abcd=', true],
      ['ab=', false],
      ['=abc', false],
      ['abc=d', true],
      ['  ab  cd ', true],
      ['ab==cd==', true],
      ['a', false],
      ['abcde', false],
      ['abcé', false],
    ];
    for (const [text, decodes] of cases) assert.equal(pythonBase64Decodes(text), decodes, text);
  });

  it('reads the organization id and key from --push-url', () => {
    assert.deepEqual(parsePushUrl('https://id:k%2Fey@push.example.com/base'), { url: 'https://push.example.com/base/', orgId: 'id', orgKey: 'k/ey' });
    for (const bad of ['push.example.com', 'https://push.example.com', 'ftp://a:b@push.example.com', 'https://a:b@push.example.com/?x=1']) assert.throws(() => parsePushUrl(bad), /--push-url/);
  });
});

await forEachEngine('chat push devices', (engine) => {
  let plain: InProcessRealm;
  let pushed: InProcessRealm;
  let bouncer: Awaited<ReturnType<typeof fakeBouncer>>;
  let alice: InProcessClient;
  let bob: InProcessClient, bobId: number;

  before(async () => {
    bouncer = await fakeBouncer();
    plain = await inProcessRealm(engine, { members: ['alice'] });
    pushed = await inProcessRealm(engine, { members: ['bob'], options: { args: ['--push-url', bouncer.url] } });
    alice = plain.members.alice.client;
    ({ client: bob, id: bobId } = pushed.members.bob);
  });
  after(async () => {
    await plain?.close();
    await pushed?.close();
    bouncer?.server.close();
  });

  async function refused(c: InProcessClient, method: string, path: string, params: Record<string, unknown>, msg: string, code = 'BAD_REQUEST', status = 400): Promise<void> {
    const r = await c.call(method, path, params);
    assert.deepEqual([r.status, r.body.code, r.body.msg], [status, code, msg], `${method} ${path} ${JSON.stringify(params).slice(0, 80)}`);
  }

  const devices = (realm: InProcessRealm, userId: number) =>
    realm.chat.ctx.chatDb.kysely.selectFrom('push_devices').select(['kind', 'token', 'ios_app_id']).where('user_id', '=', userId).orderBy('id').execute();

  it("checks tokens as Zulip does, with Zulip's texts", async () => {
    const apns = '/users/me/apns_device_token';
    const fcm = '/users/me/android_gcm_reg_id';
    await refused(alice, 'POST', apns, { token: '', appid: 'org.zulip.Zulip' }, 'Empty or invalid length token');
    await refused(alice, 'POST', apns, { token: 'a'.repeat(4097), appid: 'org.zulip.Zulip' }, 'Empty or invalid length token');
    await refused(alice, 'POST', apns, { token: 'abc', appid: 'org.zulip.Zulip' }, 'Invalid APNS token');
    await refused(alice, 'POST', apns, { token: 'apple-tokenbb' }, "Missing 'appid' argument", 'REQUEST_VARIABLE_MISSING');
    await refused(alice, 'POST', apns, { token: 'apple-tokenbb', appid: 'not an app' }, 'appid has invalid format');
    await refused(alice, 'POST', fcm, { token: '' }, 'Empty or invalid length token');
    await refused(alice, 'DELETE', apns, { token: '' }, 'Empty or invalid length token');
    await refused(alice, 'DELETE', apns, { token: 'abc' }, 'Invalid APNS token');
    await refused(alice, 'DELETE', apns, { token: 'apple-tokenbb' }, 'Token does not exist');
    await refused(alice, 'DELETE', fcm, { token: 'android-token' }, 'Token does not exist');
  });

  it('registers a device once however often it is added, and removes it', async () => {
    const aliceId = plain.members.alice.id;
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await ok(alice, 'POST', '/users/me/apns_device_token', { token: 'apple-tokenbb', appid: 'org.zulip.Zulip' }), { result: 'success', msg: '' });
      await ok(alice, 'POST', '/users/me/android_gcm_reg_id', { token: 'abc' });
    }
    assert.deepEqual(await devices(plain, aliceId), [
      { kind: 1, token: 'apple-tokenbb', ios_app_id: 'org.zulip.Zulip' },
      { kind: 2, token: 'abc', ios_app_id: null },
    ]);
    // The kind matters: the FCM token is not an APNs one.
    await refused(alice, 'DELETE', '/users/me/apns_device_token', { token: 'YWJj' }, 'Token does not exist');
    await ok(alice, 'DELETE', '/users/me/apns_device_token', { token: 'apple-tokenbb' });
    await refused(alice, 'DELETE', '/users/me/apns_device_token', { token: 'apple-tokenbb' }, 'Token does not exist');
    assert.deepEqual(await devices(plain, aliceId), [{ kind: 2, token: 'abc', ios_app_id: null }]);
  });

  it("bounds a user's devices", async () => {
    const aliceId = plain.members.alice.id;
    const have = (await devices(plain, aliceId)).length;
    for (let i = have; i < BOUNDS.pushDevicesPerUser; i++) await ok(alice, 'POST', '/users/me/android_gcm_reg_id', { token: `device-${i}` });
    await refused(alice, 'POST', '/users/me/android_gcm_reg_id', { token: 'one-too-many' }, `Limit reached: a user can have at most ${BOUNDS.pushDevicesPerUser} push devices.`);
    // Adding one already there is no new device.
    await ok(alice, 'POST', '/users/me/android_gcm_reg_id', { token: 'abc' });
  });

  it('refuses a test notification plainly when no push service is configured', async () => {
    await refused(alice, 'POST', '/mobile_push/test_notification', {}, 'Push notifications are not configured on this server.');
    assert.equal((await ok(alice, 'GET', '/server_settings')).push_notifications_enabled, false);
    assert.equal((await ok(alice, 'POST', '/register', { fetch_event_types: ['realm'] })).realm_push_notifications_enabled, false);
  });

  it('registers and unregisters devices with the push service, with its credentials', async () => {
    bouncer.arrived.length = 0;
    await ok(bob, 'POST', '/users/me/apns_device_token', { token: 'c2VjcmV0', appid: 'org.zulip.Zulip' });
    await ok(bob, 'POST', '/users/me/android_gcm_reg_id', { token: 'fcm-token' });
    await ok(bob, 'DELETE', '/users/me/android_gcm_reg_id', { token: 'fcm-token' });
    // A token only the push service may know is still removed there (Zulip's rule with a bouncer).
    await ok(bob, 'DELETE', '/users/me/android_gcm_reg_id', { token: 'never-here' });
    assert.deepEqual(
      bouncer.arrived.map((a) => [a.method, a.path]),
      [
        ['POST', '/api/v1/remotes/push/register'],
        ['POST', '/api/v1/remotes/push/register'],
        ['POST', '/api/v1/remotes/push/unregister'],
        ['POST', '/api/v1/remotes/push/unregister'],
      ],
    );
    for (const a of bouncer.arrived) {
      assert.equal(a.headers.authorization, `Basic ${Buffer.from('org-id:org key').toString('base64')}`);
      assert.match(a.headers['user-agent']!, /^ZulipServer\//);
      assert.equal(a.headers['content-type'], 'application/x-www-form-urlencoded');
    }
    const [apns, fcm, unregister] = bouncer.arrived.map((a) => Object.fromEntries(new URLSearchParams(a.body)));
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    assert.match(apns.user_uuid, uuid);
    assert.match(apns.realm_uuid, uuid);
    assert.deepEqual(apns, {
      server_uuid: 'org-id',
      user_uuid: apns.user_uuid,
      realm_uuid: apns.realm_uuid,
      user_id: String(bobId),
      token: 'c2VjcmV0',
      token_kind: '1',
      ios_app_id: 'org.zulip.Zulip',
    });
    assert.deepEqual(fcm, { server_uuid: 'org-id', user_uuid: apns.user_uuid, realm_uuid: apns.realm_uuid, user_id: String(bobId), token: 'fcm-token', token_kind: '2' });
    assert.deepEqual(unregister, { server_uuid: 'org-id', realm_uuid: apns.realm_uuid, user_uuid: apns.user_uuid, user_id: String(bobId), token: 'fcm-token', token_kind: '2' });
    assert.deepEqual(await devices(pushed, bobId), [{ kind: 1, token: 'c2VjcmV0', ios_app_id: 'org.zulip.Zulip' }]);
    assert.equal((await ok(bob, 'GET', '/server_settings')).push_notifications_enabled, true);
    assert.equal((await ok(bob, 'POST', '/register', { fetch_event_types: ['realm'] })).realm_push_notifications_enabled, true);
  });

  it('sends a test notification to one device or to all, through the push service', async () => {
    await ok(bob, 'POST', '/users/me/android_gcm_reg_id', { token: 'fcm-two' });
    bouncer.arrived.length = 0;
    await ok(bob, 'POST', '/mobile_push/test_notification', {});
    await ok(bob, 'POST', '/mobile_push/test_notification', { token: 'fcm-two' });
    assert.deepEqual(
      bouncer.arrived.map((a) => [a.path, a.headers['content-type'], JSON.parse(a.body).token]),
      [
        ['/api/v1/remotes/push/test_notification', 'application/json', 'c2VjcmV0'],
        ['/api/v1/remotes/push/test_notification', 'application/json', 'fcm-two'],
        ['/api/v1/remotes/push/test_notification', 'application/json', 'fcm-two'],
      ],
    );
    const body = JSON.parse(bouncer.arrived[0].body) as Ev;
    assert.deepEqual(Object.keys(body).sort(), ['base_payload', 'realm_uuid', 'token', 'token_kind', 'user_id', 'user_uuid']);
    assert.deepEqual([body.user_id, body.token_kind], [bobId, 1]);
    assert.deepEqual(body.base_payload, {
      server: 'chat.keel.test',
      realm_id: body.base_payload.realm_id,
      realm_name: body.base_payload.realm_name,
      realm_uri: 'http://chat.keel.test',
      realm_url: 'http://chat.keel.test',
      user_id: bobId,
    });
    await refused(bob, 'POST', '/mobile_push/test_notification', { token: 'not-mine' }, 'Device not recognized', 'INVALID_PUSH_DEVICE_TOKEN');
  });

  it("passes on the push service's refusals, and answers 502 when it fails", async () => {
    await ok(bob, 'POST', '/users/me/android_gcm_reg_id', { token: 'Ym91bmNlci11bmtub3du' });
    await refused(bob, 'POST', '/mobile_push/test_notification', { token: 'Ym91bmNlci11bmtub3du' }, 'Device not recognized by the push bouncer', 'INVALID_REMOTE_PUSH_DEVICE_TOKEN');
    await refused(bob, 'POST', '/users/me/apns_device_token', { token: 'cmVmdXNlZA==', appid: 'org.zulip.Zulip' }, 'Invalid APNS token');
    await refused(bob, 'POST', '/users/me/apns_device_token', { token: 'Ym9vbQ==', appid: 'org.zulip.Zulip' }, 'Received 500 from push notification bouncer', 'BAD_REQUEST', 502);
    await new Promise<void>((resolve) => bouncer.server.close(() => resolve()));
    bouncer.server.closeAllConnections();
    await refused(bob, 'POST', '/mobile_push/test_notification', { token: 'fcm-two' }, 'ConnectionError while trying to connect to push notification bouncer', 'BAD_REQUEST', 502);
  });
});

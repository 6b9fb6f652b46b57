// BigBlueButton call links (GET /calls/bigbluebutton/create) and the development login (POST
// /dev_fetch_api_key), in process on both engines: each refused with Zulip's text when not
// configured, and with --bigbluebutton-url/--bigbluebutton-secret and --dev-mode on, the signed
// join link and the API key (the server having warned loudly as it started). Also: bots may not
// register push devices (Zulip's human_users_only). Requests are sent as Zulip's Python client sends
// them; every 2xx answer is checked against Zulip's OpenAPI description.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { encodeParams } from '../../helpers/chat-client.js';
import { checkChatResponse } from '../../helpers/zulip-openapi.js';
import { createLogger } from '../../../src/platform/log.js';
import { createMeetingUrl, joinMeetingUrl, unsignMeeting } from '../../../src/chat/domain/video-calls.js';
import { parseBigBlueButton } from '../../../src/config/config.js';

const BBB = { url: 'https://bbb.example.com/bigbluebutton/', secret: 's3cret' };

describe('BigBlueButton API calls', () => {
  // The expected URLs are what Zulip's join_bigbluebutton computes (Python's urlencode with
  // quote_via=quote, SHA-256 of call name, query and secret), run in Python for these values.
  const meeting = { meeting_id: 'zulip-123456789012', name: 'Garden / café meeting', lock_settings_disable_cam: true, moderator: 7 };
  it("makes the meeting's create call with Zulip's checksum", () => {
    assert.equal(
      createMeetingUrl(BBB.url, BBB.secret, meeting),
      'https://bbb.example.com/bigbluebutton/api/create?meetingID=zulip-123456789012&name=Garden%20%2F%20caf%C3%A9%20meeting&lockSettingsDisableCam=True&checksum=fe06dda10e5ea82dc28a5d7d2792c77cfd2000ad1b875248d8ebcd10f8bfa00e',
    );
  });
  it("makes the join call with Zulip's checksum, moderator only for the creator", () => {
    assert.equal(
      joinMeetingUrl(BBB.url, BBB.secret, meeting, { id: 8, fullName: "Bob O'Neil" }, '1700000000000'),
      'https://bbb.example.com/bigbluebutton/api/join?meetingID=zulip-123456789012&role=VIEWER&fullName=Bob%20O%27Neil&createTime=1700000000000&checksum=9551597e61c6b5abddf4cb1f8f2a925bfcc06b6fe1ae39f05350b795542d4882',
    );
    assert.match(joinMeetingUrl(BBB.url, BBB.secret, meeting, { id: 7, fullName: 'Ann' }, '1'), /role=MODERATOR/);
  });
  it('wants both options or neither', () => {
    assert.equal(parseBigBlueButton(undefined, undefined), undefined);
    assert.deepEqual(parseBigBlueButton('https://bbb.example.com/bigbluebutton', 'x'), { url: 'https://bbb.example.com/bigbluebutton/', secret: 'x' });
    assert.throws(() => parseBigBlueButton('https://bbb.example.com/', undefined), /go together/);
    assert.throws(() => parseBigBlueButton('bbb.example.com', 'x'), /--bigbluebutton-url/);
  });
});

await forEachEngine('chat video calls and development login', (engine) => {
  let plain: InProcessRealm;
  let dev: InProcessRealm;
  const warnings: string[] = [];

  before(async () => {
    plain = await inProcessRealm(engine, { members: ['alice'] });
    const log = createLogger('warn', (line) => warnings.push(JSON.parse(line).msg));
    dev = await inProcessRealm(engine, {
      members: ['bob', 'carol'],
      options: { log, args: ['--bigbluebutton-url', BBB.url, '--bigbluebutton-secret', BBB.secret, '--dev-mode', 'on'] },
    });
  });
  after(async () => {
    await plain?.close();
    await dev?.close();
  });

  async function devFetch(realm: InProcessRealm, username: string) {
    const res = await realm.chat.app.inject({
      method: 'POST',
      url: '/api/v1/dev_fetch_api_key',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeParams({ username }).toString(),
    });
    const body = JSON.parse(res.body) as Record<string, any>;
    checkChatResponse('POST', '/api/v1/dev_fetch_api_key', res.statusCode, body);
    return { status: res.statusCode, body };
  }

  async function refused(c: InProcessClient, method: string, path: string, params: Record<string, unknown>, msg: string): Promise<void> {
    const r = await c.call(method, path, params);
    assert.deepEqual([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', msg]);
  }

  it("refuses both when the server is not configured for them, with Zulip's texts", async () => {
    const alice = plain.members.alice.client;
    await refused(alice, 'GET', '/calls/bigbluebutton/create', { meeting_name: 'standup' }, 'BigBlueButton is not configured.');
    const r = await devFetch(plain, alice.email);
    assert.deepEqual([r.status, r.body.code, r.body.msg], [400, 'BAD_REQUEST', 'Endpoint not available in production.']);
    assert.equal((await ok(alice, 'GET', '/server_settings')).authentication_methods.dev, false);
  });

  it('hands out a signed join link, the creator its moderator', async () => {
    const bob = dev.members.bob;
    const answer = await ok(bob.client, 'GET', '/calls/bigbluebutton/create', { meeting_name: 'garden meeting', voice_only: true });
    const m = /^\/calls\/bigbluebutton\/join\?bigbluebutton=([A-Za-z0-9_-]+:[A-Za-z0-9_-]+)$/.exec(answer.url);
    assert.ok(m, answer.url);
    const meeting = unsignMeeting(BBB.secret, m[1])!;
    assert.match(meeting.meeting_id, /^zulip-\d{12}$/);
    assert.deepEqual({ ...meeting, meeting_id: '' }, { meeting_id: '', name: 'garden meeting', lock_settings_disable_cam: true, moderator: bob.id });
    // Changed details, or another secret, do not verify.
    const [payload, signature] = m[1].split(':');
    const forged = Buffer.from(JSON.stringify({ ...meeting, moderator: 1 })).toString('base64url');
    assert.equal(unsignMeeting(BBB.secret, `${forged}:${signature}`), undefined);
    assert.equal(unsignMeeting('other', m[1]), undefined);
    assert.equal(unsignMeeting(BBB.secret, payload), undefined);
    const plainCall = await ok(bob.client, 'GET', '/calls/bigbluebutton/create', { meeting_name: 'x' });
    assert.equal(unsignMeeting(BBB.secret, plainCall.url.split('=')[1])!.lock_settings_disable_cam, false, 'voice_only is false unless asked');
  });

  it('gives any user their API key without a password in development mode, and says so loudly at start', async () => {
    assert.ok(
      warnings.some((w) => /DEVELOPMENT MODE IS ON/.test(w)),
      JSON.stringify(warnings),
    );
    const bob = dev.members.bob;
    const r = await devFetch(dev, bob.client.email);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { result: 'success', msg: '', api_key: bob.client.apiKey, email: bob.client.email, user_id: bob.id });
    assert.equal((await ok(dev.chat.client(r.body.email, r.body.api_key), 'GET', '/users/me')).user_id, bob.id);
    assert.equal((await ok(bob.client, 'GET', '/server_settings')).authentication_methods.dev, true);

    const nobody = await devFetch(dev, 'nobody@example.com');
    assert.deepEqual([nobody.status, nobody.body.code], [401, 'AUTHENTICATION_FAILED']);
    const notEmail = await devFetch(dev, 'not an address');
    assert.deepEqual([notEmail.status, notEmail.body.msg], [400, 'Enter a valid email address.']);
    const carol = dev.members.carol;
    await ok(dev.owner, 'DELETE', `/users/${carol.id}`);
    const gone = await devFetch(dev, carol.client.email);
    assert.deepEqual([gone.status, gone.body.code], [401, 'USER_DEACTIVATED']);
  });

  it('keeps bots from registering push devices', async () => {
    const made = await ok(dev.owner, 'POST', '/bots', { full_name: 'Helper', short_name: 'helper' });
    const info = await ok(dev.owner, 'GET', `/users/${made.user_id}`);
    const bot = dev.chat.client(info.user.email, made.api_key);
    await refused(bot, 'POST', '/users/me/android_gcm_reg_id', { token: 'x' }, 'This endpoint does not accept bot requests.');
    await refused(bot, 'POST', '/mobile_push/test_notification', {}, 'This endpoint does not accept bot requests.');
  });
});

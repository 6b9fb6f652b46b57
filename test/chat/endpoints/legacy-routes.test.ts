// Black-box: routes Zulip 10.2 still serves that real clients call, driven as the Python client
// sends them (form-encoded, non-string values JSON-encoded, HTTP Basic auth; helpers/chat-client.ts):
// PATCH /settings/notifications and /settings/display (aliases of PATCH /settings), PATCH
// /users/me/subscriptions/{stream_id} (one subscription property), PATCH /users/me/subscriptions
// (add and delete at once); and Zulip's answers for a login name that is no email address, for
// reactivating an active user and for POST /drafts without `drafts`.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { ChatClient } from '../../helpers/chat-client.js';

forEachEngine('legacy routes and answers real clients still meet', (engine) => {
  let realm: ServedRealm;
  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'bea', ['gus', 600]], channel: { name: 'lounge', subscribers: ['owner', 'ann'] } });
  });
  after(() => realm.stop());

  const settingsOf = async (client: ChatClient) => {
    const r = await client.post('/register', { fetch_event_types: ['user_settings'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.user_settings as Record<string, unknown>;
  };
  const subscriptionOf = async (client: ChatClient, streamId: number) => {
    const r = await client.get('/users/me/subscriptions');
    return (r.body.subscriptions as Record<string, unknown>[]).find((s) => s.stream_id === streamId);
  };

  it('PATCH /settings/notifications changes a setting as PATCH /settings does (the Python client update_notification_settings)', async () => {
    const ann = realm.members.ann.client;
    const r = await ann.call('PATCH', '/settings/notifications', { enable_desktop_notifications: false });
    assert.deepEqual([r.status, r.body.result], [200, 'success'], JSON.stringify(r.body));
    assert.equal((await settingsOf(ann)).enable_desktop_notifications, false);
    // The same request answers the same at both addresses, errors included, and a bad value changes nothing.
    const bad = { enable_desktop_notifications: true, emojiset: 'no-such-set' };
    const viaAlias = await ann.call('PATCH', '/settings/notifications', bad);
    const viaSettings = await ann.call('PATCH', '/settings', bad);
    assert.equal(viaAlias.status, 400);
    assert.deepEqual(viaAlias.body, viaSettings.body);
    assert.equal((await settingsOf(ann)).enable_desktop_notifications, false, 'nothing changed');
  });

  it('PATCH /settings/display changes a setting as PATCH /settings does', async () => {
    const ann = realm.members.ann.client;
    const r = await ann.call('PATCH', '/settings/display', { twenty_four_hour_time: true, full_name: 'Ann Display' });
    assert.deepEqual([r.status, r.body.result], [200, 'success'], JSON.stringify(r.body));
    assert.equal((await settingsOf(ann)).twenty_four_hour_time, true);
    assert.equal((await ann.get('/users/me')).body.full_name, 'Ann Display');
  });

  it('PATCH /users/me/subscriptions/{stream_id} sets one subscription property', async () => {
    const ann = realm.members.ann.client;
    const id = realm.channelId;
    const pin = await ann.call('PATCH', `/users/me/subscriptions/${id}`, { property: 'pin_to_top', value: true });
    assert.deepEqual([pin.status, pin.body.result], [200, 'success'], JSON.stringify(pin.body));
    // A color is sent as its text, as a string is by the Python client.
    const color = await ann.call('PATCH', `/users/me/subscriptions/${id}`, { property: 'color', value: '#AABBCC' });
    assert.equal(color.status, 200, JSON.stringify(color.body));
    const sub = await subscriptionOf(ann, id);
    assert.deepEqual([sub?.pin_to_top, sub?.color], [true, '#aabbcc']);
    const unknown = await ann.call('PATCH', `/users/me/subscriptions/${id}`, { property: 'bogus', value: true });
    assert.deepEqual([unknown.status, unknown.body.msg], [400, 'Unknown subscription property: bogus']);
    const notBool = await ann.call('PATCH', `/users/me/subscriptions/${id}`, { property: 'pin_to_top', value: 'sometimes' });
    assert.equal(notBool.status, 400);
    assert.equal((await subscriptionOf(ann, id))?.pin_to_top, true, 'nothing changed');
    const bea = realm.members.bea.client;
    const notSubscribed = await bea.call('PATCH', `/users/me/subscriptions/${id}`, { property: 'pin_to_top', value: true });
    assert.deepEqual([notSubscribed.status, notSubscribed.body.msg], [400, `Not subscribed to channel ID ${id}`]);
  });

  it('PATCH /users/me/subscriptions subscribes and unsubscribes in one request', async () => {
    const bea = realm.members.bea.client;
    const nothing = await bea.call('PATCH', '/users/me/subscriptions', {});
    assert.deepEqual([nothing.status, nothing.body.msg], [400, 'Nothing to do. Specify at least one of "add" or "delete".']);
    const joined = await bea.call('PATCH', '/users/me/subscriptions', { add: [{ name: 'lounge' }, { name: 'garden', color: '#123456', description: 'Plants' }] });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.deepEqual(Object.values(joined.body.subscribed).flat().sort(), ['garden', 'lounge']);
    assert.deepEqual([joined.body.removed, joined.body.not_removed], [[], []]);
    const garden = (await bea.get('/get_stream_id', { stream: 'garden' })).body.stream_id as number;
    const sub = await subscriptionOf(bea, garden);
    assert.deepEqual([sub?.color, sub?.description], ['#123456', 'Plants']);

    // One name to leave is unknown: the whole request is refused, nothing subscribed.
    const unknown = await bea.call('PATCH', '/users/me/subscriptions', { add: [{ name: 'attic' }], delete: ['lounge', 'no-such-place'] });
    assert.deepEqual([unknown.status, unknown.body.msg], [400, 'Channel(s) (no-such-place) do not exist']);
    assert.equal((await bea.get('/get_stream_id', { stream: 'attic' })).status, 400, 'attic was not created');
    const badColor = await bea.call('PATCH', '/users/me/subscriptions', { add: [{ name: 'attic', color: 'red' }] });
    assert.deepEqual([badColor.status, badColor.body.msg], [400, 'add.color is not a valid hex color code']);

    // A guest is refused, even with only channels to leave (Zulip runs its add view, which refuses guests, either way).
    const gus = realm.members.gus.client;
    for (const params of [{ delete: ['lounge'] }, { add: [{ name: 'lounge' }] }]) {
      const r = await gus.call('PATCH', '/users/me/subscriptions', params);
      assert.deepEqual([r.status, r.body.msg], [400, 'Not allowed for guest users'], JSON.stringify(params));
    }

    const both = await bea.call('PATCH', '/users/me/subscriptions', { add: [{ name: 'garden' }], delete: ['lounge'] });
    assert.equal(both.status, 200, JSON.stringify(both.body));
    assert.deepEqual(Object.values(both.body.already_subscribed).flat(), ['garden']);
    assert.deepEqual([both.body.removed, both.body.not_removed], [['lounge'], []]);
    assert.equal(await subscriptionOf(bea, realm.channelId), undefined);
    const again = await bea.call('PATCH', '/users/me/subscriptions', { delete: ['lounge'] });
    assert.deepEqual([again.status, again.body.removed, again.body.not_removed, again.body.subscribed], [200, [], ['lounge'], {}]);
  });

  it('POST /fetch_api_key with a username that is no email address is 400 "Enter a valid email address."', async () => {
    const anon = new ChatClient(realm.server.chatUrl, '', '');
    for (const username of ['ann', 'ann@', ' ann@example.com', 'ann@example']) {
      const r = await anon.call('POST', '/fetch_api_key', { username, password: 'whatever' }, null);
      assert.deepEqual([r.status, r.body.result, r.body.code, r.body.msg], [400, 'error', 'BAD_REQUEST', 'Enter a valid email address.'], username);
    }
    // An address with no account is still the usual failure.
    const nobody = await anon.call('POST', '/fetch_api_key', { username: 'nobody@example.com', password: 'whatever' }, null);
    assert.equal(nobody.status, 401);
  });

  it('POST /users/{id}/reactivate on an active user succeeds and changes nothing', async () => {
    const annId = realm.members.ann.id;
    const r = await realm.owner.post(`/users/${annId}/reactivate`);
    assert.deepEqual([r.status, r.body.result], [200, 'success'], JSON.stringify(r.body));
    assert.equal((await realm.owner.get(`/users/${annId}`)).body.user.is_active, true);
    assert.equal((await realm.members.ann.client.get('/users/me')).status, 200);
  });

  it('POST /drafts without drafts is REQUEST_VARIABLE_MISSING', async () => {
    const r = await realm.members.ann.client.post('/drafts', {});
    assert.deepEqual([r.status, r.body.code, r.body.msg, r.body.var_name], [400, 'REQUEST_VARIABLE_MISSING', "Missing 'drafts' argument", 'drafts']);
  });
});

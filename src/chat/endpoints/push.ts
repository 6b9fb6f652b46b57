// Mobile push notifications: registering and removing a device's APNs or FCM token, and a test
// notification through the push notification service (--push-url). Human users only, as in Zulip.
// A device is stored first, then registered with the push service when there is one (Zulip's order).
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { botsNotAccepted, paramBadFormat, pushDeviceUnknown, pushNotConfigured, pushTokenMissing } from '../errors.js';
import type { ChatUser } from '../tables.js';
import { PUSH_KIND } from '../push.js';
import { addPushDevice, checkToken, pushBasePayload, pushDevicesOf, pushIdentity, removePushDevice } from '../domain/push-devices.js';
import { unixSeconds } from '../../platform/clock.js';

/** Zulip's ApnsAppId: a bundle id of letters, digits, dots and dashes. */
const APP_ID = /^[.a-zA-Z0-9-]+$/;

function human(call: ChatCall): ChatUser {
  const me = requireUser(call);
  if (me.is_bot === 1) throw botsNotAccepted();
  return me;
}

async function addDevice(call: ChatCall, kind: number, token: string, iosAppId: string | null): Promise<Record<string, never>> {
  const me = human(call);
  checkToken(token, kind);
  const { db, clock, push } = call.services;
  const device = { kind, token, iosAppId };
  await db.transaction((trx) => addPushDevice(trx, me.id, device, unixSeconds(clock)));
  if (push) await push.register(pushIdentity(call.services.realmUrl(call.realm), me), device);
  return {};
}

async function removeDevice(call: ChatCall, kind: number, token: string): Promise<Record<string, never>> {
  const me = human(call);
  checkToken(token, kind);
  const { db, push } = call.services;
  const removed = await removePushDevice(db.kysely, me.id, kind, token);
  // With a push service, a device only it knew is still removed there (Zulip's transition rule).
  if (!removed && !push) throw pushTokenMissing();
  if (push) await push.unregister(pushIdentity(call.services.realmUrl(call.realm), me), { kind, token });
  return {};
}

export const addApnsToken = defineEndpoint({
  method: 'POST',
  path: '/users/me/apns_device_token',
  summary: 'Add an APNs device token',
  auth: 'user',
  params: Type.Object({ token: Type.String(), appid: Type.String() }),
  async handler(call, p) {
    human(call);
    if (!APP_ID.test(p.appid)) throw paramBadFormat({ name: 'appid', var_name: 'appid' });
    return addDevice(call, PUSH_KIND.apns, p.token, p.appid);
  },
});

export const removeApnsToken = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/apns_device_token',
  summary: 'Remove an APNs device token',
  auth: 'user',
  params: Type.Object({ token: Type.String() }),
  handler: (call, p) => removeDevice(call, PUSH_KIND.apns, p.token),
});

export const addFcmToken = defineEndpoint({
  method: 'POST',
  path: '/users/me/android_gcm_reg_id',
  summary: 'Add an FCM registration token',
  auth: 'user',
  params: Type.Object({ token: Type.String() }),
  handler: (call, p) => addDevice(call, PUSH_KIND.fcm, p.token, null),
});

export const removeFcmToken = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/android_gcm_reg_id',
  summary: 'Remove an FCM registration token',
  auth: 'user',
  params: Type.Object({ token: Type.String() }),
  handler: (call, p) => removeDevice(call, PUSH_KIND.fcm, p.token),
});

/**
 * A test notification to one of the user's devices (by token) or to all of them, through the push
 * service. Without one Keel refuses plainly (Zulip logs and answers success, having sent nothing).
 */
export const sendTestNotification = defineEndpoint({
  method: 'POST',
  path: '/mobile_push/test_notification',
  summary: 'Send a test notification to mobile device(s)',
  auth: 'user',
  params: Type.Object({ token: Type.Optional(Type.String()) }),
  async handler(call, p) {
    const me = human(call);
    const { db, push } = call.services;
    if (!push) throw pushNotConfigured();
    const devices = await pushDevicesOf(db.kysely, me.id, p.token);
    if (p.token !== undefined && !devices.length) throw pushDeviceUnknown();
    const realmUrl = call.services.realmUrl(call.realm);
    const who = pushIdentity(realmUrl, me);
    const payload = pushBasePayload(call.realm, realmUrl, me);
    for (const device of devices) await push.testNotification(who, device, payload);
    return {};
  },
});

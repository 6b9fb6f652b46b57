// The devices a user registered for push notifications (Zulip's PushDeviceToken): the token rules
// of zerver/views/push_notifications.py, idempotent registration, removal, and who the user and
// realm are to the push notification service.
import { createHash } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';
import { apnsTokenInvalid, pushTokenInvalidLength } from '../errors.js';
import { PUSH_KIND, type PushDevice, type PushIdentity } from '../push.js';
import { checkRoom } from './bounds.js';

/** Zulip's limit on a token's length (characters). */
export const MAX_TOKEN_LENGTH = 4096;

/**
 * Whether Python's base64.b64decode (not strict) accepts the text, as Zulip's check of an APNs token
 * does: characters outside the alphabet are skipped, a complete padded quad ends the input, and
 * what is left must make whole quads. Non-ASCII text is refused (Python refuses it too).
 */
export function pythonBase64Decodes(text: string): boolean {
  let quad = 0;
  let pads = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code > 0x7f) return false;
    if (ch === '=') {
      if (quad >= 2 && quad + ++pads >= 4) return true;
      continue;
    }
    if (!/[A-Za-z0-9+/]/.test(ch)) continue;
    pads = 0;
    quad = (quad + 1) & 3;
  }
  return quad === 0;
}

/** Zulip's validate_token: the length first, then (APNs) that the token decodes. */
export function checkToken(token: string, kind: number): void {
  if (token === '' || token.length > MAX_TOKEN_LENGTH) throw pushTokenInvalidLength();
  if (kind === PUSH_KIND.apns && !pythonBase64Decodes(token)) throw apnsTokenInvalid();
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Registers a device; one already registered stays as it is (Zulip's ignore_conflicts). */
export async function addPushDevice(db: Queryable<ChatTables>, userId: number, device: PushDevice, nowSeconds: number): Promise<void> {
  const tokenHash = hashOf(device.token);
  const had = await db.selectFrom('push_devices').select('id').where('user_id', '=', userId).where('kind', '=', device.kind).where('token_hash', '=', tokenHash).executeTakeFirst();
  if (had) return;
  await checkRoom(db, 'pushDevicesPerUser', userId, 1);
  await db
    .insertInto('push_devices')
    .values({ user_id: userId, kind: device.kind, token: device.token, token_hash: tokenHash, ios_app_id: device.iosAppId, last_updated: nowSeconds })
    .onConflict((oc) => oc.columns(['user_id', 'kind', 'token_hash']).doNothing())
    .execute();
}

/** Removes the user's device of this kind and token; false when there was none. */
export async function removePushDevice(db: Queryable<ChatTables>, userId: number, kind: number, token: string): Promise<boolean> {
  const res = await db.deleteFrom('push_devices').where('user_id', '=', userId).where('kind', '=', kind).where('token_hash', '=', hashOf(token)).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** The user's devices, oldest first; with a token, only those holding it (any kind). */
export async function pushDevicesOf(db: Queryable<ChatTables>, userId: number, token?: string): Promise<PushDevice[]> {
  let q = db.selectFrom('push_devices').select(['kind', 'token', 'ios_app_id']).where('user_id', '=', userId);
  if (token !== undefined) q = q.where('token_hash', '=', hashOf(token));
  const rows = await q.orderBy('id').execute();
  return rows.map((r) => ({ kind: Number(r.kind), token: r.token, iosAppId: r.ios_app_id }));
}

/** A stable UUID (version 4 layout) named by the text: Keel keeps no UUIDs, the push service wants them. */
function uuidFrom(text: string): string {
  const h = createHash('sha256').update(text).digest();
  h[6] = (h[6] & 0x0f) | 0x40;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Who the user and realm are to the push service: the same on every call, named by the realm URL. */
export function pushIdentity(realmUrl: string, user: ChatUser): PushIdentity {
  return { userId: user.id, realmUuid: uuidFrom(`keel realm ${realmUrl}`), userUuid: uuidFrom(`keel user ${realmUrl} ${user.id}`) };
}

/** Zulip's get_base_payload: what every notification says of the server, the realm and the user. */
export function pushBasePayload(realm: Realm, realmUrl: string, user: ChatUser): Record<string, unknown> {
  return { server: new URL(realmUrl).host, realm_id: realm.id, realm_name: realm.name, realm_uri: realmUrl, realm_url: realmUrl, user_id: user.id };
}

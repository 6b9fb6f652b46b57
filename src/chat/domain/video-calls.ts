// BigBlueButton video calls as Zulip 10.2 makes them (zerver/views/video_calls.py): creating a call
// hands out a join link whose details (meeting id, name, cameras off, who moderates) are signed, so
// a user cannot alter the link to enter another meeting on the same BigBlueButton server. Zulip
// signs with Django's Signer under its SECRET_KEY; Keel signs the same details the same way
// (base64url of the JSON, a colon, base64url of an HMAC-SHA256) under a key derived from the
// BigBlueButton secret, which only the server knows.
import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';

export interface BigBlueButtonMeeting {
  meeting_id: string;
  name: string;
  lock_settings_disable_cam: boolean;
  /** The user id of the creator, the only moderator. */
  moderator: number;
}

const signingKey = (secret: string) => createHmac('sha256', secret).update('keel bigbluebutton join link').digest();

/** A new meeting's id, as Zulip draws it: "zulip-" and twelve digits. */
export function newMeetingId(): string {
  return `zulip-${randomInt(100_000_000_000, 1_000_000_000_000)}`;
}

export function signMeeting(secret: string, meeting: BigBlueButtonMeeting): string {
  const payload = Buffer.from(JSON.stringify(meeting)).toString('base64url');
  const signature = createHmac('sha256', signingKey(secret)).update(payload).digest('base64url');
  return `${payload}:${signature}`;
}

/** The meeting a signed value carries; undefined when it was not signed under this secret. */
export function unsignMeeting(secret: string, signed: string): BigBlueButtonMeeting | undefined {
  const at = signed.lastIndexOf(':');
  if (at < 0) return undefined;
  const payload = signed.slice(0, at);
  const given = Buffer.from(signed.slice(at + 1), 'base64url');
  const expected = createHmac('sha256', signingKey(secret)).update(payload).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString()) as BigBlueButtonMeeting;
  } catch {
    return undefined;
  }
}

/** The link GET /calls/bigbluebutton/create answers with (relative to the realm). */
export function joinPath(signed: string): string {
  return `/calls/bigbluebutton/join?bigbluebutton=${signed}`;
}

/** Python's urlencode(..., quote_via=quote): keys and values percent-encoded but for letters, digits and _.-~, True/False as Python prints them. */
function pythonQuery(params: [string, string | number | boolean][]): string {
  const quote = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return params.map(([k, v]) => `${quote(k)}=${quote(typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v))}`).join('&');
}

/**
 * The BigBlueButton API call that makes the meeting (api/create), with its checksum as Zulip computes
 * it: SHA-256 of the call's name, its query and the shared secret. Opening the join link calls it,
 * then sends the user to api/join (joinMeetingUrl).
 */
export function createMeetingUrl(baseUrl: string, secret: string, m: BigBlueButtonMeeting): string {
  const query = pythonQuery([
    ['meetingID', m.meeting_id],
    ['name', m.name],
    ['lockSettingsDisableCam', m.lock_settings_disable_cam],
  ]);
  return `${baseUrl}api/create?${query}&checksum=${checksum('create', query, secret)}`;
}

/** Where a user joining goes: api/join as moderator (the creator) or viewer, with Zulip's checksum. */
export function joinMeetingUrl(baseUrl: string, secret: string, m: BigBlueButtonMeeting, user: { id: number; fullName: string }, createTime: string): string {
  const query = pythonQuery([
    ['meetingID', m.meeting_id],
    ['role', m.moderator === user.id ? 'MODERATOR' : 'VIEWER'],
    ['fullName', user.fullName],
    ['createTime', createTime],
  ]);
  return `${baseUrl}api/join?${query}&checksum=${checksum('join', query, secret)}`;
}

function checksum(call: string, query: string, secret: string): string {
  return createHash('sha256')
    .update(call + query + secret)
    .digest('hex');
}

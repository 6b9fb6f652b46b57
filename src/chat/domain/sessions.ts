// Browser sessions: what a logged-in browser holds, as Zulip's Django sessions. Logging in by the
// login page (/accounts/login/) or creating an account from an invitation makes one and sets its
// random token as the `sessionid` cookie (HttpOnly, SameSite=Lax, two weeks: Django's
// SESSION_COOKIE_AGE); only the token's SHA-256 is stored (migration 35). A session is a credential
// of the resumable upload endpoint (/api/v1/tus) and of the file paths (/user_uploads/...), never
// of /api/v1 generally (Zulip accepts it there only for its web app, with a CSRF token: issue 18).
// A session of a deactivated user or realm, of another realm than the one addressed, or past its
// end is no credential. A user keeps at most SESSIONS_PER_USER (a new login ends the oldest, as no refusal
// could help a browser: the bound is not in BOUNDS, which refuse);
// expired rows are swept whenever a session is made.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import { constantTimeEqual, sha256Hex } from '../../platform/auth/secrets.js';
import { readCookie, setCookie } from '../../platform/http/cookies.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';

export const SESSION_COOKIE = 'sessionid';
export const CSRF_COOKIE = 'csrftoken';
/** The hidden field of every form, as Django's. */
export const CSRF_FIELD = 'csrfmiddlewaretoken';
/** Django's SESSION_COOKIE_AGE: two weeks. */
export const SESSION_AGE_SECONDS = 14 * 24 * 3600;
/** Django's CSRF_COOKIE_AGE: a year. */
const CSRF_AGE_SECONDS = 52 * 7 * 24 * 3600;

/** How many sessions (browsers) one user keeps; Zulip sets no count. */
export const SESSIONS_PER_USER = 100;

/** The tokens Keel makes: 32 random bytes, base64url (43 characters). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const newToken = () => randomBytes(32).toString('base64url');

/** A new session of `user`; gives the Set-Cookie value that hands it to the browser. */
export async function createSession(db: Queryable<ChatTables>, user: ChatUser, nowMs: number, secure: boolean): Promise<string> {
  const token = newToken();
  // Expired sessions of anyone go first (the index on expires_at makes it a short read).
  await db.deleteFrom('chat_sessions').where('expires_at', '<=', nowMs).execute();
  await db
    .insertInto('chat_sessions')
    .values({ token_hash: sha256Hex(token), user_id: user.id, realm_id: user.realm_id, created_at: nowMs, expires_at: nowMs + SESSION_AGE_SECONDS * 1000 })
    .execute();
  // The user's oldest sessions past the bound end.
  const kept = await db
    .selectFrom('chat_sessions')
    .select('id')
    .where('user_id', '=', user.id)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(SESSIONS_PER_USER)
    .limit(1)
    .executeTakeFirst();
  if (kept) await db.deleteFrom('chat_sessions').where('user_id', '=', user.id).where('id', '<=', kept.id).execute();
  return setCookie(SESSION_COOKIE, token, { maxAge: SESSION_AGE_SECONDS, httpOnly: true, secure, sameSite: 'Lax', nowMs });
}

/** The session token a Cookie header carries, if it is one Keel could have made. */
function tokenOf(cookieHeader: string | undefined): string | undefined {
  const token = readCookie(cookieHeader, SESSION_COOKIE);
  return token !== undefined && TOKEN.test(token) ? token : undefined;
}

/**
 * The user whose session the Cookie header carries, at the realm addressed; undefined when there is
 * none, or it is unknown, expired, of another realm, or of a deactivated user or realm.
 */
export async function sessionUser(db: Queryable<ChatTables>, realm: Realm, cookieHeader: string | undefined, nowMs: number): Promise<ChatUser | undefined> {
  const token = tokenOf(cookieHeader);
  if (token === undefined || realm.deactivated === 1) return undefined;
  const session = await db.selectFrom('chat_sessions').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirst();
  if (!session || Number(session.expires_at) <= nowMs || Number(session.realm_id) !== realm.id) return undefined;
  const user = await db.selectFrom('chat_users').selectAll().where('id', '=', Number(session.user_id)).executeTakeFirst();
  if (!user || user.is_active !== 1 || user.realm_id !== realm.id) return undefined;
  return user;
}

/** Ends the session the Cookie header carries (if any); gives the Set-Cookie value that removes the cookie. */
export async function deleteSession(db: Queryable<ChatTables>, cookieHeader: string | undefined, nowMs: number, secure: boolean): Promise<string> {
  const token = tokenOf(cookieHeader);
  if (token !== undefined) await db.deleteFrom('chat_sessions').where('token_hash', '=', sha256Hex(token)).execute();
  return setCookie(SESSION_COOKIE, '', { maxAge: 0, httpOnly: true, secure, sameSite: 'Lax', nowMs });
}

/** The CSRF token the Cookie header carries (a form's double-submit check), if well formed. */
export function csrfCookie(cookieHeader: string | undefined): string | undefined {
  const token = readCookie(cookieHeader, CSRF_COOKIE);
  return token !== undefined && TOKEN.test(token) ? token : undefined;
}

/** A new CSRF token and the Set-Cookie value that gives it (readable by the page's scripts, as Django's). */
export function newCsrfToken(nowMs: number, secure: boolean): { token: string; cookie: string } {
  const token = newToken();
  return { token, cookie: setCookie(CSRF_COOKIE, token, { maxAge: CSRF_AGE_SECONDS, secure, sameSite: 'Lax', nowMs }) };
}

/** Whether a form's posted CSRF field matches the CSRF cookie (Django's double submit: a cross-site form cannot read the cookie). */
export function csrfMatches(cookieHeader: string | undefined, field: string | undefined): boolean {
  const cookie = csrfCookie(cookieHeader);
  return cookie !== undefined && field !== undefined && field.length === cookie.length && constantTimeEqual(cookie, field);
}

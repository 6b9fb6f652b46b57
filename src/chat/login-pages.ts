// The login and logout pages of a browser (Zulip's /accounts/login/ and /accounts/logout/): plain
// server-rendered HTML, every value escaped (pages.ts writes them). GET /accounts/login/ shows the
// form (email and password, the realm by Host); POST checks them exactly as POST /fetch_api_key does
// (domain/password-login.ts: the same rules and password budgets) and, when right, makes a session
// (domain/sessions.ts), sets its `sessionid` cookie and redirects (302) to `/`. A wrong email or
// password, a spent password budget or a deactivated account shows the form again with Zulip's
// message for it. POST /accounts/logout/ ends the session and
// removes its cookie. Both posts carry Django's double-submit CSRF token: the `csrftoken` cookie the
// form's GET set, repeated in the form's hidden `csrfmiddlewaretoken` field; a post without a match
// (a form on another site, which cannot read the cookie) is refused 403 and changes nothing.
import type { ChatServices } from './endpoint.js';
import type { Realm } from './tables.js';
import { ChatError } from './errors.js';
import { escapeHtml, page, type Page } from './pages.js';
import { passwordLogin } from './domain/password-login.js';
import { createSession, csrfCookie, CSRF_FIELD, csrfMatches, deleteSession, newCsrfToken, sessionUser } from './domain/sessions.js';

export const LOGIN_PATH = '/accounts/login/';
export const LOGOUT_PATH = '/accounts/logout/';

/** Which of the two pages a request path names (the trailing slash optional, the query ignored). */
export function loginRoute(url: string): 'login' | 'logout' | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path === LOGIN_PATH || path === '/accounts/login') return 'login';
  if (path === LOGOUT_PATH || path === '/accounts/logout') return 'logout';
  return undefined;
}

/** What the pages read of the request besides the form. */
export interface LoginRequest {
  method: string;
  /** The Cookie header. */
  cookie: string | undefined;
  /** The client's address (trusted proxies believed), for the password budgets. */
  ip: string;
  /** Whether it came over HTTPS (cookies are then Secure). */
  secure: boolean;
}

/** Zulip's text for a wrong email or password (Django's authentication form, as Zulip words it). */
export const WRONG_LOGIN = 'Please enter a correct email and password. Note that both fields may be case-sensitive.';
/** Zulip's text for the right password of a deactivated account (zerver/forms.py). */
const deactivatedAccount = (username: string) => `Your account ${username} has been deactivated. Please contact your organization administrator to reactivate it.`;
/** Zulip's text for a spent password budget, with the whole seconds to wait. */
const tooManyAttempts = (seconds: number) => `You're making too many attempts to sign in. Try again in ${seconds} seconds or contact your organization administrator for help.`;

/** What the form says for a refused login (Zulip's texts); a wrong, unknown or malformed address or password all read alike. */
function loginRefusal(err: ChatError, username: string): string {
  if (err.status === 429) return tooManyAttempts(Math.trunc(Number(err.extra['retry-after'] ?? 0)));
  if (err.code === 'USER_DEACTIVATED') return deactivatedAccount(username);
  if (err.code === 'REALM_DEACTIVATED') return err.message;
  return WRONG_LOGIN;
}

/** Django's refusal of a post without a matching CSRF token. */
export const CSRF_FAILED = 'CSRF verification failed. Request aborted.';

function redirect(location: string, cookies: string[]): Page {
  const p = page(302, 'Redirecting', `<p><a href="${escapeHtml(location)}">Continue</a></p>`);
  return { ...p, headers: { location, ...(cookies.length ? { 'set-cookie': cookies } : {}) } };
}

function formPage(status: number, realm: Realm, csrf: string, email: string, error: string | null, cookies: string[]): Page {
  const body = `<p>Log in to <strong>${escapeHtml(realm.name)}</strong>.</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>\n`}<form method="post" action="${LOGIN_PATH}">
<input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrf)}">
<label for="username">Email</label>
<input id="username" name="username" type="email" required maxlength="320" autocomplete="username" value="${escapeHtml(email)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="current-password">
<button type="submit">Log in</button>
</form>`;
  const p = page(status, `Log in to ${realm.name}`, body);
  return cookies.length ? { ...p, headers: { 'set-cookie': cookies } } : p;
}

/** The browser's CSRF token: the cookie it has, or a new one (and the Set-Cookie that gives it). */
function csrfFor(r: LoginRequest, nowMs: number): { token: string; cookies: string[] } {
  const had = csrfCookie(r.cookie);
  if (had !== undefined) return { token: had, cookies: [] };
  const made = newCsrfToken(nowMs, r.secure);
  return { token: made.token, cookies: [made.cookie] };
}

function csrfRefused(): Page {
  return page(403, 'Forbidden', `<p>${escapeHtml(CSRF_FAILED)}</p>\n<p><a href="${LOGIN_PATH}">Reload the login page</a> and try again.</p>`);
}

function methodRefused(allowed: string): Page {
  const p = page(405, 'Method not allowed', '<p>This page does not answer that method.</p>');
  return { ...p, headers: { allow: allowed } };
}

/** GET (or HEAD) and POST /accounts/login/. Throws only what is not about the login (the caller renders it). */
export async function loginPage(services: ChatServices, realm: Realm, r: LoginRequest, fields: Record<string, string>): Promise<Page> {
  const { db, clock } = services;
  const nowMs = clock.now();
  if (r.method === 'GET' || r.method === 'HEAD') {
    // Logged in already: on to the app, as Zulip's login page does.
    if (await sessionUser(db.kysely, realm, r.cookie, nowMs)) return redirect('/', []);
    const csrf = csrfFor(r, nowMs);
    return formPage(200, realm, csrf.token, '', null, csrf.cookies);
  }
  if (r.method !== 'POST') return methodRefused('GET, HEAD, POST');
  if (!csrfMatches(r.cookie, fields[CSRF_FIELD])) return csrfRefused();
  const email = (fields.username ?? '').trim();
  const csrf = csrfFor(r, nowMs);
  let user;
  try {
    user = await passwordLogin(services, realm, email, fields.password ?? '', r.ip);
  } catch (err) {
    if (!(err instanceof ChatError)) throw err;
    // Every refusal is the form again with its reason (200, as Django's form answers), no session.
    return formPage(200, realm, csrf.token, email, loginRefusal(err, email), csrf.cookies);
  }
  const session = await createSession(db.kysely, user, nowMs, r.secure);
  // A new CSRF token with the new session, as Django rotates it at login.
  const rotated = newCsrfToken(nowMs, r.secure);
  return redirect('/', [session, rotated.cookie]);
}

/** POST /accounts/logout/: ends the session and removes its cookie, then on to the login page. */
export async function logoutPage(services: ChatServices, r: LoginRequest, fields: Record<string, string>): Promise<Page> {
  if (r.method !== 'POST') return methodRefused('POST');
  if (!csrfMatches(r.cookie, fields[CSRF_FIELD])) return csrfRefused();
  const cleared = await deleteSession(services.db.kysely, r.cookie, services.clock.now(), r.secure);
  return redirect(LOGIN_PATH, [cleared]);
}

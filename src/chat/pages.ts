// The registration page an invitation's link leads to (Zulip's /join/<key>/ for reusable links and
// /accounts/do_confirm/<key> for e-mail invitations): plain server-rendered HTML, every value
// escaped. GET shows a form (full name and password; the address too for a link); POST makes the
// account (domain/invites.ts acceptInvite) and then tells the realm: realm_user add and the group and
// subscriber events, invites_changed, and the Notification Bot's direct message to the referrer.
// A key that is unknown, used, revoked or expired answers a page that says so (404, as Zulip's).
// The new account is logged in in the browser that made it (a `sessionid` cookie: domain/sessions.ts).
import type { ChatServices } from './endpoint.js';
import type { ChatUser, Realm } from './tables.js';
import { ChatError } from './errors.js';
import { acceptedNote, acceptInvite, CONFIRMATION_KEY, existingUserErrors, inviteUnusable, PASSWORD_LENGTH, SKIP_REASON, validEmail } from './domain/invites.js';
import { checkFullName } from './domain/users.js';
import { joinedNotices } from './events/realm-notices.js';
import { subscriberPeerNotices } from './endpoints/users.js';
import { invitesChangedNotice } from './endpoints/invites.js';
import { ensureNotificationBot } from './domain/move-notices.js';
import { loadMarkdownContext } from './domain/mentions.js';
import { renderMessage } from './domain/markdown.js';
import { directRecipient, storeMessage } from './domain/messages.js';
import { realmAlertWords } from './domain/alert-words.js';
import { messageNotice, realmUserAddNotice } from './events/notices.js';
import type { Notice } from './events/hub.js';
import { rerunAfterRace } from './store-races.js';
import { createSession } from './domain/sessions.js';

export interface RegistrationRoute {
  kind: 'link' | 'email';
  key: string;
}

/** The invitation a page path names: /join/<key>/ (a link) or /accounts/do_confirm/<key> (an e-mail), with or without the trailing slash. */
export function registrationRoute(url: string): RegistrationRoute | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const m = /^\/(join|accounts\/do_confirm)\/([^/]+)\/?$/.exec(path);
  if (!m) return undefined;
  return { kind: m[1] === 'join' ? 'link' : 'email', key: m[2] };
}

export interface Page {
  status: number;
  html: string;
  /** Headers of this page's own (Set-Cookie, Location). */
  headers?: Record<string, string | string[]>;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML, safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** A whole page; `body` is HTML already escaped by the caller. */
export function page(status: number, title: string, body: string): Page {
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}label{display:block;margin-top:1rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1.5rem;padding:.5rem 1.5rem}.error{color:#b00020}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
  return { status, html };
}

/** What a key that cannot be used says (Zulip answers these with 404). */
const UNUSABLE: Record<'missing' | 'used' | 'revoked' | 'expired', string> = {
  missing: 'This invitation link is not valid. Check that you copied the whole link, or ask for a new invitation.',
  used: 'This invitation has already been used to create an account. Log in with that account instead.',
  revoked: 'This invitation has been revoked. Ask the person who invited you for a new one.',
  expired: 'This invitation has expired. Ask the person who invited you for a new one.',
};

function unusablePage(why: keyof typeof UNUSABLE, realmUrl: string): Page {
  return page(404, 'Invitation not usable', `<p>${escapeHtml(UNUSABLE[why])}</p>\n<p><a href="${escapeHtml(realmUrl)}">${escapeHtml(realmUrl)}</a></p>`);
}

/** An answer that is not about the invitation (an unknown realm, a rate limit, a server fault). */
export function errorPage(status: number, message: string): Page {
  return page(status, 'Something went wrong', `<p>${escapeHtml(message)}</p>`);
}

interface FormValues {
  email: string;
  full_name: string;
}

function formPage(status: number, realm: Realm, route: RegistrationRoute, fixedEmail: string | null, values: FormValues, error: string | null): Page {
  const action = route.kind === 'link' ? `/join/${route.key}/` : `/accounts/do_confirm/${route.key}`;
  const email =
    fixedEmail === null
      ? `<label for="email">Email address</label>\n<input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${escapeHtml(values.email)}">`
      : `<p>Your account's email address: <strong>${escapeHtml(fixedEmail)}</strong></p>`;
  const body = `<p>You have been invited to join <strong>${escapeHtml(realm.name)}</strong>. Choose your name and a password to create your account.</p>
${error === null ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>\n`}<form method="post" action="${escapeHtml(action)}">
${email}
<label for="full_name">Full name</label>
<input id="full_name" name="full_name" required maxlength="100" autocomplete="name" value="${escapeHtml(values.full_name)}">
<label for="password">Password (at least ${PASSWORD_LENGTH.min} characters)</label>
<input id="password" name="password" type="password" required minlength="${PASSWORD_LENGTH.min}" maxlength="${PASSWORD_LENGTH.max}" autocomplete="new-password">
<button type="submit">Create account</button>
</form>`;
  return page(status, `Join ${realm.name}`, body);
}

function donePage(realm: Realm, realmUrl: string, user: ChatUser): Page {
  const body = `<p>Your account in <strong>${escapeHtml(realm.name)}</strong> is ready.</p>
<p>Log in at <a href="${escapeHtml(realmUrl)}">${escapeHtml(realmUrl)}</a> with the email address <strong>${escapeHtml(user.delivery_email)}</strong> and the password you chose, from any Zulip app.</p>`;
  return page(200, 'Account created', body);
}

/**
 * Answers a registration page: GET shows the form, POST (the form's fields in `fields`) makes the
 * account. Throws only what is not about the invitation (the caller renders it with errorPage).
 */
export async function registrationPage(services: ChatServices, realm: Realm, route: RegistrationRoute, method: string, fields: Record<string, string>, secure = false): Promise<Page> {
  const { db, clock, events } = services;
  const realmUrl = services.realmUrl(realm);
  const nowMs = clock.now();
  if (!CONFIRMATION_KEY.test(route.key)) return unusablePage('missing', realmUrl);
  const found = await db.kysely.selectFrom('invites').selectAll().where('confirmation_key', '=', route.key).executeTakeFirst();
  const invite = found && (found.is_multiuse === 1) === (route.kind === 'link') ? found : undefined;
  const why = inviteUnusable(invite, realm.id, Math.floor(nowMs / 1000));
  if (why || !invite) return unusablePage(why ?? 'missing', realmUrl);
  const fixedEmail = invite.is_multiuse === 1 ? null : invite.email!;
  if (method !== 'POST') return formPage(200, realm, route, fixedEmail, { email: '', full_name: '' }, null);

  const values = { email: (fields.email ?? '').trim(), full_name: fields.full_name ?? '' };
  const password = fields.password ?? '';
  const email = fixedEmail ?? values.email;
  const retry = (message: string) => formPage(400, realm, route, fixedEmail, values, message);
  if (fixedEmail === null && !validEmail(email)) return retry('Enter a valid email address.');
  if (password.length < PASSWORD_LENGTH.min || password.length > PASSWORD_LENGTH.max) {
    return retry(`The password must have between ${PASSWORD_LENGTH.min} and ${PASSWORD_LENGTH.max} characters.`);
  }
  let fullName: string;
  try {
    fullName = checkFullName(values.full_name);
  } catch (err) {
    if (err instanceof ChatError) return retry(err.message);
    throw err;
  }
  const taken = await existingUserErrors(db.kysely, realm.id, [email]);
  if (taken.length) return retry(`${email}: ${taken[0][1] === SKIP_REASON.member ? 'This address already has an account here. Log in instead.' : 'The account of this address has been deactivated.'}`);

  const accept = () =>
    events.write(
      () => db.transaction((trx) => acceptInvite(trx, realm, invite.id, { email, fullName, password }, nowMs, services.apiKeySeal)),
      async (done): Promise<Notice[]> => {
        if (typeof done === 'string') return [];
        return [
          ...(await joinedNotices(db.kysely, realm.id, done.user)),
          ...(await subscriberPeerNotices(db.kysely, done.user.id)),
          ...(await invitesChangedNotice(db.kysely, realm.id, done.referrerId)),
        ];
      },
    );
  let outcome: Awaited<ReturnType<typeof acceptInvite>>;
  try {
    // Two posts of one form at once: the one that loses the unique-key race runs again and finds the
    // invitation used (or the address taken), as if it had come second (store-races.ts).
    outcome = await accept().catch((err: unknown) => rerunAfterRace(err, accept));
  } catch (err) {
    // A check of the new account that failed (a name not unique, an address taken meanwhile).
    if (err instanceof ChatError && err.status === 400) return retry(err.message);
    throw err;
  }
  if (typeof outcome === 'string') return unusablePage(outcome, realmUrl);
  if (outcome.notify) {
    try {
      await notifyReferrer(services, realm, outcome.notify, outcome.user);
    } catch (err) {
      // The account stands; only the note is missing.
      services.log.error('invitation accepted, but the referrer could not be told', { user: outcome.user.id, error: (err as Error).stack });
    }
  }
  // The new user is logged in in this browser, as Zulip's registration does (domain/sessions.ts).
  let cookie: string | undefined;
  try {
    cookie = await createSession(db.kysely, outcome.user, clock.now(), secure);
  } catch (err) {
    // The account stands; the user logs in on the login page.
    services.log.error('account created, but no session could be made', { user: outcome.user.id, error: (err as Error).stack });
  }
  const done = donePage(realm, realmUrl, outcome.user);
  return cookie === undefined ? done : { ...done, headers: { 'set-cookie': cookie } };
}

/** The Notification Bot's direct message to the referrer (Zulip's text), with its events. */
async function notifyReferrer(services: ChatServices, realm: Realm, referrer: ChatUser, joined: ChatUser): Promise<void> {
  const { db, clock, events } = services;
  const content = acceptedNote(joined);
  const ctx = await loadMarkdownContext(db.kysely, realm.id, referrer, content);
  const rendered = renderMessage(content, ctx);
  const alertWords = await realmAlertWords(db.kysely, realm.id);
  const nowMs = clock.now();
  const bot = await ensureNotificationBot(db, realm, nowMs, services.apiKeySeal);
  await events.write(
    () =>
      db.transaction(async (trx) => {
        const people = [bot.bot.id, referrer.id];
        const stored = await storeMessage(trx, realm.id, bot.bot, await directRecipient(trx, people), null, '', people, {
          content,
          rendered: rendered.html,
          client: 'Internal',
          readBySender: true,
          nowSeconds: Math.floor(nowMs / 1000),
          alertWords,
        });
        return { ...stored, people: [bot.bot, referrer], stream: null };
      }),
    async (stored) => [...(bot.made ? await realmUserAddNotice(db.kysely, realm.id, bot.bot) : []), ...(await messageNotice(db.kysely, realm, stored, null))],
  );
}

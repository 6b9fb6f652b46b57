// The password check of every login by email and password: POST /fetch_api_key (an API key) and the
// login page /accounts/login/ (a browser session), with the same rules and the same budgets.
import type { ChatServices } from '../endpoint.js';
import type { ChatUser, Realm } from '../tables.js';
import { authenticationFailed, enterValidEmail, rateLimited, realmDeactivated, userDeactivated } from '../errors.js';
import { limitHeaders } from './rate-limit.js';
import { decoyHash, verifyPassword } from '../../platform/auth/passwords.js';
import { userByDeliveryEmail } from './users.js';
import { isLoginEmail } from './login-email.js';

/**
 * The user an email and password log in as, from the client address `ip`; throws Zulip's refusals:
 * not an email address, a spent password budget (429), a wrong password, then a deactivated realm or
 * account (told only for the right password).
 */
export async function passwordLogin(services: ChatServices, realm: Realm, username: string, password: string, ip: string): Promise<ChatUser> {
  // Zulip refuses a username that is not an email address before looking for anyone (and before
  // the password budget), so this costs no attempt.
  if (!isLoginEmail(username, realm.email_host)) throw enterValidEmail();
  const { db, limits } = services;
  // Logins name the real address, whoever may see it (Zulip's get_user_by_delivery_email).
  const user = await userByDeliveryEmail(db.kysely, realm.id, username);
  // The account's budget: one per user, whatever case or spacing the name is typed in; a name
  // nobody has gets one of its own (per realm), so guesses at it cost the same.
  const account = user ? `user:${user.id}` : `name:${realm.id}:${username.trim().toLowerCase()}`;
  const refused = limits.passwords.begin(account, ip);
  if (refused) throw rateLimited({ retryAfter: refused.wait, headers: limitHeaders(services.clock, refused) });
  // Verify against a decoy when there is no such user, so timing does not reveal who exists.
  const ok = await verifyPassword(user?.password_hash ?? (await decoyHash()), password);
  if (!user || !user.password_hash || !ok) throw authenticationFailed();
  limits.passwords.succeeded(account, ip);
  // The realm first, as Zulip's is_user_active; only for the right password, so neither says
  // anything to a guesser.
  if (realm.deactivated === 1) throw realmDeactivated();
  if (user.is_active !== 1) throw userDeactivated();
  return user;
}

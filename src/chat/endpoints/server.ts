// Unauthenticated endpoints: what a client asks before logging in, and password login for an API key.
import Type from 'typebox';
import { defineEndpoint } from '../endpoint.js';
import { authenticationFailed, enterValidEmail, rateLimited, realmDeactivated, userDeactivated } from '../errors.js';
import { limitHeaders } from '../domain/rate-limit.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from '../version.js';
import { decoyHash, verifyPassword } from '../../platform/auth/passwords.js';
import { userByDeliveryEmail } from '../domain/users.js';
import { isLoginEmail } from '../domain/login-email.js';
import { webPublicAccess } from '../domain/spectators.js';

export const getServerSettings = defineEndpoint({
  method: 'GET',
  path: '/server_settings',
  summary: 'Get server settings',
  auth: 'none',
  params: Type.Object({}),
  async handler(call) {
    const url = call.services.realmUrl(call.realm);
    return {
      authentication_methods: {
        password: true,
        dev: call.services.devMode === true,
        email: true,
        ldap: false,
        remoteuser: false,
        github: false,
        azuread: false,
        gitlab: false,
        apple: false,
        google: false,
        saml: false,
        'openid connect': false,
      },
      external_authentication_methods: [],
      zulip_feature_level: ZULIP_FEATURE_LEVEL,
      zulip_version: ZULIP_VERSION,
      zulip_merge_base: '',
      push_notifications_enabled: call.services.push !== undefined,
      is_incompatible: false,
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_uri: url,
      realm_url: url,
      realm_name: call.realm.name,
      realm_icon: `${url}/static/images/logo/zulip-icon-128x128.png`,
      // HTML here (the login page shows it); register and realm events carry the Markdown source.
      realm_description: call.realm.rendered_description,
      // Spectator access on, and a web-public channel to show (domain/spectators.ts).
      realm_web_public_access_enabled: await webPublicAccess(call.services.db.kysely, call.realm),
    };
  },
});

export const fetchApiKey = defineEndpoint({
  method: 'POST',
  path: '/fetch_api_key',
  summary: 'Fetch an API key (production)',
  auth: 'none',
  params: Type.Object({ username: Type.String(), password: Type.String() }),
  async handler(call, p) {
    // Zulip refuses a username that is not an email address before looking for anyone (and before
    // the password budget), so this costs no attempt.
    if (!isLoginEmail(p.username, call.realm.email_host)) throw enterValidEmail();
    const { db, limits } = call.services;
    // Logins name the real address, whoever may see it (Zulip's get_user_by_delivery_email).
    const user = await userByDeliveryEmail(db.kysely, call.realm.id, p.username);
    // The account's budget: one per user, whatever case or spacing the name is typed in; a name
    // nobody has gets one of its own (per realm), so guesses at it cost the same.
    const account = user ? `user:${user.id}` : `name:${call.realm.id}:${p.username.trim().toLowerCase()}`;
    const refused = limits.passwords.begin(account, call.ip);
    if (refused) throw rateLimited({ retryAfter: refused.wait, headers: limitHeaders(call.services.clock, refused) });
    // Verify against a decoy when there is no such user, so timing does not reveal who exists.
    const ok = await verifyPassword(user?.password_hash ?? (await decoyHash()), p.password);
    if (!user || !user.password_hash || !ok) throw authenticationFailed();
    limits.passwords.succeeded(account, call.ip);
    // The realm first, as Zulip's is_user_active; only for the right password, so neither says
    // anything to a guesser.
    if (call.realm.deactivated === 1) throw realmDeactivated();
    if (user.is_active !== 1) throw userDeactivated();
    const apiKey = call.services.apiKeySeal.unseal(user.api_key_sealed);
    return { api_key: apiKey, email: user.delivery_email, user_id: user.id };
  },
});

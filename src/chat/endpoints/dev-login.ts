// POST /dev_fetch_api_key: any user's API key without a password, for developing clients against a
// development server (Zulip's DevAuthBackend). Only with --dev-mode on (the server warns loudly as it
// starts); otherwise refused with production Zulip's answer.
import Type from 'typebox';
import { defineEndpoint } from '../endpoint.js';
import { authenticationFailed, devLoginUnavailable, enterValidEmail, realmDeactivated, userDeactivated } from '../errors.js';
import { userByDeliveryEmail } from '../domain/users.js';
import { isLoginEmail } from '../domain/login-email.js';

export const devFetchApiKey = defineEndpoint({
  method: 'POST',
  path: '/dev_fetch_api_key',
  summary: 'Fetch an API key (development only)',
  auth: 'none',
  params: Type.Object({ username: Type.String() }),
  async handler(call, p) {
    if (call.services.devMode !== true) throw devLoginUnavailable();
    if (!isLoginEmail(p.username, call.realm.email_host)) throw enterValidEmail();
    if (call.realm.deactivated === 1) throw realmDeactivated();
    const user = await userByDeliveryEmail(call.services.db.kysely, call.realm.id, p.username);
    if (!user) throw authenticationFailed();
    if (user.is_active !== 1) throw userDeactivated();
    return { api_key: call.services.apiKeySeal.unseal(user.api_key_sealed), email: user.delivery_email, user_id: user.id };
  },
});

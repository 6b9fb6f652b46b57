// Unauthenticated endpoints: what a client asks before logging in, and password login for an API key.
import Type from 'typebox';
import { defineEndpoint } from '../endpoint.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from '../version.js';
import { passwordLogin } from '../domain/password-login.js';
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
    const user = await passwordLogin(call.services, call.realm, p.username, p.password, call.ip);
    const apiKey = call.services.apiKeySeal.unseal(user.api_key_sealed);
    return { api_key: apiKey, email: user.delivery_email, user_id: user.id };
  },
});

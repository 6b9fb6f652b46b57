// Bots: users create generic bots (email <short_name>-bot@<realm host>), which then authenticate
// with their own API key like any user.
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { realmBotAddNotice } from '../events/notices.js';
import { joinedNotices } from '../events/realm-notices.js';
import { badRequest } from '../errors.js';
import { isGuest, ROLE } from '../domain/roles.js';
import { avatarUrlFor, checkFullName, createUser, userByEmail } from '../domain/users.js';
import { botEmail } from '../domain/user-rules.js';

const GENERIC_BOT = 1;

export const createBot = defineEndpoint({
  method: 'POST',
  path: '/bots',
  summary: 'Create a bot',
  auth: 'user',
  params: Type.Object({
    full_name: Type.String(),
    short_name: Type.String(),
    bot_type: Type.Integer({ default: GENERIC_BOT }),
  }),
  async handler(call, p) {
    const me = requireUser(call);
    if (isGuest(me.role)) throw badRequest('Not allowed for guest users');
    // Incoming and outgoing webhook and embedded bots need services Keel does not run yet.
    if (p.bot_type !== GENERIC_BOT) throw badRequest('Invalid bot type');
    const { db, clock } = call.services;
    const fullName = checkFullName(p.full_name);
    const shortName = p.short_name.trim();
    if (shortName === '' || !/^[A-Za-z0-9._+-]+$/.test(shortName)) throw badRequest('Bad name or username');
    const email = botEmail(shortName, call.realm.email_host);
    const created = await call.services.events.write(() => db.transaction(async (trx) => {
      if (await userByEmail(trx, call.realm.id, email)) throw badRequest('Username already in use');
      const sameName = await trx.selectFrom('chat_users').select('id').where('realm_id', '=', call.realm.id).where('is_bot', '=', 1)
        .where('is_active', '=', 1).where('full_name', '=', fullName).executeTakeFirst();
      if (sameName) throw badRequest('Name is already in use!');
      return createUser(trx, call.realm.id, { email, fullName, password: null, role: ROLE.member, isBot: true, botType: GENERIC_BOT, botOwnerId: me.id }, clock.now(), call.services.apiKeySeal);
    }), async (made) => [
      ...(await joinedNotices(db.kysely, call.realm.id, made.user)),
      ...(await realmBotAddNotice(db.kysely, made.user, made.apiKey)),
    ]);
    return {
      user_id: created.user.id,
      api_key: created.apiKey,
      avatar_url: avatarUrlFor(created.user, false),
      default_sending_stream: null,
      default_events_register_stream: null,
      default_all_public_streams: false,
    };
  },
});

// Users: who am I, the directory, one user by id, and creating users (administrators).
import Type from 'typebox';
import { defineEndpoint, requireUser } from '../endpoint.js';
import { adminRequired, ChatError } from '../errors.js';
import { isAdmin } from '../domain/roles.js';
import { avatarUrlFor, createUser, isoWithOffset, userById, userObject } from '../domain/users.js';
import { ROLE } from '../domain/roles.js';

const noSuchUser = () => new ChatError('BAD_REQUEST', 'No such user');

export const getOwnUser = defineEndpoint({
  method: 'GET',
  path: '/users/me',
  summary: 'Get own user',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    const max = await call.services.db.kysely
      .selectFrom('user_messages')
      .select((eb) => eb.fn.max('message_id').as('max'))
      .where('user_id', '=', me.id)
      .executeTakeFirst();
    return {
      avatar_url: avatarUrlFor(me, false),
      avatar_version: me.avatar_version,
      email: me.email,
      delivery_email: me.delivery_email,
      full_name: me.full_name,
      is_admin: me.role <= ROLE.administrator,
      is_owner: me.role === ROLE.owner,
      role: me.role,
      is_guest: me.role === ROLE.guest,
      is_bot: me.is_bot === 1,
      is_active: me.is_active === 1,
      timezone: me.timezone,
      date_joined: isoWithOffset(me.date_joined),
      max_message_id: max?.max === null || max?.max === undefined ? -1 : Number(max.max),
      user_id: me.id,
      profile_data: {},
    };
  },
});

const directoryParams = {
  client_gravatar: Type.Boolean({ default: true }),
  include_custom_profile_fields: Type.Boolean({ default: false }),
};

export const getUsers = defineEndpoint({
  method: 'GET',
  path: '/users',
  summary: 'Get all users',
  auth: 'user',
  params: Type.Object(directoryParams),
  async handler(call, p) {
    const rows = await call.services.db.kysely.selectFrom('chat_users').selectAll().where('realm_id', '=', call.realm.id).orderBy('id').execute();
    const opts = { clientGravatar: p.client_gravatar, includeProfileFields: p.include_custom_profile_fields };
    return { members: rows.map((u) => userObject(u, opts)) };
  },
});

export const getUser = defineEndpoint({
  method: 'GET',
  path: '/users/{user_id}',
  summary: 'Get a user',
  auth: 'user',
  params: Type.Object({ user_id: Type.Integer(), ...directoryParams }),
  async handler(call, p) {
    const user = await userById(call.services.db.kysely, call.realm.id, p.user_id);
    if (!user) throw noSuchUser();
    return { user: userObject(user, { clientGravatar: p.client_gravatar, includeProfileFields: p.include_custom_profile_fields }) };
  },
});

export const createUserEndpoint = defineEndpoint({
  method: 'POST',
  path: '/users',
  summary: 'Create a user',
  auth: 'user',
  params: Type.Object({ email: Type.String(), password: Type.String(), full_name: Type.String() }),
  async handler(call, p) {
    if (!isAdmin(requireUser(call).role)) throw adminRequired();
    const { db, clock } = call.services;
    const created = await db.transaction((trx) =>
      createUser(trx, call.realm.id, { email: p.email, fullName: p.full_name, password: p.password, role: ROLE.member }, clock.now()),
    );
    return { user_id: created.user.id };
  },
});

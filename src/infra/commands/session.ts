// session.login and the API-key-to-JWT exchange (POST /customer/jsonwebtoken).
import Type from 'typebox';
import { defineCommand, requirePrincipal, type Call, type Command } from '../command.js';
import { infraErrors, rateLimited } from '../errors.js';
import { checkLogin } from '../accounts.js';
import { unixSeconds } from '../../platform/clock.js';

export const SESSION_COOKIE = 'JWTSESSIONID';

/** `secretTag`: an API user's (Principal.secretTag), so a new secret ends this session. */
async function issue(call: Call, sub: string, customerId: number, secretTag?: string) {
  const { token, expires } = await call.services.jwt.sign(secretTag === undefined ? { sub, cid: customerId } : { sub, cid: customerId, sec: secretTag });
  call.setCookie(SESSION_COOKIE, token, expires - unixSeconds(call.services.clock));
  return { token, sessionId: token, expires, customerId };
}

export const sessionCommands: Command[] = [
  defineCommand({
    cmd: 'session.login',
    summary: 'Log in with a username and password; answers a JWT as token and sessionId and sets the JWTSESSIONID cookie',
    rest: { method: 'POST', path: '/session/login' },
    access: 'public',
    params: Type.Object({
      username: Type.String({ minLength: 1 }),
      password: Type.String({ minLength: 1 }),
      jwt: Type.Optional(Type.Union([Type.Integer(), Type.Boolean()], { description: '1 to return a JWT (one is always returned)' })),
    }),
    async handler(call, p) {
      // Usernames are matched exactly (checkLogin), so the name is the account's key.
      const { passwords } = call.services.limits;
      const refused = passwords.begin(p.username, call.ip);
      if (refused) throw rateLimited(refused.wait);
      const login = await checkLogin(call.services.db, p.username, p.password);
      if (!login) throw infraErrors.accessDenied();
      passwords.succeeded(p.username, call.ip);
      await call.services.db.kysely
        .updateTable('logins')
        .set({ last_login: unixSeconds(call.services.clock) })
        .where('id', '=', login.id)
        .execute();
      const session = await issue(call, `login:${login.id}`, login.customerId);
      return { message: 'Login Successful', data: session, top: session };
    },
  }),
  defineCommand({
    cmd: 'customer.jsonwebtoken',
    summary: 'Exchange the credentials of this request (an API key, or a JWT to renew) for a new JWT',
    rest: { method: 'POST', path: '/customer/jsonwebtoken' },
    access: 'authenticated',
    params: Type.Object({}),
    async handler(call) {
      const p = requirePrincipal(call);
      const session = await issue(call, `${p.kind}:${p.id}`, p.customerId, p.secretTag);
      return { message: 'JWT Created Successfully', data: session, top: session };
    },
  }),
];

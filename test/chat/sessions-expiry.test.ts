// Browser sessions against a manual clock (in process): a session counts until its two weeks are
// up and not after, an expired row is swept when a session is next made, and a user keeps at most
// SESSIONS_PER_USER sessions (a new one ends the oldest).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../helpers/chat-realm.js';
import { createSession, SESSION_AGE_SECONDS, SESSIONS_PER_USER, sessionUser } from '../../src/chat/domain/sessions.js';

void forEachEngine('browser sessions: expiry, sweep, bound', (engine) => {
  let realm: InProcessRealm;

  before(async () => {
    realm = await inProcessRealm(engine, { members: ['alice', 'bob'] });
  });
  after(() => realm.close());

  const cookieOf = (setCookie: string | string[] | undefined): string => {
    const line = (Array.isArray(setCookie) ? setCookie : [setCookie ?? '']).find((c) => c.startsWith('sessionid='));
    assert.ok(line, String(setCookie));
    return line.split(';')[0];
  };

  async function logIn(email: string): Promise<string> {
    const app = realm.chat.app;
    const form = await app.inject({ method: 'GET', url: '/accounts/login/' });
    assert.equal(form.statusCode, 200);
    const csrf = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(form.body)![1];
    const done = await app.inject({
      method: 'POST',
      url: '/accounts/login/',
      headers: { cookie: `csrftoken=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrfmiddlewaretoken: csrf, username: email, password: 'pass-word-1' }).toString(),
    });
    assert.equal(done.statusCode, 302, done.body);
    return cookieOf(done.headers['set-cookie']);
  }

  /** Whether the login page sees a logged-in browser (it sends one on with 302). */
  async function loggedIn(cookie: string): Promise<boolean> {
    const page = await realm.chat.app.inject({ method: 'GET', url: '/accounts/login/', headers: { cookie } });
    return page.statusCode === 302;
  }

  it('counts a session until its two weeks are up, and sweeps it at the next login', async () => {
    const cookie = await logIn('alice@example.com');
    assert.equal(await loggedIn(cookie), true);
    realm.chat.clock.advance(SESSION_AGE_SECONDS * 1000 - 1000);
    assert.equal(await loggedIn(cookie), true, 'a second before its end');
    realm.chat.clock.advance(1000);
    assert.equal(await loggedIn(cookie), false, 'at its end');
    const db = realm.chat.ctx.chatDb.kysely;
    const rows = async () => (await db.selectFrom('chat_sessions').select('id').where('user_id', '=', realm.members.alice.id).execute()).length;
    assert.equal(await rows(), 1);
    await logIn('bob@example.com');
    assert.equal(await rows(), 0, 'swept');
  });

  it('keeps at most SESSIONS_PER_USER sessions of a user: a new one ends the oldest', async () => {
    const db = realm.chat.ctx.chatDb.kysely;
    const bob = await db.selectFrom('chat_users').selectAll().where('id', '=', realm.members.bob.id).executeTakeFirstOrThrow();
    const realmRow = await db.selectFrom('realms').selectAll().where('id', '=', bob.realm_id).executeTakeFirstOrThrow();
    const first = cookieOf(await createSession(db, bob, realm.chat.clock.now(), false));
    for (let i = 0; i < SESSIONS_PER_USER - 1; i++) {
      realm.chat.clock.advance(1);
      await createSession(db, bob, realm.chat.clock.now(), false);
    }
    assert.equal((await sessionUser(db, realmRow, first, realm.chat.clock.now()))?.id, bob.id);
    realm.chat.clock.advance(1);
    await createSession(db, bob, realm.chat.clock.now(), false);
    const count = (await db.selectFrom('chat_sessions').select('id').where('user_id', '=', bob.id).execute()).length;
    assert.equal(count, SESSIONS_PER_USER);
    assert.equal(await sessionUser(db, realmRow, first, realm.chat.clock.now()), undefined, 'the oldest ended');
  });
});

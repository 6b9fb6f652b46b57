// Keel's bounds on what a realm and a user hold (src/chat/domain/bounds.ts): the call that would pass
// one is refused with an error naming it, and nothing of it is written. Rows up to the bound are
// copied straight into the store (alert words and drafts go through the API: one call carries them).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { BOUNDS } from '../../../src/chat/domain/bounds.js';

type Table = 'chat_users' | 'streams' | 'user_groups' | 'realm_linkifiers' | 'alert_words' | 'drafts';

await forEachEngine('chat bounds', (engine) => {
  let realm: InProcessRealm;
  before(async () => {
    realm = await inProcessRealm(engine);
  });
  after(async () => {
    await realm?.close();
  });

  const db = () => realm.chat.ctx.chatDb.kysely;
  const count = async (table: Table) =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** Copies the table's first row until it holds `total` rows, each copy changed by `vary`. */
  async function fillTo(table: Table, total: number, vary: (i: number) => Record<string, unknown>): Promise<void> {
    const { id: _id, ...template } = (await db().selectFrom(table).selectAll().orderBy('id').executeTakeFirstOrThrow()) as Record<string, unknown>;
    const missing = total - (await count(table));
    for (let i = 0; i < missing; i += 500) {
      const rows = Array.from({ length: Math.min(500, missing - i) }, (_, k) => ({ ...template, ...vary(i + k) }));
      await db()
        .insertInto(table)
        .values(rows as never)
        .execute();
    }
  }

  async function refused(call: Promise<{ status: number; body: Record<string, any> }>, limit: number, things: string) {
    const r = await call;
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.code, 'BAD_REQUEST');
    assert.match(r.body.msg, new RegExp(`^Limit reached: an? (organization|user) can have at most ${limit} ${things}\\.$`));
  }

  it('users of a realm', async () => {
    await fillTo('chat_users', BOUNDS.usersPerRealm - 1, (i) => ({ email: `u${i}@example.com`, email_lower: `u${i}@example.com`, delivery_email: `u${i}@example.com`, api_key_hash: `filler-${i}` }));
    const made = await realm.owner.call('POST', '/users', { email: 'last@example.com', password: 'pass-word-1', full_name: 'Last' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    await refused(realm.owner.call('POST', '/users', { email: 'over@example.com', password: 'pass-word-1', full_name: 'Over' }), BOUNDS.usersPerRealm, 'users');
    assert.equal(await count('chat_users'), BOUNDS.usersPerRealm);
  });

  it('channels of a realm', async () => {
    assert.equal((await realm.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'first' }] })).status, 200);
    await fillTo('streams', BOUNDS.channelsPerRealm - 1, (i) => ({ name: `c${i}`, name_lower: `c${i}` }));
    assert.equal((await realm.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'last' }] })).status, 200);
    await refused(realm.owner.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'over' }] }), BOUNDS.channelsPerRealm, 'channels');
    assert.equal(await count('streams'), BOUNDS.channelsPerRealm);
  });

  it('user groups of a realm', async () => {
    await fillTo('user_groups', BOUNDS.groupsPerRealm - 1, (i) => ({ name: `g${i}`, is_system_group: 0 }));
    const create = (name: string) => realm.owner.call('POST', '/user_groups/create', { name, description: 'd', members: [realm.ownerId] });
    assert.equal((await create('last')).status, 200);
    await refused(create('over'), BOUNDS.groupsPerRealm, 'user groups');
    assert.equal(await count('user_groups'), BOUNDS.groupsPerRealm);
  });

  it('linkifiers of a realm', async () => {
    const add = (n: string) => realm.owner.call('POST', '/realm/filters', { pattern: `${n}-(?P<id>[0-9]+)`, url_template: `https://example.com/${n}/{id}` });
    assert.equal((await add('first')).status, 200);
    await fillTo('realm_linkifiers', BOUNDS.linkifiersPerRealm - 1, (i) => ({ pattern: `p${i}-(?P<id>[0-9]+)`, url_template: `https://example.com/p${i}/{id}` }));
    assert.equal((await add('last')).status, 200);
    await refused(add('over'), BOUNDS.linkifiersPerRealm, 'linkifiers');
    assert.equal(await count('realm_linkifiers'), BOUNDS.linkifiersPerRealm);
  });

  it('alert words of a user, counting only the words a call adds', async () => {
    const words = (from: number, n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => `w${from + i}`));
    assert.equal((await realm.owner.call('POST', '/users/me/alert_words', { alert_words: words(0, BOUNDS.alertWordsPerUser - 1) })).status, 200);
    // Words the user has already are not new rows.
    assert.equal((await realm.owner.call('POST', '/users/me/alert_words', { alert_words: words(0, 5) })).status, 200);
    await refused(realm.owner.call('POST', '/users/me/alert_words', { alert_words: words(5000, 2) }), BOUNDS.alertWordsPerUser, 'alert words');
    assert.equal(await count('alert_words'), BOUNDS.alertWordsPerUser - 1);
    assert.equal((await realm.owner.call('POST', '/users/me/alert_words', { alert_words: words(5000, 1) })).status, 200);
  });

  it('drafts of a user', async () => {
    const drafts = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ type: '', to: [], topic: '', content: `d${i}`, timestamp: 1_700_000_000 })));
    // One request over the bound is refused before its drafts are checked (the first names nobody).
    const oversized = [{ type: 'private', to: [999_999], topic: '', content: 'x', timestamp: 1_700_000_000 }, ...JSON.parse(drafts(BOUNDS.draftsPerUser))];
    await refused(realm.owner.call('POST', '/drafts', { drafts: JSON.stringify(oversized) }), BOUNDS.draftsPerUser, 'drafts');
    assert.equal(await count('drafts'), 0);
    assert.equal((await realm.owner.call('POST', '/drafts', { drafts: drafts(BOUNDS.draftsPerUser - 1) })).status, 200);
    await refused(realm.owner.call('POST', '/drafts', { drafts: drafts(2) }), BOUNDS.draftsPerUser, 'drafts');
    assert.equal(await count('drafts'), BOUNDS.draftsPerUser - 1);
    assert.equal((await realm.owner.call('POST', '/drafts', { drafts: drafts(1) })).status, 200);
  });
});

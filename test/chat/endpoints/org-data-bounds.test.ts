// Keel's bounds (src/chat/domain/bounds.ts) on custom profile fields, code playgrounds and saved
// snippets: the call that would pass one is refused with an error naming it, and nothing is written.
// Rows up to the bound are copied straight into the store.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm, type InProcessRealm } from '../../helpers/chat-realm.js';
import { BOUNDS } from '../../../src/chat/domain/bounds.js';

type Table = 'custom_profile_fields' | 'realm_playgrounds' | 'saved_snippets';

await forEachEngine('chat organization data bounds', (engine) => {
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

  async function fillTo(table: Table, total: number, vary: (i: number) => Record<string, unknown>): Promise<void> {
    const { id: _id, ...template } = (await db().selectFrom(table).selectAll().orderBy('id').executeTakeFirstOrThrow()) as Record<string, unknown>;
    const rows = Array.from({ length: total - (await count(table)) }, (_, i) => ({ ...template, ...vary(i) }));
    for (let i = 0; i < rows.length; i += 200)
      await db()
        .insertInto(table)
        .values(rows.slice(i, i + 200) as never)
        .execute();
  }

  async function refused(call: Promise<{ status: number; body: Record<string, any> }>, scope: string, limit: number, things: string) {
    const r = await call;
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.deepEqual([r.body.code, r.body.msg], ['BAD_REQUEST', `Limit reached: ${scope} can have at most ${limit} ${things}.`]);
  }

  it('custom profile fields of a realm', async () => {
    const add = (name: string) => realm.owner.call('POST', '/realm/profile_fields', { name, field_type: 1 });
    assert.equal((await add('first')).status, 200);
    await fillTo('custom_profile_fields', BOUNDS.profileFieldsPerRealm - 1, (i) => ({ name: `f${i}` }));
    assert.equal((await add('last')).status, 200);
    await refused(add('over'), 'an organization', BOUNDS.profileFieldsPerRealm, 'custom profile fields');
    assert.equal(await count('custom_profile_fields'), BOUNDS.profileFieldsPerRealm);
  });

  it('code playgrounds of a realm', async () => {
    const add = (name: string) => realm.owner.call('POST', '/realm/playgrounds', { name, pygments_language: 'Python', url_template: 'https://p.example/{code}' });
    assert.equal((await add('first')).status, 200);
    await fillTo('realm_playgrounds', BOUNDS.playgroundsPerRealm - 1, (i) => ({ name: `p${i}` }));
    assert.equal((await add('last')).status, 200);
    await refused(add('over'), 'an organization', BOUNDS.playgroundsPerRealm, 'code playgrounds');
    assert.equal(await count('realm_playgrounds'), BOUNDS.playgroundsPerRealm);
  });

  it('saved snippets of a user', async () => {
    const add = () => realm.owner.call('POST', '/saved_snippets', { title: 'Hi', content: 'Hello' });
    assert.equal((await add()).status, 200);
    await fillTo('saved_snippets', BOUNDS.savedSnippetsPerUser - 1, () => ({}));
    assert.equal((await add()).status, 200);
    await refused(add(), 'a user', BOUNDS.savedSnippetsPerUser, 'saved snippets');
    assert.equal(await count('saved_snippets'), BOUNDS.savedSnippetsPerUser);
  });
});

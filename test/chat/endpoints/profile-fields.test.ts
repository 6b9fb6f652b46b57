// Custom profile fields, black-box on both engines: a real `keel serve` driven over raw HTTP as the
// Python client sends it (JSON-encoded non-string parameters) and through zulip-js where it has the
// call (users.retrieve). Every field type, Zulip's checks and texts, reordering, default external
// accounts, users' values (own and by administrators) with rendered_value, profile_data on user
// objects, and the custom_profile_fields and realm_user events and register state.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import type { ChatClient } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

await forEachEngine('chat custom profile fields, black-box', (engine) => {
  let realm: ServedRealm;
  let owner: ChatClient;
  let ann: ChatClient;
  let annId: number;
  let bobId: number;
  const ids: Record<string, number> = {};

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'bob', 'cy'] });
    owner = realm.owner;
    ({ client: ann, id: annId } = realm.members.ann);
    bobId = realm.members.bob.id;
  });
  after(async () => {
    await realm?.stop();
  });

  const create = async (params: Ev) => {
    const r = await owner.post('/realm/profile_fields', params);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id as number;
  };

  it("register lists no fields at first, with Zulip 10.2's types and default external accounts", async () => {
    const q = await register(owner, { fetch_event_types: ['custom_profile_fields', 'realm'] });
    assert.deepEqual(q.custom_profile_fields, []);
    assert.deepEqual(Object.keys(q.custom_profile_field_types), ['DATE', 'EXTERNAL_ACCOUNT', 'URL', 'SELECT', 'PRONOUNS', 'LONG_TEXT', 'SHORT_TEXT', 'USER']);
    assert.deepEqual(q.custom_profile_field_types.SELECT, { id: 3, name: 'List of options' });
    assert.deepEqual(Object.keys(q.realm_default_external_accounts), ['twitter', 'github']);
    assert.equal(q.realm_default_external_accounts.github.url_pattern, 'https://github.com/%(username)s');
    assert.equal((await owner.get('/realm/profile_fields')).body.custom_fields.length, 0);
  });

  it('creates fields of every type, announced to every user, listed in order', async () => {
    const q = await register(ann, { event_types: ['custom_profile_fields'] });
    ids.phone = await create({ name: ' Phone ', hint: 'Work phone', field_type: 1, display_in_profile_summary: true, required: true });
    ids.bio = await create({ name: 'Biography', field_type: 2 });
    ids.editor = await create({ name: 'Editor', field_type: 3, field_data: { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } } });
    ids.birthday = await create({ name: 'Birthday', field_type: 4, editable_by_user: false });
    ids.site = await create({ name: 'Website', field_type: 5 });
    ids.mentor = await create({ name: 'Mentor', field_type: 6 });
    ids.github = await create({ field_type: 7, field_data: { subtype: 'github' } });
    ids.forge = await create({ name: 'Forge', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://forge.example/%(username)s' } });
    ids.pronouns = await create({ name: 'Pronouns', field_type: 8 });
    const fields = (await owner.get('/realm/profile_fields')).body.custom_fields as Ev[];
    assert.deepEqual(
      fields.map((f) => f.id),
      Object.values(ids),
    );
    assert.deepEqual(fields[0], {
      id: ids.phone,
      name: 'Phone',
      type: 1,
      hint: 'Work phone',
      field_data: '',
      order: ids.phone,
      required: true,
      editable_by_user: true,
      display_in_profile_summary: true,
    });
    assert.equal(fields[1].display_in_profile_summary, undefined, 'sent only when true');
    assert.deepEqual(JSON.parse(fields[2].field_data), { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } });
    assert.equal(fields[3].editable_by_user, false);
    const github = fields.find((f) => f.id === ids.github)!;
    assert.deepEqual([github.name, github.hint, github.field_data], ['GitHub username', '', '{"subtype":"github"}']);
    const events = await drain(ann, q.queue_id);
    assert.equal(events.length, 9);
    assert.deepEqual(
      events.at(-1)!.fields.map((f: Ev) => f.id),
      Object.values(ids),
    );
    assert.equal(events[0].type, 'custom_profile_fields');
  });

  it("refuses what Zulip refuses, in Zulip's words, creating nothing", async () => {
    const before = (await owner.get('/realm/profile_fields')).body.custom_fields.length;
    const no = (params: Ev, msg: string) => owner.post('/realm/profile_fields', params).then((r) => refused(r, 'BAD_REQUEST', msg));
    refused(await ann.post('/realm/profile_fields', { name: 'X', field_type: 1 }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    await no({ name: '  ', field_type: 1 }, 'Label cannot be blank.');
    await no({ name: 'Phone', field_type: 1 }, 'A field with that label already exists.');
    await no({ name: 'Odd', field_type: 9 }, 'Invalid field type.');
    await no({ name: 'x'.repeat(41), field_type: 1 }, 'name is too long (limit: 40 characters)');
    await no({ name: 'Hinted', hint: 'h'.repeat(81), field_type: 1 }, 'hint is too long (limit: 80 characters)');
    await no({ name: 'Essay', field_type: 2, display_in_profile_summary: true }, 'Field type not supported for display in profile summary.');
    await no({ name: 'Empty list', field_type: 3 }, 'Field must have at least one choice.');
    await no({ name: 'Twice', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } } }, 'Field must not have duplicate choices.');
    await no({ name: 'Blank', field_type: 3, field_data: { a: { text: ' ', order: '1' } } }, 'field_data["text"] cannot be blank.');
    await no({ name: 'Extra', field_type: 3, field_data: { a: { text: 'A', order: '1', colour: 'red' } } }, 'Unexpected arguments: colour');
    await no({ field_type: 7, field_data: { subtype: 'myspace' } }, 'Invalid external account type');
    await no({ name: 'Mine', field_type: 7, field_data: { subtype: 'custom' } }, 'Custom external account must define URL pattern');
    await no({ name: 'Mine', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x.example/' } }, "URL pattern must contain '%(username)s'.");
    await no({ name: 'Mine', field_type: 7 }, 'subtype key is missing from field_data');
    await no({ field_type: 7, field_data: { subtype: 'github' } }, 'A field with that label already exists.');
    // A second summary field is allowed; a third is not.
    const second = await create({ name: 'Team', field_type: 1, display_in_profile_summary: true });
    await no({ name: 'Desk', field_type: 1, display_in_profile_summary: true }, 'Only 2 custom profile fields can be displayed in the profile summary.');
    assert.equal((await owner.call('DELETE', `/realm/profile_fields/${second}`)).status, 200);
    assert.equal((await owner.get('/realm/profile_fields')).body.custom_fields.length, before);
  });

  it('changes a field; a default external account changes only its summary flag', async () => {
    const q = await register(ann, { event_types: ['custom_profile_fields'] });
    assert.equal((await owner.call('PATCH', `/realm/profile_fields/${ids.bio}`, { name: 'About me', hint: 'In a few lines', required: true })).status, 200);
    refused(await owner.call('PATCH', `/realm/profile_fields/${ids.github}`, { name: 'Octocat' }), 'BAD_REQUEST', 'Default custom field cannot be updated.');
    assert.equal((await owner.call('PATCH', `/realm/profile_fields/${ids.github}`, { display_in_profile_summary: true, name: 'GitHub username' })).status, 200);
    refused(await owner.call('PATCH', `/realm/profile_fields/${ids.bio}`, { name: 'Phone' }), 'BAD_REQUEST', 'A field with that label already exists.');
    refused(
      await owner.call('PATCH', `/realm/profile_fields/${ids.site}`, { display_in_profile_summary: true }),
      'BAD_REQUEST',
      'Only 2 custom profile fields can be displayed in the profile summary.',
    );
    refused(await owner.call('PATCH', '/realm/profile_fields/99999', { name: 'Nope' }), 'BAD_REQUEST', 'Field id 99999 not found.');
    refused(await ann.call('PATCH', `/realm/profile_fields/${ids.bio}`, { name: 'Mine' }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    const fields = (await owner.get('/realm/profile_fields')).body.custom_fields as Ev[];
    const bio = fields.find((f) => f.id === ids.bio)!;
    assert.deepEqual([bio.name, bio.hint, bio.required], ['About me', 'In a few lines', true]);
    assert.equal(fields.find((f) => f.id === ids.github)!.display_in_profile_summary, true);
    assert.equal((await drain(ann, q.queue_id)).filter((e) => e.type === 'custom_profile_fields').length, 2);
  });

  it('reorders every field, and refuses a list that leaves one out', async () => {
    const reversed = Object.values(ids).reverse();
    assert.equal((await owner.call('PATCH', '/realm/profile_fields', { order: reversed })).status, 200);
    assert.deepEqual(
      (await owner.get('/realm/profile_fields')).body.custom_fields.map((f: Ev) => f.id),
      reversed,
    );
    refused(await owner.call('PATCH', '/realm/profile_fields', { order: reversed.slice(1) }), 'BAD_REQUEST', 'Invalid order mapping.');
    assert.equal((await owner.call('PATCH', '/realm/profile_fields', { order: Object.values(ids) })).status, 200);
  });

  it("sets a user's own values, checked by type, and announces each with its rendering", async () => {
    const q = await register(owner, { event_types: ['realm_user'] });
    const set = (data: Ev[]) => ann.call('PATCH', '/users/me/profile_data', { data });
    assert.equal(
      (
        await set([
          { id: ids.phone, value: '+1 555 0100' },
          { id: ids.bio, value: 'I like **bold** claims' },
          { id: ids.editor, value: 'vim' },
          { id: ids.site, value: 'https://ann.example/' },
          { id: ids.mentor, value: [bobId] },
          { id: ids.github, value: 'ann-gh' },
          { id: ids.pronouns, value: 'she/her' },
        ])
      ).status,
      200,
    );
    const no = async (data: Ev[], msg: string) => refused(await set(data), 'BAD_REQUEST', msg);
    await no([{ id: ids.birthday, value: '2000-01-01' }], 'You are not allowed to change this field. Contact an administrator to update it.');
    await no([{ id: 99999, value: 'x' }], 'Field id 99999 not found.');
    await no([{ id: ids.phone, value: 'x'.repeat(51) }], 'Phone is too long (limit: 50 characters)');
    await no([{ id: ids.bio, value: 'x'.repeat(501) }], 'About me is too long (limit: 500 characters)');
    await no([{ id: ids.editor, value: 'nano' }], "'nano' is not a valid choice for 'Editor'.");
    await no([{ id: ids.site, value: 'not a link' }], 'Website is not a URL');
    await no([{ id: ids.mentor, value: [99999, bobId, 99998] }], 'Invalid user IDs: 99999, 99998');
    await no([{ id: ids.mentor, value: 'bob' }], 'User IDs is not a list');
    await no([{ id: ids.phone, value: [1] }], 'Phone is not a string');
    // Nothing of a refused request is kept, even the entries before the refused one.
    await no(
      [
        { id: ids.phone, value: 'changed' },
        { id: ids.editor, value: 'nano' },
      ],
      "'nano' is not a valid choice for 'Editor'.",
    );
    const events = (await drain(owner, q.queue_id)).filter((e) => e.person?.custom_profile_field);
    assert.equal(events.length, 7);
    const bio = events.find((e) => e.person.custom_profile_field.id === ids.bio)!;
    assert.deepEqual(bio.person, { user_id: annId, custom_profile_field: { id: ids.bio, value: 'I like **bold** claims', rendered_value: '<p>I like <strong>bold</strong> claims</p>' } });
    const mentor = events.find((e) => e.person.custom_profile_field.id === ids.mentor)!;
    assert.deepEqual(mentor.person.custom_profile_field, { id: ids.mentor, value: JSON.stringify([bobId]) });
    // The same value again changes nothing and announces nothing.
    assert.equal((await set([{ id: ids.phone, value: '+1 555 0100' }])).status, 200);
    // A field named twice takes its last value: here the one it has, so nothing changes either.
    assert.equal(
      (
        await set([
          { id: ids.pronouns, value: 'they/them' },
          { id: ids.pronouns, value: 'she/her' },
        ])
      ).status,
      200,
    );
    assert.deepEqual(await drain(owner, q.queue_id, events.at(-1)!.id), []);
  });

  it('shows profile_data on user objects, in GET /users, GET /users/{id}, register and zulip-js', async () => {
    const members = (await owner.get('/users', { include_custom_profile_fields: true })).body.members as Ev[];
    const data = members.find((m) => m.user_id === annId)!.profile_data;
    assert.deepEqual(data[String(ids.phone)], { value: '+1 555 0100', rendered_value: '<p>+1 555 0100</p>' });
    assert.deepEqual(data[String(ids.editor)], { value: 'vim' });
    assert.deepEqual(data[String(ids.mentor)], { value: JSON.stringify([bobId]) });
    assert.equal(data[String(ids.birthday)], undefined);
    assert.equal((await owner.get('/users')).body.members[0].profile_data, undefined, 'only when asked');
    assert.deepEqual((await owner.get(`/users/${annId}`, { include_custom_profile_fields: true })).body.user.profile_data, data);
    assert.deepEqual((await owner.get('/users/ann@example.com', { include_custom_profile_fields: true })).body.user.profile_data, data);
    assert.deepEqual((await ann.get('/users/me')).body.profile_data, data);
    const q = await register(owner, { fetch_event_types: ['realm_user', 'custom_profile_fields'] });
    assert.deepEqual(q.realm_users.find((u: Ev) => u.user_id === annId).profile_data, data);
    assert.equal(q.custom_profile_fields.length, Object.keys(ids).length);
    // A spectator sees neither the fields nor anyone's values (as Zulip).
    assert.equal((await owner.call('PATCH', '/realm', { enable_spectator_access: true })).status, 200);
    assert.equal((await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'lobby' }], is_web_public: true })).status, 200);
    const s = await owner.call('POST', '/register', { fetch_event_types: ['realm_user', 'custom_profile_fields', 'saved_snippets'] }, null);
    assert.equal(s.status, 200, JSON.stringify(s.body));
    assert.deepEqual([s.body.custom_profile_fields, s.body.saved_snippets], [[], []]);
    assert.equal(s.body.custom_profile_field_types.USER.id, 6);
    assert.ok(s.body.realm_users.every((u: Ev) => !('profile_data' in u)));
    assert.equal((await owner.call('PATCH', '/realm', { enable_spectator_access: false })).status, 200);
    const js = await zulip({ realm: realm.server.chatUrl, username: ann.email, apiKey: ann.apiKey });
    const listed = await js.users.retrieve({ include_custom_profile_fields: true });
    assert.equal(listed.result, 'success', JSON.stringify(listed));
    assert.deepEqual(listed.members.find((m: Ev) => m.user_id === annId).profile_data, data);
  });

  it("lets administrators set and clear anyone's values, the locked ones too", async () => {
    const q = await register(ann, { event_types: ['realm_user'] });
    const patch = (target: string, profile_data: Ev[]) => owner.call('PATCH', `/users/${target}`, { profile_data });
    assert.equal((await patch(String(annId), [{ id: ids.birthday, value: '1990-02-28' }])).status, 200);
    refused(await patch(String(annId), [{ id: ids.birthday, value: '1990-02-30' }]), 'BAD_REQUEST', 'Birthday is not a date');
    refused(await patch(String(annId), [{ id: ids.mentor, value: [annId, realm.ownerId, 424242] }]), 'BAD_REQUEST', 'Invalid user IDs: 424242');
    assert.equal((await patch('ann@example.com', [{ id: ids.pronouns, value: null }])).status, 200);
    refused(await ann.call('PATCH', `/users/${bobId}`, { profile_data: [{ id: ids.phone, value: 'x' }] }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    const data = (await owner.get(`/users/${annId}`, { include_custom_profile_fields: true })).body.user.profile_data;
    assert.deepEqual(data[String(ids.birthday)], { value: '1990-02-28' });
    assert.equal(data[String(ids.pronouns)], undefined);
    const changes = (await drain(ann, q.queue_id)).map((e) => e.person.custom_profile_field);
    assert.deepEqual(changes, [
      { id: ids.birthday, value: '1990-02-28' },
      { id: ids.pronouns, value: null },
    ]);
  });

  it('removes own values with DELETE /users/me/profile_data', async () => {
    const q = await register(owner, { event_types: ['realm_user'] });
    assert.equal((await ann.call('DELETE', '/users/me/profile_data', { data: [ids.github, ids.pronouns] })).status, 200);
    refused(await ann.call('DELETE', '/users/me/profile_data', { data: [ids.birthday] }), 'BAD_REQUEST', 'You are not allowed to change this field. Contact an administrator to update it.');
    refused(await ann.call('DELETE', '/users/me/profile_data', { data: [99999] }), 'BAD_REQUEST', 'Field id 99999 not found.');
    const changes = (await drain(owner, q.queue_id)).map((e) => e.person.custom_profile_field);
    assert.deepEqual(changes, [{ id: ids.github, value: null }], 'a value that was not set is not announced');
  });

  it("drops users' values with the choices and fields that held them", async () => {
    assert.equal((await owner.call('PATCH', `/realm/profile_fields/${ids.editor}`, { field_data: { emacs: { text: 'Emacs', order: '1' } } })).status, 200);
    let data = (await owner.get(`/users/${annId}`, { include_custom_profile_fields: true })).body.user.profile_data;
    assert.equal(data[String(ids.editor)], undefined);
    const q = await register(ann, { event_types: ['custom_profile_fields'] });
    assert.equal((await owner.call('DELETE', `/realm/profile_fields/${ids.phone}`)).status, 200);
    refused(await owner.call('DELETE', `/realm/profile_fields/${ids.phone}`), 'BAD_REQUEST', `Field id ${ids.phone} not found.`);
    data = (await owner.get(`/users/${annId}`, { include_custom_profile_fields: true })).body.user.profile_data;
    assert.equal(data[String(ids.phone)], undefined);
    assert.ok(data[String(ids.bio)]);
    const [event] = await drain(ann, q.queue_id);
    assert.ok(!event.fields.some((f: Ev) => f.id === ids.phone));
  });
});

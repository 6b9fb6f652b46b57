// Invitations black-box, on a real `keel serve` on both engines, with raw HTTP as Zulip's Python
// client sends it: POST/GET /invites, links, revoke and resend, Zulip's errors and the realm
// settings behind them; the invitation mail through a real SMTP server run here (smtp-server, read
// with mailparser); the registration page posted as a browser would, the account it makes, its
// events and the Notification Bot's note to the referrer; GET /streams/{stream_id}/email_address.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';
import { ChatClient } from '../../helpers/chat-client.js';
import { drain, refused, register } from '../../helpers/chat-users.js';

type Ev = Record<string, any>;

/** An SMTP server in this process that keeps what it receives, parsed. */
async function mailSink(): Promise<{ port: number; received: ParsedMail[]; close(): Promise<void> }> {
  const received: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, done) {
      simpleParser(stream).then(
        (mail) => {
          received.push(mail);
          done();
        },
        (err: Error) => done(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The link in an invitation mail's text. */
function linkIn(mail: ParsedMail): string {
  const m = /(https?:\/\/\S+\/(?:accounts\/do_confirm|join)\/[a-z0-9]+\/?)/.exec(mail.text ?? '');
  assert.ok(m, `no link in ${mail.text}`);
  return m[1];
}

async function getPage(url: string): Promise<{ status: number; html: string; headers: Headers }> {
  const r = await fetch(url, { redirect: 'manual' });
  return { status: r.status, html: await r.text(), headers: r.headers };
}

async function postForm(url: string, fields: Record<string, string>): Promise<{ status: number; html: string }> {
  const r = await fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
  return { status: r.status, html: await r.text() };
}

await forEachEngine('chat invitations (SMTP)', (engine) => {
  let realm: ServedRealm;
  let sink: Awaited<ReturnType<typeof mailSink>>;
  let owner: ChatClient;
  let alice: ChatClient;
  let bob: ChatClient;
  let gus: ChatClient;
  let realmName: string;

  before(async () => {
    sink = await mailSink();
    realm = await servedRealm(engine, {
      members: ['alice', 'bob', ['gus', 600]],
      channel: { name: 'garden', subscribers: ['owner', 'alice'] },
      serverArgs: ['--smtp-url', `smtp://127.0.0.1:${sink.port}`],
    });
    owner = realm.owner;
    alice = realm.members.alice.client;
    bob = realm.members.bob.client;
    gus = realm.members.gus.client;
    realmName = (await owner.get('/server_settings')).body.realm_name;
  });
  after(async () => {
    await realm?.stop();
    await sink?.close();
  });

  it('reports who may invite in register, from the realm settings', async () => {
    const state = await register(alice, { fetch_event_types: ['realm', 'realm_user'] });
    assert.equal(state.can_invite_others_to_realm, true);
    assert.equal(state.realm_invite_required, true);
    assert.equal(typeof state.realm_can_invite_users_group, 'number');
    assert.equal(typeof state.realm_create_multiuse_invite_group, 'number');
    assert.equal((await register(gus, { fetch_event_types: ['realm_user'] })).can_invite_others_to_realm, false);
  });

  it('sends e-mail invitations through SMTP with Zulip subject and the link, and lists them for who manages them', async () => {
    const before = sink.received.length;
    const q = await register(owner, { event_types: ['invites_changed'] });
    const r = await alice.post('/invites', { invitee_emails: 'Carol Jones <carol@example.org>\ndave@example.org', stream_ids: [realm.channelId] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const mails = sink.received.slice(before);
    assert.deepEqual(mails.map((m) => (m.to as { text: string }).text).sort(), ['carol@example.org', 'dave@example.org']);
    for (const m of mails) {
      assert.equal(m.subject, `alice has invited you to join ${realmName}`);
      assert.match(linkIn(m), /\/accounts\/do_confirm\/[a-z2-7]{24}$/);
    }
    const mine = (await alice.get('/invites')).body.invites as Ev[];
    assert.deepEqual(mine.map((i) => [i.email, i.is_multiuse, i.invited_as, i.invited_by_user_id, i.notify_referrer_on_join]).sort(), [
      ['carol@example.org', false, 400, realm.members.alice.id, true],
      ['dave@example.org', false, 400, realm.members.alice.id, true],
    ]);
    for (const i of mine) assert.ok(i.expiry_date - i.invited === 14400 * 60, 'ten days by default');
    assert.equal(((await bob.get('/invites')).body.invites as Ev[]).length, 0, 'a member sees only their own');
    assert.ok(((await owner.get('/invites')).body.invites as Ev[]).length >= 2, 'administrators see every one');
    assert.deepEqual(
      (await drain(owner, q.queue_id)).map((e) => e.type),
      ['invites_changed'],
    );
  });

  it("answers Zulip's errors, and sends nothing on one", async () => {
    const before = sink.received.length;
    refused(await gus.post('/invites', { invitee_emails: 'x@example.org', stream_ids: [] }), 'BAD_REQUEST', 'Not allowed for guest users');
    refused(await alice.post('/invites', { invitee_emails: 'x@example.org', stream_ids: [], invite_as: 200 }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    refused(await alice.post('/invites', { invitee_emails: 'x@example.org', stream_ids: [], invite_as: 100 }), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');
    refused(await alice.post('/invites', { invitee_emails: 'x@example.org', stream_ids: [], invite_as: 500 }), 'BAD_REQUEST', 'Invalid invite_as: Value error, Not in the list of possible values');
    refused(await alice.post('/invites', { invitee_emails: '', stream_ids: [] }), 'BAD_REQUEST', 'You must specify at least one email address.');
    refused(await alice.post('/invites', { invitee_emails: 'x@example.org', stream_ids: [99999] }), 'BAD_REQUEST', 'Invalid channel ID 99999. No invites were sent.');
    const bad = await alice.post('/invites', { invitee_emails: 'not-an-address, bob@example.com', stream_ids: [] });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, {
      result: 'error',
      code: 'INVITATION_FAILED',
      msg: "Some emails did not validate, so we didn't send any invitations.",
      errors: [
        ['not-an-address', 'Invalid address.', false],
        ['bob@example.com', 'Already has an account.', false],
      ],
      sent_invitations: false,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    const nobody = await alice.post('/invites', { invitee_emails: 'BOB@example.com', stream_ids: [] });
    assert.deepEqual([nobody.body.code, nobody.body.msg, nobody.body.errors], ['INVITATION_FAILED', "We weren't able to invite anyone.", [['BOB@example.com', 'Already has an account.', false]]]);
    assert.equal(sink.received.length, before);
    const some = await alice.post('/invites', { invitee_emails: 'bob@example.com, erin@example.org', stream_ids: [] });
    assert.deepEqual([some.body.code, some.body.sent_invitations, some.body.errors], ['INVITATION_FAILED', true, [['bob@example.com', 'Already has an account.', false]]]);
    assert.equal(some.body.msg, "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!");
    assert.equal(sink.received.length, before + 1, 'erin was invited');
  });

  it('lets the creator or an administrator revoke and resend; others get BAD_REQUEST', async () => {
    const frank = await alice.post('/invites', { invitee_emails: 'frank@example.org', stream_ids: [] });
    assert.equal(frank.status, 200);
    const invite = ((await alice.get('/invites')).body.invites as Ev[]).find((i) => i.email === 'frank@example.org')!;
    refused(await bob.call('DELETE', `/invites/${invite.id}`), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    refused(await bob.post(`/invites/${invite.id}/resend`), 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');
    const before = sink.received.length;
    assert.equal((await owner.post(`/invites/${invite.id}/resend`)).status, 200);
    assert.equal(sink.received.length, before + 1);
    assert.equal(sink.received.at(-1)!.subject, `alice has invited you to join ${realmName}`, 'the mail names the creator');
    const link = linkIn(sink.received.at(-1)!);
    assert.equal((await alice.call('DELETE', `/invites/${invite.id}`)).status, 200);
    refused(await alice.call('DELETE', `/invites/${invite.id}`), 'BAD_REQUEST', 'No such invitation');
    refused(await alice.post(`/invites/${invite.id}/resend`), 'BAD_REQUEST', 'No such invitation');
    refused(await alice.call('DELETE', '/invites/99999'), 'BAD_REQUEST', 'No such invitation');
    assert.ok(!((await alice.get('/invites')).body.invites as Ev[]).some((i) => i.id === invite.id));
    const page = await getPage(link);
    assert.equal(page.status, 404);
    assert.match(page.html, /has been revoked/);
  });

  it('makes reusable links for who create_multiuse_invite_group holds, and revokes them once', async () => {
    refused(await alice.post('/invites/multiuse', {}), 'BAD_REQUEST', 'Insufficient permission');
    const made = await owner.post('/invites/multiuse', { invite_as: 600, stream_ids: [realm.channelId], invite_expires_in_minutes: null });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.match(made.body.invite_link, /\/join\/[a-z2-7]{24}\/$/);
    const listed = ((await owner.get('/invites')).body.invites as Ev[]).find((i) => i.is_multiuse && i.link_url === made.body.invite_link)!;
    assert.deepEqual([listed.expiry_date, listed.invited_as, 'email' in listed], [null, 600, false]);
    assert.equal((await owner.call('DELETE', `/invites/multiuse/${listed.id}`)).status, 200);
    refused(await owner.call('DELETE', `/invites/multiuse/${listed.id}`), 'BAD_REQUEST', 'Invitation has already been revoked');
    refused(await owner.call('DELETE', `/invites/${listed.id}`), 'BAD_REQUEST', 'No such invitation');
    assert.equal((await getPage(made.body.invite_link)).status, 404);
  });

  it('registers the invited user from the e-mail link: role, channels, events, and the referrer told', async () => {
    const r = await alice.post('/invites', { invitee_emails: 'grace@example.org', stream_ids: [realm.channelId], include_realm_default_subscriptions: false });
    assert.equal(r.status, 200);
    const link = linkIn(sink.received.at(-1)!);
    const shown = await getPage(link);
    assert.equal(shown.status, 200);
    assert.match(shown.headers.get('content-type')!, /^text\/html/);
    assert.match(shown.html, /<form method="post"/);
    assert.match(shown.html, /grace@example\.org/);
    // Too short a password: the form again, the typed name escaped.
    const retry = await postForm(link, { full_name: 'Grace <i>Hopper</i>', password: 'abc' });
    assert.equal(retry.status, 400);
    assert.match(retry.html, /value="Grace &lt;i&gt;Hopper&lt;\/i&gt;"/);
    assert.doesNotMatch(retry.html, /<i>Hopper/);
    const q = await register(owner, { event_types: ['realm_user', 'invites_changed', 'subscription'] });
    const aq = await register(alice, { event_types: ['message'] });
    const done = await postForm(link, { full_name: 'Grace Hopper', password: 'correct horse' });
    assert.equal(done.status, 200, done.html);
    assert.match(done.html, /Account created/);
    const key = await owner.call('POST', '/fetch_api_key', { username: 'grace@example.org', password: 'correct horse' }, null);
    assert.equal(key.status, 200, JSON.stringify(key.body));
    const grace = new ChatClient(realm.server.chatUrl, key.body.email, key.body.api_key);
    const me = (await grace.get('/users/me')).body;
    assert.deepEqual([me.full_name, me.role], ['Grace Hopper', 400]);
    assert.deepEqual(
      ((await grace.get('/users/me/subscriptions')).body.subscriptions as Ev[]).map((s) => s.name),
      ['garden'],
    );
    const events = await drain(owner, q.queue_id);
    const added = events.find((e) => e.type === 'realm_user' && e.op === 'add');
    assert.equal(added?.person.full_name, 'Grace Hopper');
    assert.ok(events.some((e) => e.type === 'invites_changed'));
    assert.ok(events.some((e) => e.type === 'subscription' && e.op === 'peer_add' && e.user_ids.includes(me.user_id)));
    const notes = (await drain(alice, aq.queue_id)).filter((e) => e.type === 'message');
    assert.equal(notes.length, 1);
    assert.equal(notes[0].message.sender_full_name, 'Notification Bot');
    assert.equal(notes[0].message.type, 'private');
    assert.equal(notes[0].message.content, 'Grace Hopper <`grace@example.org`> accepted your invitation to join Zulip!');
    const again = await getPage(link);
    assert.equal(again.status, 404);
    assert.match(again.html, /already been used/);
    assert.ok(!((await alice.get('/invites')).body.invites as Ev[]).some((i) => i.email === 'grace@example.org'));
  });

  it('registers through a reusable link with the address typed, as the role asked, without telling a referrer who said no', async () => {
    const group = await owner.post('/user_groups/create', { name: 'newcomers', description: 'new people', members: [realm.ownerId] });
    assert.equal(group.status, 200, JSON.stringify(group.body));
    const groupId = group.body.group_id as number;
    refused(await alice.post('/invites', { invitee_emails: 'x@example.org', stream_ids: [], group_ids: [groupId] }), 'BAD_REQUEST', 'Insufficient permission');
    const made = await owner.post('/invites/multiuse', { invite_as: 600, stream_ids: [realm.channelId], group_ids: [groupId] });
    const link = made.body.invite_link as string;
    const page = await getPage(link);
    assert.match(page.html, /name="email"/);
    const taken = await postForm(link, { email: 'alice@example.com', full_name: 'Other', password: 'long enough' });
    assert.equal(taken.status, 400);
    assert.match(taken.html, /already has an account/);
    const done = await postForm(link, { email: 'heidi@example.org', full_name: 'Heidi', password: 'long enough' });
    assert.equal(done.status, 200, done.html);
    const key = await owner.call('POST', '/fetch_api_key', { username: 'heidi@example.org', password: 'long enough' }, null);
    const heidi = new ChatClient(realm.server.chatUrl, key.body.email, key.body.api_key);
    const heidiId = (await heidi.get('/users/me')).body.user_id as number;
    assert.equal((await heidi.get('/users/me')).body.role, 600);
    assert.ok(((await owner.get(`/user_groups/${groupId}/members`)).body.members as number[]).includes(heidiId), 'in the invitation group');
    assert.equal((await getPage(link)).status, 200, 'a link stays usable');
    // notify_referrer_on_join false: no note.
    const r = await alice.post('/invites', { invitee_emails: 'ivan@example.org', stream_ids: [], notify_referrer_on_join: false });
    assert.equal(r.status, 200);
    const aq = await register(alice, { event_types: ['message'] });
    assert.equal((await postForm(linkIn(sink.received.at(-1)!), { full_name: 'Ivan', password: 'long enough' })).status, 200);
    assert.deepEqual(await drain(alice, aq.queue_id), []);
  });

  it('makes one account when the same form is posted twice at once', async () => {
    assert.equal((await alice.post('/invites', { invitee_emails: 'judy@example.org', stream_ids: [] })).status, 200);
    const link = linkIn(sink.received.at(-1)!);
    const answers = await Promise.all([1, 2].map(() => postForm(link, { full_name: 'Judy', password: 'long enough' })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 404], answers.map((a) => a.html).join('\n'));
    const users = (await owner.get('/users')).body.members as Ev[];
    assert.equal(users.filter((u) => u.delivery_email === 'judy@example.org').length, 1);
  });

  it('answers a clear page for an unknown key, and escapes what it shows', async () => {
    for (const path of ['/join/aaaaaaaaaaaaaaaaaaaaaaaa/', '/accounts/do_confirm/%3Cscript%3E']) {
      const p = await getPage(`${realm.server.chatUrl}${path}`);
      assert.equal(p.status, 404);
      assert.match(p.html, /not valid/);
      assert.doesNotMatch(p.html, /<script>/);
    }
  });

  it('enforces can_invite_users_group and invite_required', async () => {
    const groups = (await owner.get('/user_groups')).body.user_groups as Ev[];
    const admins = groups.find((g) => g.name === 'role:administrators')!.id;
    const members = groups.find((g) => g.name === 'role:members')!.id;
    assert.equal((await owner.call('PATCH', '/realm', { can_invite_users_group: JSON.stringify({ new: admins }) })).status, 200);
    refused(await alice.post('/invites', { invitee_emails: 'z@example.org', stream_ids: [] }), 'BAD_REQUEST', 'Insufficient permission');
    assert.equal((await register(alice, { fetch_event_types: ['realm_user'] })).can_invite_others_to_realm, false);
    assert.equal((await owner.call('PATCH', '/realm', { can_invite_users_group: JSON.stringify({ new: members }) })).status, 200);
    // Without invite_required, accounts younger than three days may not invite (administrators may).
    assert.equal((await owner.call('PATCH', '/realm', { invite_required: false })).status, 200);
    const young = await alice.post('/invites', { invitee_emails: 'z@example.org', stream_ids: [] });
    assert.deepEqual([young.body.code, young.body.msg], ['INVITATION_FAILED', 'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.']);
    assert.equal((await owner.call('PATCH', '/realm', { invite_required: true })).status, 200);
  });

  it("gives a channel's e-mail address in Zulip's form, the same each time, to those who may read the channel", async () => {
    const a = await alice.get(`/streams/${realm.channelId}/email_address`);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.match(a.body.email, /^garden\.[0-9a-f]{32}\.show-sender@/);
    assert.equal((await alice.get(`/streams/${realm.channelId}/email_address`)).body.email, a.body.email);
    const self = await alice.get(`/streams/${realm.channelId}/email_address`, { sender_id: realm.members.alice.id });
    assert.notEqual(self.body.email, a.body.email, 'a token per sender');
    refused(await alice.get(`/streams/${realm.channelId}/email_address`, { sender_id: realm.members.bob.id }), 'BAD_REQUEST', 'No such bot');
    refused(await gus.get(`/streams/${realm.channelId}/email_address`), 'BAD_REQUEST', 'Invalid channel ID');
    refused(await alice.get('/streams/99999/email_address'), 'BAD_REQUEST', 'Invalid channel ID');
  });
});

describe('channel e-mail address form', () => {
  it("follows Zulip's encode_email_address", async () => {
    const { channelEmailAddress } = await import('../../../src/chat/domain/channel-email.js');
    assert.equal(channelEmailAddress('Denmark & Sweden', 't0k', 'h.test'), 'denmark-sweden.t0k.show-sender@h.test');
    assert.equal(channelEmailAddress('日本', 't0k', 'h.test'), 't0k.show-sender@h.test', 'a name slugify would shorten is left out');
    assert.equal(channelEmailAddress('café', 't0k', 'h.test'), 'cafe.t0k.show-sender@h.test');
  });
});

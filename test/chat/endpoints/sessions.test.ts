// Browser sessions on a real `keel serve`, spoken as a browser speaks them (the cookie jar kept by
// hand): the login form with its CSRF token, the `sessionid` cookie it sets, that cookie as the only
// credential of the resumable upload endpoint (/api/v1/tus) and of the file paths (/user_uploads/),
// logout ending both; Zulip's message for a wrong password, the CSRF refusals, the password budget
// shared with POST /fetch_api_key, a deactivated user's session, and the invitation registration
// page logging the new user in.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { servedRealm, type ServedRealm } from '../../helpers/chat-realm.js';

const WRONG = 'Please enter a correct email and password. Note that both fields may be case-sensitive.';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A browser's cookies for one server, kept by hand from Set-Cookie. */
class Jar {
  readonly cookies = new Map<string, string>();
  take(res: Response): string[] {
    const set = res.headers.getSetCookie();
    for (const line of set) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return set;
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

interface Page {
  status: number;
  html: string;
  res: Response;
  set: string[];
}

async function visit(jar: Jar, url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Page> {
  const headers: Record<string, string> = { ...init.headers };
  if (jar.cookies.size) headers.cookie = jar.header();
  const res = await fetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body: init.form ? new URLSearchParams(init.form) : undefined, redirect: 'manual' });
  const set = jar.take(res);
  return { status: res.status, html: await res.text(), res, set };
}

function csrfIn(html: string): string {
  const m = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(html);
  assert.ok(m, `no CSRF field in ${html}`);
  return m[1];
}

/** Logs in through the form as a browser does; gives the page the POST answered. */
async function logIn(jar: Jar, base: string, username: string, password: string, headers?: Record<string, string>): Promise<Page> {
  const form = await visit(jar, `${base}/accounts/login/`, { headers });
  assert.equal(form.status, 200, form.html);
  return visit(jar, `${base}/accounts/login/`, { form: { csrfmiddlewaretoken: csrfIn(form.html), username, password }, headers });
}

/** A whole upload through tus with the given headers as credentials; the answer of the creation. */
async function tusUpload(base: string, creds: Record<string, string>, data: Buffer): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/api/v1/tus`, {
    method: 'POST',
    headers: { ...creds, 'tus-resumable': '1.0.0', 'upload-length': String(data.length), 'upload-metadata': `filename ${b64('notes.txt')}`, 'content-type': 'application/offset+octet-stream' },
    body: new Uint8Array(data),
  });
  return { status: res.status, text: await res.text() };
}

void forEachEngine('browser sessions (login, logout, cookie credentials)', (engine) => {
  let realm: ServedRealm;
  let base: string;

  before(async () => {
    realm = await servedRealm(engine, { members: ['ann', 'bea', 'cal', 'dee'], serverArgs: ['--trusted-proxies', '127.0.0.1,::1'] });
    base = realm.server.chatUrl;
  });
  after(() => realm.stop());

  it('logs in through the form, uploads by tus and downloads with the cookie alone, and logout ends both', async () => {
    const jar = new Jar();
    const form = await visit(jar, `${base}/accounts/login/`);
    assert.equal(form.status, 200);
    assert.match(form.res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(form.html, /name="username"/);
    assert.match(form.html, /name="password"/);
    assert.ok(jar.cookies.has('csrftoken'), 'the form sets the CSRF cookie');
    assert.equal(csrfIn(form.html), jar.cookies.get('csrftoken'));

    const done = await visit(jar, `${base}/accounts/login/`, { form: { csrfmiddlewaretoken: csrfIn(form.html), username: 'ann@example.com', password: 'pass-word-1' } });
    assert.equal(done.status, 302, done.html);
    assert.equal(done.res.headers.get('location'), '/');
    const session = done.set.find((c) => c.startsWith('sessionid='))!;
    assert.ok(session, done.set.join('\n'));
    assert.match(session, /; HttpOnly/);
    assert.match(session, /; SameSite=Lax/);
    assert.match(session, /; Path=\//);
    assert.match(session, /; Max-Age=1209600/);
    assert.doesNotMatch(session, /Secure/, 'plain HTTP from the client: no Secure');
    assert.notEqual(jar.cookies.get('csrftoken'), csrfIn(form.html), 'the CSRF token is new after login');
    // Logged in: the login page sends the browser on.
    assert.equal((await visit(jar, `${base}/accounts/login/`)).status, 302);

    // tus with the cookie alone.
    const data = Buffer.from('written in a browser\n');
    const up = await tusUpload(base, { cookie: jar.header() }, data);
    assert.equal(up.status, 200, up.text);
    const url = JSON.parse(up.text).url as string;
    assert.match(url, /^\/user_uploads\/\d+\/[A-Za-z0-9]{24}\/notes\.txt$/);
    // The file with the cookie alone; nobody's browser without it.
    const got = await fetch(base + url, { headers: { cookie: jar.header() } });
    assert.equal(got.status, 200);
    assert.equal(await got.text(), data.toString());
    assert.notEqual((await fetch(base + url)).status, 200);
    // The upload is ann's, as with her API key.
    const ann = realm.members.ann.client;
    const mine = await ann.get('/attachments');
    assert.ok((mine.body.attachments as { path_id: string }[]).some((a) => url.endsWith(a.path_id)));

    // Logout ends the session: the old cookie is no credential anywhere.
    const stale = jar.header();
    const out = await visit(jar, `${base}/accounts/logout/`, { form: { csrfmiddlewaretoken: jar.cookies.get('csrftoken')! } });
    assert.equal(out.status, 302, out.html);
    assert.equal(out.res.headers.get('location'), '/accounts/login/');
    assert.ok(
      out.set.some((c) => /^sessionid=;.*Max-Age=0/.test(c)),
      out.set.join('\n'),
    );
    assert.ok(!jar.cookies.has('sessionid'));
    const after = await tusUpload(base, { cookie: stale }, data);
    assert.equal(after.status, 401);
    assert.deepEqual(JSON.parse(after.text), { message: 'Unauthenticated upload' });
    assert.notEqual((await fetch(base + url, { headers: { cookie: stale } })).status, 200);
    assert.equal((await visit(jar, `${base}/accounts/login/`)).status, 200, 'the login form again');
  });

  it('sets a Secure cookie when a trusted proxy says the client came by HTTPS', async () => {
    const jar = new Jar();
    const done = await logIn(jar, base, 'bea@example.com', 'pass-word-1', { 'x-forwarded-proto': 'https' });
    assert.equal(done.status, 302, done.html);
    assert.match(done.set.find((c) => c.startsWith('sessionid='))!, /; Secure/);
  });

  it("re-shows the form with Zulip's message for a wrong password or an unknown address", async () => {
    for (const [username, password] of [
      ['bea@example.com', 'not her password'],
      ['nobody@example.com', 'pass-word-1'],
      ['not an address', 'pass-word-1'],
    ]) {
      const jar = new Jar();
      const page = await logIn(jar, base, username, password);
      assert.equal(page.status, 200);
      assert.ok(page.html.includes(WRONG), page.html);
      assert.ok(!jar.cookies.has('sessionid'));
      assert.ok(!page.set.some((c) => c.startsWith('sessionid=')));
    }
  });

  it('refuses a login or logout post without the matching CSRF token', async () => {
    const jar = new Jar();
    const form = await visit(jar, `${base}/accounts/login/`);
    const token = csrfIn(form.html);
    // A cross-site form: the browser sends the cookie, but the form cannot know its value.
    const forged = await visit(jar, `${base}/accounts/login/`, { form: { csrfmiddlewaretoken: 'x'.repeat(43), username: 'bea@example.com', password: 'pass-word-1' } });
    assert.equal(forged.status, 403);
    assert.match(forged.html, /CSRF verification failed/);
    assert.ok(!jar.cookies.has('sessionid'));
    // No cookie at all (the field copied from somewhere).
    const bare = new Jar();
    assert.equal((await visit(bare, `${base}/accounts/login/`, { form: { csrfmiddlewaretoken: token, username: 'bea@example.com', password: 'pass-word-1' } })).status, 403);
    assert.ok(!bare.cookies.has('sessionid'));

    assert.equal((await logIn(jar, base, 'bea@example.com', 'pass-word-1')).status, 302);
    const cookie = jar.header();
    const noToken = await visit(jar, `${base}/accounts/logout/`, { form: {} });
    assert.equal(noToken.status, 403);
    assert.ok(jar.cookies.has('sessionid'), 'the session stands');
    assert.equal((await tusUpload(base, { cookie }, Buffer.from('x'))).status, 200, 'and still counts');
    // GET is no logout (a link or image on another site cannot end it).
    assert.equal((await visit(jar, `${base}/accounts/logout/`)).status, 405);
    assert.equal((await tusUpload(base, { cookie }, Buffer.from('x'))).status, 200);
  });

  it('spends the same password budget as POST /fetch_api_key', async () => {
    for (let i = 0; i < 5; i++) {
      const wrong = await logIn(new Jar(), base, 'cal@example.com', `wrong ${i}`);
      assert.equal(wrong.status, 200);
      assert.ok(wrong.html.includes(WRONG));
    }
    const jar = new Jar();
    const locked = await logIn(jar, base, 'cal@example.com', 'pass-word-1');
    assert.equal(locked.status, 200, locked.html);
    const m = /You&#39;re making too many attempts to sign in\. Try again in (\d+) seconds or contact your organization administrator for help\./.exec(locked.html);
    assert.ok(m, locked.html);
    assert.ok(Number(m[1]) > 0 && Number(m[1]) <= 1800);
    assert.ok(!jar.cookies.has('sessionid'));
    // The API's password login is locked too: one budget.
    const api = await fetch(`${base}/api/v1/fetch_api_key`, { method: 'POST', body: new URLSearchParams({ username: 'cal@example.com', password: 'pass-word-1' }) });
    assert.equal(api.status, 429);
  });

  it("makes a deactivated user's session no credential", async () => {
    const jar = new Jar();
    assert.equal((await logIn(jar, base, 'dee@example.com', 'pass-word-1')).status, 302);
    const cookie = jar.header();
    const up = await tusUpload(base, { cookie }, Buffer.from('before'));
    assert.equal(up.status, 200, up.text);
    const url = JSON.parse(up.text).url as string;
    assert.equal((await fetch(base + url, { headers: { cookie } })).status, 200);
    assert.equal((await realm.owner.call('DELETE', `/users/${realm.members.dee.id}`)).status, 200);
    assert.equal((await tusUpload(base, { cookie }, Buffer.from('after'))).status, 401);
    assert.notEqual((await fetch(base + url, { headers: { cookie } })).status, 200);
    // And the form says so for the right password, with no session.
    const again = await logIn(new Jar(), base, 'dee@example.com', 'pass-word-1');
    assert.equal(again.status, 200);
    assert.ok(again.html.includes('Your account dee@example.com has been deactivated. Please contact your organization administrator to reactivate it.'), again.html);
    assert.ok(!again.set.some((c) => c.startsWith('sessionid=')));
  });

  it("ends a user's sessions when the password changes", async () => {
    const jar = new Jar();
    assert.equal((await logIn(jar, base, 'bea@example.com', 'pass-word-1')).status, 302);
    const cookie = jar.header();
    assert.equal((await tusUpload(base, { cookie }, Buffer.from('x'))).status, 200);
    const bea = realm.members.bea.client;
    const changed = await bea.call('PATCH', '/settings', { old_password: 'pass-word-1', new_password: 'another-pass-1' });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await tusUpload(base, { cookie }, Buffer.from('x'))).status, 401);
    assert.equal((await logIn(new Jar(), base, 'bea@example.com', 'another-pass-1')).status, 302);
  });

  it('logs the new user in when an invitation link makes the account', async () => {
    const made = await realm.owner.post('/invites/multiuse', { invite_as: 400, stream_ids: [] });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const link = made.body.invite_link as string;
    const jar = new Jar();
    const done = await visit(jar, link, { form: { email: 'eve@example.org', full_name: 'Eve', password: 'long enough' } });
    assert.equal(done.status, 200, done.html);
    assert.ok(jar.cookies.has('sessionid'), done.set.join('\n'));
    const up = await tusUpload(base, { cookie: jar.header() }, Buffer.from("eve's first file"));
    assert.equal(up.status, 200, up.text);
    const got = await fetch(base + (JSON.parse(up.text).url as string), { headers: { cookie: jar.header() } });
    assert.equal(await got.text(), "eve's first file");
  });
});

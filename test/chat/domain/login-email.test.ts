// Which login names POST /fetch_api_key takes for email addresses (Django's EmailValidator, as
// Zulip's validate_login_email applies it).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isLoginEmail } from '../../../src/chat/domain/login-email.js';

it('takes what Django takes for an email address', () => {
  for (const ok of ['iago@zulip.com', 'a.b+c@sub.example.org', 'x@localhost', 'x@[127.0.0.1]', 'x@[::1]', '"odd..name"@example.com', 'me@bücher.de', 'a@b.c0'])
    assert.equal(isLoginEmail(ok), true, ok);
  for (const bad of [
    '',
    'iago',
    'iago@',
    '@zulip.com',
    'iago@zulip',
    ' iago@zulip.com',
    'iago@zulip.com ',
    'a..b@x.com',
    'a@-x.com',
    'a@x.c',
    'a@x.com-',
    'a b@x.com',
    '"a b"@x.com',
    `${'a'.repeat(320)}@x.com`,
  ])
    assert.equal(isLoginEmail(bad), false, JSON.stringify(bad));
});

it("takes addresses at the realm's own host, which Keel makes even where Django's rule would not", () => {
  assert.equal(isLoginEmail('owner@127.0.0.1'), false);
  assert.equal(isLoginEmail('owner@127.0.0.1', '127.0.0.1'), true);
  assert.equal(isLoginEmail('user7@Intranet', 'intranet'), true);
  assert.equal(isLoginEmail('someone@other', 'intranet'), false, 'only that host');
  assert.equal(isLoginEmail('not an address@intranet', 'intranet'), false, 'the local part is still checked');
});

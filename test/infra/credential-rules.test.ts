// The one rule for managing credentials: an API user manages only credentials within its own
// permissions; the owner login manages all; nobody grants what it does not hold.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { mayManage, requireMayGrant, requireMayManage } from '../../src/infra/credential-rules.js';
import type { Principal } from '../../src/infra/command.js';

const key = (permissions: string[]): Principal => ({ kind: 'apiuser', id: 1, customerId: 1, permissions });
const login: Principal = { kind: 'login', id: 1, customerId: 1, permissions: ['*'] };

it('lets an API user manage a credential only when it holds every permission the credential holds', () => {
  assert.equal(mayManage(key(['apiuser.update']), ['*']), false);
  assert.equal(mayManage(key(['apiuser.update']), ['apiuser.update', 'apiuser.get']), false);
  assert.equal(mayManage(key(['apiuser.update']), ['apiuser.*']), false);
  assert.equal(mayManage(key(['dns.record.*']), ['dns.*']), false);
  assert.equal(mayManage(key(['apiuser.update']), ['apiuser.update']), true);
  assert.equal(mayManage(key(['apiuser.update']), []), true);
  assert.equal(mayManage(key(['apiuser.*']), ['apiuser.update', 'apiuser.get']), true);
  assert.equal(mayManage(key(['dns.*']), ['dns.record.*', 'dns.domain.get']), true);
  assert.equal(mayManage(key(['*']), ['*']), true);
  assert.equal(mayManage(login, ['*', 'anything.at.all']), true);
});

it('answers ACCESS_DENIED without naming the stronger permissions, and refuses to grant what it lacks', () => {
  assert.throws(
    () => requireMayManage(key(['apiuser.update']), ['*', 'apiuser.update'], 'API user 1'),
    (e: any) => e.code === 'ACCESS_DENIED' && e.message === 'Access Denied: API user 1 holds permissions this caller does not, so this caller may not change it',
  );
  assert.doesNotThrow(() => requireMayManage(key(['apiuser.*']), ['apiuser.get'], 'x'));
  assert.throws(
    () => requireMayGrant(key(['apiuser.*']), ['apiuser.get', 'customer.get']),
    (e: any) => e.code === 'ACCESS_DENIED' && /cannot grant "customer.get"/.test(e.message),
  );
  assert.doesNotThrow(() => requireMayGrant(login, ['*']));
});

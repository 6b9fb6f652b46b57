// Unit tests of the account rules: role changes, deactivation, email visibility, placeholders.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ChatError } from '../../../src/chat/errors.js';
import { botEmail, canSeeRealEmail, checkDeactivation, checkRoleChange, checkSelfDeactivation, placeholderEmail, placeholderUserId } from '../../../src/chat/domain/user-rules.js';

const owner = { id: 1, role: 100, is_bot: 0 };
const admin = { id: 2, role: 200, is_bot: 0 };
const member = { id: 3, role: 400, is_bot: 0 };
const guest = { id: 4, role: 600, is_bot: 0 };

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ChatError);
    return `${err.code}: ${err.message}`;
  }
  return 'ok';
}

it('lets only owners give or take the owner role, and keeps the last owner', () => {
  assert.equal(checkRoleChange(owner, member, 100, 1), true);
  assert.match(
    code(() => checkRoleChange(admin, member, 100, 1)),
    /^UNAUTHORIZED_PRINCIPAL: Must be an organization owner/,
  );
  assert.match(
    code(() => checkRoleChange(admin, { ...owner, id: 9 }, 400, 2)),
    /^UNAUTHORIZED_PRINCIPAL/,
  );
  assert.match(
    code(() => checkRoleChange(owner, owner, 200, 1)),
    /^BAD_REQUEST: The owner permission cannot be removed from the only organization owner/,
  );
  assert.equal(checkRoleChange(owner, owner, 200, 2), true);
  assert.equal(checkRoleChange(admin, member, 300, 1), true);
  assert.equal(checkRoleChange(admin, member, 400, 1), false, 'the same role changes nothing');
  assert.match(
    code(() => checkRoleChange(member, guest, 400, 1)),
    /^UNAUTHORIZED_PRINCIPAL: Must be an organization administrator/,
  );
  assert.match(
    code(() => checkRoleChange(admin, member, 500, 1)),
    /^BAD_REQUEST: Invalid role/,
  );
  assert.match(
    code(() => checkRoleChange(admin, guest, 200, 1)),
    /^BAD_REQUEST: Guests cannot be organization administrators/,
  );
  assert.equal(checkRoleChange(admin, guest, 400, 1), true);
});

it('keeps the last owner from being deactivated, by others or by themselves', () => {
  assert.match(
    code(() => checkDeactivation(owner, owner, 1)),
    /only organization owner/,
  );
  assert.match(
    code(() => checkDeactivation(admin, { ...owner, id: 7 }, 2)),
    /^UNAUTHORIZED_PRINCIPAL/,
  );
  assert.match(
    code(() => checkDeactivation(member, guest, 1)),
    /^UNAUTHORIZED_PRINCIPAL/,
  );
  assert.equal(
    code(() => checkDeactivation(admin, member, 1)),
    'ok',
  );
  assert.match(
    code(() => checkSelfDeactivation(owner, 1, 3)),
    /^CANNOT_DEACTIVATE_LAST_USER: Cannot deactivate the only organization owner/,
  );
  assert.match(
    code(() => checkSelfDeactivation(owner, 1, 1)),
    /^CANNOT_DEACTIVATE_LAST_USER: Cannot deactivate the only user/,
  );
  assert.equal(
    code(() => checkSelfDeactivation(owner, 2, 3)),
    'ok',
  );
  assert.equal(
    code(() => checkSelfDeactivation(member, 1, 3)),
    'ok',
  );
});

it('shows real email addresses by each user’s visibility setting', () => {
  assert.equal(canSeeRealEmail(guest, 3, 1, false), true);
  assert.equal(canSeeRealEmail(guest, 3, 2, false), false);
  assert.equal(canSeeRealEmail(member, 4, 2, false), true);
  assert.equal(canSeeRealEmail(member, 4, 5, false), false);
  assert.equal(canSeeRealEmail({ id: 5, role: 300 }, 4, 5, false), true);
  assert.equal(canSeeRealEmail(admin, 4, 3, false), true);
  assert.equal(canSeeRealEmail({ id: 5, role: 300 }, 4, 3, false), false);
  assert.equal(canSeeRealEmail(owner, 4, 4, false), false);
  assert.equal(canSeeRealEmail(member, 3, 4, false), true, 'everyone sees their own');
  assert.equal(canSeeRealEmail(guest, 8, 4, true), true, 'bots always show theirs');
});

it('reads and writes placeholder and bot addresses', () => {
  assert.equal(placeholderEmail(12, 'chat.example'), 'user12@chat.example');
  assert.equal(placeholderUserId('USER12@Chat.Example', 'chat.example'), 12);
  assert.equal(placeholderUserId('user12@elsewhere', 'chat.example'), null);
  assert.equal(placeholderUserId('alice@chat.example', 'chat.example'), null);
  assert.equal(botEmail('deploy', 'chat.example'), 'deploy-bot@chat.example');
});

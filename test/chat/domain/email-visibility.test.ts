// Unit tests of who sees a real email address (Zulip's email_address_visibility, every role against
// every setting), the API email every viewer sees instead, and the placeholder's form.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { canSeeRealEmail, displayEmail, EMAIL_VISIBILITY, emailIsPublic, looksLikePlaceholder, placeholderUserId, roleSeesEmail } from '../../../src/chat/domain/user-rules.js';
import { ROLE } from '../../../src/chat/domain/roles.js';
import { addressIsPublic, avatarUrlFor, emailVisibility, gravatarUrl, userObject } from '../../../src/chat/domain/users.js';
import { spectatorOf } from '../../../src/chat/domain/spectators.js';
import type { ChatUser, Realm } from '../../../src/chat/tables.js';

const { everyone, members, admins, nobody, moderators } = EMAIL_VISIBILITY;

// Zulip's ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS, written out: which settings show the
// address to each role.
const TABLE: [role: number, sees: number[]][] = [
  [ROLE.owner, [everyone, members, moderators, admins]],
  [ROLE.administrator, [everyone, members, moderators, admins]],
  [ROLE.moderator, [everyone, members, moderators]],
  [ROLE.member, [everyone, members]],
  [ROLE.guest, [everyone]],
];

it('shows a real address to each role exactly by Zulip’s table', () => {
  assert.deepEqual(Object.values(EMAIL_VISIBILITY).sort(), [1, 2, 3, 4, 5]);
  for (const [role, sees] of TABLE) {
    for (const visibility of Object.values(EMAIL_VISIBILITY)) {
      const expected = sees.includes(visibility);
      assert.equal(roleSeesEmail(role, visibility), expected, `role ${role}, visibility ${visibility}`);
      assert.equal(canSeeRealEmail({ id: 1, role }, 2, visibility, false), expected, `role ${role}, visibility ${visibility}`);
    }
  }
  assert.equal(roleSeesEmail(ROLE.owner, nobody), false, 'nobody means nobody, owners included');
});

it('shows users their own address and everyone a bot’s, whatever the setting', () => {
  for (const visibility of Object.values(EMAIL_VISIBILITY)) {
    assert.equal(canSeeRealEmail({ id: 7, role: ROLE.guest }, 7, visibility, false), true);
    assert.equal(canSeeRealEmail({ id: 7, role: ROLE.guest }, 8, visibility, true), true);
  }
  // Finding a user by real address goes by role alone (Zulip's access_user_by_email).
  assert.equal(roleSeesEmail(ROLE.member, admins), false);
});

it('gives every viewer the same API email: the real address only when it is public', () => {
  assert.equal(emailIsPublic(everyone, false), true);
  for (const v of [members, admins, nobody, moderators]) {
    assert.equal(emailIsPublic(v, false), false);
    assert.equal(displayEmail(12, 'ann@example.com', v, false, 'chat.example'), 'user12@chat.example');
    assert.equal(displayEmail(12, 'deploy-bot@chat.example', v, true, 'chat.example'), 'deploy-bot@chat.example', 'bots always public');
  }
  assert.equal(displayEmail(12, 'ann@example.com', everyone, false, 'chat.example'), 'ann@example.com');
});

it('reads a user’s setting, and avatars by whether the address is public', () => {
  assert.equal(emailVisibility({ settings: '{}', is_bot: 0 }), everyone, 'Zulip’s default');
  assert.equal(emailVisibility({ settings: '{"email_address_visibility":4}', is_bot: 0 }), nobody);
  assert.equal(emailVisibility({ settings: '{"email_address_visibility":4}', is_bot: 1 }), everyone, 'bots are fixed at everyone');
  const hidden = { email: 'user3@chat.example', delivery_email: 'ann@example.com', avatar_version: 2, avatar_path: null };
  const shown = { ...hidden, email: 'ann@example.com' };
  assert.equal(addressIsPublic(shown), true);
  assert.equal(addressIsPublic(hidden), false);
  // client_gravatar leaves the URL to the client only when it can hash a public address.
  assert.equal(avatarUrlFor(shown, true), null);
  assert.equal(avatarUrlFor(hidden, true), gravatarUrl('ann@example.com', 2));
  assert.equal(avatarUrlFor(hidden, false), gravatarUrl('ann@example.com', 2));
  assert.match(gravatarUrl('Ann@Example.com ', 2, true), /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&s=500&version=2$/);
  assert.equal(gravatarUrl('Ann@Example.com ', 2), gravatarUrl('ann@example.com', 2));
});

it('recognises the placeholder of this realm only, with an id the store can hold', () => {
  assert.equal(placeholderUserId(' User12@Chat.Example', 'chat.example'), 12);
  assert.equal(placeholderUserId('user12@other.example', 'chat.example'), null);
  assert.equal(placeholderUserId('user@chat.example', 'chat.example'), null);
  assert.equal(placeholderUserId('user12x@chat.example', 'chat.example'), null);
  assert.equal(placeholderUserId(`user${'9'.repeat(16)}@chat.example`, 'chat.example'), null);
  assert.equal(looksLikePlaceholder(`user${'9'.repeat(16)}@chat.example`, 'chat.example'), true);
  assert.equal(looksLikePlaceholder('user5@chat.example.org', 'chat.example'), false);
  assert.equal(looksLikePlaceholder('superuser5@chat.example', 'chat.example'), false);
});

it('renders the user object with the API email for all, and the real one only where allowed', () => {
  const ann: ChatUser = {
    ...spectatorOf({ id: 1, default_language: 'en' } as Realm),
    id: 3,
    email: 'user3@chat.example',
    email_lower: 'user3@chat.example',
    delivery_email: 'ann@example.com',
    full_name: 'Ann',
    role: ROLE.member,
    settings: JSON.stringify({ email_address_visibility: moderators }),
  };
  const seen = (viewer?: { id: number; role: number }) => {
    const u = userObject(ann, { clientGravatar: true, includeProfileFields: false, viewer });
    return [u.email, u.delivery_email, u.avatar_url];
  };
  const url = gravatarUrl('ann@example.com', 1);
  assert.deepEqual(seen({ id: 3, role: ROLE.member }), ['user3@chat.example', 'ann@example.com', url]);
  assert.deepEqual(seen({ id: 4, role: ROLE.moderator }), ['user3@chat.example', 'ann@example.com', url]);
  assert.deepEqual(seen({ id: 4, role: ROLE.member }), ['user3@chat.example', null, url]);
  assert.deepEqual(seen(undefined), ['user3@chat.example', null, url]);
  const publicAnn = { ...ann, email: 'ann@example.com', email_lower: 'ann@example.com', settings: '{}' };
  const asSpectator = userObject(publicAnn, { clientGravatar: true, includeProfileFields: false, viewer: spectatorOf({ id: 1, default_language: 'en' } as Realm) });
  assert.deepEqual([asSpectator.email, asSpectator.delivery_email, asSpectator.avatar_url], ['ann@example.com', null, null], 'spectators never get delivery_email');
});

// Unit tests of the realm rules that need no store: the topic a channel message must have, and
// whether members may change their own name and address (domain/realm-rules.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkOwnEmailChangeAllowed, checkTopicGiven, nameForComparison, ownNameChangeAllowed } from '../../../src/chat/domain/realm-rules.js';
import { normaliseTopic } from '../../../src/chat/domain/topics.js';
import { ROLE } from '../../../src/chat/domain/roles.js';

const realm = (over: Partial<Record<'mandatory_topics' | 'name_changes_disabled' | 'email_changes_disabled', number>> = {}) => ({
  mandatory_topics: 0,
  name_changes_disabled: 0,
  email_changes_disabled: 0,
  ...over,
});
const message = (e: unknown) => (e as Error).message;

describe('mandatory_topics', () => {
  it('refuses every spelling of the empty topic, with the send and the edit wording', () => {
    for (const raw of ['', '  ', '(no topic)', 'general chat']) {
      const topic = normaliseTopic(raw);
      assert.throws(
        () => checkTopicGiven(realm({ mandatory_topics: 1 }), topic, 'send'),
        (e) => message(e) === 'Topics are required in this organization',
      );
      assert.throws(
        () => checkTopicGiven(realm({ mandatory_topics: 1 }), topic, 'edit'),
        (e) => message(e) === 'Topics are required in this organization.',
      );
      assert.doesNotThrow(() => checkTopicGiven(realm(), topic, 'send'));
    }
  });

  it('accepts any other topic', () => {
    for (const raw of ['plans', 'General chat!', '(no topic) 2', '✔ done']) assert.doesNotThrow(() => checkTopicGiven(realm({ mandatory_topics: 1 }), normaliseTopic(raw), 'send'));
  });
});

describe('own name and email changes', () => {
  it('skips members’ name changes when disabled, never administrators’', () => {
    assert.equal(ownNameChangeAllowed(realm(), { role: ROLE.member }), true);
    assert.equal(ownNameChangeAllowed(realm({ name_changes_disabled: 1 }), { role: ROLE.member }), false);
    assert.equal(ownNameChangeAllowed(realm({ name_changes_disabled: 1 }), { role: ROLE.guest }), false);
    assert.equal(ownNameChangeAllowed(realm({ name_changes_disabled: 1 }), { role: ROLE.administrator }), true);
    assert.equal(ownNameChangeAllowed(realm({ name_changes_disabled: 1 }), { role: ROLE.owner }), true);
  });

  it('refuses members’ email changes when disabled, never administrators’', () => {
    assert.doesNotThrow(() => checkOwnEmailChangeAllowed(realm(), { role: ROLE.member }));
    assert.throws(
      () => checkOwnEmailChangeAllowed(realm({ email_changes_disabled: 1 }), { role: ROLE.moderator }),
      (e) => message(e) === 'Email address changes are disabled in this organization.',
    );
    assert.doesNotThrow(() => checkOwnEmailChangeAllowed(realm({ email_changes_disabled: 1 }), { role: ROLE.owner }));
  });
});

describe('require_unique_names comparison', () => {
  it('folds case and compatibility forms as Zulip (NFKC, casefold)', () => {
    for (const n of ['IaGo', 'iago', 'ＩＡＧＯ', '𝕚𝕒𝕘𝕠', '𝒾𝒶𝑔𝑜']) assert.equal(nameForComparison(n), 'iago', n);
    assert.equal(nameForComparison('Straße'), nameForComparison('STRASSE'));
    assert.notEqual(nameForComparison('iago'), nameForComparison('iago 2'));
  });
});

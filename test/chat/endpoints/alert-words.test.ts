// Alert words in process: GET/POST/DELETE /users/me/alert_words (case, trimming, the 100-character
// limit, duplicates), the alert_words event and register state, has_alert_word on new messages (word
// boundaries, never for the sender's own message) and the is:alerted narrow; starred_messages,
// custom_profile_fields and scheduled_messages in register. Every 2xx answer and event is checked
// against Zulip's OpenAPI by the in-process client.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok, type InProcessClient } from '../../helpers/in-process-chat.js';
import { containsAlertWord, RealmAlertWords, usersAlerted } from '../../../src/chat/domain/alert-words.js';

type Chat = Awaited<ReturnType<typeof inProcessChat>>;

it('matches an alert word only where it stands apart', () => {
  assert.equal(containsAlertWord('the cat.', 'cat'), true);
  assert.equal(containsAlertWord('cat', 'cat'), true);
  assert.equal(containsAlertWord('(cat) and "cat"', 'cat'), true);
  assert.equal(containsAlertWord('cats and concat', 'cat'), false);
  assert.equal(containsAlertWord('concat, then cat!', 'cat'), true, 'a later occurrence counts');
  assert.equal(containsAlertWord('big deal here', 'big deal'), true, 'phrases too');
});

it("finds all of a realm's words at once, as each would be found alone", () => {
  // A small alphabet with the boundary characters, so words overlap, repeat and stand apart often.
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const pick = (len: number) => Array.from({ length: len }, () => 'ab .,(!'[rand(7)]).join('');
  for (let round = 0; round < 200; round++) {
    const words = [...new Set(Array.from({ length: 1 + rand(6) }, () => pick(1 + rand(4)).trim()).filter(Boolean))];
    const text = pick(rand(40));
    const realm = new RealmAlertWords(
      new Map([
        [1, words.slice(0, 2)],
        [2, words.slice(2)],
      ]),
    );
    assert.deepEqual([...realm.found(text)].sort(), words.filter((w) => containsAlertWord(text, w)).sort(), JSON.stringify({ text, words }));
    assert.deepEqual(
      [...usersAlerted(realm, text.toUpperCase(), [1, 2])].sort(),
      [1, 2].filter((u) => (realm.byUser.get(u) ?? []).some((w) => containsAlertWord(text, w))),
    );
  }
});

it("costs the message's length times the longest word, however many words there are", () => {
  // 1,000 words that all begin where the message does (looked for one by one: 0.4 s).
  const words = Array.from({ length: 1000 }, (_, i) => 'a'.repeat(i % 100) + 'bcdefghijk'[Math.floor(i / 100)]);
  // And the worst case: a word may start at every other character and run 100 characters deep.
  words.push('a('.repeat(49) + 'az');
  const realm = new RealmAlertWords(new Map([[1, words]]));
  for (const text of ['a'.repeat(10_000), 'a '.repeat(5000), ('a'.repeat(99) + ' ').repeat(100), '(a'.repeat(5000)]) {
    usersAlerted(realm, text, [1]);
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      assert.deepEqual([...usersAlerted(realm, text, [1])], []);
      best = Math.min(best, performance.now() - t0);
    }
    console.log(`# 1,000 alert words on ${JSON.stringify(text.slice(0, 6))}... (${text.length} characters): ${best.toFixed(2)} ms`);
    assert.ok(best < 50, `${best} ms`);
  }
  assert.deepEqual([...usersAlerted(realm, 'aaab!', [1])], [1]);
});

await forEachEngine('chat alert words', (engine) => {
  let storage: Storage;
  let chat: Chat;
  let alice: InProcessClient;
  let bob: InProcessClient;

  before(async () => {
    const realm = await inProcessRealm(engine, { members: ['alice', 'bob'], channel: { name: 'garden', by: 'alice', subscribers: ['alice', 'bob'] } });
    ({ storage, chat } = realm);
    ({ client: alice } = realm.members.alice);
    ({ client: bob } = realm.members.bob);
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  const send = async (c: InProcessClient, content: string) => (await ok(c, 'POST', '/messages', { type: 'stream', to: 'garden', topic: 'plants', content })).id as number;
  const flagsOf = async (c: InProcessClient, id: number) => (await ok(c, 'GET', `/messages/${id}`)).message.flags as string[];

  it('adds words ignoring case and duplicates, trimmed, and lists them in the order added', async () => {
    assert.deepEqual((await ok(bob, 'GET', '/users/me/alert_words')).alert_words, []);
    const added = await ok(bob, 'POST', '/users/me/alert_words', { alert_words: ['Tomato', '  basil ', '', 'tomato', 'big harvest'] });
    assert.deepEqual(added.alert_words, ['Tomato', 'basil', 'big harvest']);
    assert.deepEqual((await ok(bob, 'GET', '/users/me/alert_words')).alert_words, ['Tomato', 'basil', 'big harvest']);
    assert.deepEqual((await ok(alice, 'GET', '/users/me/alert_words')).alert_words, [], 'words are per user');
  });

  it('refuses a word over 100 characters, naming it, and changes nothing', async () => {
    const r = await bob.call('POST', '/users/me/alert_words', { alert_words: ['fine', 'x'.repeat(101)] });
    assert.equal(r.status, 400);
    assert.equal(r.body.msg, 'alert_words[1] is too long (limit: 100 characters)');
    assert.deepEqual((await ok(bob, 'GET', '/users/me/alert_words')).alert_words, ['Tomato', 'basil', 'big harvest']);
    const missing = await bob.call('POST', '/users/me/alert_words', {});
    assert.equal(missing.status, 400);
    assert.match(missing.body.msg, /alert_words/);
  });

  it('flags messages that contain a word for the receiver, never for the sender, and is:alerted finds them', async () => {
    const hit = await send(alice, 'The TOMATO is ripe.');
    const phrase = await send(alice, 'what a big harvest!');
    const miss = await send(alice, 'tomatoes and basilisks');
    const own = await send(bob, 'my tomato');
    assert.ok((await flagsOf(bob, hit)).includes('has_alert_word'));
    assert.ok((await flagsOf(bob, phrase)).includes('has_alert_word'));
    assert.ok(!(await flagsOf(bob, miss)).includes('has_alert_word'));
    assert.ok(!(await flagsOf(bob, own)).includes('has_alert_word'), 'own message');
    assert.ok(!(await flagsOf(alice, hit)).includes('has_alert_word'), 'alice has no alert words');
    const alerted = await ok(bob, 'GET', '/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: 'is', operand: 'alerted' }]) });
    assert.deepEqual(
      alerted.messages.map((m: { id: number }) => m.id),
      [hit, phrase],
    );
  });

  it("removes words ignoring case, ignores unknown ones, and tells the user's clients", async () => {
    const q = await ok(bob, 'POST', '/register', { event_types: ['alert_words'], fetch_event_types: ['alert_words'] });
    assert.deepEqual(q.alert_words, ['Tomato', 'basil', 'big harvest']);
    const other = (await ok(alice, 'POST', '/register', { event_types: ['alert_words'] })).queue_id;
    const left = await ok(bob, 'DELETE', '/users/me/alert_words', { alert_words: ['TOMATO', 'nothing'] });
    assert.deepEqual(left.alert_words, ['basil', 'big harvest']);
    const events = (await ok(bob, 'GET', '/events', { queue_id: q.queue_id, last_event_id: -1, dont_block: true })).events;
    assert.deepEqual(
      events.map(({ id: _id, ...e }: Record<string, unknown>) => e),
      [{ type: 'alert_words', alert_words: ['basil', 'big harvest'] }],
    );
    assert.deepEqual((await ok(alice, 'GET', '/events', { queue_id: other, last_event_id: -1, dont_block: true })).events, [], 'only the owner hears of it');
    const after = await send(alice, 'tomato again');
    assert.ok(!(await flagsOf(bob, after)).includes('has_alert_word'));
  });

  it('registers starred_messages, custom_profile_fields and scheduled_messages', async () => {
    const id = await send(alice, 'star me');
    await ok(bob, 'POST', '/messages/flags', { messages: JSON.stringify([id]), op: 'add', flag: 'starred' });
    const state = await ok(bob, 'POST', '/register', { fetch_event_types: ['starred_messages', 'custom_profile_fields', 'scheduled_messages'] });
    assert.deepEqual(state.starred_messages, [id]);
    assert.deepEqual(state.custom_profile_fields, []);
    assert.equal(state.custom_profile_field_types.SHORT_TEXT.id, 1);
    assert.deepEqual(state.scheduled_messages, []);
  });
});

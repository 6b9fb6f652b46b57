// A request that lost a unique-key race is run again (store-races.ts), which is right only if nothing
// it wrote was committed before the loss. Moving a topic posts notices as the notification bot, made
// on the realm's first move: concurrent first moves race on the bot's email. That race must be lost
// before the move commits, or the rerun finds the move done: the caller got an error for a move
// that happened, and its notices and update_message events were never sent.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachEngine } from '../../helpers/engines.js';
import { inProcessRealm } from '../../helpers/chat-realm.js';
import type { Storage } from '../../helpers/server.js';
import { inProcessChat, ok } from '../../helpers/in-process-chat.js';

const MOVES = 8;

await forEachEngine('chat edit races', (engine) => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;

  before(async () => {
    ({ storage, chat } = await inProcessRealm(engine));
  });
  after(async () => {
    await chat?.close();
    await storage?.dispose();
  });

  it('answers concurrent first topic moves each once, with one notice each, from one notification bot', async () => {
    const owner = chat.owner;
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'moves' }] });
    const ids: number[] = [];
    for (let i = 0; i < MOVES; i++) ids.push((await ok(owner, 'POST', '/messages', { type: 'stream', to: 'moves', topic: `from ${i}`, content: `message ${i}` })).id);
    const answers = await Promise.all(ids.map((id, i) => owner.call('PATCH', `/messages/${id}`, { topic: `to ${i}`, send_notification_to_new_thread: true })));
    assert.deepEqual(
      answers.map((a) => [a.status, a.body.msg]),
      answers.map(() => [200, '']),
    );
    const bots = (await ok(owner, 'GET', '/users')).members.filter((u: { full_name: string }) => u.full_name === 'Notification Bot');
    assert.equal(bots.length, 1);
    for (let i = 0; i < MOVES; i++) {
      const narrow = JSON.stringify([
        { operator: 'stream', operand: 'moves' },
        { operator: 'topic', operand: `to ${i}` },
      ]);
      const got = (await ok(owner, 'GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow })).messages;
      assert.deepEqual(
        got.map((m: { id: number; sender_id: number }) => (m.id === ids[i] ? 'moved' : m.sender_id === bots[0].user_id ? 'notice' : m.id)),
        ['moved', 'notice'],
        `topic to ${i}`,
      );
    }
  });

  it("answers a reaction removal racing the message's deletion with Zulip's 400s, never 500", async () => {
    const owner = chat.owner;
    await ok(owner, 'POST', '/users/me/subscriptions', { subscriptions: [{ name: 'deletions' }] });
    const statuses = new Map<number, number>();
    for (let round = 0; round < 80; round++) {
      const id = (await ok(owner, 'POST', '/messages', { type: 'stream', to: 'deletions', topic: 't', content: `going ${round}` })).id;
      await ok(owner, 'POST', `/messages/${id}/reactions`, { emoji_name: 'smile' });
      // The deletion first, the removal a little later each round: some rounds land in between its reads.
      const deleted = owner.call('DELETE', `/messages/${id}`);
      await new Promise((resolve) => setTimeout(resolve, round % 8));
      const [removed] = await Promise.all([owner.call('DELETE', `/messages/${id}/reactions`, { emoji_name: 'smile' }), deleted]);
      statuses.set(removed.status, (statuses.get(removed.status) ?? 0) + 1);
      // Gone before the removal read it, or its reaction gone with it in between: Zulip's 400s.
      if (removed.status !== 200) assert.ok(removed.status === 400 && ['Invalid message(s)', "Reaction doesn't exist."].includes(removed.body.msg), JSON.stringify(removed));
    }
    console.log(`# reaction removals racing deletions: ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});

// Black-box: a whole conversation followed through zulip-js's event API (queues.register,
// events.retrieve, callOnEachEvent, queues.deregister) against a real `keel serve`.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer } from '../../helpers/server.js';
import { ChatClient } from '../../helpers/chat-client.js';

// callOnEachEvent polls forever; after the test its next request is left pending, so the loop
// stops without touching zulip-js and without keeping the process alive.
const helper = createRequire(import.meta.url)('zulip-js/lib/helper.js') as { fetch: (...a: unknown[]) => Promise<unknown> };
let stopped = false;
/** Registrations answered so far: tells when callOnEachEvent's own queue exists. */
let registered = 0;
const validatedFetch = helper.fetch;
helper.fetch = async (...a: unknown[]) => {
  if (stopped) return new Promise(() => {});
  const res = await validatedFetch(...a);
  if (String(a[0]).includes('/api/v1/register')) registered++;
  return res;
};

async function until<T>(what: string, get: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

await forEachEngine('chat events through zulip-js', (engine) => {
  it('follows a conversation: register, retrieve, callOnEachEvent, deregister', async () => {
    const storage = await createStorage(engine);
    const server = await startServer(storage);
    stopped = false;
    try {
      const raw = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
      const made = await raw.post('/users', { email: 'alice@example.com', password: 'pass-word-1', full_name: 'Alice' });
      assert.equal(made.body.result, 'success', JSON.stringify(made.body));
      const key = await raw.call('POST', '/fetch_api_key', { username: 'alice@example.com', password: 'pass-word-1' }, null);
      const owner = await zulip({ realm: server.chatUrl, username: server.chatSecrets!.email, apiKey: server.chatSecrets!.apiKey });
      const alice = await zulip({ realm: server.chatUrl, username: key.body.email, apiKey: key.body.api_key });
      assert.equal((await owner.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'general' }]), principals: JSON.stringify([made.body.user_id]) })).result, 'success');
      assert.equal((await owner.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'general' }]) })).result, 'success');

      // Alice: an explicit queue, read with events.retrieve.
      registered = 0;
      const q = await alice.queues.register({ event_types: ['message'] });
      assert.equal(q.result, 'success', JSON.stringify(q));
      assert.equal(q.last_event_id, -1);

      // The owner: callOnEachEvent, which registers its own queue and long-polls.
      const seen: Record<string, any>[] = [];
      void owner.callOnEachEvent((e: Record<string, any>) => seen.push(e), ['message', 'update_message_flags']);
      // Its queue exists once the registration is answered; a message sent before then is in its state instead.
      await until('the callOnEachEvent queue', () => (registered >= 2 ? true : undefined));

      const hello = await owner.messages.send({ to: 'general', type: 'stream', topic: 'events', content: 'Hello, Alice' });
      assert.equal(hello.result, 'success', JSON.stringify(hello));
      const got = await alice.events.retrieve({ queue_id: q.queue_id, last_event_id: -1 });
      assert.equal(got.result, 'success', JSON.stringify(got));
      assert.deepEqual(
        got.events.map((e: Record<string, any>) => [e.type, e.message.id, e.message.content, e.flags]),
        [['message', hello.id, 'Hello, Alice', []]],
      );

      const reply = await alice.messages.send({ to: 'general', type: 'stream', topic: 'events', content: 'Hi **owner**' });
      assert.equal(reply.result, 'success', JSON.stringify(reply));
      const again = await alice.events.retrieve({ queue_id: q.queue_id, last_event_id: got.events[0].id });
      assert.deepEqual(
        again.events.map((e: Record<string, any>) => e.message.id),
        [reply.id],
        "alice's own message comes back on her queue",
      );

      await until('both messages on the owner queue', () => (seen.filter((e) => e.type === 'message').length >= 2 ? true : undefined));
      const messages = seen.filter((e) => e.type === 'message');
      assert.deepEqual(
        messages.map((e) => [e.message.id, e.message.sender_email]),
        [
          [hello.id, server.chatSecrets!.email],
          [reply.id, 'alice@example.com'],
        ],
      );
      assert.deepEqual(
        messages.map((e) => e.flags),
        [['read'], []],
      );

      assert.equal((await owner.messages.flags.add({ flag: 'read', messages: [reply.id] })).result, 'success');
      const flagged = await until('the read flag event', () => seen.find((e) => e.type === 'update_message_flags'));
      assert.deepEqual([flagged.op, flagged.operation, flagged.flag, flagged.messages], ['add', 'add', 'read', [reply.id]]);

      assert.equal((await alice.queues.deregister({ queue_id: q.queue_id })).result, 'success');
      const after = await alice.events.retrieve({ queue_id: q.queue_id, last_event_id: -1, dont_block: true });
      assert.equal(after.code, 'BAD_EVENT_QUEUE_ID');
      assert.equal(after.queue_id, q.queue_id);
    } finally {
      stopped = true;
      await server.stop();
      await storage.dispose();
    }
  });
});

// Black-box through zulip-js, unmodified: a bot's poll parked with events.retrieve ends with
// BAD_EVENT_QUEUE_ID when its owner gives it a new key (zulip-js has no named call for the bot
// endpoints, so they go through its callEndpoint, as a zulip-js user would call them).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import zulip from '../../helpers/zulip-js.js';
import { forEachEngine } from '../../helpers/engines.js';
import { createStorage, startServer } from '../../helpers/server.js';

await forEachEngine('chat credentials through zulip-js', (engine) => {
  it("ends a bot's parked events.retrieve when its owner regenerates the key; the new key works", async () => {
    const storage = await createStorage(engine);
    const server = await startServer(storage);
    try {
      const owner = await zulip({ realm: server.chatUrl, username: server.chatSecrets!.email, apiKey: server.chatSecrets!.apiKey });
      const made = await owner.callEndpoint('/bots', 'POST', { full_name: 'JS bot', short_name: 'js' });
      assert.equal(made.result, 'success', JSON.stringify(made));
      const email = `js-bot@${new URL(server.chatUrl).hostname}`;
      const bot = await zulip({ realm: server.chatUrl, username: email, apiKey: made.api_key });
      const queue = await bot.queues.register({ event_types: ['message'] });
      assert.equal(queue.result, 'success', JSON.stringify(queue));
      const parked = bot.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id });
      await sleep(400);

      const renewed = await owner.callEndpoint(`/bots/${made.user_id}/api_key/regenerate`, 'POST', {});
      assert.equal(renewed.result, 'success', JSON.stringify(renewed));
      assert.deepEqual(await parked, { result: 'error', msg: `Bad event queue ID: ${queue.queue_id}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: queue.queue_id });
      assert.equal((await bot.users.me.getProfile()).code, 'INVALID_API_KEY');
      const again = await zulip({ realm: server.chatUrl, username: email, apiKey: renewed.api_key });
      assert.equal((await again.users.me.getProfile()).user_id, made.user_id);
      const listed = await owner.callEndpoint('/bots', 'GET', {});
      assert.deepEqual(
        listed.bots.map((b: { username: string; api_key: string }) => [b.username, b.api_key]),
        [[email, renewed.api_key]],
      );
    } finally {
      await server.stop();
      await storage.dispose();
    }
  });
});

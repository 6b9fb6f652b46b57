// Black-box: an unmodified zulip-js client (multipart form posts, JSON-encoded narrows) against Keel.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import zulip from '../helpers/zulip-js.js';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, startServer } from '../helpers/server.js';

await forEachEngine('chat through zulip-js', (engine) => {
  it('subscribes, sends a channel message and reads it back with a narrow', async () => {
    const storage = await createStorage(engine);
    const server = await startServer(storage);
    try {
      const client = await zulip({ realm: server.chatUrl, username: server.chatSecrets!.email, apiKey: server.chatSecrets!.apiKey });
      const me = await client.users.me.getProfile();
      assert.equal(me.result, 'success', JSON.stringify(me));
      const sub = await client.users.me.subscriptions.add({ subscriptions: JSON.stringify([{ name: 'general' }]) });
      assert.equal(sub.result, 'success', JSON.stringify(sub));
      const sent = await client.messages.send({ to: 'general', type: 'stream', topic: 'from js', content: 'Hello *from* zulip-js' });
      assert.equal(sent.result, 'success', JSON.stringify(sent));
      const got = await client.messages.retrieve({
        anchor: 'newest',
        num_before: 5,
        num_after: 0,
        narrow: [
          { operator: 'channel', operand: 'general' },
          { operator: 'topic', operand: 'from js' },
        ],
      });
      assert.equal(got.result, 'success', JSON.stringify(got));
      assert.deepEqual(
        got.messages.map((m: { id: number }) => m.id),
        [sent.id],
      );
      assert.equal(got.messages[0].content, '<p>Hello <em>from</em> zulip-js</p>');
      assert.equal(got.messages[0].subject, 'from js');
      const streams = await client.streams.retrieve();
      assert.deepEqual(
        streams.streams.map((s: { name: string }) => s.name),
        ['general'],
      );
    } finally {
      await server.stop();
      await storage.dispose();
    }
  });
});

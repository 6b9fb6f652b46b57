// Black-box: keel init and serve for Chat (the realm owner's secrets once, the chat listener).
import assert from 'node:assert/strict';
import net from 'node:net';
import { it } from 'node:test';
import { forEachEngine } from '../helpers/engines.js';
import { createStorage, runKeel, startServer, storageArgs } from '../helpers/server.js';
import { ChatClient } from '../helpers/chat-client.js';

await forEachEngine('keel init for chat', (engine) => {
  it('creates the realm owner once, prints its secrets once, and serves them', async () => {
    const storage = await createStorage(engine);
    try {
      const first = await runKeel(['init', '--json', '--chat-listen', '127.0.0.1:9991', ...storageArgs(storage)]);
      assert.equal(first.code, 0, first.stderr);
      const { chat } = JSON.parse(first.stdout);
      assert.deepEqual(Object.keys(chat).sort(), ['apiKey', 'email', 'password', 'realmUrl']);
      assert.equal(chat.realmUrl, 'http://127.0.0.1:9991');
      assert.equal(chat.email, 'owner@127.0.0.1');
      assert.match(chat.apiKey, /^[A-Za-z0-9]{32}$/);
      const again = await runKeel(['init', '--json', ...storageArgs(storage)]);
      assert.deepEqual(JSON.parse(again.stdout), { alreadyInitialised: true });
      const text = await runKeel(['init', ...storageArgs(storage)]);
      assert.ok(!text.stdout.includes(chat.apiKey) && !text.stdout.includes(chat.password));
      const server = await startServer(storage);
      try {
        assert.equal(server.chatSecrets, undefined, 'serve after init prints no secrets');
        const me = await new ChatClient(server.chatUrl, chat.email, chat.apiKey).get('/users/me');
        assert.deepEqual([me.status, me.body.role, me.body.email], [200, 100, chat.email]);
      } finally {
        assert.equal(await server.stop(), 0, 'both listeners close cleanly on SIGTERM');
      }
    } finally {
      await storage.dispose();
    }
  });
});

it('prints the chat address in text and gives one clear line when the chat port is in use', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as net.AddressInfo).port;
  const storage = await createStorage('sqlite');
  try {
    const r = await runKeel(['serve', '--infra-listen', '127.0.0.1:0', '--chat-listen', `127.0.0.1:${port}`, ...storageArgs(storage)]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /^keel: cannot listen on 127\.0\.0\.1:\d+ for chat: address already in use$/m);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  } finally {
    blocker.close();
    await storage.dispose();
  }
});

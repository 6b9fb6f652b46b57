import { createStorage, startServer } from './test/helpers/server.js';
import { ChatClient } from './test/helpers/chat-client.js';
const storage = await createStorage('sqlite');
const server = await startServer(storage, ['--chat-root-domain', 'keel.test']);
const port = new URL(server.chatUrl).port;
const c = (h: string) => new ChatClient(server.chatUrl, 'a@b.c', 'x'.repeat(32), h);
const tries: [string, string, string, any][] = [
  [`nosuch.keel.test:${port}`, 'GET', '/server_settings', null],
  [`nosuch.keel.test:${port}`, 'GET', '/users/me', ['a@b.c', 'x'.repeat(32)]],
  [`nosuch.keel.test:${port}`, 'POST', '/fetch_api_key', null],
  [`a.beta.keel.test:${port}`, 'GET', '/server_settings', null],
  [`127.0.0.1:${port}`, 'POST', '/fetch_api_key', null],
];
for (const [h, m, p, auth] of tries) {
  try { const r = await c(h).call(m, p, { username: 'x@y.z', password: 'pw' }, auth); console.log(h, m, p, r.status, JSON.stringify(r.body)); }
  catch (e) { console.log(h, m, p, 'ERR', (e as Error).message); }
}
await server.stop(); await storage.dispose();

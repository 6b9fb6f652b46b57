// Black-box test helpers for Chat: users made by an administrator with their own keys, event queues
// read without waiting, and Zulip's error bodies.
import assert from 'node:assert/strict';
import { ChatClient } from './chat-client.js';

type Ev = Record<string, any>;

/** An administrator makes the user; the user's own key comes from fetch_api_key. */
export async function makeUser(owner: ChatClient, chatUrl: string, name: string, role?: number): Promise<{ client: ChatClient; id: number }> {
  const email = `${name}@example.com`;
  const made = await owner.post('/users', { email, password: 'pass-word-1', full_name: name });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  if (role !== undefined) assert.equal((await owner.call('PATCH', `/users/${made.body.user_id}`, { role })).status, 200);
  const key = await owner.call('POST', '/fetch_api_key', { username: email, password: 'pass-word-1' }, null);
  return { client: new ChatClient(chatUrl, key.body.email, key.body.api_key), id: made.body.user_id };
}

export async function register(c: ChatClient, params: Record<string, unknown> = {}): Promise<Ev> {
  const r = await c.post('/register', params);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** Events queued after lastEventId, without waiting. */
export async function drain(c: ChatClient, queueId: string, lastEventId = -1): Promise<Ev[]> {
  const r = await c.get('/events', { queue_id: queueId, last_event_id: lastEventId, dont_block: true });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.events.filter((e: Ev) => e.type !== 'heartbeat');
}

export function refused(r: { status: number; body: Ev }, code: string, msg: string): void {
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.deepEqual([r.body.result, r.body.code, r.body.msg], ['error', code, msg]);
}

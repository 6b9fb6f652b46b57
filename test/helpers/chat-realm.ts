// The set-up most Chat suites share: a fresh store on one engine, a server, the realm owner's client,
// members the owner makes, and a channel with its subscribers; on a real `keel serve` (servedRealm)
// or built in this process (inProcessRealm, for a manual clock or the event hub).
import assert from 'node:assert/strict';
import { ChatClient } from './chat-client.js';
import { makeUser } from './chat-users.js';
import type { EngineName } from './engines.js';
import { inProcessChat, type InProcessClient } from './in-process-chat.js';
import { createStorage, startServer, type RunningServer, type Storage } from './server.js';

export interface RealmSpec {
  /**
   * Members the owner makes, by name, with a role (Zulip's number: 600 a guest) where given. A
   * served realm's member `ann` is ann@example.com named "ann" (chat-users.ts makeUser); an
   * in-process realm's `alice` is alice@example.com named "Alice".
   */
  members?: readonly (string | readonly [name: string, role: number])[];
  /** A channel `by` makes (the owner unless a member is named) with exactly these subscribers ('owner' for the owner). */
  channel?: { name: string; subscribers: readonly string[]; by?: string };
}

export interface Member<C> {
  client: C;
  id: number;
}

interface Caller {
  call(method: string, path: string, params?: Record<string, unknown>): Promise<{ status: number; body: Record<string, any> }>;
}

interface Realm<C extends Caller> {
  owner: C;
  ownerId: number;
  members: Record<string, Member<C>>;
  /** The channel's id, when the spec has one. */
  channelId: number;
}

/** Members, then the channel, as the spec says: what both kinds of realm share. */
async function populate<C extends Caller>(owner: C, spec: RealmSpec, makeMember: (name: string, role?: number) => Promise<Member<C>>): Promise<Realm<C>> {
  const me = await owner.call('GET', '/users/me');
  assert.equal(me.status, 200, JSON.stringify(me.body));
  const ownerId = me.body.user_id as number;
  const members: Record<string, Member<C>> = {};
  for (const m of spec.members ?? []) {
    const [name, role] = typeof m === 'string' ? [m, undefined] : m;
    members[name] = await makeMember(name, role);
  }
  let channelId = NaN;
  if (spec.channel) {
    const who = (name: string) => {
      if (name === 'owner') return { client: owner, id: ownerId };
      assert.ok(members[name], `${name} is not a member of the spec`);
      return members[name];
    };
    const by = who(spec.channel.by ?? 'owner').client;
    const principals = spec.channel.subscribers.map((name) => who(name).id);
    const made = await by.call('POST', '/users/me/subscriptions', { subscriptions: [{ name: spec.channel.name }], principals });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    channelId = (await by.call('GET', '/get_stream_id', { stream: spec.channel.name })).body.stream_id;
  }
  return { owner, ownerId, members, channelId };
}

export interface ServedRealm extends Realm<ChatClient> {
  storage: Storage;
  server: RunningServer;
  /** Stops the server and removes the store. */
  stop(): Promise<void>;
}

/** A realm on a real `keel serve` (startServer: free ports, rate limits off unless `serverArgs` set them). */
export async function servedRealm(engine: EngineName, spec: RealmSpec & { serverArgs?: string[] } = {}): Promise<ServedRealm> {
  const storage = await createStorage(engine);
  const server = await startServer(storage, spec.serverArgs);
  try {
    const owner = new ChatClient(server.chatUrl, server.chatSecrets!.email, server.chatSecrets!.apiKey);
    const realm = await populate(owner, spec, (name, role) => makeUser(owner, server.chatUrl, name, role));
    return {
      ...realm,
      storage,
      server,
      async stop() {
        await server.stop();
        await storage.dispose();
      },
    };
  } catch (err) {
    await server.stop();
    await storage.dispose();
    throw err;
  }
}

export type InProcessChat = Awaited<ReturnType<typeof inProcessChat>>;

export interface InProcessRealm extends Realm<InProcessClient> {
  storage: Storage;
  chat: InProcessChat;
  /** Closes the server (saving queues, as a graceful stop does) and removes the store. */
  close(): Promise<void>;
}

const capitalized = (name: string) => name[0].toUpperCase() + name.slice(1);

/** A realm built in this process (in-process-chat.ts: a manual clock, the event hub at hand). */
export async function inProcessRealm(engine: EngineName, spec: RealmSpec & { options?: Parameters<typeof inProcessChat>[1] } = {}): Promise<InProcessRealm> {
  const storage = await createStorage(engine);
  const chat = await inProcessChat(storage, spec.options);
  try {
    const realm = await populate(chat.owner, spec, async (name, role) => {
      const made = await chat.member(`${name}@example.com`, capitalized(name));
      if (role !== undefined) assert.equal((await chat.owner.call('PATCH', `/users/${made.id}`, { role })).status, 200);
      return made;
    });
    return {
      ...realm,
      storage,
      chat,
      async close() {
        await chat.close();
        await storage.dispose();
      },
    };
  } catch (err) {
    await chat.close();
    await storage.dispose();
    throw err;
  }
}

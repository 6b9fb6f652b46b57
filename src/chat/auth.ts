// HTTP Basic authentication of Chat requests (email:api_key, bots alike), with Zulip's errors:
// no or unreadable header 401 UNAUTHORIZED with a Basic challenge, another scheme 400, a bad key
// 401 INVALID_API_KEY, a deactivated account 401 USER_DEACTIVATED. The realm row and accepted
// credentials are cached (RequestCache): a change written on this node counts on the next request,
// one written by another node (or `keel admin` in another process) within READ_CACHE_TTL_MS (2 s).
import type { Database, Queryable } from '../platform/db/database.js';
import type { Clock } from '../platform/clock.js';
import { constantTimeEqual } from '../platform/auth/secrets.js';
import { ReadCache } from '../platform/db/read-cache.js';
import type { ChatTables, ChatUser, Realm } from './tables.js';
import { badRequest, invalidApiKey, unauthorized, userDeactivated } from './errors.js';
import { apiKeyHash, isWellFormedApiKey } from './domain/api-keys.js';
import { theRealm } from './domain/realm.js';

export function readBasic(header: string | undefined): { email: string; apiKey: string } {
  if (header === undefined) throw unauthorized('Missing authorization header for basic auth');
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) throw unauthorized('Invalid authorization header for basic auth');
  if (parts[0].toLowerCase() !== 'basic') throw badRequest('This endpoint requires HTTP basic authentication.');
  const decoded = Buffer.from(parts[1], 'base64').toString('utf8').split(':');
  if (decoded.length !== 2) throw unauthorized('Invalid authorization header for basic auth');
  return { email: decoded[0], apiKey: decoded[1] };
}

/** The user an email and a key's hash belong to, read from the store; throws Zulip's refusals. */
async function userForKey(db: Queryable<ChatTables>, realmId: number, email: string, hash: string): Promise<ChatUser> {
  const user = await db.selectFrom('chat_users').selectAll().where('api_key_hash', '=', hash).where('realm_id', '=', realmId).executeTakeFirst();
  // Compare even when no row matched, so the time taken does not tell a near miss.
  const keyOk = constantTimeEqual(user?.api_key_hash ?? apiKeyHash('no such key'), hash);
  if (!user || !keyOk) throw invalidApiKey();
  const who = email.trim().toLowerCase();
  if (who !== user.email_lower && who !== user.delivery_email.toLowerCase()) throw invalidApiKey();
  if (user.is_active !== 1) throw userDeactivated();
  return user;
}

/**
 * What every request reads before its handler: the realm and the authenticated user. Only accepted
 * credentials are kept, keyed by the email as sent with the SHA-256 of the key (never the key), so a
 * wrong key, a deactivated user or a changed email always goes back to the store. The rows are
 * frozen: a handler that wants a changed user reads it again.
 */
export class RequestCache {
  private readonly db: Database<ChatTables>;
  private readonly realms: ReadCache<Realm>;
  private readonly users: ReadCache<ChatUser>;

  constructor(db: Database<ChatTables>, clock: Clock) {
    this.db = db;
    // Each cache is emptied by writes to its own table only: a message sent must not send every
    // user's next request (a thousand re-polls after a message to a busy channel) to the store.
    this.realms = new ReadCache({ writeGeneration: () => db.writeGeneration('realms') }, clock, { maxEntries: 1 });
    this.users = new ReadCache({ writeGeneration: () => db.writeGeneration('chat_users') }, clock);
  }

  realm(): Realm | Promise<Realm | undefined> {
    return this.realms.peek('realm') ?? this.realms.get('realm', () => theRealm(this.db.kysely));
  }

  /** The user, or a promise of it when the store must be read (a hit costs no promise). */
  user(realmId: number, header: string | undefined): ChatUser | Promise<ChatUser> {
    const { email, apiKey } = readBasic(header);
    if (!isWellFormedApiKey(apiKey)) throw invalidApiKey('Malformed API key');
    const hash = apiKeyHash(apiKey);
    const key = `${realmId} ${hash} ${email}`;
    return this.users.peek(key) ?? this.users.get(key, () => userForKey(this.db.kysely, realmId, email, hash));
  }
}

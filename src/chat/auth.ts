// The realm a request addresses (by its Host header: domain/subdomains.ts) and HTTP Basic
// authentication of Chat requests within it (email:api_key, bots alike), with Zulip's errors:
// no or unreadable header 401 UNAUTHORIZED with a Basic challenge, another scheme 400, a bad key
// 401 INVALID_API_KEY, a good key at another realm's address 400, a deactivated account 401 USER_DEACTIVATED,
// a key of a deactivated realm 401 REALM_DEACTIVATED (before the other two, as Zulip's
// validate_account_and_subdomain); a subdomain no realm has 404 NONEXISTENT_SUBDOMAIN. The realm rows and accepted
// credentials are cached (RequestCache): a change written on this node counts on the next request,
// one written by another node (or `keel admin` in another process) within READ_CACHE_TTL_MS (2 s).
import type { Kysely } from 'kysely';
import type { Database } from '../platform/db/database.js';
import { preparedQuery } from '../platform/db/fast/prepared.js';
import type { Clock } from '../platform/clock.js';
import { constantTimeEqual, sha256Key } from '../platform/auth/secrets.js';
import { ReadCache } from '../platform/db/fast/read-cache.js';
import type { ChatTables, ChatUser, Realm } from './tables.js';
import { basicAuthRequired, invalidApiKey, invalidBasicAuthHeader, invalidSubdomain, malformedApiKey, notLoggedIn, realmDeactivated, userDeactivated, wrongSubdomain } from './errors.js';
import { apiKeyHash, isWellFormedApiKey } from './domain/api-keys.js';
import { realmBySubdomain } from './domain/realm.js';
import { subdomainOf } from './domain/subdomains.js';

export function readBasic(header: string | undefined): { email: string; apiKey: string } {
  // Zulip's rest_dispatch answers an /api request without any credentials before trying Basic.
  if (header === undefined) throw notLoggedIn();
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) throw invalidBasicAuthHeader();
  if (parts[0].toLowerCase() !== 'basic') throw basicAuthRequired();
  const decoded = Buffer.from(parts[1], 'base64').toString('utf8').split(':');
  if (decoded.length !== 2) throw invalidBasicAuthHeader();
  return { email: decoded[0], apiKey: decoded[1] };
}

// Keys are unique across realms (as in Zulip), so the key finds its user wherever it belongs.
// Prepared: every cached principal expires within READ_CACHE_TTL_MS, and a thousand clients
// re-polling their queues then read their rows again at once.
const userByKeyHash = preparedQuery((db: Kysely<ChatTables>, hash: string) => db.selectFrom('chat_users').selectAll().where('api_key_hash', '=', hash));

/** Whether the realm of this id is deactivated, read from the store (a key of another realm than the one addressed). */
async function realmIsDeactivated(db: Kysely<ChatTables>, realmId: number): Promise<boolean> {
  const row = await db.selectFrom('realms').select('deactivated').where('id', '=', realmId).executeTakeFirst();
  return row?.deactivated === 1;
}

/** The user an email and a key's hash belong to, read from the store; throws Zulip's refusals. */
async function userForKey(db: Kysely<ChatTables>, realm: Realm, email: string, hash: string): Promise<ChatUser> {
  const [user] = await userByKeyHash(db, hash);
  // Compare even when no row matched, so the time taken does not tell a near miss.
  const keyOk = constantTimeEqual(user?.api_key_hash ?? apiKeyHash('no such key'), hash);
  if (!user || !keyOk) throw invalidApiKey();
  // The real address, as Zulip's access_user_by_api_key compares it (a placeholder is no login name).
  if (email.trim().toLowerCase() !== user.delivery_email.toLowerCase()) throw invalidApiKey();
  // The key's own realm, as Zulip checks user_profile.realm: a key of a deactivated realm says so
  // at any address.
  if (user.realm_id === realm.id ? realm.deactivated === 1 : await realmIsDeactivated(db, user.realm_id)) throw realmDeactivated();
  if (user.is_active !== 1) throw userDeactivated();
  // A good key sent to another realm's address: Zulip's validate_account_and_subdomain.
  if (user.realm_id !== realm.id) throw wrongSubdomain();
  return user;
}

const MAX_CACHED_REALMS = 100;
const MAX_CACHED_HOSTS = 1000;

/**
 * What every request reads before its handler: the realm and the authenticated user. Only accepted
 * credentials are kept, keyed by the SHA-256 of the Authorization header (never the key itself), so a
 * wrong key, a deactivated user or a changed email always goes back to the store. The rows are
 * frozen: a handler that wants a changed user reads it again. A realm's deactivation writes only
 * `realms`: a kept principal is refused by the realm row, which that write drops from its cache.
 */
export class RequestCache {
  private readonly db: Database<ChatTables>;
  private readonly realms: ReadCache<Realm>;
  private readonly users: ReadCache<ChatUser>;
  private readonly rootDomain: string;
  /** Host header -> subdomain, for the few names a server is reached by (bounded: headers are the client's). */
  private readonly subdomains = new Map<string, string>();
  private readonly deactivatedSeen: (realmId: number) => void;

  /**
   * `deactivatedSeen` is told whenever a realm read from the store is deactivated: a deactivation
   * written by another process (`keel admin deactivate-realm`) reaches this node that way, within
   * READ_CACHE_TTL_MS, at the realm's next request.
   */
  constructor(db: Database<ChatTables>, clock: Clock, rootDomain: string, deactivatedSeen: (realmId: number) => void = () => {}) {
    this.db = db;
    this.rootDomain = rootDomain;
    this.deactivatedSeen = deactivatedSeen;
    // Each cache is emptied by writes to its own table only: a message sent must not send every
    // user's next request (a thousand re-polls after a message to a busy channel) to the store.
    this.realms = new ReadCache({ writeGeneration: () => db.writeGeneration('realms') }, clock, { maxEntries: MAX_CACHED_REALMS });
    this.users = new ReadCache({ writeGeneration: () => db.writeGeneration('chat_users') }, clock);
  }

  /** The realm the Host header names; a subdomain no realm has is Zulip's 404 (never cached, so a new realm counts at once). */
  realm(host: string | undefined): Realm | Promise<Realm> {
    const key = host ?? '';
    let sub = this.subdomains.get(key);
    if (sub === undefined) {
      sub = subdomainOf(host, this.rootDomain);
      if (this.subdomains.size >= MAX_CACHED_HOSTS) this.subdomains.clear();
      this.subdomains.set(key, sub);
    }
    const subdomain = sub;
    return (
      this.realms.peek(subdomain) ??
      this.realms
        .get(subdomain, () => this.readRealm(subdomain))
        .then((realm) => {
          if (!realm) throw invalidSubdomain();
          return realm;
        })
    );
  }

  private async readRealm(subdomain: string): Promise<Realm | undefined> {
    const realm = await realmBySubdomain(this.db.kysely, subdomain);
    if (realm?.deactivated === 1) this.deactivatedSeen(realm.id);
    return realm;
  }

  /**
   * The user, or a promise of it when the store must be read (a hit costs no promise). Accepted
   * credentials are kept by the SHA-256 of the whole Authorization header (email and key as sent):
   * a hit then costs one hash, without decoding the header; anything else takes the full path.
   */
  user(realm: Realm, header: string | undefined): ChatUser | Promise<ChatUser> {
    // No header is never cached: readBasic refuses it below.
    const key = `${realm.id} ${sha256Key(header ?? '')}`;
    const hit = this.users.peek(key);
    if (hit) {
      // Kept from before the realm's deactivation (a hit is always of the realm addressed).
      if (realm.deactivated === 1) throw realmDeactivated();
      return hit;
    }
    const { email, apiKey } = readBasic(header);
    if (!isWellFormedApiKey(apiKey)) throw malformedApiKey();
    const hash = apiKeyHash(apiKey);
    return this.users.get(key, () => userForKey(this.db.kysely, realm, email, hash));
  }
}

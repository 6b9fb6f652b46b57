// Remembers who a credential belongs to, so an authenticated request need not look its key up in
// the store: a ReadCache (platform/db/fast/read-cache.ts), whose entries die when this node writes to the
// store and after a short TTL, the bound for changes made on other nodes.
import type { Database } from '../platform/db/database.js';
import type { Clock } from '../platform/clock.js';
import type { JwtSigner } from '../platform/auth/jwt.js';
import { sha256Key } from '../platform/auth/secrets.js';
import { READ_CACHE_TTL_MS, ReadCache } from '../platform/db/fast/read-cache.js';
import type { Principal } from './command.js';
import type { InfraTables } from './tables.js';
import { principalForApiKey, principalForSubject } from './accounts.js';

export const PRINCIPAL_TTL_MS = READ_CACHE_TTL_MS;

export class PrincipalCache {
  private readonly cache: ReadCache<Principal>;
  private readonly db: Database<InfraTables>;

  constructor(db: Database<InfraTables>, clock: Clock) {
    this.db = db;
    this.cache = new ReadCache(db, clock);
  }

  /**
   * The key is one SHA-256 of the uuid and the secret (the uuid's length first, so no other pair
   * spells the same text), never the secret itself; only credentials that were accepted are kept, so
   * a wrong secret always goes to the store (and its constant-time compare). A hit is answered
   * without a promise.
   */
  forApiKey(uuid: string, secret: string): Principal | Promise<Principal | null> {
    const key = sha256Key(`${uuid.length}:${uuid}:${secret}`);
    return this.cache.peek(key) ?? this.lookup(key, () => principalForApiKey(this.db, uuid, secret));
  }

  /**
   * By JWT subject and secret tag (an API user's, see accounts.ts secretTag): the caller verifies the
   * token (signature, expiry) on every request first.
   */
  forSubject(sub: string, tag?: string): Promise<Principal | null> {
    return this.lookup(`sub ${sub} ${tag ?? ''}`, () => principalForSubject(this.db, sub, tag));
  }

  async forJwt(jwt: JwtSigner, token: string): Promise<Principal | null> {
    const claims = await jwt.verify(token);
    return claims ? this.forSubject(claims.sub, typeof claims.sec === 'string' ? claims.sec : undefined) : null;
  }

  private lookup(key: string, load: () => Promise<Principal | null>): Promise<Principal | null> {
    return this.cache.get(key, async () => {
      const principal = await load();
      // Shared by every request that hits the entry, so nobody may change it.
      if (principal) Object.freeze(principal.permissions);
      return principal;
    });
  }
}

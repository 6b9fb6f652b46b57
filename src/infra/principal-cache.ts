// Remembers who a credential belongs to, so an authenticated request need not look its key up in
// the store. Entries die when this node writes to the store (any write statement or transaction moves
// the database's write generation) and after a short TTL, the bound for changes made on other nodes.
import type { Database } from '../platform/db/database.js';
import type { Clock } from '../platform/clock.js';
import type { JwtSigner } from '../platform/auth/jwt.js';
import { sha256Hex } from '../platform/auth/secrets.js';
import type { Principal } from './command.js';
import type { InfraTables } from './tables.js';
import { principalForApiKey, principalForSubject } from './accounts.js';

interface Entry {
  principal: Principal;
  generation: number;
  expires: number;
}

export const PRINCIPAL_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private readonly db: Database<InfraTables>;
  private readonly clock: Clock;

  constructor(db: Database<InfraTables>, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  /**
   * The key is the uuid with the SHA-256 of the secret, never the secret itself; only credentials
   * that were accepted are kept, so a wrong secret always goes to the store (and its constant-time compare).
   */
  forApiKey(uuid: string, secret: string): Promise<Principal | null> {
    return this.lookup(`key ${uuid} ${sha256Hex(secret)}`, () => principalForApiKey(this.db, uuid, secret));
  }

  /** By JWT subject: the caller verifies the token (signature, expiry) on every request first. */
  forSubject(sub: string): Promise<Principal | null> {
    return this.lookup(`sub ${sub}`, () => principalForSubject(this.db, sub));
  }

  async forJwt(jwt: JwtSigner, token: string): Promise<Principal | null> {
    const claims = await jwt.verify(token);
    return claims ? this.forSubject(claims.sub) : null;
  }

  private async lookup(key: string, load: () => Promise<Principal | null>): Promise<Principal | null> {
    const now = this.clock.now();
    const hit = this.entries.get(key);
    if (hit && hit.generation === this.db.writeGeneration() && hit.expires > now) return hit.principal;
    // Noted before reading: a write that lands while the read runs leaves the entry stale at once.
    const generation = this.db.writeGeneration();
    const principal = await load();
    if (!principal) {
      this.entries.delete(key);
      return null;
    }
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    // Shared by every request that hits the entry, so nobody may change it.
    Object.freeze(principal.permissions);
    this.entries.set(key, { principal: Object.freeze(principal), generation, expires: now + PRINCIPAL_TTL_MS });
    return principal;
  }
}

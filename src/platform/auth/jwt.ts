// JSON Web Tokens signed with HS256 under a key derived from the server's secret key (server-keys.ts).
import { SignJWT, jwtVerify, errors } from 'jose';
import type { Clock } from '../clock.js';

export interface JwtClaims {
  /** Subject: "apiuser:<id>" or "login:<id>". */
  sub: string;
  [claim: string]: unknown;
}

export class JwtSigner {
  private readonly key: Uint8Array;
  private readonly issuer = 'keel';
  private readonly lifetimeSeconds: number;
  private readonly clock: Clock;
  constructor(key: Uint8Array, lifetimeSeconds: number, clock: Clock) {
    this.key = key;
    this.lifetimeSeconds = lifetimeSeconds;
    this.clock = clock;
  }

  async sign(claims: JwtClaims): Promise<{ token: string; expires: number }> {
    const now = Math.floor(this.clock.now() / 1000);
    const expires = now + this.lifetimeSeconds;
    const token = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer(this.issuer).setIssuedAt(now).setExpirationTime(expires).sign(this.key);
    return { token, expires };
  }

  /** The claims of a valid, unexpired token, or null. */
  async verify(token: string): Promise<JwtClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.issuer,
        algorithms: ['HS256'],
        currentDate: new Date(this.clock.now()),
      });
      return typeof payload.sub === 'string' ? (payload as JwtClaims) : null;
    } catch (err) {
      if (err instanceof errors.JOSEError || err instanceof TypeError) return null;
      throw err;
    }
  }
}

// Reads the credentials of an Infra request, in the four forms clients use: HTTP Basic uuid:secret,
// body APIUUID/APISECRET (any case), Authorization: Bearer <JWT>, and the JWTSESSIONID cookie.
import { SESSION_COOKIE } from '../commands/session.js';

export type Credentials = { kind: 'apikey'; uuid: string; secret: string } | { kind: 'jwt'; token: string } | { kind: 'invalid' } | { kind: 'none' };

const BODY_KEYS = { uuid: 'apiuuid', secret: 'apisecret' };

/**
 * What a key's uuid or secret can look like: printable ASCII, not too long. Anything else (a Basic
 * header decodes to any bytes, NUL included, which PostgreSQL refuses in a query) is refused here,
 * as bad credentials, before the store is asked.
 */
const KEY_PART = /^[\x21-\x7e]{1,256}$/;

/** The cookie's value, percent-decoded; null when its escapes are malformed. */
export function cookieValue(header: string | undefined, name: string): string | undefined | null {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      if (!raw.includes('%')) return raw;
      try {
        return decodeURIComponent(raw);
      } catch {
        return null;
      }
    }
  }
  return undefined;
}

function apiKey(uuid: unknown, secret: unknown): Credentials {
  if (typeof uuid !== 'string' || typeof secret !== 'string' || !KEY_PART.test(uuid) || !KEY_PART.test(secret)) return { kind: 'invalid' };
  return { kind: 'apikey', uuid, secret };
}

/**
 * Finds the credentials and clears the body ones in params (set to undefined, which keeps the object
 * fast where delete would not), so they never reach a handler.
 */
export function takeCredentials(headers: { authorization?: string; cookie?: string }, params: Record<string, unknown>): Credentials {
  let uuid: unknown;
  let secret: unknown;
  for (const key in params) {
    // Only two lengths can be these keys; the others are not lower-cased.
    if (key.length !== BODY_KEYS.uuid.length && key.length !== BODY_KEYS.secret.length) continue;
    const lower = key.toLowerCase();
    if (lower === BODY_KEYS.uuid) {
      uuid = params[key];
      params[key] = undefined;
    } else if (lower === BODY_KEYS.secret) {
      secret = params[key];
      params[key] = undefined;
    }
  }
  const auth = headers.authorization?.trim();
  if (auth) {
    const space = auth.indexOf(' ');
    const scheme = (space < 0 ? auth : auth.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : auth.slice(space + 1).trim();
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon <= 0) return { kind: 'invalid' };
      return apiKey(decoded.slice(0, colon), decoded.slice(colon + 1));
    }
    if (scheme === 'bearer') return value ? { kind: 'jwt', token: value } : { kind: 'invalid' };
    return { kind: 'invalid' };
  }
  if (uuid !== undefined || secret !== undefined) return apiKey(uuid, secret);
  const cookie = cookieValue(headers.cookie, SESSION_COOKIE);
  if (cookie === null) return { kind: 'invalid' };
  if (cookie) return { kind: 'jwt', token: cookie };
  return { kind: 'none' };
}

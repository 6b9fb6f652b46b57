// Cookies as browsers send and keep them (RFC 6265): a request's Cookie header read by name, and
// Set-Cookie values written.

/** The value of the cookie `name` in a Cookie header (the first, as browsers send the most specific first); undefined when absent. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

export interface CookieOptions {
  /** Seconds; 0 removes the cookie. */
  maxAge: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Lax' | 'Strict';
  /** Now (Unix milliseconds), for the Expires attribute. */
  nowMs: number;
}

/** A Set-Cookie value, Path=/ (the value must be cookie-safe: the tokens Keel makes are). */
export function setCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${value}`, `Max-Age=${o.maxAge}`, 'Path=/'];
  // Expires too, for clients that only read it (as Django writes both); the epoch to remove.
  parts.push(`Expires=${new Date(o.maxAge > 0 ? o.nowMs + o.maxAge * 1000 : 0).toUTCString()}`);
  if (o.httpOnly) parts.push('HttpOnly');
  if (o.secure) parts.push('Secure');
  if (o.sameSite) parts.push(`SameSite=${o.sameSite}`);
  return parts.join('; ');
}

// Whether a login name is an email address by the rule Zulip's POST /fetch_api_key applies before
// it looks for an account (zerver/views/auth.py validate_login_email, which is Django's
// EmailValidator): at most 320 characters; a dot-atom or quoted local part; a domain of dotted
// labels ending in a 2-63 character top-level label, `localhost`, or a bracketed IP literal.
// Internationalized domains are judged by their ASCII (punycode) form, as Django does.
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';

const DOT_ATOM = /^[-!#$%&'*+/=?^_`{}|~0-9a-z]+(\.[-!#$%&'*+/=?^_`{}|~0-9a-z]+)*$/i;
// eslint-disable-next-line no-control-regex
const QUOTED = /^"([\x01-\x08\x0b\x0c\x0e-\x1f!#-[\]-\x7f]|\\[\x01-\x09\x0b\x0c\x0e-\x7f])*"$/i;
const DOMAIN = /^((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+)(?:[a-z0-9-]{2,63}(?<!-))$/i;
const LITERAL = /^\[([a-f0-9:.]+)\]$/i;

/**
 * `ownHost` is the realm's email host: Keel makes addresses there itself (the owner's, bots',
 * placeholders), and it may be an IP address or a name without a dot, which Django's rule refuses
 * (`owner@127.0.0.1`); those stay valid login names. Any other domain is judged by the rule alone,
 * so the answer never depends on whether an account exists.
 */
export function isLoginEmail(value: string, ownHost?: string): boolean {
  if (!value || value.length > 320) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0) return false;
  const user = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (!DOT_ATOM.test(user) && !QUOTED.test(user)) return false;
  if (ownHost !== undefined && domain.toLowerCase() === ownHost.toLowerCase()) return true;
  if (domain === 'localhost' || DOMAIN.test(domain)) return true;
  const literal = LITERAL.exec(domain);
  if (literal) return isIP(literal[1]) !== 0;
  // Non-ASCII domains: Django retries with the IDNA-encoded form.
  const ascii = domainToASCII(domain);
  return ascii !== '' && ascii !== domain && DOMAIN.test(ascii);
}

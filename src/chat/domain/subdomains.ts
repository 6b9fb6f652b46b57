// Several realms on one server, told apart by the Host header as Zulip does: a realm's string_id is
// a subdomain of the root domain (alice.chat.example.com). The root itself, a host outside the root
// domain, an IP address or localhost name the first realm (string_id ""), so a server used by
// address (tests, the quick start) keeps serving it; `www.` is an alias of the root.
import { isIP } from 'node:net';
import type { Config, ListenAddress } from '../../config/config.js';

/** The first realm's string_id: it answers on the root domain. */
export const ROOT_SUBDOMAIN = '';
const ROOT_ALIASES = new Set(['www']);
/** Names a realm may not take: the root's aliases and what a deployment commonly serves beside Chat. */
const RESERVED = new Set([...ROOT_ALIASES, 'api', 'static', 'admin', 'mail', 'localhost']);
export const MAX_SUBDOMAIN_LENGTH = 40;

/** Zulip's answer to an API request on a subdomain no realm has. */

/** The host name of a Host header: lower case, without port, brackets or a trailing dot. */
export function hostName(header: string | undefined): string {
  const raw = (header ?? '').trim().toLowerCase();
  if (raw.startsWith('[')) return raw.slice(1, raw.indexOf(']') < 0 ? undefined : raw.indexOf(']'));
  const colon = raw.lastIndexOf(':');
  return (colon < 0 ? raw : raw.slice(0, colon)).replace(/\.$/, '');
}

/** The realm subdomain a request's Host header names, under the root domain (ROOT_SUBDOMAIN for the first realm). */
export function subdomainOf(header: string | undefined, rootDomain: string): string {
  const host = hostName(header);
  if (host === '' || isIP(host) || host === rootDomain) return ROOT_SUBDOMAIN;
  if (!host.endsWith(`.${rootDomain}`)) return ROOT_SUBDOMAIN;
  const sub = host.slice(0, -rootDomain.length - 1);
  // A deeper name (a.b.root) is kept whole: no realm has a dot in its string_id, so it is unknown.
  return ROOT_ALIASES.has(sub) ? ROOT_SUBDOMAIN : sub;
}

/** The root domain when none is configured: the chat listen host if it is a name, else localhost (sub.localhost reaches this machine). */
export function defaultRootDomain(listenHost: string): string {
  const h = listenHost.toLowerCase();
  return isIP(h) || h === '' ? 'localhost' : h;
}

/** The domain chat realms are subdomains of: the configured one, else one from the chat listener's host. */
export function chatRootDomain(config: Pick<Config, 'chatRootDomain' | 'chatListen'>): string {
  return config.chatRootDomain ?? defaultRootDomain(config.chatListen.host);
}

/**
 * The first chat realm's URL: the configured root domain, else the address the chat listener is
 * given, with the listener's port (the one it actually got, for port 0).
 */
export function chatUrl(listen: ListenAddress, rootDomain?: string): string {
  const name = rootDomain ?? listen.host;
  const host = name.includes(':') ? `[${name}]` : name;
  return `http://${host}:${listen.port}`;
}

/** The URL of a realm: the first realm's is the base URL, another's puts its subdomain before the root domain (same scheme and port). */
export function realmUrlFor(baseUrl: string, rootDomain: string, stringId: string): string {
  if (stringId === ROOT_SUBDOMAIN) return baseUrl;
  const url = new URL(baseUrl);
  url.hostname = `${stringId}.${rootDomain}`;
  return url.origin;
}

/** Checks a new realm's subdomain with Zulip's rules; returns it, or the reason it is refused. */
export function checkSubdomain(raw: string): { ok: true; subdomain: string } | { ok: false; reason: string } {
  const s = raw.trim();
  if (s.length < 3) return { ok: false, reason: 'Subdomain needs to have length 3 or greater.' };
  if (s.length > MAX_SUBDOMAIN_LENGTH) return { ok: false, reason: `Subdomain can have at most ${MAX_SUBDOMAIN_LENGTH} characters.` };
  if (!/^[a-z0-9-]+$/.test(s)) return { ok: false, reason: "Subdomain can only have lowercase letters, numbers, and '-'s." };
  if (s.startsWith('-') || s.endsWith('-')) return { ok: false, reason: "Subdomain cannot start or end with a '-'." };
  if (RESERVED.has(s)) return { ok: false, reason: 'Subdomain reserved. Please choose a different one.' };
  return { ok: true, subdomain: s };
}

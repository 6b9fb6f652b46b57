// Which realm a Host header names, a realm's URL, Zulip's rules for a new realm's subdomain, and the
// chat root domain option (--chat-root-domain / KEEL_CHAT_ROOT_DOMAIN and its default).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSubdomain, defaultRootDomain, hostName, realmUrlFor, subdomainOf } from '../../../src/chat/domain/subdomains.js';
import { buildConfig } from '../../../src/config/config.js';
import { readOptions, UsageError } from '../../../src/config/env.js';
import { chatRootDomain, chatUrl } from '../../../src/chat/domain/subdomains.js';

const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => buildConfig(readOptions(argv, env).options);

describe('chat realm subdomains', () => {
  it('reads the host name of a Host header', () => {
    assert.equal(hostName('Beta.Example.COM:9991'), 'beta.example.com');
    assert.equal(hostName('example.com.'), 'example.com');
    assert.equal(hostName('[::1]:9991'), '::1');
    assert.equal(hostName(undefined), '');
  });

  it('names the first realm for the root, www, IP addresses, localhost and hosts outside the root domain', () => {
    for (const host of ['chat.example.com', 'chat.example.com:443', 'www.chat.example.com', '127.0.0.1:9991', '[::1]:80', 'localhost', 'other.org', 'xchat.example.com', undefined, '']) {
      assert.equal(subdomainOf(host, 'chat.example.com'), '', String(host));
    }
  });

  it('names a realm by its subdomain of the root domain', () => {
    assert.equal(subdomainOf('beta.chat.example.com:9991', 'chat.example.com'), 'beta');
    assert.equal(subdomainOf('BETA.Chat.Example.Com.', 'chat.example.com'), 'beta');
    assert.equal(subdomainOf('a.beta.chat.example.com', 'chat.example.com'), 'a.beta', 'no realm has a dot, so this one is unknown');
    assert.equal(subdomainOf('beta.localhost:9991', 'localhost'), 'beta');
  });

  it("builds a realm's URL from the base URL", () => {
    assert.equal(realmUrlFor('http://127.0.0.1:9991', 'localhost', ''), 'http://127.0.0.1:9991');
    assert.equal(realmUrlFor('http://127.0.0.1:9991', 'localhost', 'beta'), 'http://beta.localhost:9991');
    assert.equal(realmUrlFor('https://chat.example.com', 'chat.example.com', 'beta'), 'https://beta.chat.example.com');
  });

  it("checks a new subdomain with Zulip's rules", () => {
    assert.deepEqual(checkSubdomain(' team-1 '), { ok: true, subdomain: 'team-1' });
    const reason = (s: string) => {
      const r = checkSubdomain(s);
      return r.ok ? null : r.reason;
    };
    assert.equal(reason('ab'), 'Subdomain needs to have length 3 or greater.');
    assert.equal(reason('a'.repeat(41)), 'Subdomain can have at most 40 characters.');
    assert.equal(reason('Team'), "Subdomain can only have lowercase letters, numbers, and '-'s.");
    assert.equal(reason('a.b.c'), "Subdomain can only have lowercase letters, numbers, and '-'s.");
    assert.equal(reason('-team'), "Subdomain cannot start or end with a '-'.");
    assert.equal(reason('team-'), "Subdomain cannot start or end with a '-'.");
    assert.equal(reason('www'), 'Subdomain reserved. Please choose a different one.');
  });

  it('takes the root domain from --chat-root-domain or KEEL_CHAT_ROOT_DOMAIN, else the listen host if a name, else localhost', () => {
    assert.equal(chatRootDomain(config([])), 'localhost');
    assert.equal(chatRootDomain(config(['--chat-listen', 'chat.internal:9991'])), 'chat.internal');
    assert.equal(chatRootDomain(config(['--chat-listen', '0.0.0.0:9991'])), 'localhost');
    assert.equal(chatRootDomain(config(['--chat-root-domain', 'Chat.Example.COM.'])), 'chat.example.com');
    assert.equal(chatRootDomain(config([], { KEEL_CHAT_ROOT_DOMAIN: 'env.example' })), 'env.example');
    assert.equal(defaultRootDomain('::1'), 'localhost');
    // The first realm answers on the root: its URL names it, with the listener's port.
    assert.equal(chatUrl(config(['--chat-root-domain', 'chat.example.com']).chatListen, 'chat.example.com'), 'http://chat.example.com:9991');
    assert.equal(chatUrl(config([]).chatListen), 'http://127.0.0.1:9991');
    for (const bad of ['not a domain', '192.0.2.1', 'x..example']) {
      assert.throws(
        () => config(['--chat-root-domain', bad]),
        (e) => e instanceof UsageError && /^--chat-root-domain must be a domain name/.test(e.message),
        bad,
      );
    }
  });
});

// The DNS options as config.ts shapes them: defaults, lists, and the KEEL_* variables.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildConfig } from '../../src/config/config.js';
import { readOptions, UsageError } from '../../src/config/env.js';

function config(argv: string[], env: NodeJS.ProcessEnv = {}) {
  return buildConfig(readOptions(argv, env).options);
}

describe('DNS options', () => {
  it('defaults: keel.localhost, the listen host for ns1..ns4, no secondaries', () => {
    const c = config([]);
    assert.equal(c.nameserverDomain, 'keel.localhost');
    assert.deepEqual(c.nameserverAddresses, ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']);
    assert.deepEqual(c.dnsSecondaries, []);
    assert.deepEqual(config(['--dns-listen', '[::1]:53']).nameserverAddresses, ['::1', '::1', '::1', '::1']);
    assert.deepEqual(config(['--dns-listen', '0.0.0.0:53']).nameserverAddresses[0], '127.0.0.1', 'an unspecified address is no nameserver address');
  });

  it('reads flags and variables', () => {
    const c = config(['--nameserver-domain', 'DNS.Example.NET.'], {
      KEEL_NAMESERVER_ADDRESSES: '192.0.2.1, 192.0.2.2,2001:db8::3,192.0.2.4',
      KEEL_DNS_SECONDARIES: '192.0.2.53,192.0.2.54:5300,[2001:db8::53]:53,2001:db8::54',
    });
    assert.equal(c.nameserverDomain, 'dns.example.net');
    assert.deepEqual(c.nameserverAddresses, ['192.0.2.1', '192.0.2.2', '2001:db8::3', '192.0.2.4']);
    assert.deepEqual(c.dnsSecondaries, [
      { host: '192.0.2.53', port: 53 },
      { host: '192.0.2.54', port: 5300 },
      { host: '2001:db8::53', port: 53 },
      { host: '2001:db8::54', port: 53 },
    ]);
  });

  it('rejects bad values with a message naming the option', () => {
    const cases: [string[], RegExp][] = [
      [['--nameserver-domain', 'not a domain'], /^--nameserver-domain must be a domain name/],
      [['--nameserver-domain', `${'a'.repeat(64)}.example`], /^--nameserver-domain must be a domain name/],
      [['--nameserver-addresses', '127.0.0.1,banana'], /^--nameserver-addresses must be 1 to 4 comma-separated IPv4 or IPv6 addresses/],
      [['--nameserver-addresses', '1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4,1.1.1.5'], /^--nameserver-addresses must be 1 to 4/],
      [['--dns-secondaries', '127.0.0.1:99999'], /^--dns-secondaries must be .* got "127.0.0.1:99999"$/],
      [['--dns-secondaries', '127.0.0.1,host.example'], /^--dns-secondaries must be .* got "host.example"$/],
    ];
    for (const [args, expected] of cases) {
      assert.throws(
        () => config(args),
        (err: Error) => err instanceof UsageError && expected.test(err.message),
        args.join(' '),
      );
    }
  });
});

// Unit: the zone and record rules that have no wire of their own to show them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkRecord, lookupIn, Problems, serialBase, txtStrings, unhostableZone, zoneName } from '../../src/infra/dns-rules.js';

it('splits a TXT value into strings of at most 255 bytes without cutting a character', () => {
  assert.deepEqual(txtStrings(''), ['']);
  assert.deepEqual(txtStrings('a'.repeat(255)), ['a'.repeat(255)]);
  assert.deepEqual(txtStrings('a'.repeat(256)), ['a'.repeat(255), 'a']);
  const parts = txtStrings('é'.repeat(200));
  for (const p of parts) assert.ok(Buffer.byteLength(p) <= 255);
  assert.deepEqual(
    parts.map((p) => Buffer.byteLength(p)),
    [254, 146],
  );
  assert.equal(parts.join(''), 'é'.repeat(200));
});

it('makes lookups relative to the zone and refuses names outside it', () => {
  assert.equal(lookupIn('@', 'example.com'), '');
  assert.equal(lookupIn('', 'example.com'), '');
  assert.equal(lookupIn('EXAMPLE.com.', 'example.com'), '');
  assert.equal(lookupIn('_acme-challenge.WWW.example.com', 'example.com'), '_acme-challenge.www');
  assert.equal(lookupIn('*.dev', 'example.com'), '*.dev');
  assert.equal(lookupIn(1, '2.0.192.in-addr.arpa'), '1');
  assert.throws(() => lookupIn('www.example.org.', 'example.com'), /not inside the zone/);
  assert.throws(() => lookupIn('a.*.b', 'example.com'), /leftmost/);
  assert.throws(() => lookupIn('-a', 'example.com'), /invalid label/);
});

it('checks zone names', () => {
  assert.equal(zoneName(' Example.COM. '), 'example.com');
  assert.equal(zoneName('2.0.192.in-addr.arpa'), '2.0.192.in-addr.arpa');
  assert.throws(() => zoneName('com'), /two labels/);
  assert.throws(() => zoneName('_x.example.com'), /invalid label/);
});

it('refuses zones no customer may claim: the nameserver domain, public suffixes, wide reverse zones', () => {
  const ns = 'ns.keel.example';
  const refused = (name: string, why: RegExp) => assert.match(unhostableZone(name, ns) ?? 'accepted', why, name);
  refused('ns.keel.example', /nameserver domain ns\.keel\.example/);
  refused('ns1.ns.keel.example', /inside this server's nameserver domain/);
  refused('a.b.ns.keel.example', /inside/);
  // ICANN suffixes, wildcard rules (*.ck) and the private section alike.
  for (const suffix of ['co.uk', 'com.au', 'in-addr.arpa', 'ip6.arpa', 'e164.arpa', 'foo.ck', 'github.io', 'blogspot.com', 's3.amazonaws.com']) {
    refused(suffix, /public suffix/);
  }
  refused('10.in-addr.arpa', /wider than a \/24/);
  refused('168.192.in-addr.arpa', /wider than a \/24/);
  refused('8.b.d.0.1.0.0.2.ip6.arpa', /wider than a \/48/);
  refused('0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', /wider than a \/48/);
  for (const ok of [
    'example.co.uk',
    'user.github.io',
    'www.ck',
    'keel.example',
    'other.keel.example',
    'example.com',
    '2.0.192.in-addr.arpa',
    '0-25.2.0.192.in-addr.arpa',
    '0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    'alpha.example',
  ]) {
    assert.equal(unhostableZone(ok, ns), null, ok);
  }
});

it('keeps the numeric parts a type does not use at zero', () => {
  const p = new Problems();
  const v = checkRecord({ type: 'TXT', lookup: 'x', data: 'y', priority: 99999, caatag: 'nonsense!' }, 'example.com', '', p);
  assert.ok(p.empty, JSON.stringify(p.fields));
  assert.deepEqual(v, { lookup: 'x', type: 'TXT', data: 'y', ttl: 3600, priority: 0, weight: 0, port: 0, caaFlag: 0, caaTag: '' });
});

it('accepts a null MX and SRV target "."', () => {
  const p = new Problems();
  assert.equal(checkRecord({ type: 'MX', lookup: '', data: '0 .' }, 'example.com', '', p)?.data, '.');
  assert.equal(checkRecord({ type: 'SRV', lookup: '_x._tcp', data: '.', port: 0 }, 'example.com', '', p)?.data, '.');
  assert.ok(p.empty, JSON.stringify(p.fields));
});

it('serials start at YYYYMMDD00 of the UTC day', () => {
  assert.equal(serialBase(Date.UTC(2025, 0, 31, 23, 59)), 2025013100);
  assert.equal(serialBase(Date.UTC(2026, 11, 1)), 2026120100);
});

// Unit: the zone and record rules that have no wire of their own to show them.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkRecord, lookupIn, Problems, serialBase, txtStrings, zoneName } from '../../src/infra/dns-rules.js';

it('splits a TXT value into strings of at most 255 bytes without cutting a character', () => {
  assert.deepEqual(txtStrings(''), ['']);
  assert.deepEqual(txtStrings('a'.repeat(255)), ['a'.repeat(255)]);
  assert.deepEqual(txtStrings('a'.repeat(256)), ['a'.repeat(255), 'a']);
  const parts = txtStrings('é'.repeat(200));
  for (const p of parts) assert.ok(Buffer.byteLength(p) <= 255);
  assert.deepEqual(parts.map((p) => Buffer.byteLength(p)), [254, 146]);
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

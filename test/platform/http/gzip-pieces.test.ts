// gzip answers assembled from a prefix compressed once and a stored tail (gzip-pieces.ts): zlib's own
// gunzip (which checks the CRC-32 and the length) must read every one as prefix + tail, for tails from
// empty to several stored blocks long; the Accept-Encoding rules; the split around a shared JsonText.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { it } from 'node:test';
import * as zlib from 'node:zlib';
import { acceptsGzip, CRC_START, crcUpdate, gzipPrefix, gzipShared, gzipWithTail } from '../../../src/platform/http/gzip-pieces.js';
import { JsonText, serializeWithText } from '../../../src/platform/db/fast/json-text.js';

/** Bytes that compress as JSON does (repeated words) or not at all (random), by turns. */
function sample(size: number, seed: number): Buffer {
  if (seed % 2) return randomBytes(size);
  const words = ['"status":', '"active"', '{"client":"website",', '"timestamp":1764000000', ',', '}'];
  let s = '';
  while (s.length < size) s += words[(s.length * 7 + seed) % words.length];
  return Buffer.from(s.slice(0, size));
}

it('gunzips to prefix + tail for random sizes, empty tails and tails of several stored blocks', () => {
  const sizes: [number, number][] = [
    [0, 0],
    [0, 10],
    [10, 0],
    [5000, 0],
    [1, 65_535],
    [1, 65_536],
    [300, 65_535 * 2 + 17],
    [40_000, 200_000],
  ];
  for (let i = 0; i < 12; i++) sizes.push([Math.floor(Math.random() * 70_000), Math.floor(Math.random() * 140_000)]);
  sizes.forEach(([p, t], seed) => {
    const prefix = sample(p, seed);
    const tail = sample(t, seed + 1);
    // The prefix in several parts, as a JsonText holds it.
    const cut = Math.floor(p / 3);
    const made = gzipPrefix([prefix.subarray(0, cut), prefix.subarray(cut)]);
    const pieces = gzipWithTail(made, tail);
    assert.equal(pieces[0], made.head, 'the compressed prefix is the shared buffer itself');
    const member = Buffer.concat(pieces);
    assert.ok(zlib.gunzipSync(member).equals(Buffer.concat([prefix, tail])), `prefix ${p}, tail ${t}`);
    // The tail rides uncompressed: 5 bytes of block header per 65,535 bytes, then 8 of trailer.
    assert.equal(pieces[1].length, Math.max(1, Math.ceil(t / 65_535)) * 5 + t + 8);
  });
});

it('continues the CRC-32 across the prefix as zlib computes it', () => {
  const a = randomBytes(1000);
  const b = randomBytes(333);
  const whole = (crcUpdate(crcUpdate(CRC_START, a), b) ^ CRC_START) >>> 0;
  // zlib.crc32 is Node 22's; on 20 the checks are gunzip's, above, and the standard check value.
  assert.equal((crcUpdate(CRC_START, Buffer.from('123456789')) ^ CRC_START) >>> 0, 0xcbf43926);
  const nodeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  if (nodeCrc32) assert.equal(whole, nodeCrc32(Buffer.concat([a, b])));
  assert.equal(whole, (crcUpdate(CRC_START, Buffer.concat([a, b])) ^ CRC_START) >>> 0, 'continued = in one pass');
});

it('reads Accept-Encoding as RFC 9110 says: weights, q=0 refusing, * and case', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['gzip, deflate', true],
    ['gzip, deflate, br, zstd', true],
    ['deflate, gzip', true],
    ['GZip', true],
    ['x-gzip', true],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['gzip;Q=0.001', true],
    ['gzip;q=1.0', true],
    ['gzip;q=2', false],
    ['gzip;q=yes', false],
    ['identity', false],
    ['deflate, br', false],
    ['*', true],
    ['*;q=0', false],
    ['identity, *;q=0.5', true],
    ['gzip;q=0, *', false],
    ['*, gzip;q=0', false],
    ['*;q=0, gzip', true],
    ['gzipx, xgzip', false],
  ];
  // Each twice in a row: the second is the remembered value's.
  for (const [header, expected] of cases) {
    assert.equal(acceptsGzip(header), expected, String(header));
    assert.equal(acceptsGzip(header), expected, `${header} again`);
  }
});

it('compresses only a shared text long enough, and gives serializeWithText bytes when gunzipped', () => {
  const big = `{${Array.from({ length: 90 }, (_, i) => `"u${i}@example.com":{"status":"active","timestamp":${1764000000 + i}}`).join(',')}}`;
  assert.ok(Buffer.byteLength(big) >= 4096);
  const shared = new JsonText(big, { shared: true });
  const body = { result: 'success', msg: '', zephyr_mirror_active: false, presences: shared, server_timestamp: 1764000000.5, presence_last_update_id: 7, gone: undefined };
  const gz = gzipShared(body);
  assert.ok(gz);
  assert.ok(zlib.gunzipSync(Buffer.concat(gz)).equals(Buffer.from(serializeWithText(body))));
  // Its compressed prefix is kept with the text: the next answer's first piece is the same buffer.
  const again = gzipShared({ ...body, server_timestamp: 1764000001, presence_last_update_id: 8 });
  assert.equal(again?.[0], gz[0]);
  assert.equal(JSON.parse(zlib.gunzipSync(Buffer.concat(again!)).toString()).presence_last_update_id, 8);
  // A different envelope before the text is a prefix of its own.
  const realm = { result: 'success', msg: '', presences: shared, server_timestamp: 1 };
  assert.notEqual(gzipShared(realm)?.[0], gz[0]);
  assert.ok(zlib.gunzipSync(Buffer.concat(gzipShared(realm)!)).equals(Buffer.from(serializeWithText(realm))));
  // Not shared, too short, or another JsonText first: answered as before.
  assert.equal(gzipShared({ ...body, presences: new JsonText(big) }), undefined);
  assert.equal(gzipShared({ ...body, presences: new JsonText('{}', { shared: true }) }), undefined);
  assert.equal(gzipShared({ first: new JsonText('[]'), presences: shared }), undefined);
  assert.equal(gzipShared({ result: 'success' }), undefined);
});

it('keeps at most a few envelopes per text, answering the others uncompressed', () => {
  const shared = new JsonText(`[${'"x",'.repeat(2000)}"y"]`, { shared: true });
  const made = [1, 2, 3, 4, 5, 6].map((n) => gzipShared({ [`k${n}`]: n, t: shared }));
  assert.ok(made.slice(0, 4).every((g) => g !== undefined));
  assert.deepEqual(made.slice(4), [undefined, undefined]);
  // Those kept still serve.
  assert.ok(gzipShared({ k1: 1, t: shared }));
});

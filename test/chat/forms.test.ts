// Chat's forms (chat/forms.ts): parameters from urlencoded and multipart bodies as Zulip reads them,
// the last of a repeated key winning, files and JSON parts no text parameter, and a broken or
// over-limit multipart body refused with the status and text clients have had.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { addTextParams, BodyError, readForm } from '../../src/chat/forms.js';
import { BodyTooLarge } from '../../src/platform/http/body.js';
import { Listener } from '../../src/platform/http/listener.js';
import { createLogger } from '../../src/platform/log.js';

// A small body limit, so that going over it costs the test little.
const LIMIT = 256 * 1024;
const listener: Listener = new Listener({ name: 'forms', log: createLogger('error', () => {}), store: { durable: () => true, synced: () => Promise.resolve() }, malformed: () => '{}' }, (req, res) => {
  readForm(req, LIMIT).then(
    (form) => {
      assert.ok(form.whole, 'read to its end');
      const out: Record<string, string> = {};
      addTextParams(out, new URLSearchParams('q=query&kept=from-query'));
      addTextParams(out, form.params);
      void listener.answer(res, 200, {}, JSON.stringify(out), () => '');
    },
    (err: Error) => void listener.answer(res, err instanceof BodyError ? err.refusal.status : err instanceof BodyTooLarge ? 413 : 500, {}, err.message, () => ''),
  );
});

const B = 'b0undary';
const part = (name: string, value: string, extra = '') => `--${B}\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;
const multipart = (parts: string) => listener.inject({ method: 'POST', url: '/', headers: { 'content-type': `multipart/form-data; boundary=${B}` }, payload: `${parts}--${B}--\r\n` });

it('reads a urlencoded form over the query, the last of a repeated key winning', async () => {
  const r = await listener.inject({ method: 'POST', url: '/', headers: { 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=UTF-8' }, payload: 'a=1&a=2&q=body&e=%E2%9C%93' });
  assert.deepEqual(r.json(), { q: 'body', kept: 'from-query', a: '2', e: '✓' });
});

it('reads multipart text fields; a file or a JSON part is no text parameter', async () => {
  const r = await multipart(
    part('a', '1') +
      part('a', '2') +
      part('q', 'body') +
      part('upload', 'file bytes', '; filename="x.txt"\r\nContent-Type: text/plain') +
      part('kept', '{"x":1}', '\r\nContent-Type: application/json'),
  );
  assert.deepEqual(r.json(), { q: 'body', kept: 'from-query', a: '2' });
  assert.deepEqual((await multipart('')).json(), { q: 'query', kept: 'from-query' }, 'an empty form');
});

it('sets any other body aside, and leaves a GET body unread', async () => {
  assert.deepEqual((await listener.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: '{"q":"json"}' })).json(), { q: 'query', kept: 'from-query' });
  assert.deepEqual((await listener.inject({ method: 'POST', url: '/', payload: 'q=untyped' })).json(), { q: 'query', kept: 'from-query' });
  assert.deepEqual((await listener.inject({ method: 'GET', url: '/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'q=get' })).json(), { q: 'query', kept: 'from-query' });
});

it('refuses broken and over-limit bodies with the statuses and texts clients have had', async () => {
  const answer = async (r: Promise<{ statusCode: number; body: string }>) => {
    const got = await r;
    return [got.statusCode, got.body];
  };
  assert.deepEqual(await answer(listener.inject({ method: 'POST', url: '/', headers: { 'content-type': 'not a type' }, payload: 'x' })), [415, 'Unsupported Media Type']);
  assert.deepEqual(await answer(multipart(part('toString', 'x'))), [400, 'prototype property is not allowed as field name']);
  assert.deepEqual(await answer(multipart(part('j', '{', '\r\nContent-Type: application/json'))), [406, 'a request field is not a valid JSON as declared by its Content-Type']);
  // 1,000 parts and 1,000 fields at most: the 1,001st is over both.
  const many = await answer(multipart(Array.from({ length: 1001 }, (_, i) => part(`f${i}`, 'x')).join('')));
  assert.equal(many[0], 413);
  assert.match(String(many[1]), /^reach (parts|fields) limit$/);
  const truncated = await answer(listener.inject({ method: 'POST', url: '/', headers: { 'content-type': `multipart/form-data; boundary=${B}` }, payload: part('a', '1').slice(0, 30) }));
  assert.equal(truncated[0], 400);
  assert.match(String(truncated[1]), /Unexpected end of form/);
  const noBoundary = await answer(listener.inject({ method: 'POST', url: '/', headers: { 'content-type': 'multipart/form-data' }, payload: part('a', '1') }));
  assert.equal(noBoundary[0], 400);
  // The whole multipart body is bounded like any body, whatever its parts: announced over the limit,
  // or found so while reading one of unknown length (chunked), files and fields alike.
  const big = part('upload', 'x'.repeat(LIMIT), '; filename="x.bin"');
  assert.deepEqual(await answer(multipart(big)), [413, `Request body too large: the limit is ${LIMIT} bytes`]);
  const body = `${big}--${B}--\r\n`;
  const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  const headers = { 'content-type': `multipart/form-data; boundary=${B}`, 'transfer-encoding': 'chunked' };
  assert.deepEqual(await answer(listener.inject({ method: 'POST', url: '/', headers, payload: chunked })), [413, `Request body too large: the limit is ${LIMIT} bytes`]);
  const fields = Array.from({ length: 8 }, (_, i) => part(`f${i}`, 'y'.repeat(LIMIT / 4))).join('');
  assert.equal((await answer(multipart(fields)))[0], 413, 'many large fields');
});

// endWhenDurable: an answer leaves only once the writes it may acknowledge are flushed.
import assert from 'node:assert/strict';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { it } from 'node:test';
import { bodyLength, endWhenDurable, type Flushes } from '../../../src/platform/http/durable.js';

function fakeResponse() {
  const sent: { status?: number; headers?: OutgoingHttpHeaders; body?: string | Buffer } = {};
  const res = {
    writeHead(status: number, headers: OutgoingHttpHeaders) {
      sent.status = status;
      sent.headers = headers;
      return res;
    },
    end(body: string | Buffer) {
      sent.body = body;
      return res;
    },
  };
  return { res: res as unknown as ServerResponse, sent };
}

const headers = { 'content-type': 'application/json', 'content-length': 2 };
const noFailure = () => {
  throw new Error('no failure expected');
};

it('writes at once, without a promise, when nothing waits to be flushed', () => {
  const { res, sent } = fakeResponse();
  const store: Flushes = { durable: () => true, synced: () => Promise.reject(new Error('not asked')) };
  assert.equal(endWhenDurable(res, store, headers, '{}', noFailure), undefined);
  assert.deepEqual(sent, { status: 200, headers, body: '{}' });
});

it('waits for the flush before writing anything', async () => {
  const { res, sent } = fakeResponse();
  let flushed!: () => void;
  const store: Flushes = { durable: () => false, synced: () => new Promise<void>((resolve) => (flushed = resolve)) };
  const written = endWhenDurable(res, store, headers, '{}', noFailure, 201);
  assert.ok(written);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(sent, {}, 'nothing leaves before the flush');
  flushed();
  await written;
  assert.deepEqual(sent, { status: 201, headers, body: '{}' });
});

it('sends the failure answer instead when the flush fails', async () => {
  const store: Flushes = { durable: () => false, synced: () => Promise.reject(new Error('EIO')) };
  const envelope = fakeResponse();
  await endWhenDurable(envelope.res, store, headers, '{"code":"OK"}', () => '{"code":"FAULT"}');
  assert.deepEqual(envelope.sent, { status: 200, headers: { ...headers, 'content-length': 16 }, body: '{"code":"FAULT"}' });
  const statusAndBody = fakeResponse();
  await endWhenDurable(statusAndBody.res, store, headers, '{}', () => ({ status: 500, body: 'no' }));
  assert.deepEqual(statusAndBody.sent, { status: 500, headers: { ...headers, 'content-length': 2 }, body: 'no' });
});

it('writes a body in pieces corked, in order, then ends; its length is the sum of theirs', () => {
  const calls: string[] = [];
  const res = {
    writeHead: () => calls.push('head'),
    cork: () => calls.push('cork'),
    write: (b: Buffer) => calls.push(`write ${b.toString()}`),
    end: (b?: unknown) => calls.push(b === undefined ? 'end' : 'end with body'),
    uncork: () => calls.push('uncork'),
  } as unknown as ServerResponse;
  const store: Flushes = { durable: () => true, synced: () => Promise.reject(new Error('not asked')) };
  const pieces = [Buffer.from('{"a":'), Buffer.from('"é"}')];
  assert.equal(bodyLength(pieces), Buffer.byteLength('{"a":"é"}'));
  assert.equal(endWhenDurable(res, store, headers, pieces, noFailure), undefined);
  assert.deepEqual(calls, ['head', 'cork', 'write {"a":', 'write "é"}', 'end', 'uncork']);
});

it('sends the failure text uncompressed, without the content-encoding of the answer it replaces', async () => {
  const store: Flushes = { durable: () => false, synced: () => Promise.reject(new Error('EIO')) };
  const gzipped = { ...headers, 'content-encoding': 'gzip', vary: 'accept-encoding' };
  const out = fakeResponse();
  await endWhenDurable(out.res, store, gzipped, [Buffer.from([0x1f, 0x8b])], () => ({ status: 500, body: 'no' }));
  assert.deepEqual(out.sent, { status: 500, headers: { ...headers, vary: 'accept-encoding', 'content-length': 2 }, body: 'no' });
});

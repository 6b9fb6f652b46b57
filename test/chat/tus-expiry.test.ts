// The resumable endpoint's staging directory (src/chat/tus.ts): unfinished uploads found at start
// are indexed under their owner (a restart keeps them), info without an owner is removed, and the
// sweep removes uploads 24 hours after their creation (by the server's clock), bytes and info both.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { ManualClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/log.js';
import type { ChatServices } from '../../src/chat/endpoint.js';
import { TUS_EXPIRY_MS, TusEndpoint } from '../../src/chat/tus.js';

const HOUR = 60 * 60 * 1000;
const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-tus-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function stage(id: string, createdMs: number, metadata: Record<string, string>): void {
  writeFileSync(path.join(dir, id), Buffer.alloc(10));
  writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ id, size: 100, offset: 0, metadata, creation_date: new Date(createdMs).toISOString() }));
}
const staged = (id: string) => existsSync(path.join(dir, id)) || existsSync(path.join(dir, `${id}.json`));

it('keeps unfinished uploads across a restart and removes them once expired', async () => {
  const clock = new ManualClock(Date.now());
  const fresh = 'a'.repeat(32);
  const older = 'b'.repeat(32);
  const ownerless = 'c'.repeat(32);
  stage(fresh, clock.now() - 1 * HOUR, { keel_owner: '1:5', filename: 'x' });
  stage(older, clock.now() - 23 * HOUR, { keel_owner: '1:6' });
  stage(ownerless, clock.now(), { filename: 'y' });
  const services = { clock, log: createLogger('error', () => {}), maxFileUploadMib: 25 } as unknown as ChatServices;
  const tus = new TusEndpoint(services, dir, () => Promise.reject(new Error('no requests here')), []);
  try {
    await tus.ready;
    assert.equal(staged(ownerless), false, 'info without an owner is removed at start');
    assert.equal(staged(fresh), true);
    assert.equal(staged(older), true);
    assert.equal(await tus.sweep(), 0, 'nothing has expired yet');

    clock.advance(2 * HOUR);
    assert.equal(await tus.sweep(), 1);
    assert.equal(staged(older), false, 'created 25 hours ago: expired');
    assert.equal(staged(fresh), true);

    clock.advance(TUS_EXPIRY_MS);
    assert.equal(await tus.sweep(), 1);
    assert.equal(staged(fresh), false);
  } finally {
    tus.close();
  }
});

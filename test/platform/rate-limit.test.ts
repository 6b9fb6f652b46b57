// The shared budgets on a manual clock: bursts and refill, what a refusal costs, password attempts,
// the memory bound under a flood of keys, and how client addresses become keys.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressKey, Budget, PasswordBudgets } from '../../src/platform/rate-limit.js';
import { ManualClock } from '../../src/platform/clock.js';
import { parseTrustedProxies, TrustedProxies } from '../../src/platform/client-address.js';

describe('Budget', () => {
  it('lets a whole budget go at once, then one unit every window/count', () => {
    const clock = new ManualClock(1_000_000);
    const b = new Budget(clock, { count: 200, windowSeconds: 60 });
    for (let i = 0; i < 200; i++) assert.equal(b.take('u'), 0, `request ${i}`);
    assert.deepEqual(b.standing('u'), { limit: 200, remaining: 0, resetSeconds: 60 });
    const wait = b.take('u');
    assert.ok(Math.abs(wait - 0.3) < 1e-9, `wait ${wait}`);
    // Refused requests cost nothing: the wait does not grow.
    for (let i = 0; i < 50; i++) assert.ok(Math.abs(b.take('u') - 0.3) < 1e-9);
    clock.advance(300);
    assert.equal(b.take('u'), 0);
    assert.ok(b.take('u') > 0);
    clock.advance(30_000);
    assert.equal(b.standing('u').remaining, 100);
    clock.advance(60_000);
    assert.deepEqual(b.standing('u'), { limit: 200, remaining: 200, resetSeconds: 0 });
    // Other keys are untouched throughout.
    assert.deepEqual(b.standing('v'), { limit: 200, remaining: 200, resetSeconds: 0 });
  });

  it("gives a whole burst for counts that do not divide the window, at today's clock after a year of uptime", () => {
    for (const uptime of [0, 365 * 86_400_000 + 0.5]) {
      for (const [count, windowSeconds] of [
        [6, 7],
        [7, 1],
        [11, 60],
        [13, 3600],
        [1173, 1],
        [1949, 1],
      ]) {
        const clock = new ManualClock(1_764_000_000_123);
        const b = new Budget(clock, { count, windowSeconds });
        clock.advance(uptime);
        let granted = 0;
        for (let i = 0; i <= count; i++) if (b.take('k') === 0) granted++;
        assert.equal(granted, count, `${count}/${windowSeconds}s after ${uptime} ms`);
        assert.equal(b.standing('k').remaining, 0);
      }
    }
  });

  it('keeps a client that polls once a second with a ping a minute well inside 200 a minute', () => {
    const clock = new ManualClock(0);
    const b = new Budget(clock, { count: 200, windowSeconds: 60 });
    let lowest = 200;
    for (let s = 0; s < 3600; s++) {
      assert.equal(b.take('poller'), 0);
      if (s % 60 === 0) assert.equal(b.take('poller'), 0);
      lowest = Math.min(lowest, b.standing('poller').remaining);
      clock.advance(1000);
    }
    assert.ok(lowest >= 130, `lowest remaining ${lowest}`);
  });

  it('holds at most maxKeys keys under a flood of distinct ones, and drops spent keys once a window', () => {
    const clock = new ManualClock(0);
    const b = new Budget(clock, { count: 5, windowSeconds: 1800 }, 1000);
    for (let i = 0; i < 100_000; i++) {
      b.take(`flood-${i}`);
      assert.ok(b.size <= 1000, `size ${b.size} after ${i}`);
    }
    // A key first used long ago is whole again once its debt is paid: the next sweep drops it.
    const quiet = new Budget(clock, { count: 100, windowSeconds: 60 });
    for (let i = 0; i < 500; i++) quiet.take(`ip-${i}`);
    assert.equal(quiet.size, 500);
    clock.advance(61_000);
    quiet.take('late');
    assert.equal(quiet.size, 1);
  });
});

describe('PasswordBudgets', () => {
  it('takes a unit before the check, gives the address its unit back on success and clears the account', () => {
    const clock = new ManualClock(0);
    const p = new PasswordBudgets(clock, { account: { count: 5, windowSeconds: 1800 }, address: { count: 30, windowSeconds: 1800 } });
    for (let i = 0; i < 5; i++) assert.equal(p.begin('user:1', '10.0.0.1'), undefined);
    const refused = p.begin('user:1', '10.0.0.2');
    assert.equal(refused?.limit, 5);
    assert.ok(refused!.wait > 0 && refused!.wait <= 1800);
    // The refusal by account took nothing from the address: all 30 are left there.
    for (let i = 0; i < 30; i++) assert.equal(p.begin(`name:${i}`, '10.0.0.2'), undefined);
    assert.equal(p.begin('name:x', '10.0.0.2')?.limit, 30);
    // A right password: the account starts over, the address gets its unit back.
    const ok = new PasswordBudgets(clock, { account: { count: 2, windowSeconds: 60 }, address: { count: 2, windowSeconds: 60 } });
    for (let i = 0; i < 10; i++) {
      assert.equal(ok.begin('user:2', '10.0.0.3'), undefined, `login ${i}`);
      ok.succeeded('user:2', '10.0.0.3');
    }
  });
});

describe('addressKey', () => {
  it('counts an IPv4-mapped address as IPv4 and an IPv6 address by its /64', () => {
    assert.equal(addressKey('203.0.113.9'), '203.0.113.9');
    assert.equal(addressKey('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0DB8:0001:0002:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('fe80::1:2:3:4'), 'fe80:0:0:0::/64');
  });
});

describe('TrustedProxies', () => {
  it('believes X-Forwarded-For only from a trusted proxy, read from the right', () => {
    const p = new TrustedProxies(['10.0.0.0/8', '::1', '2001:db8::/32']);
    // No proxy trusted, or the peer is not one: the peer, whatever the header says.
    assert.equal(new TrustedProxies([]).client('10.0.0.5', '203.0.113.7'), '10.0.0.5');
    assert.equal(p.client('198.51.100.1', '203.0.113.7'), '198.51.100.1');
    // Through one proxy, and through a chain; a client's own entries further left change nothing.
    assert.equal(p.client('10.0.0.5', '203.0.113.7'), '203.0.113.7');
    assert.equal(p.client('::ffff:10.0.0.5', '203.0.113.7'), '203.0.113.7');
    assert.equal(p.client('::1', '1.2.3.4, 203.0.113.7, 10.1.1.1'), '203.0.113.7');
    assert.equal(p.client('10.0.0.5', ['1.2.3.4', '203.0.113.7']), '203.0.113.7');
    assert.equal(p.client('10.0.0.5', '2001:db8::9, 2001:db9::1'), '2001:db9::1');
    // Garbage stops at the proxy that passed it on; a header of proxies only ends at the leftmost.
    assert.equal(p.client('10.0.0.5', 'forged, 10.2.2.2'), '10.2.2.2');
    assert.equal(p.client('10.0.0.5', ''), '10.0.0.5');
    assert.equal(p.client('10.0.0.5', '10.3.3.3, 10.2.2.2'), '10.3.3.3');
    assert.equal(p.client('10.0.0.5', undefined), '10.0.0.5');
  });

  it('reads the option as addresses and CIDR blocks, refusing anything else', () => {
    assert.deepEqual(parseTrustedProxies(undefined), []);
    assert.deepEqual(parseTrustedProxies('127.0.0.1, 10.0.0.0/8,::1,fd00::/8'), ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8']);
    for (const bad of ['proxy.local', '10.0.0.0/33', '::1/129', '10.0.0.1/8/2', '10.0.0.0/x', '1.2.3']) assert.equal(parseTrustedProxies(bad), undefined, bad);
  });
});

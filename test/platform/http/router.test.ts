// The router both listeners share (platform/http/router.ts), run against its options as Chat and
// Infra set them: literal paths from the map however they are written, `{param}` segments, the most
// literal route winning, a wrong method (405) told from an unknown path (404), and percent-decoding
// that refuses a malformed escape with the service's own error.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Router, type Route } from '../../../src/platform/http/router.js';

class BadEscape extends Error {}

const routes: Route<string>[] = [
  { method: 'GET', path: '/events', value: 'get-events' },
  { method: 'DELETE', path: '/events', value: 'delete-events' },
  { method: 'GET', path: '/users/me', value: 'me' },
  { method: 'GET', path: '/users/{user_id}', value: 'by-id' },
  { method: 'GET', path: '/users/{email}', value: 'by-email' },
  { method: 'PATCH', path: '/users/{user_id}', value: 'patch-user' },
  { method: 'POST', path: '/register', value: 'register' },
  { method: 'GET', path: '/{zone}/records', value: 'zone-records' },
  { method: 'GET', path: '/messages/{message_id}/reactions/{emoji}', value: 'reaction' },
];

const options = {
  paramPattern: (name: string) => (name.endsWith('_id') ? /^[0-9]+$/ : undefined),
  badEscape: (segment: string) => new BadEscape(segment),
};
const router = new Router(routes, options);

describe('the shared router', () => {
  it('finds literal paths however they are written, with shared empty parameters', () => {
    for (const path of ['/events', '/events/', '//events', 'events', '/events//']) {
      const m = router.find('GET', path);
      assert.equal(m.kind === 'found' && m.value, 'get-events', path);
      assert.deepEqual(m.kind === 'found' && m.params, {}, path);
    }
    const m = router.find('GET', '/users/me');
    assert.equal(m.kind === 'found' && m.value, 'me', 'a literal segment beats a parameter');
    // Shared between requests, so nobody may change it.
    assert.ok(m.kind === 'found' && Object.isFrozen(m.params));
  });

  it('reads path parameters, percent-decoded, a pattern deciding between routes of one shape', () => {
    assert.deepEqual(router.find('GET', '/users/12'), { kind: 'found', value: 'by-id', params: { user_id: '12' } });
    assert.deepEqual(router.find('GET', '/users/a%40b.c'), { kind: 'found', value: 'by-email', params: { email: 'a@b.c' } });
    assert.deepEqual(router.find('GET', '/users/%F0%9F%98%80'), { kind: 'found', value: 'by-email', params: { email: '😀' } });
    assert.deepEqual(router.find('GET', '/messages/7/reactions/%2B1'), { kind: 'found', value: 'reaction', params: { message_id: '7', emoji: '+1' } });
    // A route whose first segment is a parameter is tried for every path of its length.
    assert.deepEqual(router.find('GET', '/example.com/records'), { kind: 'found', value: 'zone-records', params: { zone: 'example.com' } });
  });

  it("refuses a malformed escape in a path parameter with the service's error, naming the segment", () => {
    for (const bad of ['%zz', '%', 'a%E0%A4%A', '%E0%A4%A', '%FF', '%C0%AF', '%ED%A0%80']) {
      assert.throws(
        () => router.find('GET', `/users/${bad}`),
        (e: unknown) => e instanceof BadEscape && e.message === bad,
        bad,
      );
      assert.throws(() => router.find('GET', `/messages/1/reactions/${bad}`), BadEscape, bad);
    }
  });

  it('tells a wrong method, with the allowed ones in declaration order, from an unknown path', () => {
    assert.deepEqual(router.find('POST', '/events'), { kind: 'wrong-method', allowed: ['GET', 'DELETE'] });
    assert.deepEqual(router.find('GET', '/register'), { kind: 'wrong-method', allowed: ['POST'] });
    assert.deepEqual(router.find('DELETE', '/users/12'), { kind: 'wrong-method', allowed: ['GET', 'PATCH'] });
    assert.deepEqual(router.find('GET', '/no/such'), { kind: 'none' });
    assert.deepEqual(router.find('GET', '/'), { kind: 'none' });
    assert.deepEqual(router.find('GET', ''), { kind: 'none' });
    assert.deepEqual(router.find('GET', '/events/extra'), { kind: 'none' });
  });

  it('matches literal segments in any case when asked to (Infra), reading parameters as written', () => {
    const infra = new Router(
      [
        { method: 'GET', path: '/apiusers/{uuid}', value: 'get' },
        { method: 'POST', path: '/apiusers', value: 'create' },
        { method: 'GET', path: '/dns/zones/{name}/records', value: 'records' },
      ],
      { caseInsensitive: true, badEscape: options.badEscape },
    );
    assert.deepEqual(infra.find('GET', '/APIUsers/AbC'), { kind: 'found', value: 'get', params: { uuid: 'AbC' } });
    assert.deepEqual(infra.find('POST', '/ApiUsers/'), { kind: 'found', value: 'create', params: {} });
    assert.deepEqual(infra.find('GET', '/DNS/Zones/Example.COM/Records'), { kind: 'found', value: 'records', params: { name: 'Example.COM' } });
    assert.deepEqual(infra.find('DELETE', '/apiusers'), { kind: 'wrong-method', allowed: ['POST'] });
    assert.throws(() => infra.find('GET', '/apiusers/%E0%A4%A'), BadEscape);
  });

  it('refuses a route defined twice, and allows one shape under different parameter names', () => {
    assert.throws(() => new Router([routes[0], { ...routes[0], value: 'again' }], options), /GET \/events is defined twice/);
    assert.doesNotThrow(() => new Router([routes[3], routes[4]], options));
  });
});

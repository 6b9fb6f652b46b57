// Routing of Chat paths under /api/v1: literal paths (the hottest requests, found without splitting
// the path) and paths with parameters, empty segments ignored, a wrong method told from an unknown path.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import Type from 'typebox';
import { BAD_PATH_ESCAPE, ChatRouter } from '../../src/chat/router.js';
import { ChatError } from '../../src/chat/errors.js';
import { defineEndpoint, type Endpoint } from '../../src/chat/endpoint.js';

const endpoint = (method: 'GET' | 'POST' | 'DELETE', path: string): Endpoint => defineEndpoint({ method, path, summary: path, auth: 'user', params: Type.Object({}), handler: async () => ({}) });

const events = endpoint('GET', '/events');
const me = endpoint('GET', '/users/me');
const byId = endpoint('GET', '/users/{user_id}');
const byEmail = endpoint('GET', '/users/{email}');
const router = new ChatRouter([events, endpoint('DELETE', '/events'), me, byId, byEmail, endpoint('POST', '/register')]);

it('finds literal paths however they are written, with no path parameters', () => {
  for (const path of ['/events', '/events/', '//events', 'events', '/events//']) {
    const m = router.find('GET', path);
    assert.equal(m.kind === 'found' && m.value, events, path);
    assert.deepEqual(m.kind === 'found' && m.params, {}, path);
  }
  const m = router.find('GET', '/users/me');
  assert.equal(m.kind === 'found' && m.value, me, 'a literal segment beats a parameter');
  // Shared between requests, so nobody may change it.
  assert.ok(m.kind === 'found' && Object.isFrozen(m.params));
});

it('reads path parameters, an id segment being digits', () => {
  assert.deepEqual(router.find('GET', '/users/12'), { kind: 'found', value: byId, params: { user_id: '12' } });
  assert.deepEqual(router.find('GET', '/users/a%40b.c'), { kind: 'found', value: byEmail, params: { email: 'a@b.c' } });
});

it('refuses a broken %-escape in a path parameter as a client error, not an exception', () => {
  for (const bad of ['%zz', '%', 'a%E0%A4%A', '%FF', '%C0%AF', '%ED%A0%80']) {
    assert.throws(
      () => router.find('GET', `/users/${bad}`),
      (e: unknown) => e instanceof ChatError && e.status === 400 && e.message === BAD_PATH_ESCAPE,
      bad,
    );
  }
  assert.deepEqual(router.find('GET', '/users/%F0%9F%98%80'), { kind: 'found', value: byEmail, params: { email: '😀' } });
});

it('tells a wrong method (with the allowed ones) from an unknown path', () => {
  assert.deepEqual(router.find('POST', '/events'), { kind: 'wrong-method', allowed: ['GET', 'DELETE'] });
  assert.deepEqual(router.find('GET', '/register'), { kind: 'wrong-method', allowed: ['POST'] });
  assert.deepEqual(router.find('GET', '/no/such'), { kind: 'none' });
  assert.deepEqual(router.find('GET', '/'), { kind: 'none' });
});

// The request target split shared by both listeners: the path and query the WHATWG URL parser gives,
// whether a target takes the hand-made split (plain paths) or the parser (dot segments, backslashes,
// fragments, absolute and scheme-relative forms).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { splitTarget } from '../../../src/platform/http/target.js';

/** A path as routing reads it: segments with their escapes decoded (the parser adds escapes the hand-made split does not). */
const decoded = (path: string) => path.split('/').map((s) => decodeURIComponent(s));

it('splits a request target as new URL does', () => {
  for (const target of [
    '/api/v1/users/me',
    '/api/v1/users/me?',
    '/api/v1/messages?anchor=newest&num_before=5&narrow=%5B%5D',
    '/api/v1/users/a@b.example/presence',
    '/api/v1/users/../realm',
    '/api/v1/./users/me',
    '/api/v1/users/%61b',
    '/api/v1/x y?q=a b',
    '/api/v1/x?q=1#frag',
    '/api/v1/x#frag',
    '//api/v1/users',
    '/api/v1/users/é?name=é',
    '/api/v1/a\\b',
    '/api/v1/users?x=%zz&y=+1&y=2',
    '/api/v1/users/me?a=1?b=2',
    '/api/rest/v2.10/zz/%2E%2e/apiusers',
    '/api/rest/v2.10\\apiusers',
    '/api/rest/v2.10/./apiusers',
    'http://host:8080/api/v1/users/me?x=1',
  ]) {
    const url = new URL(target, 'http://x');
    const got = splitTarget(target);
    assert.ok(got, target);
    assert.deepEqual(decoded(got.path), decoded(url.pathname), target);
    assert.deepEqual([...new URLSearchParams(got.query)], [...url.searchParams], target);
  }
});

it('keeps a plain path as written, without the parser', () => {
  assert.deepEqual(splitTarget('/api/v1/users/a%40b?x=1'), { path: '/api/v1/users/a%40b', query: 'x=1' });
  assert.deepEqual(splitTarget('/api/v1/events'), { path: '/api/v1/events', query: '' });
});

it('gives undefined for a target the parser refuses (a broken authority)', () => {
  assert.equal(splitTarget('http://[::1/api/v1/users'), undefined);
});

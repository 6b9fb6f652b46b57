// The response validator itself: it must accept what Zulip documents (its own examples) and
// reject what Zulip does not, or the suite's checks of every 2xx answer would prove nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { referenceMissing, zulipOpenApi, type ZulipOpenApi } from '../helpers/zulip-openapi.js';

const why = referenceMissing();
const api = zulipOpenApi();
if (why) console.log(`# skipping the OpenAPI validator's tests: ${why}`);

type Doc = { paths: Record<string, Record<string, any>> };

/** Every full response example the document carries, with its operation. */
function documentedExamples(v: ZulipOpenApi): { method: string; path: string; example: Record<string, unknown> }[] {
  const dialect = (v as unknown as { dialect: { doc: Doc; deref(r: string): any } }).dialect;
  const out: { method: string; path: string; example: Record<string, unknown> }[] = [];
  for (const [template, item] of Object.entries(dialect.doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      let res = op?.responses?.['200'];
      if (res?.$ref) res = dialect.deref(res.$ref);
      const schema = res?.content?.['application/json']?.schema;
      const walk = (s: any, depth: number): void => {
        if (!s || typeof s !== 'object' || depth > 2) return;
        if (s.example && typeof s.example === 'object' && 'result' in s.example) {
          // A concrete URL for the template, so matching is exercised too.
          const path = template.replace(/\{[a-z_]*_id\}/g, '7').replace(/\{[^}]+\}/g, 'someone@example.com');
          out.push({ method: method.toUpperCase(), path, example: s.example });
        }
        for (const k of ['allOf', 'oneOf', 'anyOf']) for (const b of s[k] ?? []) walk(b, depth + 1);
      };
      walk(schema, 0);
    }
  }
  return out;
}

const me = {
  result: 'success',
  msg: '',
  avatar_url: 'https://x/a.png',
  avatar_version: 1,
  email: 'a@example.com',
  delivery_email: 'a@example.com',
  full_name: 'A',
  is_admin: false,
  is_owner: false,
  role: 400,
  is_guest: false,
  is_bot: false,
  is_active: true,
  timezone: '',
  date_joined: '2024-01-01T00:00:00.000000+00:00',
  max_message_id: 1,
  user_id: 9,
  profile_data: {},
};

describe('Zulip OpenAPI response validator', { skip: why }, () => {
  it('accepts every response example Zulip documents', () => {
    const examples = documentedExamples(api!);
    assert.ok(examples.length >= 50, `only ${examples.length} examples found: the walk no longer finds them`);
    for (const { method, path, example } of examples) {
      assert.deepEqual(api!.problems(method, path, 200, example), [], `${method} ${path}`);
    }
  });

  it('rejects fields, types and nulls the document does not allow', () => {
    assert.deepEqual(api!.problems('GET', '/users/me', 200, me), []);
    const extra = api!.problems('GET', '/users/me', 200, { ...me, frobnicate: 1 });
    assert.match(extra.join('\n'), /GET \/users\/me .*additional properties \(frobnicate\)/s);
    assert.match(api!.problems('GET', '/users/me', 200, { ...me, user_id: '9' }).join('\n'), /\/user_id must be integer/);
    assert.match(api!.problems('GET', '/users/me', 200, { ...me, role: 500 }).join('\n'), /\/role must be equal to one of the allowed values/);
    assert.match(api!.problems('GET', '/users/me', 200, { ...me, result: 'error' }).join('\n'), /\/result/);
    assert.match(api!.problems('GET', '/users/me', 200, { ...me, full_name: null }).join('\n'), /\/full_name must be string/);
    // The requester's own delivery_email is a plain string; another user's is `nullable: true`.
    assert.match(api!.problems('GET', '/users/me', 200, { ...me, delivery_email: null }).join('\n'), /\/delivery_email must be string/);
    const { result, msg, max_message_id, avatar_version, ...user } = me;
    const byId = { result, msg, user: { ...user, bot_type: null, avatar_version } };
    assert.deepEqual(api!.problems('GET', '/users/9', 200, byId), []);
    assert.deepEqual(api!.problems('GET', '/users/9', 200, { ...byId, user: { ...user, bot_type: null, avatar_version, delivery_email: null } }), []);
    assert.match(api!.problems('GET', '/users/9', 200, { ...byId, user: { ...user, bot_type: null, avatar_version, delivery_email: 3 } }).join('\n'), /\/user\/delivery_email/);
    void max_message_id;
  });

  it('opens a closed allOf branch only to the names its siblings declare', () => {
    // ignored_parameters_unsupported is declared by JsonSuccessBase, a sibling branch.
    assert.deepEqual(api!.problems('GET', '/users/me', 200, { ...me, ignored_parameters_unsupported: ['x'] }), []);
    assert.match(api!.problems('GET', '/users/me', 200, { ...me, ignored_parameters_unsupported: 'x' }).join('\n'), /must be array/);
  });

  it('finds operations the way Zulip routes them', () => {
    const op = (m: string, p: string) => {
      const o = api!.find(m, p);
      return o && `${o.method} ${o.template}`;
    };
    assert.equal(op('GET', '/users/me'), 'GET /users/me');
    assert.equal(op('GET', '/users/12'), 'GET /users/{user_id}');
    assert.equal(op('GET', '/users/a@example.com'), 'GET /users/{email}');
    assert.equal(op('GET', '/messages/5'), 'GET /messages/{message_id}');
    assert.equal(op('GET', '/users/me/3/topics'), 'GET /users/me/{stream_id}/topics');
    assert.equal(op('DELETE', '/streams/3'), 'DELETE /streams/{stream_id}');
    assert.equal(op('GET', '/messages/x'), undefined, 'an id segment is digits');
  });

  it('fails undocumented operations, except the listed ones, and ignores errors', () => {
    assert.match(api!.problems('GET', '/no_such_thing', 200, { result: 'success', msg: '' }).join(''), /no operation in Zulip's OpenAPI document/);
    assert.deepEqual(api!.problems('POST', '/bots', 200, { result: 'success', msg: '', user_id: 1, api_key: 'k' }), []);
    assert.deepEqual(api!.problems('GET', '/users/me', 400, { result: 'error', msg: 'x', code: 'BAD_REQUEST' }), []);
    assert.throws(() => api!.check('GET', '/users/me', 200, { result: 'success' }), /GET \/users\/me.*msg/s);
  });
});

describe('a missing reference document', () => {
  const nowhere = '/nonexistent/shared/reference/zulip-openapi-10.2.yaml';
  it('fails the run in CI, naming the path looked for', () => {
    for (const env of [{ CI: 'true' }, { KEEL_TEST_REQUIRE_REFERENCE: '1' }]) {
      assert.throws(
        () => referenceMissing(nowhere, env),
        (e: Error) => e.message.includes(nowhere) && /CI requires it/.test(e.message),
        JSON.stringify(env),
      );
    }
  });
  it('is a printed reason to skip elsewhere', () => {
    const reason = referenceMissing(nowhere, {});
    assert.ok(reason?.includes(nowhere), reason);
  });
  it('is no reason at all when the file is there', () => {
    assert.equal(referenceMissing(import.meta.filename, { CI: 'true' }), undefined);
  });
});

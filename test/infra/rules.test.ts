// Unit tests of the Infra rules: permissions, parameter checking, routing, the OpenAPI document.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Type from 'typebox';
import { allows, covers, systemPermissions } from '../../src/infra/permissions.js';
import { checkParams } from '../../src/infra/params.js';
import { Router } from '../../src/infra/transport/router.js';
import { allCommands } from '../../src/infra/commands/index.js';
import { openApiDocument } from '../../src/infra/openapi.js';
import { InfraError } from '../../src/infra/errors.js';
import { takeCredentials } from '../../src/infra/transport/credentials.js';

describe('permissions', () => {
  it('matches "*", family wildcards at any depth, and exact names only', () => {
    assert.ok(allows(['*'], 'dns.record.create'));
    assert.ok(allows(['dns.*'], 'dns.record.create'));
    assert.ok(allows(['dns.record.*'], 'dns.record.create'));
    assert.ok(!allows(['dns.domain.*'], 'dns.record.create'));
    assert.ok(!allows(['dn*'], 'dns.record.create'));
    assert.ok(!allows(['apiuser.get'], 'apiuser.getall'));
    assert.ok(!allows([], 'apiuser.get'));
  });
  it('lets a holder grant only what it holds', () => {
    assert.ok(covers(['*'], '*'));
    assert.ok(!covers(['apiuser.*'], '*'));
    assert.ok(covers(['apiuser.*'], 'apiuser.get'));
    assert.ok(covers(['dns.*'], 'dns.record.*'));
    assert.ok(!covers(['dns.record.*'], 'dns.*'));
    assert.ok(!covers(['apiuser.get'], 'apiuser.*'));
  });
  it('lists "*", each family and sub-family and each command', () => {
    assert.deepEqual(systemPermissions(['b.x', 'a.y', 'a.z.w']), ['*', 'a.*', 'a.z.*', 'b.*', 'a.y', 'a.z.w', 'b.x']);
  });
});

describe('parameters', () => {
  const schema = Type.Object({
    id: Type.Union([Type.Integer(), Type.String()]),
    resWindow: Type.Optional(Type.Integer({ minimum: 1, default: 20 })),
    customerId: Type.Optional(Type.Integer()),
    flag: Type.Optional(Type.Boolean()),
  });
  it('converts loose types and matches keys without case', () => {
    assert.deepEqual(checkParams(schema, { id: '7', resWindow: '5', customerid: '3', flag: 'true', extra: 1 }), { id: '7', resWindow: 5, customerId: 3, flag: true, customerid: '3', extra: 1 });
    assert.equal((checkParams(schema, { id: 1 }) as { resWindow: number }).resWindow, 20);
  });
  it('names the missing or malformed parameter in a FAULT', () => {
    const fault = (input: Record<string, unknown>) => {
      try {
        checkParams(schema, input);
      } catch (e) {
        assert.ok(e instanceof InfraError);
        return e;
      }
      assert.fail('expected a FAULT');
    };
    const missing = fault({});
    assert.equal(missing.code, 'FAULT');
    assert.equal(missing.message, 'Missing parameter id');
    assert.deepEqual(missing.fields, { id: 'is required' });
    assert.equal(fault({ id: 1, resWindow: 0 }).message, 'Invalid parameter resWindow: must be at least 1');
    assert.equal(fault({ id: {} }).message, 'Invalid parameter id: must be an integer or a string');
  });
});

describe('router', () => {
  const router = new Router(allCommands());
  it('finds json.php and REST paths, preferring literal segments', () => {
    assert.equal(router.find('POST', '/json.php').kind, 'cmd');
    const t = router.find('GET', '/apiusers/permissions/system');
    assert.ok(t.kind === 'rest' && t.command.cmd === 'apiuser.permissions.system');
    const g = router.find('GET', '/apiusers/42');
    assert.ok(g.kind === 'rest' && g.command.cmd === 'apiuser.get' && g.pathParams.id === '42');
    assert.equal(router.find('PATCH', '/apiusers/42').kind, 'wrong-method');
    assert.equal(router.find('GET', '/nope').kind, 'none');
  });
  it('recognises the API prefixes clients use', () => {
    assert.equal(Router.apiPath('/api/rest/v2.10/apiusers'), '/apiusers');
    assert.equal(Router.apiPath('/api/v2.8/dns/domain'), '/dns/domain');
    assert.equal(Router.apiPath('/api/rest/v1/json.php'), '/json.php');
    assert.equal(Router.apiPath('/apiusers'), null);
  });
});

describe('credentials', () => {
  it('takes Basic first, then body keys (clearing their values), then the cookie', () => {
    const params: Record<string, unknown> = { APIUUID: 'u', apisecret: 's', x: 1 };
    assert.deepEqual(takeCredentials({}, params), { kind: 'apikey', uuid: 'u', secret: 's' });
    assert.deepEqual(
      Object.entries(params).filter(([, v]) => v !== undefined),
      [['x', 1]],
    );
    assert.deepEqual(takeCredentials({ authorization: 'Bearer abc' }, {}), { kind: 'jwt', token: 'abc' });
    assert.deepEqual(takeCredentials({ cookie: 'a=b; JWTSESSIONID=tok' }, {}), { kind: 'jwt', token: 'tok' });
    assert.deepEqual(takeCredentials({ authorization: 'Digest x' }, {}), { kind: 'invalid' });
    assert.deepEqual(takeCredentials({}, { APIUUID: 'u' }), { kind: 'invalid' });
    assert.deepEqual(takeCredentials({}, {}), { kind: 'none' });
  });
});

describe('OpenAPI document', () => {
  const commands = allCommands();
  const doc = openApiDocument(commands) as any;
  it('is OpenAPI 3.0.3 with both security schemes and a tag per family', () => {
    assert.equal(doc.openapi, '3.0.3');
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['basicApiKey', 'bearerAuth']);
    assert.deepEqual(doc.security, [{ bearerAuth: [] }, { basicApiKey: [] }]);
    for (const f of new Set(commands.map((c) => c.cmd.split('.')[0])))
      assert.ok(
        doc.tags.some((t: { name: string }) => t.name === f),
        f,
      );
  });
  it('documents every command with x-vendor-cmd and the operationId rule', () => {
    const ops = Object.values(doc.paths).flatMap((p: any) => Object.entries(p).map(([method, op]: [string, any]) => ({ method, op })));
    for (const c of commands) {
      const found = ops.find(({ op }) => op['x-vendor-cmd'] === c.cmd);
      assert.ok(found, c.cmd);
      assert.equal(found.op.operationId, `${found.method}_${c.cmd.replaceAll('.', '_')}`);
      assert.ok(found.op.description.includes(c.cmd));
    }
    assert.equal(doc.paths['/apiusers'].get.operationId, 'get_apiuser_getall');
    assert.ok(doc.paths['/apiusers/{id}'].get.parameters.some((p: any) => p.in === 'path' && p.name === 'id' && p.required));
    assert.ok(doc.paths['/apiusers'].get.parameters.some((p: any) => p.in === 'query' && p.name === 'resStart' && p.schema.minimum === 0));
    assert.ok(doc.paths['/json.php'].post);
    const ids = ops.map(({ op }) => op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
    assert.ok(!JSON.stringify(doc).includes('"const"'), 'no JSON Schema 2020 keywords OpenAPI 3.0 lacks');
  });
});

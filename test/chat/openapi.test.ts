// The Chat OpenAPI document: served without credentials at GET /api/v1/openapi.json, valid under a
// real OpenAPI 3.1 validator, saying what each definition accepts (types, enums, defaults, Zulip's
// JSON encoding), named as Zulip names its operations and parameters; docs/chat-api.md made from it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parse } from 'yaml';
import { allEndpoints, openApiDocument } from '../../src/chat/endpoints/index.js';
import { updateUserById } from '../../src/chat/endpoints/users.js';
import { chatApiMarkdown } from '../../src/chat/openapi.js';
import { decodeParams } from '../../src/chat/params.js';
import { ChatError } from '../../src/chat/errors.js';
import { inProcessChat } from '../helpers/in-process-chat.js';
import { createStorage, startServer, type Storage } from '../helpers/server.js';
import { referenceMissing, UNDOCUMENTED, ZULIP_OPENAPI_PATH } from '../helpers/zulip-openapi.js';

type Node = Record<string, any>;

const doc = openApiDocument() as Node;
const op = (method: string, path: string): Node => doc.paths[path][method.toLowerCase()];
const queryParam = (method: string, path: string, name: string): Node => op(method, path).parameters.find((p: Node) => p.name === name);
const form = (method: string, path: string): Node => op(method, path).requestBody.content['application/x-www-form-urlencoded'];

describe('GET /api/v1/openapi.json', () => {
  let storage: Storage;
  let chat: Awaited<ReturnType<typeof inProcessChat>>;
  before(async () => {
    storage = await createStorage('sqlite');
    chat = await inProcessChat(storage);
  });
  after(async () => {
    await chat.close();
    await storage.dispose();
  });

  it('answers the document without credentials, as the whole body, valid under an OpenAPI 3.1 validator', async () => {
    const res = await chat.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const served = JSON.parse(res.body) as Node;
    assert.deepEqual(served, JSON.parse(JSON.stringify(doc)));
    assert.ok(!('result' in served) && !('msg' in served), 'no envelope around the document');
    const validator = new Validator();
    const checked = await validator.validate(served);
    assert.equal(validator.version, '3.1');
    assert.deepEqual(checked.errors ?? [], []);
    assert.equal(checked.valid, true);
    // The validator is a real one: the same document with a parameter in no valid place fails.
    const broken = structuredClone(served);
    broken.paths['/users'].get.parameters[0].in = 'form';
    assert.equal((await new Validator().validate(broken)).valid, false);
  });

  it('is answered by a real keel serve too, over a socket, with no credentials', async () => {
    const own = await createStorage('sqlite');
    const served = await startServer(own);
    try {
      const res = await fetch(`${served.chatUrl}/api/v1/openapi.json`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(doc)));
    } finally {
      await served.stop();
      await own.dispose();
    }
  });

  it('is an ordinary endpoint: a wrong method is a 405 in the envelope', async () => {
    const res = await chat.app.inject({ method: 'POST', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 405);
    assert.equal(JSON.parse(res.body).result, 'error');
  });
});

describe('the Chat OpenAPI document', () => {
  it('has every registered endpoint, once', () => {
    const operations = Object.entries(doc.paths as Record<string, Node>).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    assert.deepEqual(
      operations.sort(),
      allEndpoints()
        .map((e) => `${e.method} ${e.path}`)
        .sort(),
    );
  });

  it('puts GET parameters in the query: strings and primitives as a schema, anything else JSON-encoded', () => {
    assert.deepEqual(queryParam('GET', '/users', 'client_gravatar'), { name: 'client_gravatar', in: 'query', required: false, schema: { type: 'boolean', default: true } });
    const narrow = queryParam('GET', '/messages', 'narrow');
    assert.equal(narrow.schema, undefined);
    assert.equal(narrow.content['application/json'].schema.type, 'array');
    assert.deepEqual(queryParam('GET', '/events', 'queue_id'), { name: 'queue_id', in: 'query', required: false, schema: { type: 'string' } });
    assert.deepEqual(queryParam('GET', '/messages/matches_narrow', 'msg_ids').content['application/json'].schema, { type: 'array', items: { type: 'integer' } });
  });

  it('puts path parameters in the path with their declared type', () => {
    assert.deepEqual(queryParam('GET', '/users/{user_id}', 'user_id'), { name: 'user_id', in: 'path', required: true, schema: { type: 'integer' } });
    assert.deepEqual(queryParam('GET', '/users/{email}', 'email'), { name: 'email', in: 'path', required: true, schema: { type: 'string' } });
  });

  it("puts other methods' parameters in a form, JSON-encoded unless declared a string, with enums and defaults", () => {
    const send = form('POST', '/messages');
    assert.deepEqual(send.schema.properties.type, { type: 'string', enum: ['direct', 'channel', 'stream', 'private'] });
    assert.deepEqual(send.schema.required, ['type', 'to', 'content']);
    assert.deepEqual(send.encoding.to, { contentType: 'application/json' });
    assert.deepEqual(send.encoding.read_by_sender, { contentType: 'application/json' });
    assert.equal(send.encoding.content, undefined, 'a string is sent as it is');
    assert.match(send.schema.properties.to.description, /not JSON is taken as a string/);
    const edit = form('PATCH', '/messages/{message_id}');
    assert.deepEqual(edit.schema.properties.propagate_mode, { type: 'string', enum: ['change_one', 'change_later', 'change_all'], default: 'change_one' });
    assert.ok(!edit.schema.required?.includes('propagate_mode'), 'a parameter with a default is optional on the wire');
    assert.equal(op('POST', '/users/me/subscriptions').requestBody.required, true);
    assert.equal(op('PATCH', '/users/{user_id}').requestBody.required, false);
  });

  it('says who may call each endpoint', () => {
    assert.deepEqual(doc.security, [{ basicAuth: [] }]);
    assert.deepEqual(op('GET', '/server_settings').security, []);
    assert.deepEqual(op('GET', '/openapi.json').security, []);
    assert.deepEqual(op('POST', '/register').security, [{ basicAuth: [] }, {}], 'a spectator may call it without credentials');
    assert.equal(op('GET', '/users/me').security, undefined);
  });

  it('gives every parameter a real schema, profile_data included', () => {
    const untyped: string[] = [];
    const walk = (s: unknown, where: string): void => {
      if (!s || typeof s !== 'object') return;
      const n = s as Node;
      if (!['type', 'anyOf', 'oneOf', 'enum', 'const', '$ref'].some((k) => k in n)) untyped.push(where);
      for (const b of [...(n.anyOf ?? []), ...(n.oneOf ?? [])]) walk(b, `${where} (a branch)`);
      if (n.items) walk(n.items, `${where}[]`);
      for (const [k, v] of Object.entries(n.properties ?? {})) walk(v, `${where}.${k}`);
    };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Node>)) {
      for (const [method, o] of Object.entries(item)) {
        for (const p of o.parameters ?? []) walk(p.schema ?? p.content['application/json'].schema, `${method} ${path} ${p.name}`);
        const body = o.requestBody?.content['application/x-www-form-urlencoded'].schema;
        for (const [k, v] of Object.entries(body?.properties ?? {})) walk(v, `${method} ${path} ${k}`);
      }
    }
    assert.deepEqual(untyped, []);
    assert.deepEqual(form('PATCH', '/users/{user_id}').schema.properties.profile_data.items.properties.value, {
      anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'integer' } }, { type: 'null' }],
    });
  });

  it('checks profile_data values as the schema says: text, user ids or null, nothing else', () => {
    for (const value of ['"x"', '[1, 2]', 'null']) {
      assert.equal(Array.isArray(decodeParams(updateUserById.params, { user_id: '1', profile_data: `[{"id": 4, "value": ${value}}]` }).values.profile_data), true, value);
    }
    for (const value of ['true', '7', '{"a": 1}', '["x"]']) {
      assert.throws(
        () => decodeParams(updateUserById.params, { user_id: '1', profile_data: `[{"id": 4, "value": ${value}}]` }),
        (e: unknown) => e instanceof ChatError && e.code === 'BAD_REQUEST',
        value,
      );
    }
  });
});

/** Keel's operations that Zulip's document leaves out, beyond those the response check lists. */
const KEEL_ONLY_OPERATIONS: Record<string, string> = {
  'GET /openapi.json': "Keel's own: Zulip serves no OpenAPI document",
};

/** Parameters Keel takes that Zulip's document does not list for the operation, with the reason. */
const ON_THE_FLY = "Zulip's get_events_backend takes it (intentionally undocumented) for a queue registered on the fly: no queue_id, dont_block";
const KEEL_ONLY_PARAMETERS: Record<string, string> = {
  'POST /messages subject': "Zulip's server still takes `subject`, the topic's old name, which older clients send",
  'PATCH /messages/{message_id} subject': "Zulip's server still takes `subject`, the topic's old name, which older clients send",
  'PATCH /realm/user_settings_defaults enable_marketing_emails': "a realm default of a user setting (domain/settings.ts) that Zulip's document leaves out of this operation",
  'PATCH /realm/user_settings_defaults enable_login_emails': "a realm default of a user setting (domain/settings.ts) that Zulip's document leaves out of this operation",
  'GET /events apply_markdown': ON_THE_FLY,
  'GET /events client_gravatar': ON_THE_FLY,
  'GET /events all_public_streams': ON_THE_FLY,
  'GET /events event_types': ON_THE_FLY,
  'GET /events narrow': ON_THE_FLY,
  'GET /events lifespan_secs': ON_THE_FLY,
  'GET /events bulk_message_deletion': ON_THE_FLY,
  'GET /events stream_typing_notifications': ON_THE_FLY,
  'GET /events user_settings_object': ON_THE_FLY,
  'GET /events linkifier_url_template': ON_THE_FLY,
  'GET /events user_list_incomplete': ON_THE_FLY,
  'GET /events include_deactivated_groups': ON_THE_FLY,
  'GET /events archived_channels': ON_THE_FLY,
  'GET /events empty_topic_name': ON_THE_FLY,
  'POST /register queue_lifespan_secs': "Zulip's server takes it (documentation_pending in events_register_backend): how long the queue may go unpolled",
};

describe("names compared with Zulip's document", { skip: referenceMissing() ?? false }, () => {
  let parsed: Node | undefined;
  const zulip = () => (parsed ??= parse(readFileSync(ZULIP_OPENAPI_PATH, 'utf8')) as Node);
  const deref = (z: Node, x: Node): Node => {
    if (!x?.$ref) return x;
    let at: Node = z;
    for (const k of (x.$ref as string).slice(2).split('/')) at = at[k];
    return deref(z, at);
  };
  /** Zulip's operation for a method and path: the same template, or the same shape under other parameter names. */
  const zulipOperation = (z: Node, method: string, path: string): Node | undefined => {
    const shape = (p: string) => p.replace(/\{[^}]+\}/g, '{}');
    const item = z.paths[path] ?? Object.entries(z.paths as Record<string, Node>).find(([p]) => shape(p) === shape(path))?.[1];
    return item?.[method.toLowerCase()];
  };

  it('every operation is one Zulip documents, or is listed with its reason', () => {
    const z = zulip();
    const unknown = allEndpoints()
      .map((e) => `${e.method} ${e.path}`)
      .filter((id) => {
        const [method, path] = id.split(' ');
        return !zulipOperation(z, method, path) && !(id in UNDOCUMENTED) && !(id in KEEL_ONLY_OPERATIONS);
      });
    assert.deepEqual(unknown, []);
  });

  it('every parameter is one Zulip documents for its operation, or is listed with its reason', () => {
    const z = zulip();
    const unknown: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Node>)) {
      for (const [method, o] of Object.entries(item)) {
        const zop = zulipOperation(z, method, path);
        if (!zop) continue;
        const names = new Set<string>();
        for (const p of zop.parameters ?? []) names.add(deref(z, p).name);
        for (const media of Object.values<Node>(deref(z, zop.requestBody ?? {}).content ?? {})) for (const k of Object.keys(media.schema?.properties ?? {})) names.add(k);
        // Keel's /users/{email} is Zulip's template under the same name; a path parameter named otherwise is the same segment.
        const pathNames = new Set((o.parameters ?? []).filter((p: Node) => p.in === 'path').map((p: Node) => p.name));
        const keel = [
          ...(o.parameters ?? []).filter((p: Node) => p.in !== 'path').map((p: Node) => p.name),
          ...Object.keys(o.requestBody?.content['application/x-www-form-urlencoded'].schema.properties ?? {}),
        ];
        for (const name of keel) {
          const id = `${method.toUpperCase()} ${path} ${name}`;
          if (!names.has(name) && !pathNames.has(name) && !(id in KEEL_ONLY_PARAMETERS)) unknown.push(id);
        }
      }
    }
    assert.deepEqual(unknown, []);
  });

  it('lists no exception that is not needed', () => {
    const z = zulip();
    for (const id of Object.keys(KEEL_ONLY_OPERATIONS)) {
      const [method, path] = id.split(' ');
      assert.equal(zulipOperation(z, method, path), undefined, `${id} is documented by Zulip now`);
      assert.ok(op(method, path), `${id} is not a Keel operation`);
    }
    for (const id of Object.keys(KEEL_ONLY_PARAMETERS)) {
      const [method, path, name] = id.split(' ');
      const o = op(method, path);
      assert.ok(o.requestBody?.content['application/x-www-form-urlencoded'].schema.properties[name] ?? o.parameters?.find((p: Node) => p.name === name), `${id} is not a Keel parameter`);
    }
  });
});

describe('docs/chat-api.md', () => {
  it('is what the definitions produce (npm run docs writes it)', () => {
    const committed = readFileSync(new URL('../../docs/chat-api.md', import.meta.url), 'utf8');
    assert.ok(committed === chatApiMarkdown(doc), 'docs/chat-api.md differs from what the endpoint definitions produce: run npm run docs and commit the result');
  });

  it('has a section for every endpoint', () => {
    const markdown = chatApiMarkdown(doc);
    for (const e of allEndpoints()) assert.ok(markdown.includes(`\`${e.method} /api/v1${e.path}\``), `${e.method} ${e.path}`);
  });
});

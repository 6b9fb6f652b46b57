// Checks every 2xx Chat response the test suite sees against Zulip's own API description
// (../shared/reference/zulip-openapi-10.2.yaml from the repository root, present in CI), so the
// suite fails when Keel answers in a shape unmodified Zulip clients were not written for. In CI
// (CI=true, or KEEL_TEST_REQUIRE_REFERENCE=1) a missing document fails the suite; elsewhere the
// checks are skipped with a printed line.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Node = { [k: string]: Json };

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * Where the reference is read: KEEL_TEST_ZULIP_OPENAPI when set (a checkout that does not sit
 * beside shared/), otherwise shared/ next to the checkout, as on the development machine and in
 * CI's clone.
 */
export const ZULIP_OPENAPI_PATH = process.env.KEEL_TEST_ZULIP_OPENAPI ? path.resolve(process.env.KEEL_TEST_ZULIP_OPENAPI) : path.resolve(REPO_ROOT, '../shared/reference/zulip-openapi-10.2.yaml');

/** Whether the run must validate against the reference: in CI, or when asked for. */
export function referenceRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI === 'true' || env.CI === '1' || env.KEEL_TEST_REQUIRE_REFERENCE === '1';
}

/**
 * Why the reference cannot be used (undefined when it is there). When the run requires it, its
 * absence throws instead, naming the path looked for, so a CI clone without it fails rather than
 * passing without the checks.
 */
export function referenceMissing(file = ZULIP_OPENAPI_PATH, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (existsSync(file)) return undefined;
  const why = `Zulip's API description was looked for at ${file} (${env.KEEL_TEST_ZULIP_OPENAPI ? 'from KEEL_TEST_ZULIP_OPENAPI' : 'shared/reference/ beside the checkout'}) and is not there`;
  if (referenceRequired(env)) {
    throw new Error(
      `${why}: CI requires it (CI=true or KEEL_TEST_REQUIRE_REFERENCE=1), since without it no Chat answer is checked against Zulip's schema. Put shared/ beside the checkout, or set KEEL_TEST_ZULIP_OPENAPI to the file.`,
    );
  }
  return `${why}; Chat answers are not checked against Zulip's schema (CI requires the file)`;
}
const BASE = 'https://zulip-openapi.invalid/';

/**
 * Operations Keel implements that Zulip's description leaves out, each with the reason. Anything
 * else that is not documented fails: Keel should not grow endpoints clients cannot know about.
 */
export const UNDOCUMENTED: Record<string, string> = {
  'POST /bots': "Zulip's bot creation endpoint is real (the web app uses it) but absent from its OpenAPI document",
  'GET /bots': "Zulip's get_bots_backend (the web app's list of one's own bots) is real but absent from its OpenAPI document",
  'PATCH /bots/{bot_id}': "Zulip's patch_bot_backend is real (the web app uses it) but absent from its OpenAPI document",
  'DELETE /bots/{bot_id}': "Zulip's deactivate_bot_backend is real (the web app uses it) but absent from its OpenAPI document",
  'POST /bots/{bot_id}/api_key/regenerate': "Zulip's regenerate_bot_api_key is real (the web app uses it) but absent from its OpenAPI document",
  'POST /users/me/api_key/regenerate': "Zulip's regenerate_api_key is real (the web app's account settings use it) but absent from its OpenAPI document",
  'PATCH /realm': "Zulip's organization settings endpoint (update_realm) is real (the web app and administrators use it) but absent from its OpenAPI document",
  'POST /realm/deactivate': "Zulip's deactivate_realm (the web app's organization deactivation) is real but absent from its OpenAPI document",
  'PATCH /settings/notifications':
    "Zulip 10.2 routes it to PATCH /settings's view as a legacy alias (zproject/urls.py, intentionally_undocumented); the Python client's update_notification_settings calls it",
  'PATCH /realm/profile_fields/{field_id}': "Zulip 10.2's update_realm_custom_profile_field is routed (zproject/urls.py; the web app's settings use it) but absent from its OpenAPI document",
  'DELETE /realm/profile_fields/{field_id}': "Zulip 10.2's delete_realm_custom_profile_field is routed (zproject/urls.py) but absent from its OpenAPI document",
  'PATCH /users/me/profile_data': "Zulip 10.2's update_user_custom_profile_data is routed (zproject/urls.py; the web app's profile settings use it) but absent from its OpenAPI document",
  'DELETE /users/me/profile_data': "Zulip 10.2's remove_user_custom_profile_data is routed (zproject/urls.py) but absent from its OpenAPI document",
  'PATCH /settings/display': "Zulip 10.2 routes it to PATCH /settings's view as a legacy alias (zproject/urls.py, intentionally_undocumented)",
  'DELETE /export/realm/{export_id}': "Zulip 10.2's delete_realm_export (the web app's list of exports uses it) is routed but absent from its OpenAPI document",
  'PATCH /users/me/subscriptions/{stream_id}':
    "Zulip 10.2's update_subscriptions_property, the one-property form of POST /users/me/subscriptions/properties, is routed but absent from its OpenAPI document",
  'POST /users/me/avatar': "Zulip's set_avatar_backend is real (the web app's avatar upload) but absent from its OpenAPI document",
  'DELETE /users/me/avatar': "Zulip's delete_avatar_backend is real (the web app's avatar removal) but absent from its OpenAPI document",
  'POST /realm/icon': "Zulip's upload_icon is real (the web app's organization profile) but absent from its OpenAPI document",
  'DELETE /realm/icon': "Zulip's delete_icon_backend is real (the web app's organization profile) but absent from its OpenAPI document",
  'POST /realm/logo': "Zulip's upload_logo is real (the web app's organization profile) but absent from its OpenAPI document",
  'DELETE /realm/logo': "Zulip's delete_logo_backend is real (the web app's organization profile) but absent from its OpenAPI document",
};

/**
 * Fields Zulip's server sends that its description leaves out, and one the seed adds, each with the reason; they are
 * checked here and removed before the schema check, so anything else undocumented still fails.
 */
function withoutUndocumentedFields(method: string, template: string, body: unknown): unknown {
  if (method === 'POST' && template === '/register' && body && typeof body === 'object' && 'service_feature_level' in body) {
    // The seed (001, POST /register) names the feature level service_feature_level; Keel sends it
    // beside Zulip's zulip_feature_level, which must say the same.
    const { service_feature_level: level, ...rest } = body as Record<string, unknown>;
    if (level !== rest.zulip_feature_level)
      throw new Error(`POST /register: service_feature_level ${JSON.stringify(level)} differs from zulip_feature_level ${JSON.stringify(rest.zulip_feature_level)}`);
    return rest;
  }
  if (method !== 'GET' || template !== '/events' || !body || typeof body !== 'object') return body;
  const events = (body as { events?: unknown }).events;
  if (!Array.isArray(events)) return body;
  return {
    ...body,
    events: events.map((e: Record<string, unknown>) => {
      // POST /messages documents that the sending queue's message event carries local_message_id
      // (local echo), but the event schema does not list it.
      if (e?.type !== 'message' || !('local_message_id' in e)) return e;
      if (typeof e.local_message_id !== 'string') throw new Error(`GET /events: local_message_id must be a string, got ${JSON.stringify(e.local_message_id)}`);
      const { local_message_id: _checked, ...rest } = e;
      return rest;
    }),
  };
}

const isNode = (v: Json | undefined): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Turns one OpenAPI 3.0 schema into a JSON Schema (draft-07) that ajv compiles strictly, so any
 * keyword this function does not know about stops compilation rather than being silently ignored.
 */
class Dialect {
  readonly doc: Node;
  constructor(doc: Node) {
    this.doc = doc;
  }

  /** Follows a local "#/a/b" reference in the document. */
  deref(ref: string): Json {
    if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, not ${ref}`);
    let at: Json = this.doc;
    for (const raw of ref.slice(2).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (!isNode(at) || !(key in at)) throw new Error(`unresolvable $ref ${ref}`);
      at = at[key];
    }
    return at;
  }

  /** Every property name a schema declares, through $ref and nested allOf. */
  declaredProperties(schema: Json, seen = new Set<string>()): Set<string> {
    const out = new Set<string>();
    if (!isNode(schema)) return out;
    if (typeof schema.$ref === 'string') {
      if (seen.has(schema.$ref)) return out;
      seen.add(schema.$ref);
      return this.declaredProperties(this.deref(schema.$ref), seen);
    }
    if (isNode(schema.properties)) for (const k of Object.keys(schema.properties)) out.add(k);
    if (Array.isArray(schema.allOf)) for (const b of schema.allOf) for (const k of this.declaredProperties(b, seen)) out.add(k);
    return out;
  }

  convert(schema: Json): Json {
    if (Array.isArray(schema)) return schema.map((s) => this.convert(s));
    if (!isNode(schema)) return schema;
    // OpenAPI 3.0: a $ref replaces its object, siblings (descriptions, mostly) are ignored.
    if (typeof schema.$ref === 'string') {
      if (!schema.$ref.startsWith('#/components/schemas/')) throw new Error(`unexpected schema $ref ${schema.$ref}`);
      return { $ref: BASE + schema.$ref.slice('#/'.length) };
    }
    const out: Node = {};
    for (const [k, v] of Object.entries(schema)) {
      // Documentation only: `example` is OpenAPI's, `examples` is a map in OpenAPI but must be an
      // array in JSON Schema, x-* are Zulip's doc-tool extensions, `deprecated` is not draft-07.
      if (k === 'example' || k === 'examples' || k === 'deprecated' || k.startsWith('x-') || k === 'nullable') continue;
      if (k === 'properties' && isNode(v)) {
        out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, this.convert(s)]));
      } else if (k === 'description' || k === 'title' || k === 'enum' || k === 'default' || k === 'required' || k === 'format' || k === 'pattern') {
        out[k] = v;
      } else {
        out[k] = this.convert(v);
      }
    }
    if (Array.isArray(schema.allOf)) this.widenClosedBranches(out, schema.allOf);
    if (schema.nullable === true) return this.nullable(out);
    return out;
  }

  /**
   * Zulip writes responses as allOf[JsonSuccessBase, {additionalProperties: false, properties:
   * {result: {}, msg: {}, ...}}]. Plain JSON Schema checks each allOf branch on its own, so a closed
   * branch rejects every property declared only in a sibling branch. Zulip's authors usually
   * repeat the sibling names as `{}` to survive that, but not everywhere; what they mean is
   * JSON Schema 2019's unevaluatedProperties: nothing beyond what the whole allOf declares. So a
   * closed branch is opened to exactly the names its siblings declare, and stays closed to anything
   * else: an unexpected field in Keel's answer is still a failure, which is the point.
   */
  private widenClosedBranches(out: Node, rawBranches: Json[]): void {
    const names = new Set<string>();
    for (const b of rawBranches) for (const k of this.declaredProperties(b)) names.add(k);
    const branches = out.allOf as Json[];
    rawBranches.forEach((raw, i) => {
      const branch = branches[i];
      if (!isNode(raw) || !isNode(branch) || branch.additionalProperties !== false) return;
      const props: Node = isNode(branch.properties) ? { ...branch.properties } : {};
      for (const n of names) if (!(n in props)) props[n] = {};
      branch.properties = props;
    });
  }

  /** OpenAPI 3.0's `nullable: true` is JSON Schema's "or null". */
  private nullable(s: Node): Node {
    if (Array.isArray(s.enum)) return { ...s, enum: [...s.enum, null], ...(typeof s.type === 'string' ? { type: [s.type, 'null'] } : {}) };
    if (typeof s.type === 'string' && !s.allOf && !s.oneOf && !s.anyOf) return { ...s, type: [s.type, 'null'] };
    return { anyOf: [{ type: 'null' }, s] };
  }
}

interface Operation {
  method: string;
  template: string;
  segments: string[];
  schema: Json | undefined;
  compiled?: ValidateFunction;
}

export class ZulipOpenApi {
  private readonly ajv: Ajv;
  private readonly operations: Operation[] = [];
  private readonly dialect: Dialect;

  constructor(doc: Node) {
    this.dialect = new Dialect(doc);
    // strictSchema: an OpenAPI keyword the Dialect does not translate stops compilation.
    // strictTypes/strictRequired off: Zulip's allOf branches declare properties without `type`,
    // which is valid JSON Schema that ajv's stricter lint rejects.
    this.ajv = new Ajv({ strict: true, strictTypes: false, strictRequired: false, strictTuples: false, allowUnionTypes: true, allErrors: true, validateFormats: false });
    const schemas = (doc.components as Node).schemas as Node;
    for (const [name, s] of Object.entries(schemas)) {
      this.ajv.addSchema(this.dialect.convert(s) as object, `${BASE}components/schemas/${name}`);
    }
    for (const [template, item] of Object.entries(doc.paths as Node)) {
      if (!isNode(item)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!['get', 'post', 'patch', 'put', 'delete'].includes(method) || !isNode(op)) continue;
        this.operations.push({ method: method.toUpperCase(), template, segments: template.split('/').filter(Boolean), schema: this.successSchema(op) });
      }
    }
  }

  private successSchema(op: Node): Json | undefined {
    let res = isNode(op.responses) ? op.responses['200'] : undefined;
    if (isNode(res) && typeof res.$ref === 'string') res = this.dialect.deref(res.$ref);
    if (!isNode(res) || !isNode(res.content)) return undefined;
    const json = res.content['application/json'];
    return isNode(json) ? json.schema : undefined;
  }

  /** The documented operation for a request, as Zulip's URL patterns pick it. */
  find(method: string, urlPath: string): Operation | undefined {
    const segs = urlPath.split('/').filter(Boolean);
    let best: { op: Operation; literals: number } | undefined;
    for (const op of this.operations) {
      if (op.method !== method || op.segments.length !== segs.length) continue;
      let literals = 0;
      const ok = op.segments.every((p, i) => {
        if (p.startsWith('{')) {
          // /users/{user_id} and /users/{email} share a shape: as in Zulip's URL patterns, an id
          // segment is digits and an email has an @.
          if (p.endsWith('_id}')) return /^[0-9]+$/.test(segs[i]);
          return p !== '{email}' || decodeURIComponent(segs[i]).includes('@');
        }
        if (p === segs[i]) literals++;
        return p === segs[i];
      });
      // /users/me beats /users/{email}: the most literal segments win.
      if (ok && (!best || literals > best.literals)) best = { op, literals };
    }
    return best?.op;
  }

  /** Problems with one 2xx response, or [] when it matches the documented 200 schema. */
  problems(method: string, urlPath: string, status: number, body: unknown): string[] {
    if (status < 200 || status > 299) return [];
    const where = `${method} ${urlPath}`;
    const op = this.find(method, urlPath);
    if (!op) {
      const reason = Object.entries(UNDOCUMENTED).find(([k]) => this.sameShape(k, method, urlPath));
      return reason ? [] : [`${where}: no operation in Zulip's OpenAPI document matches this request`];
    }
    const name = `${op.method} ${op.template}`;
    if (op.schema === undefined) return [`${name}: the document has no application/json 200 schema to check against`];
    op.compiled ??= this.ajv.compile(this.dialect.convert(op.schema) as object);
    body = withoutUndocumentedFields(op.method, op.template, body);
    if (op.compiled(body)) return [];
    return [`${name} (${where}) answered ${status} with a body that does not match the documented 200 schema:`, ...describe(op.compiled.errors ?? [], body)];
  }

  /** Throws an AssertionError-like failure naming the operation and the ajv errors. */
  check(method: string, urlPath: string, status: number, body: unknown): void {
    const p = this.problems(method, urlPath, status, body);
    if (p.length) throw new Error(p.join('\n  '));
  }

  private sameShape(key: string, method: string, urlPath: string): boolean {
    const [m, template] = key.split(' ');
    const a = template.split('/').filter(Boolean);
    const b = urlPath.split('/').filter(Boolean);
    return m === method && a.length === b.length && a.every((s, i) => s.startsWith('{') || s === b[i]);
  }
}

function describe(errors: ErrorObject[], body: unknown): string[] {
  // allErrors lists every failing branch of every anyOf/oneOf; the first 12 say enough.
  const lines = errors.slice(0, 12).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : '';
    return `${e.instancePath || '(body)'} ${e.message}${extra} [schema ${e.schemaPath}]`;
  });
  if (errors.length > 12) lines.push(`... ${errors.length - 12} more`);
  lines.push(`body: ${JSON.stringify(body).slice(0, 600)}`);
  return lines;
}

let loaded: ZulipOpenApi | null | undefined;

/**
 * The validator, or null (with one printed line) when the reference document is not there; throws
 * when it is not there and the run requires it (referenceMissing).
 */
export function zulipOpenApi(): ZulipOpenApi | null {
  if (loaded !== undefined) return loaded;
  const missing = referenceMissing();
  if (missing) {
    console.log(`# not validating Chat responses: ${missing}`);
    loaded = null;
  } else {
    loaded = new ZulipOpenApi(parse(readFileSync(ZULIP_OPENAPI_PATH, 'utf8')) as Node);
  }
  return loaded;
}

/** Validates a response to a request under /api/v1 (the path may carry the prefix and a query). */
export function checkChatResponse(method: string, url: string, status: number, body: unknown): void {
  const api = zulipOpenApi();
  if (!api) return;
  const pathname = new URL(url, 'http://x').pathname.replace(/^\/api\/v1(?=\/)/, '');
  api.check(method.toUpperCase(), pathname, status, body);
}

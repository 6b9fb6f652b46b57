// Checks and converts a command's parameters against its schema. Keys are matched without case
// (customerid/customerId/customerID). Values are converted only where a real client needs it (see
// `convert`); anything else of the wrong type, null included, is a FAULT naming the field, never a
// default: TypeBox's own Value.Convert turned `"active": null` into false (and so disabled a key),
// "" into 0, 1.9 into 1 and "abc" into ["abc"].
import Type, { type TObject, type TSchema } from 'typebox';
import Value from 'typebox/value';
import { Compile, type Validator } from 'typebox/compile';
import { infraErrors, infraProblems as P, problemsFault } from './errors.js';
import type { Normaliser } from './command.js';

/**
 * The bounds every parameter of that kind gets unless its schema sets its own. Integers beyond 2^53
 * lose precision in JSON and beyond 2^63 are refused by PostgreSQL (which would have been a 5xx);
 * a string without its own limit is a filter, a name or a password, none near this long.
 */
export const INTEGER_LIMIT = Number.MAX_SAFE_INTEGER;
export const STRING_LIMIT = 4096;
/** Nesting deeper than this is refused before any rule walks it. */
export const DEPTH_LIMIT = 32;
/**
 * The largest `resWindow` of any list: the provider's largest documented default (sshkey.getall:
 * 50000), which dns.* lists use as theirs. A bigger one is a FAULT, not clamped: clients read
 * `matches` and the page length as they asked.
 */
export const RES_WINDOW_MAX = 50_000;

/** `resStart` and `resWindow` of a list command, with the list's own default window. */
export function pagingParams(defaultWindow: number) {
  return {
    resStart: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'result offset' })),
    resWindow: Type.Optional(Type.Integer({ minimum: 1, maximum: RES_WINDOW_MAX, default: defaultWindow, description: `maximum number of results, 1 to ${RES_WINDOW_MAX}` })),
  };
}

export function describe(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf)) return (s.anyOf as TSchema[]).map(describe).join(' or ');
  if (Array.isArray(s.enum)) return `one of ${(s.enum as unknown[]).join(', ')}`;
  if ('const' in s) return JSON.stringify(s.const);
  switch (s.type) {
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'array':
      return 'a list';
    case 'object':
      return 'an object';
    default:
      return 'a valid value';
  }
}

/**
 * A schema may say in its own words what a value of the wrong type is (`'x-problem'`): the DNS record
 * fields use the DNS rules' texts, so a list where a TTL belongs reads as any other bad TTL.
 */
export const PROBLEM_KEY = 'x-problem';

function fieldProblem(prop: TSchema | undefined, keyword: string, message: string, params: Record<string, unknown>): string {
  if (keyword === 'anyOf' || keyword === 'type' || keyword === 'enum' || keyword === 'const') {
    const own = prop && (prop as Record<string, unknown>)[PROBLEM_KEY];
    if (typeof own === 'string') return own;
    return prop ? P.mustBe({ what: describe(prop) }) : message;
  }
  const limit = params.limit;
  if (keyword === 'maximum') return P.atMost({ limit: String(limit) });
  if (keyword === 'minimum') return P.atLeast({ limit: String(limit) });
  if (keyword === 'maxLength') return P.longest({ limit: String(limit) });
  if (keyword === 'minLength') return limit === 1 ? P.empty() : P.shortest({ limit: String(limit) });
  return message;
}

/** The schema with the default bounds (INTEGER_LIMIT, STRING_LIMIT) on every integer and string that sets none. */
function bounded<T extends TSchema>(schema: T): T {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    // Descriptors, not entries: TypeBox keeps its marks ('~kind', '~optional') in hidden properties.
    const descriptors = Object.getOwnPropertyDescriptors(node);
    for (const [k, d] of Object.entries(descriptors)) if (d.enumerable && k !== 'default' && 'value' in d) d.value = walk(d.value);
    const out = Object.defineProperties({}, descriptors) as Record<string, unknown>;
    if (out.type === 'integer' || out.type === 'number') {
      out.maximum ??= INTEGER_LIMIT;
      out.minimum ??= -INTEGER_LIMIT;
    }
    if (out.type === 'string') out.maxLength ??= STRING_LIMIT;
    return out;
  };
  return walk(schema) as T;
}

type Kind = 'integer' | 'number' | 'boolean' | 'string' | 'array' | 'object' | 'union' | 'other';

function kindOf(schema: TSchema): Kind {
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf)) return 'union';
  switch (s.type) {
    case 'integer':
    case 'number':
    case 'boolean':
    case 'string':
    case 'array':
    case 'object':
      return s.type;
    default:
      return 'other';
  }
}

const INTEGER_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?$/;

/**
 * The conversions kept, each because a client needs it (../shared/reference/infra-clients.md):
 * - an integer or number written as decimal digits ("42"): query strings carry only text (the
 *   provider's doc pages call json.php by GET), the Python client passes ids as it got them, and
 *   LEGO-J and early Terraform code send numeric strings. No sign but "-", no spaces, no exponent,
 *   no fraction for integers, nothing beyond 2^53.
 * - a boolean written as "true"/"false" (any case) or "1"/"0": again what a query string can carry.
 *   JSON numbers are not booleans (the Go clients send JSON booleans).
 * - one text value for a list: a query-string key given once (`status=ACTIVE`) instead of repeated.
 * Everything else is left as it is, for the check to refuse. `value` is changed in place where it is
 * an object or a list (each request parses its own).
 */
function convert(schema: TSchema, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  const s = schema as Record<string, unknown>;
  switch (kindOf(schema)) {
    case 'integer':
      if (typeof value === 'string' && INTEGER_TEXT.test(value)) {
        const n = Number(value);
        return Number.isSafeInteger(n) ? n : value;
      }
      return value;
    case 'number':
      if (typeof value === 'string' && NUMBER_TEXT.test(value)) {
        const n = Number(value);
        return Number.isFinite(n) && Math.abs(n) <= INTEGER_LIMIT ? n : value;
      }
      return value;
    case 'boolean':
      if (typeof value === 'string') {
        const lower = value.toLowerCase();
        if (lower === 'true' || value === '1') return true;
        if (lower === 'false' || value === '0') return false;
      }
      return value;
    case 'array': {
      const items = s.items as TSchema | undefined;
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || !items) return list;
      for (let i = 0; i < list.length; i++) list[i] = convert(items, list[i]);
      return list;
    }
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return value;
      const props = (s.properties ?? {}) as Record<string, TSchema>;
      const obj = value as Record<string, unknown>;
      for (const [name, prop] of Object.entries(props)) if (obj[name] !== undefined) obj[name] = convert(prop, obj[name]);
      return obj;
    }
    case 'union': {
      // As it is if a branch takes it; else the first branch whose conversion it passes.
      const branches = s.anyOf as TSchema[];
      if (branches.some((b) => Value.Check(b, value))) return value;
      for (const b of branches) {
        const converted = convert(b, typeof value === 'object' ? structuredClone(value) : value);
        if (Value.Check(b, converted)) return converted;
      }
      return value;
    }
    default:
      return value;
  }
}

/**
 * Text no store keeps as sent, and nesting deeper than DEPTH_LIMIT, anywhere in the parameters
 * (schema-less ones such as DNS records included): NUL (PostgreSQL refuses it in text, which had
 * been a 5xx) and lone surrogates (not Unicode: the driver would store U+FFFD instead). Walked
 * without recursion, so no nesting can overflow the stack. Returns the top-level field and problem.
 */
function badText(input: Record<string, unknown>): [string, string] | undefined {
  // Most requests are flat: their strings are checked without building the walk's stack.
  let stack: [unknown, string, number][] | undefined;
  for (const key in input) {
    const value = input[key];
    const problem = textProblem(key) ?? (typeof value === 'string' ? textProblem(value) : undefined);
    if (problem) return [key, problem];
    if (value !== null && typeof value === 'object') (stack ??= []).push([value, key, 1]);
  }
  while (stack?.length) {
    const [value, field, depth] = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return [field, problem];
    } else if (value !== null && typeof value === 'object') {
      if (depth >= DEPTH_LIMIT) return [field, P.tooDeep({ depth: DEPTH_LIMIT })];
      if (Array.isArray(value)) for (const v of value) stack.push([v, field, depth + 1]);
      else for (const k in value) stack.push([(value as Record<string, unknown>)[k], field, depth + 1], [k, field, 0]);
    }
  }
  return undefined;
}

function textProblem(value: string): string | undefined {
  if (value.includes('\0')) return P.nul();
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) return P.loneSurrogate();
  return undefined;
}

// Value.Check interprets the schema on every call; a compiled checker answers the same far faster.
// Definitions live as long as the process, so each schema is prepared once, on first use.
interface Prepared {
  /** The schema with the default bounds (`bounded`): what is checked. */
  schema: TObject;
  validator: Validator;
  /**
   * The defaults of top-level properties, when no default hides deeper in the schema: filling these
   * in is then all Value.Default does. Undefined when there are deeper ones.
   */
  defaults?: [string, unknown][];
  /** Property names by their lower-case form. */
  byLower: Map<string, string>;
}

// A pure memo of an immutable schema (module-level on purpose: the same for every store and server).
const prepared = new WeakMap<TSchema, Prepared>();

function hasDefault(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  return Object.entries(node).some(([key, value]) => key === 'default' || hasDefault(value));
}

function prepare(schema: TObject): Prepared {
  let p = prepared.get(schema);
  if (p) return p;
  const props = Object.entries(schema.properties as Record<string, Record<string, unknown>>);
  const simple = props.every(([, { default: own, ...rest }]) => typeof own !== 'function' && !hasDefault(rest));
  const defaults = simple ? props.filter(([, prop]) => 'default' in prop).map(([name, prop]): [string, unknown] => [name, prop.default]) : undefined;
  const checked = bounded(schema);
  prepared.set(schema, (p = { schema: checked, validator: Compile(checked), defaults, byLower: new Map(props.map(([name]) => [name.toLowerCase(), name])) }));
  return p;
}

/** The schema of a place in a value of `schema` (object properties and list items), if it has one. */
function schemaAt(schema: TSchema, path: string[]): TSchema | undefined {
  let node: Record<string, unknown> | undefined = schema as Record<string, unknown>;
  for (const seg of path) {
    if (!node) return undefined;
    const props = node.properties as Record<string, Record<string, unknown>> | undefined;
    node = props?.[seg] ?? (node.items as Record<string, unknown> | undefined);
  }
  return node as TSchema | undefined;
}

/**
 * The checked parameters. `input` is the caller's own object (each request parses its own), so it is
 * filled in and returned rather than copied first. A command's `normalise` step (command.ts) first
 * brings the shapes its clients send into the one `schema` describes.
 */
export function checkParams<S extends TObject>(schema: S, input: Record<string, unknown>, normalise?: Normaliser): unknown {
  const payload = input;
  const { schema: checked, validator, defaults, byLower } = prepare(schema);
  const text = badText(input);
  if (text) throw infraErrors.invalidParameter({ name: text[0], problem: text[1] });
  // A property the request spells apart from case takes the value of the first such key, unless the
  // exact spelling is given too.
  for (const key in input) {
    const name = byLower.get(key.toLowerCase());
    if (name !== undefined && name !== key && payload[name] === undefined) payload[name] = input[key];
  }
  const nameOf = normalise?.run(payload) ?? undefined;
  // Most calls send values of the right types already. `convert` leaves such a value as it is,
  // so after the top-level defaults one compiled check settles it, without walking the schema twice.
  if (defaults) {
    // A primitive default is used as it is; an object or list is copied, so no request changes the schema's own.
    for (const [name, value] of defaults) {
      if (payload[name] === undefined) payload[name] = typeof value === 'object' && value !== null ? Value.Clone(value) : value;
    }
    if (validator.Check(payload)) return payload;
  }
  const value = convert(checked, Value.Default(checked, payload));
  if (validator.Check(value)) return value;
  const fields: Record<string, string> = {};
  for (const e of Value.Errors(checked, value)) {
    const err = e as { keyword: string; instancePath: string; message: string; params: Record<string, unknown> };
    if (err.keyword === 'required') {
      for (const name of (err.params.requiredProperties as string[] | undefined) ?? []) fields[name] ??= P.required();
      continue;
    }
    const path = err.instancePath.split('/').slice(1);
    if (!path[0]) continue;
    // A place inside a normalised parameter is named as the request named it (data.2.ttl), with its
    // own schema's words; elsewhere the top-level parameter is named.
    const named = path.length > 1 ? nameOf?.(path) : undefined;
    const field = named ?? path[0];
    const prop = named !== undefined ? schemaAt(schema, path) : (schema.properties[field] as TSchema | undefined);
    // The outermost problem of a field is the clearest: anyOf says "a or b" where its branches each say one.
    const problem = fieldProblem(prop, err.keyword, err.message, err.params);
    if (err.keyword === 'anyOf' || fields[field] === undefined) fields[field] = problem;
  }
  const names = Object.keys(fields);
  if (names.length === 0) throw infraErrors.invalidParameters();
  throw fields[names[0]] === P.required() ? infraErrors.missingParameter({ name: names[0] }, fields) : problemsFault(fields);
}

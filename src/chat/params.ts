// Decodes a Chat request's parameters by each parameter's declared type, the way Zulip's clients
// encode them: form fields and query values are text; strings are taken as sent, every other type
// arrives JSON-encoded (`true`, `[9]`, `["a"]`, narrows). A union that admits a string (the `to`
// of POST /messages, narrow operands) takes the JSON value when it fits and the raw text otherwise.
import type { TObject, TSchema } from 'typebox';
import Value from 'typebox/value';
import { Compile } from 'typebox/compile';
import {
  type ChatError,
  missingArgument,
  paramBadValue,
  paramFieldMissing,
  paramInvalid,
  paramNestedTooDeeply,
  paramNotBoolean,
  paramNotDict,
  paramNotInteger,
  paramNotJson,
  paramNotList,
  paramNotNumber,
  paramNotString,
  paramNullBytes,
  paramTooLong,
} from './errors.js';

/** Parameters every endpoint accepts because the transport reads them (Zulip's client name). */
const TRANSPORT_PARAMS = new Set(['client']);

interface JsonSchemaLike {
  type?: string;
  anyOf?: JsonSchemaLike[];
  default?: unknown;
  maxLength?: number;
}

function acceptsString(s: JsonSchemaLike): boolean {
  return s.type === 'string' || (s.anyOf ?? []).some(acceptsString);
}

function onlyString(s: JsonSchemaLike): boolean {
  return s.type === 'string';
}

/**
 * Zulip's error for a value of the wrong type, by what was expected; `where` names the value (the
 * parameter, or a place inside it), `varName` the parameter.
 */
function typeProblem(where: string, varName: string, type: string | undefined): ChatError {
  const a = { name: where, var_name: varName };
  switch (type) {
    case 'integer':
      return paramNotInteger(a);
    case 'number':
      return paramNotNumber(a);
    case 'boolean':
      return paramNotBoolean(a);
    case 'array':
      return paramNotList(a);
    case 'object':
      return paramNotDict(a);
    case 'string':
      return paramNotString(a);
    default:
      return paramInvalid(a);
  }
}

/** Names the first nested problem the way Zulip does: subscriptions[0]["name"] is not a string. */
function nestedProblem(name: string, schema: TSchema, value: unknown): ChatError {
  const first = [...Value.Errors(schema, value)][0] as { keyword: string; instancePath: string; params: Record<string, unknown> } | undefined;
  if (!first) return paramInvalid({ name, var_name: name });
  const where =
    name +
    first.instancePath
      .split('/')
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `["${p}"]`))
      .join('');
  if (first.keyword === 'required') {
    const missing = (first.params.requiredProperties as string[] | undefined)?.[0];
    return missing ? paramFieldMissing({ name: where, field: missing, var_name: name }) : paramInvalid({ name: where, var_name: name });
  }
  if (first.keyword === 'type') return typeProblem(where, name, String(first.params.type));
  if (first.keyword === 'maxLength') return paramTooLong({ name: where, limit: Number(first.params.limit), var_name: name });
  return paramInvalid({ name: where, var_name: name });
}

// PostgreSQL cannot store U+0000 in text (SQLite can): refused for every text parameter, on both
// engines, before anything reads or writes it. Zulip answers "Message must not contain null bytes".
const nullBytes = (name: string) => paramNullBytes({ name, var_name: name });

/**
 * An integer past what a JS number holds exactly (2^53) is not the integer the client sent, and past
 * 2^63 no id column can hold it: refused as Zulip refuses a value it cannot convert.
 */
const badValue = (name: string, raw: string) => paramBadValue({ name, var_name: name, value: raw.length > 40 ? `${raw.slice(0, 40)}...` : raw });

/**
 * How deep a parameter's JSON may nest. Zulip's parameters nest a few levels (a narrow, a list of
 * objects); walking (or later serializing) a value nested thousands deep would overflow the stack.
 */
const MAX_JSON_DEPTH = 32;

type JsonProblem = 'null byte' | 'unsafe number' | 'too deep';

/** What is wrong inside a parsed JSON value (U+0000 in a string or key, a number past the safe integers, too deep a nesting), if anything. */
function jsonProblem(value: unknown, depth = 0): JsonProblem | undefined {
  if (typeof value === 'string') return value.includes('\0') ? 'null byte' : undefined;
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER ? 'unsafe number' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_JSON_DEPTH) return 'too deep';
  if (Array.isArray(value)) {
    for (const v of value) {
      const p = jsonProblem(v, depth + 1);
      if (p) return p;
    }
    return undefined;
  }
  for (const k in value) {
    if (k.includes('\0')) return 'null byte';
    const p = jsonProblem((value as Record<string, unknown>)[k], depth + 1);
    if (p) return p;
  }
  return undefined;
}

/**
 * Whether a parsed value needs the walk: any object or array, and a lone number or string only
 * when its text may hold a problem (an escaped U+0000, 16 digits or more, an exponent).
 */
const MAY_HOLD_PROBLEM = /\\u0000|\d{16}|\d[eE]/;

/**
 * A schema's check, compiled once (Value.Check interprets the schema on each call: ~4 us against ~0.1 us).
 * Module-level on purpose: a pure compilation of an immutable schema, the same for every store and server.
 */
const compiled = new WeakMap<TSchema, (value: unknown) => boolean>();

function checker(schema: TSchema): (value: unknown) => boolean {
  let check = compiled.get(schema);
  if (!check) {
    const validator = Compile(schema);
    check = (value) => validator.Check(value);
    compiled.set(schema, check);
  }
  return check;
}

/** What any JSON text starts with, after its white space: text starting otherwise cannot parse. */
const JSON_START = /^[ \t\n\r]*[{["\-0-9tfn]/;

export function decodeValue(name: string, schema: TSchema, raw: string): unknown {
  const s = schema as JsonSchemaLike;
  const check = checker(schema);
  if (raw.includes('\0')) throw nullBytes(name);
  if (onlyString(s)) {
    if (!check(raw)) throw nestedProblem(name, schema, raw);
    return raw;
  }
  let parsed: unknown;
  // Tested first so that plain text (a `type` of "stream") costs no exception: each builds a stack trace.
  let isJson = JSON_START.test(raw);
  if (isJson) {
    try {
      parsed = JSON.parse(raw);
    } catch {
      isJson = false;
    }
  }
  if (isJson && check(parsed)) {
    const problem = (parsed !== null && typeof parsed === 'object') || MAY_HOLD_PROBLEM.test(raw) ? jsonProblem(parsed) : undefined;
    if (!problem) return parsed;
    if (problem === 'null byte') throw nullBytes(name);
    if (problem === 'too deep') throw paramNestedTooDeeply({ name, var_name: name });
    // A union that admits a string takes the text as sent instead (a channel named "1e999").
    if (acceptsString(s) && check(raw)) return raw;
    throw badValue(name, raw);
  }
  if (acceptsString(s) && check(raw)) return raw;
  // Zulip parses every parameter that takes no plain text as JSON first (typed_endpoint's Json[...]):
  // text that does not parse is "not valid JSON", whatever type was expected. One that takes text
  // (a Literal choice) names the parameter as invalid.
  if (!isJson) throw acceptsString(s) ? typeProblem(name, name, s.type) : paramNotJson({ name, var_name: name });
  if (s.anyOf) throw paramInvalid({ name, var_name: name });
  const top = s.type === 'array' ? Array.isArray(parsed) : s.type === 'object' ? parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) : false;
  throw top ? nestedProblem(name, schema, parsed) : typeProblem(name, name, s.type);
}

interface Param {
  name: string;
  schema: TSchema;
  required: boolean;
  /** Copied for each request when it is an object or array, since a handler may change it. */
  fallback: unknown;
  cloneFallback: boolean;
}

/** An endpoint's parameters in the order declared, worked out once per schema (a pure memo of an immutable schema). */
const plans = new WeakMap<TObject, Param[]>();

function plan(schema: TObject): Param[] {
  let params = plans.get(schema);
  if (!params) {
    const required = new Set((schema as unknown as { required?: string[] }).required ?? []);
    params = (Object.entries(schema.properties) as [string, TSchema][]).map(([name, prop]) => {
      const fallback = (prop as JsonSchemaLike).default;
      checker(prop);
      return { name, schema: prop, required: required.has(name), fallback, cloneFallback: fallback !== null && typeof fallback === 'object' };
    });
    plans.set(schema, params);
  }
  return params;
}

/**
 * Decodes every declared parameter from the raw text values; a missing required one is
 * REQUEST_VARIABLE_MISSING, a bad one BAD_REQUEST naming it. Undeclared names are returned as
 * `ignored` (reported as ignored_parameters_unsupported on success).
 */
export function decodeParams(schema: TObject, raw: Record<string, string>): { values: Record<string, unknown>; ignored: string[] } {
  const values: Record<string, unknown> = {};
  for (const p of plan(schema)) {
    const text = raw[p.name];
    if (text === undefined) {
      // A parameter with a default is optional on the wire while its handler type stays exact.
      if (p.fallback !== undefined) values[p.name] = p.cloneFallback ? structuredClone(p.fallback) : p.fallback;
      else if (p.required) throw missingArgument({ var_name: p.name });
      continue;
    }
    values[p.name] = decodeValue(p.name, p.schema, text);
  }
  // The client name is read by the transport and stored with what the client sends.
  if (raw.client?.includes('\0')) throw nullBytes('client');
  const ignored: string[] = [];
  for (const k in raw) if (!(k in schema.properties) && !TRANSPORT_PARAMS.has(k)) ignored.push(k);
  return { values, ignored };
}

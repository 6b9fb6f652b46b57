// Checks and converts a command's parameters against its schema. Clients are loose about types
// (numbers as strings, "1" for true) and about case (customerid/customerId/customerID), so values
// are converted and keys matched without case first; what still fails is a FAULT naming the field.
import type { TObject, TSchema } from 'typebox';
import Value from 'typebox/value';
import { Compile, type Validator } from 'typebox/compile';
import { InfraError } from './errors.js';

export function describe(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf)) return (s.anyOf as TSchema[]).map(describe).join(' or ');
  if (Array.isArray(s.enum)) return `one of ${(s.enum as unknown[]).join(', ')}`;
  if ('const' in s) return JSON.stringify(s.const);
  switch (s.type) {
    case 'integer': return 'an integer';
    case 'number': return 'a number';
    case 'string': return 'a string';
    case 'boolean': return 'true or false';
    case 'array': return 'a list';
    case 'object': return 'an object';
    default: return 'a valid value';
  }
}

function fieldProblem(schema: TObject, field: string, keyword: string, message: string): string {
  const prop = schema.properties[field] as TSchema | undefined;
  if (keyword === 'anyOf' || keyword === 'type' || keyword === 'enum' || keyword === 'const') {
    return prop ? `must be ${describe(prop)}` : message;
  }
  return message;
}

// Value.Check interprets the schema on every call; a compiled checker answers the same far faster.
// Definitions live as long as the process, so each schema is prepared once, on first use.
interface Prepared {
  validator: Validator;
  /**
   * The defaults of top-level properties, when no default hides deeper in the schema: filling these
   * in is then all Value.Default does. Undefined when there are deeper ones.
   */
  defaults?: [string, unknown][];
  /** Property names by their lower-case form. */
  byLower: Map<string, string>;
}

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
  prepared.set(schema, (p = { validator: Compile(schema), defaults, byLower: new Map(props.map(([name]) => [name.toLowerCase(), name])) }));
  return p;
}

/**
 * The checked parameters. `input` is the caller's own object (each request parses its own), so it is
 * filled in and returned rather than copied first.
 */
export function checkParams<S extends TObject>(schema: S, input: Record<string, unknown>): unknown {
  const payload = input;
  const { validator, defaults, byLower } = prepare(schema);
  // A property the request spells apart from case takes the value of the first such key, unless the
  // exact spelling is given too.
  for (const key in input) {
    const name = byLower.get(key.toLowerCase());
    if (name !== undefined && name !== key && payload[name] === undefined) payload[name] = input[key];
  }
  // Most calls send values of the right types already. Value.Convert leaves such a value as it is,
  // so after the top-level defaults one compiled check settles it, without walking the schema twice.
  if (defaults) {
    // A primitive default is used as it is; an object or list is copied, so no request changes the schema's own.
    for (const [name, value] of defaults) {
      if (payload[name] === undefined) payload[name] = typeof value === 'object' && value !== null ? Value.Clone(value) : value;
    }
    if (validator.Check(payload)) return payload;
  }
  const value = Value.Convert(schema, Value.Default(schema, payload));
  if (validator.Check(value)) return value;
  const fields: Record<string, string> = {};
  for (const e of Value.Errors(schema, value)) {
    const err = e as { keyword: string; instancePath: string; message: string; params: Record<string, unknown> };
    if (err.keyword === 'required') {
      for (const name of (err.params.requiredProperties as string[] | undefined) ?? []) fields[name] ??= 'is required';
      continue;
    }
    const field = err.instancePath.split('/')[1] ?? '';
    if (!field) continue;
    // The outermost problem of a field is the clearest: anyOf says "a or b" where its branches each say one.
    const problem = fieldProblem(schema, field, err.keyword, err.message);
    if (err.keyword === 'anyOf' || fields[field] === undefined) fields[field] = problem;
  }
  const names = Object.keys(fields);
  if (names.length === 0) throw new InfraError('FAULT', 'Invalid parameters');
  const first = names[0];
  const message = fields[first] === 'is required' ? `Missing parameter ${first}` : `Invalid parameter ${first}: ${fields[first]}`;
  throw new InfraError('FAULT', message, fields);
}

// Checks a decoded JSON value against a Go-like shape, as strictly as encoding/json decodes into the
// Go clients' structs: 'int' is a JSON number without a fraction, 'string' a JSON string, 'bool' a
// boolean, 'number' any number (float64), 'numstr' a number or a string of digits (json.Number,
// Go's JSONInt), 'null' null, 'any' anything. A trailing '?' makes a key optional (absent is fine;
// present it must fit). `[shape]` is a list (never null: the clients range over it), `{key: shape}`
// an object (extra keys allowed: Go ignores them), with `'*': shape` for every key it does not list (a map), and `Nullable(shape)`
// accepts null too (a Go pointer or `any`).
import assert from 'node:assert/strict';

type Scalar = 'int' | 'string' | 'bool' | 'number' | 'numstr' | 'null' | 'any';
export type GoShape = Scalar | `${Scalar}?` | GoShape[] | { [key: string]: GoShape } | NullableShape | OptionalShape;

interface NullableShape {
  nullable: GoShape;
}
interface OptionalShape {
  optional: GoShape;
}

/** Null or `shape`. */
export const Nullable = (shape: GoShape): NullableShape => ({ nullable: shape });
/** A key that may be absent (for a non-scalar shape; scalars write 'int?'). */
export const Optional = (shape: GoShape): OptionalShape => ({ optional: shape });

/** Every place in `value` that does not fit `shape`, as "path: problem" lines. */
export function goTypeProblems(value: unknown, shape: GoShape, path = '$'): string[] {
  if (typeof shape === 'string') {
    const s = shape.endsWith('?') ? (shape.slice(0, -1) as Scalar) : (shape as Scalar);
    return scalarProblem(value, s, path);
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: expected a list, got ${describe(value)}`];
    return value.flatMap((v, i) => goTypeProblems(v, shape[0], `${path}[${i}]`));
  }
  if ('nullable' in shape && Object.keys(shape).length === 1) return value === null ? [] : goTypeProblems(value, (shape as NullableShape).nullable, path);
  if ('optional' in shape && Object.keys(shape).length === 1) return goTypeProblems(value, (shape as OptionalShape).optional, path);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${path}: expected an object, got ${describe(value)}`];
  const obj = value as Record<string, unknown>;
  const out: string[] = [];
  const fields = shape as Record<string, GoShape>;
  // '*': every key the shape does not list (a Go map, or the rest of a `map[string]any`).
  if ('*' in fields) {
    for (const [k, v] of Object.entries(obj)) if (!(k in fields)) out.push(...goTypeProblems(v, fields['*'], `${path}.${k}`));
  }
  for (const [key, sub] of Object.entries(fields)) {
    if (key === '*') continue;
    const optional = (typeof sub === 'string' && sub.endsWith('?')) || (typeof sub === 'object' && !Array.isArray(sub) && 'optional' in sub && Object.keys(sub).length === 1);
    if (!(key in obj)) {
      if (!optional) out.push(`${path}.${key}: missing`);
      continue;
    }
    out.push(...goTypeProblems(obj[key], sub, `${path}.${key}`));
  }
  return out;
}

function scalarProblem(value: unknown, s: Scalar, path: string): string[] {
  const bad = (what: string) => [`${path}: expected ${what}, got ${describe(value)}`];
  switch (s) {
    case 'any':
      return [];
    case 'null':
      return value === null ? [] : bad('null');
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) ? [] : bad('an int (a JSON number without a fraction)');
    case 'number':
      return typeof value === 'number' ? [] : bad('a number');
    case 'string':
      return typeof value === 'string' ? [] : bad('a string');
    case 'bool':
      return typeof value === 'boolean' ? [] : bad('a bool');
    case 'numstr':
      return (typeof value === 'number' && Number.isInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value)) ? [] : bad('a number or a string of digits');
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)}`;
  return `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

/** Fails with every misfit when `value` does not decode into `shape`. */
export function assertGoShape(value: unknown, shape: GoShape, what = 'value'): void {
  const problems = goTypeProblems(value, shape);
  assert.deepEqual(problems, [], `${what} does not decode into its Go type:\n${problems.join('\n')}`);
}

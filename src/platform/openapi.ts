// What both services' OpenAPI documents are made of: a definition's TypeBox parameter schema as plain
// JSON Schema for OpenAPI 3.0 or 3.1, and its parameters split into path parameters and the rest.
import type { TObject, TSchema } from 'typebox';

export type JsonSchema = Record<string, unknown>;

/**
 * OpenAPI 3.1 schemas are JSON Schema 2020-12, which TypeBox writes; OpenAPI 3.0 has no `const`
 * (an enum of one stands in) and no type null (`nullable` stands in).
 */
export type OpenApiVersion = '3.0' | '3.1';

/** A union of literals of one type (TypeBox's Union of Literals) as the `enum` a reader expects. */
function asEnum(node: JsonSchema): JsonSchema | undefined {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const type = (branches[0] as JsonSchema).type;
  const literal = (b: JsonSchema) => 'const' in b && b.type === type && Object.keys(b).length === 2;
  if (!branches.every((b) => b && typeof b === 'object' && literal(b as JsonSchema))) return undefined;
  const { anyOf: _branches, ...rest } = node;
  return { type, enum: branches.map((b) => (b as JsonSchema).const), ...rest };
}

/** A TypeBox schema as a plain JSON value for an OpenAPI document (TypeBox's own markers are not enumerable, so a JSON copy drops them). */
export function plainSchema(schema: TSchema, version: OpenApiVersion): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(asEnum(node as JsonSchema) ?? node)) {
      if (k === '$schema' || k === '$id') continue;
      if (k === 'const' && version === '3.0') out.enum = [v];
      else out[k] = walk(v);
    }
    // OpenAPI 3.0 has no type null: a union with null is its other branches marked `nullable`.
    const branches = out.anyOf as JsonSchema[] | undefined;
    if (version === '3.0' && Array.isArray(branches) && branches.some((b) => b.type === 'null')) {
      const rest = branches.filter((b) => b.type !== 'null');
      delete out.anyOf;
      Object.assign(out, rest.length === 1 ? rest[0] : { anyOf: rest }, { nullable: true });
    }
    return out;
  };
  return walk(JSON.parse(JSON.stringify(schema))) as JsonSchema;
}

/** The `{name}` segments of a path template, in order. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
}

export interface DeclaredParameter {
  name: string;
  schema: JsonSchema;
  /** Declared required. A caller whose decoder fills in defaults asks `hasDefault` too. */
  required: boolean;
  hasDefault: boolean;
}

/** A definition's parameters in declaration order, those in the path template apart from the rest. */
export function splitParameters(params: TObject, path: string, version: OpenApiVersion): { inPath: DeclaredParameter[]; rest: DeclaredParameter[] } {
  const schema = plainSchema(params, version) as { properties?: Record<string, JsonSchema>; required?: string[] };
  const required = new Set(schema.required ?? []);
  const inPathNames = pathParameterNames(path);
  const declared = Object.entries(schema.properties ?? {}).map(([name, s]) => ({ name, schema: s, required: required.has(name), hasDefault: 'default' in s }));
  const inPath = inPathNames.map((name) => declared.find((p) => p.name === name) ?? { name, schema: { type: 'string' }, required: true, hasDefault: false });
  return { inPath, rest: declared.filter((p) => !inPathNames.includes(p.name)) };
}

// Renders an OpenAPI document (either service's) as a Markdown API reference: one section per tag,
// one entry per operation with its parameters in a table. docs/chat-api.md is made this way.
type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => !!v && typeof v === 'object' && !Array.isArray(v);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** A schema in a few words: `integer`, `"a" | "b"`, `array of integer`, `object {id, value}`. */
export function schemaText(schema: unknown, depth = 0): string {
  if (!isNode(schema)) return 'any';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(union)) return union.map((b) => schemaText(b, depth)).join(' or ');
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop()!;
  switch (schema.type) {
    case 'array': {
      const items = schemaText(schema.items, depth + 1);
      return `array of ${items.includes(' or ') ? `(${items})` : items}`;
    }
    case 'object': {
      const props = Object.keys(isNode(schema.properties) ? schema.properties : {});
      if (!props.length || depth > 1) return 'object';
      const required = new Set((schema.required as string[] | undefined) ?? []);
      return `object {${props.map((p) => (required.has(p) ? p : `${p}?`)).join(', ')}}`;
    }
    case undefined:
      return 'any';
    default:
      return String(schema.type);
  }
}

/** What else a schema says: bounds and lengths. */
function limits(schema: Node): string[] {
  const out: string[] = [];
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']) if (k in schema) out.push(`${k} ${String(schema[k])}`);
  return out;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

interface Row {
  name: string;
  where: string;
  type: string;
  required: boolean;
  notes: string[];
}

function parameterRows(op: Node): Row[] {
  const rows: Row[] = [];
  for (const p of (op.parameters as Node[] | undefined) ?? []) {
    const json = isNode(p.content) ? (p.content['application/json'] as Node | undefined) : undefined;
    const schema = (json?.schema ?? p.schema) as Node;
    const notes = [...(json ? ['JSON-encoded'] : []), ...limits(schema ?? {})];
    if (schema && 'default' in schema) notes.push(`default ${JSON.stringify(schema.default)}`);
    const description = p.description ?? schema?.description;
    if (typeof description === 'string') notes.push(description);
    rows.push({ name: String(p.name), where: String(p.in), type: schemaText(schema), required: p.required === true, notes });
  }
  const body = op.requestBody as Node | undefined;
  if (isNode(body) && isNode(body.content)) {
    const [mediaType, media] = Object.entries(body.content)[0] as [string, Node];
    const schema = media.schema as Node;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const encoding = isNode(media.encoding) ? media.encoding : {};
    const where = mediaType === 'application/x-www-form-urlencoded' ? 'form' : 'body';
    for (const [name, s] of Object.entries((schema.properties as Record<string, Node> | undefined) ?? {})) {
      const json = isNode(encoding[name]) && (encoding[name] as Node).contentType === 'application/json';
      const notes = [...(json ? ['JSON-encoded'] : []), ...limits(s)];
      if ('default' in s) notes.push(`default ${JSON.stringify(s.default)}`);
      if (typeof s.description === 'string') notes.push(s.description);
      rows.push({ name, where, type: schemaText(s), required: required.has(name), notes });
    }
  }
  return rows;
}

function authText(doc: Node, op: Node): string {
  const security = (op.security ?? doc.security) as Node[] | undefined;
  if (!security || security.length === 0) return 'no authentication';
  const schemes = security.map((s) => Object.keys(s).join(' + ') || 'none');
  return schemes.length === 1 ? `authentication: ${schemes[0]}` : `authentication: ${schemes.join(' or ')}`;
}

const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/** The whole reference; `intro` comes after the title (where the document is served, how it was made). */
export function openApiMarkdown(doc: Node, intro: string): string {
  const info = doc.info as Node;
  const base = ((doc.servers as Node[] | undefined)?.[0]?.url as string | undefined) ?? '';
  const tags = ((doc.tags as Node[] | undefined) ?? []).map((t) => ({ name: String(t.name), description: String(t.description ?? '') }));
  const byTag = new Map<string, { method: string; path: string; op: Node }[]>(tags.map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(doc.paths as Record<string, Node>)) {
    for (const method of METHODS) {
      const op = item[method] as Node | undefined;
      if (!op) continue;
      const tag = String((op.tags as string[] | undefined)?.[0] ?? 'other');
      if (!byTag.has(tag)) {
        byTag.set(tag, []);
        tags.push({ name: tag, description: '' });
      }
      byTag.get(tag)!.push({ method, path, op });
    }
  }
  const out: string[] = [`# ${String(info.title)}`, '', intro, '', String(info.description ?? ''), ''];
  const schemes = isNode(doc.components) && isNode(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  if (Object.keys(schemes).length) {
    out.push('## Authentication', '');
    for (const [name, s] of Object.entries(schemes) as [string, Node][]) out.push(`- \`${name}\`: ${String(s.type)} ${String(s.scheme ?? '')}. ${String(s.description ?? '')}`.trimEnd());
    out.push('');
  }
  out.push('## Contents', '');
  for (const t of tags) out.push(`- [${t.name}](#${anchor(t.name)}): ${byTag.get(t.name)!.length} endpoints`);
  for (const t of tags) {
    out.push('', `## ${t.name}`, '');
    if (t.description) out.push(t.description, '');
    for (const { method, path, op } of byTag.get(t.name)!) {
      out.push(`### ${String(op.summary)}`, '', `\`${method.toUpperCase()} ${base}${path}\` (${authText(doc, op)})`, '');
      const rows = parameterRows(op);
      if (rows.length === 0) {
        out.push('No parameters.', '');
        continue;
      }
      out.push('| Parameter | In | Type | Required | Notes |', '|---|---|---|---|---|');
      for (const r of rows) out.push(`| \`${r.name}\` | ${r.where} | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.notes.join('; '))} |`);
      out.push('');
    }
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}

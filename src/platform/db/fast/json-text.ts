// Fast path "JSON splicing" (README.md): JSON already serialized, for answers assembled from cached
// pieces (Chat's GET /messages joins each message's cached JSON with the reader's flags) instead of
// being built as objects and stringified. Bench: bench/fast/json-splicing.ts.
// Node 20 has no JSON.rawJSON, so a service's envelope (Chat's http.ts) splices it in at the top
// level with serializeWithText; any other JSON.stringify of it (toJSON) still gives the same value,
// only slower. It is held as UTF-8 pieces: a page of messages is some 50 KB of JSON, which joining
// strings, flattening the joins and encoding the result for the socket copied four times over; the
// pieces are copied once, into the answer.
export class JsonText {
  readonly parts: readonly Buffer[];
  constructor(json: string | readonly Buffer[]) {
    this.parts = typeof json === 'string' ? [Buffer.from(json)] : json;
  }

  get text(): string {
    return Buffer.concat(this.parts).toString();
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * JSON.stringify of an object whose own top-level values may be JsonText: with them spliced in as
 * they are, as UTF-8 bytes; without any, JSON.stringify's own text.
 */
export function serializeWithText(body: Record<string, unknown>): string | Buffer {
  let spliced = false;
  for (const k in body) if (body[k] instanceof JsonText) spliced = true;
  if (!spliced) return JSON.stringify(body);
  const parts: Buffer[] = [];
  let text = '{';
  let first = true;
  for (const k in body) {
    const v = body[k];
    const json: string | undefined = v instanceof JsonText ? '' : JSON.stringify(v);
    // As JSON.stringify does: a member whose value has no JSON form (undefined, a function) is left out.
    if (json === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(k)}:${json}`;
    first = false;
    if (v instanceof JsonText) {
      parts.push(Buffer.from(text), ...v.parts);
      text = '';
    }
  }
  parts.push(Buffer.from(`${text}}`));
  return Buffer.concat(parts);
}

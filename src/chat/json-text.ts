// JSON already serialized, for answers assembled from cached pieces (GET /messages joins each
// message's cached text with the reader's flags) instead of being built as objects and stringified.
// Node 20 has no JSON.rawJSON, so the Chat envelope (http.ts) splices it in at the top level; any
// other JSON.stringify of it (toJSON) still gives the same value, only slower.
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** JSON.stringify of an object whose own top-level values may be JsonText, spliced in as they are. */
export function stringifyWithText(body: Record<string, unknown>): string {
  let spliced = false;
  for (const k in body) if (body[k] instanceof JsonText) spliced = true;
  if (!spliced) return JSON.stringify(body);
  const members: string[] = [];
  for (const k in body) {
    const v = body[k];
    // As JSON.stringify does: a member whose value has no JSON form (undefined, a function) is left out.
    const text: string | undefined = v instanceof JsonText ? v.text : JSON.stringify(v);
    if (text !== undefined) members.push(`${JSON.stringify(k)}:${text}`);
  }
  return `{${members.join(',')}}`;
}

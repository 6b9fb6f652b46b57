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
  /**
   * Made once and answered many times (a realm's presences, per realm version): worth compressing
   * once for every answer that carries it (platform/http/gzip-pieces.ts). Not for text made per
   * request (a page of messages), which compressing would cost more CPU than it saves.
   */
  readonly shared: boolean;
  constructor(json: string | readonly Buffer[], options?: { shared?: boolean }) {
    this.parts = typeof json === 'string' ? [Buffer.from(json)] : json;
    if (typeof json === 'string') this.joined = json;
    this.shared = options?.shared === true;
  }

  private joined: string | undefined;

  /** The JSON as one string (made once: the parts never change). */
  get text(): string {
    this.joined ??= Buffer.concat(this.parts).toString();
    return this.joined;
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** Pieces at least this long are handed to the socket as they are; shorter runs are joined into one. */
export const SHARED_PIECE_BYTES = 4096;

/**
 * JSON.stringify of an object whose own top-level values may be JsonText: with them spliced in as
 * they are, as UTF-8 bytes; without any, JSON.stringify's own text.
 */
export function serializeWithText(body: Record<string, unknown>): string | Buffer {
  const pieces = serializeAsPieces(body);
  return typeof pieces === 'string' ? pieces : pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
}

/**
 * serializeWithText's bytes left in pieces, for a socket to write as they are (one writev): a large
 * JsonText piece (a realm's presences, cached and shared) is never copied into an answer of its own,
 * which for a 34 KB answer cost more in copying and garbage collection than the rest of the request.
 * Small pieces in a row are joined, so a page of short ones is still one piece. The pieces may be
 * shared: never write into them.
 */
export function serializeAsPieces(body: Record<string, unknown>): string | Buffer[] {
  let spliced = false;
  for (const k in body) if (body[k] instanceof JsonText) spliced = true;
  if (!spliced) return JSON.stringify(body);
  const out: Buffer[] = [];
  let run: Buffer[] = [];
  const endRun = () => {
    if (run.length) out.push(run.length === 1 ? run[0] : Buffer.concat(run));
    run = [];
  };
  const add = (piece: Buffer) => {
    if (piece.length < SHARED_PIECE_BYTES) {
      run.push(piece);
      return;
    }
    endRun();
    out.push(piece);
  };
  let text = '{';
  let first = true;
  for (const k in body) {
    const v = body[k];
    const json = memberJson(k, v, first);
    if (json === undefined) continue;
    text += json;
    first = false;
    if (v instanceof JsonText) {
      add(Buffer.from(text));
      for (const part of v.parts) add(part);
      text = '';
    }
  }
  add(Buffer.from(`${text}}`));
  endRun();
  return out;
}

/**
 * `"key":value` with its comma as serializeAsPieces writes it (a JsonText's value left for the caller
 * to splice), undefined for a member JSON.stringify leaves out (undefined, a function).
 */
function memberJson(k: string, v: unknown, first: boolean): string | undefined {
  const json: string | undefined = v instanceof JsonText ? '' : typeof v === 'boolean' ? (v ? 'true' : 'false') : JSON.stringify(v);
  if (json === undefined) return undefined;
  return first ? `${keyJson(k)}:${json}` : `,${keyJson(k)}:${json}`;
}

// A memo of a pure function (design rule 7): the JSON of a top-level key, of which an answer has a
// handful, all named by the endpoints' code; bounded all the same (emptied when full).
const keyTexts = new Map<string, string>();
const MAX_KEY_TEXTS = 1000;

function keyJson(k: string): string {
  let text = keyTexts.get(k);
  if (text === undefined) {
    if (keyTexts.size >= MAX_KEY_TEXTS) keyTexts.clear();
    keyTexts.set(k, (text = JSON.stringify(k)));
  }
  return text;
}

/**
 * serializeWithText's bytes in three parts, around the body's first JsonText member when that one is
 * marked shared: the text before it (the envelope, from `{` to its key), the text, and the bytes
 * after it (the request's own values, `}` included). Undefined when the first JsonText member is
 * not shared, or there is none. For answers that compress the shared part once (gzip-pieces.ts).
 */
export function splitAtShared(body: Record<string, unknown>): { head: string; text: JsonText; tail: Buffer } | undefined {
  let head = '{';
  let first = true;
  let text: JsonText | undefined;
  const after: Buffer[] = [];
  let run = '';
  for (const k in body) {
    const v = body[k];
    const json = memberJson(k, v, first);
    if (json === undefined) continue;
    first = false;
    if (!text) {
      head += json;
      if (v instanceof JsonText) {
        if (!v.shared) return undefined;
        text = v;
      }
      continue;
    }
    run += json;
    if (v instanceof JsonText) {
      after.push(Buffer.from(run), ...v.parts);
      run = '';
    }
  }
  if (!text) return undefined;
  after.push(Buffer.from(`${run}}`));
  return { head, text, tail: after.length === 1 ? after[0] : Buffer.concat(after) };
}

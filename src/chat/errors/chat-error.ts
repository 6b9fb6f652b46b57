// The error a Chat endpoint raises, and `defineError`, which declares one catalog entry: Zulip's
// code, a message template with named placeholders, the HTTP status and the extra body fields.
// The transport turns a ChatError into Zulip's envelope {"result":"error","msg","code",<extra>}.

export class ChatError extends Error {
  readonly code: string;
  readonly status: number;
  /** Extra top-level fields of the error body (var_name, stream, stream_id, retry-after ...). */
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(code: string, msg: string, opts: { status?: number; extra?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(msg);
    this.code = code;
    this.status = opts.status ?? 400;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }
}

/** The names between braces in a template: "Channel '{name}' does not exist" gives "name". */
export type Placeholders<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never;

type TemplateArgs<T extends string> = { [K in Placeholders<T>]: string | number };

/** A catalog entry: called with its arguments it builds the error; its fields describe it. */
export interface ErrorEntry<A> {
  (...args: keyof A extends never ? [] : [args: A]): ChatError;
  readonly code: string;
  readonly status: number;
  readonly template: string;
  /** The wire fields the entry adds beside msg and code (documentation and the catalog test). */
  readonly fields: readonly string[];
}

interface EntrySpec<T extends string, X> {
  code: string;
  /** Zulip's HTTP status; 400 when left out. */
  status?: number;
  message: T;
  /** The extra body fields, from the arguments and the filled message (an argument not named in the message is typed here). */
  extra?: (args: X, message: string) => Record<string, unknown>;
  headers?: (args: X) => Record<string, string>;
}

const PLACEHOLDER = /\{(\w+)\}/g;

/** Fills a template's placeholders by name. */
export function fillTemplate(template: string, args: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_, name: string) => String(args[name]));
}

const NO_ARGS: Record<string, unknown> = {};

export function defineError<const T extends string, X extends object = Record<never, never>>(spec: EntrySpec<T, X>): ErrorEntry<TemplateArgs<T> & X> {
  const status = spec.status ?? 400;
  const hasPlaceholders = spec.message.includes('{');
  const build = (args?: TemplateArgs<T> & X): ChatError => {
    const a = (args ?? NO_ARGS) as TemplateArgs<T> & X;
    const msg = hasPlaceholders ? fillTemplate(spec.message, a) : spec.message;
    return new ChatError(spec.code, msg, { status, extra: spec.extra?.(a, msg), headers: spec.headers?.(a) });
  };
  // The field names are read once from what `extra` builds (its values do not matter here), so an
  // entry states its fields in one place.
  const fields = spec.extra ? Object.keys(spec.extra(new Proxy({}, { get: () => undefined }) as X, spec.message)) : [];
  return Object.assign(build, { code: spec.code, status, template: spec.message, fields }) as unknown as ErrorEntry<TemplateArgs<T> & X>;
}

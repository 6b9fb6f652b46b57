// The errors a Chat endpoint can raise; the transport turns each into Zulip's error envelope
// {"result":"error","msg":...,"code":...,<extra>} with Zulip's HTTP status.
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

export const badRequest = (msg: string, extra?: Record<string, unknown>) => new ChatError('BAD_REQUEST', msg, { extra });

export const missingArgument = (name: string) =>
  new ChatError('REQUEST_VARIABLE_MISSING', `Missing '${name}' argument`, { extra: { var_name: name } });

/** Zulip answers API requests without usable credentials with 401 and a Basic challenge. */
export const unauthorized = (msg: string) =>
  new ChatError('UNAUTHORIZED', msg, { status: 401, headers: { 'www-authenticate': 'Basic realm="zulip"' } });

export const invalidApiKey = (msg = 'Invalid API key') => new ChatError('INVALID_API_KEY', msg, { status: 401 });

export const userDeactivated = () => new ChatError('USER_DEACTIVATED', 'Account is deactivated', { status: 401 });

/**
 * Zulip's RealmDeactivatedError: the message of its code (zerver/lib/exceptions.py); the example in
 * its OpenAPI document says "This organization is deactivated".
 */
export const realmDeactivated = () => new ChatError('REALM_DEACTIVATED', 'This organization has been deactivated', { status: 401 });

/** Zulip's 429: retry-after in the body as float seconds, in the Retry-After header as whole seconds (rounded up). */
export const rateLimited = (retryAfterSeconds: number, headers: Record<string, string> = {}) =>
  new ChatError('RATE_LIMIT_HIT', 'API usage exceeded rate limit', {
    status: 429,
    extra: { 'retry-after': retryAfterSeconds },
    headers: { ...headers, 'retry-after': String(Math.ceil(retryAfterSeconds)) },
  });

export const channelNameMissing = (name: string) =>
  new ChatError('STREAM_DOES_NOT_EXIST', `Channel '${name}' does not exist`, { extra: { stream: name } });

export const channelIdMissing = (id: number) =>
  new ChatError('STREAM_DOES_NOT_EXIST', `Channel with ID '${id}' does not exist`, { extra: { stream_id: id } });

export const badNarrow = (what: string) => new ChatError('BAD_NARROW', `Invalid narrow operator: ${what}`);

export const adminRequired = () => new ChatError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');

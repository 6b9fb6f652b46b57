// The errors an Infra command can raise. The transport turns each into the envelope, always HTTP 200.
export type ErrorCode = 'ERROR' | 'FAULT' | 'ACCESS_DENIED' | 'RATE_LIMIT';

export class InfraError extends Error {
  readonly code: ErrorCode;
  /** Per-parameter messages, sent as `error` (the provider's validation dialect). */
  readonly fields?: Record<string, string>;
  constructor(code: ErrorCode, message: string, fields?: Record<string, string>) {
    super(message);
    this.code = code;
    this.fields = fields;
  }
}

export const accessDenied = (why?: string) => new InfraError('ACCESS_DENIED', why ? `Access Denied: ${why}` : 'Access Denied');
export const notFound = (what: string) => new InfraError('ERROR', `Could not find ${what}`);
export const badParam = (name: string, problem: string) =>
  new InfraError('FAULT', `Invalid parameter ${name}: ${problem}`, { [name]: problem });

/** Over a rate limit (infra/rate-limit.ts): the envelope also carries `retryAfter`, in seconds as the Retry-After header. */
export class RateLimited extends InfraError {
  readonly retryAfter: number;
  constructor(waitSeconds: number) {
    const seconds = Math.max(1, Math.ceil(waitSeconds));
    super('RATE_LIMIT', `Rate limit exceeded: try again in ${seconds} second${seconds === 1 ? '' : 's'}`);
    this.retryAfter = seconds;
  }
}

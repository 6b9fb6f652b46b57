// The errors an Infra command can raise. The transport turns each into the envelope, always HTTP 200.
export type ErrorCode = 'ERROR' | 'FAULT' | 'ACCESS_DENIED';

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

// The Infra response envelope: always HTTP 200, compact JSON, `code` first (acme.sh looks for the
// literal text "code":"OK"). REST answers carry the payload in `data`; command style also puts it
// under the provider's resource-named top-level keys.
import type { Result } from '../command.js';
import { InfraError } from '../errors.js';

export function okBody(result: Result, style: 'cmd' | 'rest'): Record<string, unknown> {
  const body: Record<string, unknown> = { code: 'OK', message: result.message };
  if (result.matches !== undefined) body.matches = result.matches;
  if (style === 'cmd' && result.top) {
    for (const [k, v] of Object.entries(result.top)) if (!(k in body)) body[k] = v;
  }
  if (result.data !== undefined) body.data = result.data;
  return body;
}

export function errorBody(err: InfraError): Record<string, unknown> {
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.fields) body.error = err.fields;
  return body;
}

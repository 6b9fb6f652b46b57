// The Infra response envelope: always HTTP 200, compact JSON, `code` first (acme.sh looks for the
// literal text "code":"OK"). REST answers carry the payload in `data`; command style also puts it
// under the provider's resource-named top-level keys.
import type { Result } from '../command.js';
import { JsonText } from '../../platform/db/fast/json-text.js';
import { InfraError, RateLimited } from '../errors.js';

/**
 * The OK envelope as JSON text. Written member by member rather than as one JSON.stringify of an
 * object: command style usually names the payload twice (`apiuser` and `data` are the same object),
 * and this way it is serialized once.
 */
export function okText(result: Result, style: 'cmd' | 'rest'): string {
  let text = `{"code":"OK","message":${quote(result.message)}`;
  if (result.matches !== undefined) text += `,"matches":${JSON.stringify(result.matches)}`;
  let dataText: string | undefined;
  if (style === 'cmd' && result.top) {
    for (const key of Object.keys(result.top)) {
      if (key === 'code' || key === 'message' || (key === 'matches' && result.matches !== undefined) || (key === 'data' && result.data !== undefined)) continue;
      const value = result.top[key];
      if (value === undefined) continue;
      const json = value === result.data ? (dataText ??= json_(value)) : json_(value);
      text += `,${quote(key)}:${json}`;
    }
  }
  if (result.data !== undefined) text += `,"data":${dataText ?? json_(result.data)}`;
  return text + '}';
}

/** A value as JSON text: a JsonText (an answer kept already serialized, devices/view-cache.ts) as it is. */
function json_(value: unknown): string {
  return value instanceof JsonText ? value.text : JSON.stringify(value);
}

// Characters JSON must escape, and lone surrogates (written as \u escapes by JSON.stringify).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as JSON text. Messages and key names rarely hold anything to escape, and quoting them
 * directly skips JSON.stringify's fixed cost (about 0.1 us a call here, several calls an answer).
 */
export function quote(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

export function errorBody(err: InfraError): Record<string, unknown> {
  const body: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.fields) body.error = err.fields;
  if (err instanceof RateLimited) body.retryAfter = err.retryAfter;
  return body;
}

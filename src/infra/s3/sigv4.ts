// AWS Signature Version 4 as S3 checks it: from the Authorization header or from a presigned URL's
// query. Keel rebuilds the canonical request from what arrived (the path as sent, the query decoded
// and encoded again, the signed headers' values) and compares signatures in constant time.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { S3Error } from './xml.js';

export const UNSIGNED = 'UNSIGNED-PAYLOAD';
/** Requests dated further than this from the server's clock are refused (S3's 15 minutes). */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** A presigned URL lives at most seven days (S3's bound). */
const MAX_EXPIRES = 604_800;

export interface SignedRequest {
  accessKey: string;
  /** yyyymmdd/region/s3/aws4_request */
  scope: string;
  region: string;
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  /** The payload hash the signature covers: a hex SHA-256, UNSIGNED-PAYLOAD or STREAMING-*. */
  payloadHash: string;
  presigned: boolean;
}

/** The query as S3 reads it: names and values percent-decoded ('+' is a plus). Throws InvalidURI when malformed. */
export function parseQuery(raw: string): [string, string][] {
  if (!raw) return [];
  return raw
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      const value = eq < 0 ? '' : pair.slice(eq + 1);
      try {
        return [decodeURIComponent(name), decodeURIComponent(value)];
      } catch {
        throw new S3Error(400, 'InvalidURI', "Couldn't parse the specified URI.");
      }
    });
}

/** AWS's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper case). */
export function awsEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

const AUTH = /^AWS4-HMAC-SHA256 (.+)$/;

/** What the request claims (no secret needed yet); undefined when it is anonymous. */
export function readSignature(headers: Record<string, string | string[] | undefined>, query: [string, string][]): SignedRequest | undefined {
  const auth = typeof headers.authorization === 'string' ? headers.authorization : undefined;
  const q = new Map(query);
  if (auth !== undefined) {
    const m = AUTH.exec(auth.trim());
    if (!m) {
      if (auth.startsWith('AWS ')) throw new S3Error(400, 'InvalidRequest', 'Signature Version 2 is not supported; use AWS4-HMAC-SHA256.');
      throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
    }
    const parts = new Map<string, string>();
    for (const piece of m[1].split(',')) {
      const eq = piece.indexOf('=');
      if (eq > 0) parts.set(piece.slice(0, eq).trim(), piece.slice(eq + 1).trim());
    }
    const credential = parts.get('Credential');
    const signed = parts.get('SignedHeaders');
    const signature = parts.get('Signature');
    if (!credential || !signed || !signature) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed; it needs Credential, SignedHeaders and Signature.');
    const amzDate = typeof headers['x-amz-date'] === 'string' ? headers['x-amz-date'] : undefined;
    if (!amzDate) throw new S3Error(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    const payload = headers['x-amz-content-sha256'];
    if (typeof payload !== 'string') throw new S3Error(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    return { ...splitCredential(credential), amzDate, signedHeaders: signed.split(';'), signature, payloadHash: payload, presigned: false };
  }
  if (q.has('X-Amz-Algorithm') || q.has('X-Amz-Signature')) {
    if (q.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') throw new S3Error(400, 'AuthorizationQueryParametersError', 'X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"');
    const credential = q.get('X-Amz-Credential');
    const amzDate = q.get('X-Amz-Date');
    const signed = q.get('X-Amz-SignedHeaders');
    const signature = q.get('X-Amz-Signature');
    const expires = q.get('X-Amz-Expires');
    if (!credential || !amzDate || !signed || !signature || !expires) {
      throw new S3Error(400, 'AuthorizationQueryParametersError', 'Query-string authentication requires X-Amz-Credential, X-Amz-Date, X-Amz-SignedHeaders, X-Amz-Signature and X-Amz-Expires.');
    }
    if (!/^\d{1,7}$/.test(expires) || Number(expires) > MAX_EXPIRES) throw new S3Error(400, 'AuthorizationQueryParametersError', 'X-Amz-Expires must be a number of seconds up to 604800.');
    const payload = typeof headers['x-amz-content-sha256'] === 'string' ? headers['x-amz-content-sha256'] : UNSIGNED;
    return { ...splitCredential(credential), amzDate, signedHeaders: signed.split(';'), signature, payloadHash: payload, presigned: true };
  }
  return undefined;
}

function splitCredential(credential: string): { accessKey: string; scope: string; region: string } {
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[3] !== 's3' || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1]) || !parts[0]) {
    throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The credential is malformed; expecting "<access key>/<yyyymmdd>/<region>/s3/aws4_request".');
  }
  return { accessKey: parts[0], scope: parts.slice(1).join('/'), region: parts[2] };
}

/** "20240115T103000Z" in milliseconds, or NaN. */
function amzTime(s: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : Number.NaN;
}

/** Checks the date rules, then the signature with the credential's secret; throws S3Error when it fails. */
export function verifySignature(sig: SignedRequest, secret: string, req: { method: string; rawPath: string; query: [string, string][]; rawHeaders: string[] }, nowMs: number): void {
  const t = amzTime(sig.amzDate);
  if (Number.isNaN(t)) throw new S3Error(403, 'AccessDenied', 'X-Amz-Date must be in the ISO 8601 basic format yyyyMMddTHHmmssZ.');
  if (!sig.scope.startsWith(sig.amzDate.slice(0, 8))) throw new S3Error(403, 'SignatureDoesNotMatch', "The credential's date does not match the request's date.");
  if (sig.presigned) {
    const expires = Number(new Map(req.query).get('X-Amz-Expires'));
    if (t - nowMs > MAX_SKEW_MS) throw new S3Error(403, 'AccessDenied', 'Request is not valid yet');
    if (nowMs > t + expires * 1000) throw new S3Error(403, 'AccessDenied', 'Request has expired');
  } else if (Math.abs(t - nowMs) > MAX_SKEW_MS) {
    throw new S3Error(403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }
  if (!sig.signedHeaders.includes('host')) throw new S3Error(403, 'SignatureDoesNotMatch', 'The host header must be signed.');
  const values = new Map<string, string[]>();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    const list = values.get(name) ?? [];
    list.push(req.rawHeaders[i + 1].trim().replace(/\s+/g, ' '));
    values.set(name, list);
  }
  const canonicalHeaders = sig.signedHeaders.map((h) => `${h}:${(values.get(h) ?? []).join(',')}\n`).join('');
  const query = req.query
    .filter(([k]) => !(sig.presigned && k === 'X-Amz-Signature'))
    .map(([k, v]) => [awsEncode(k), awsEncode(v)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const payload = sig.presigned ? (values.has('x-amz-content-sha256') ? sig.payloadHash : UNSIGNED) : sig.payloadHash;
  const canonical = [req.method, req.rawPath, query, canonicalHeaders, sig.signedHeaders.join(';'), payload].join('\n');
  const toSign = ['AWS4-HMAC-SHA256', sig.amzDate, sig.scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const [date, region, service] = sig.scope.split('/');
  let key = createHmac('sha256', `AWS4${secret}`).update(date).digest();
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  const expected = createHmac('sha256', key).update(toSign).digest();
  const given = /^[0-9a-f]{64}$/.test(sig.signature) ? Buffer.from(sig.signature, 'hex') : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new S3Error(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
  }
}

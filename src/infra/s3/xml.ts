// S3's XML dialect: its errors and the documents Keel answers with, written by hand (they are small
// and fixed), and the one document it reads (CompleteMultipartUpload) parsed with fast-xml-parser.
import { XMLParser } from 'fast-xml-parser';

export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** An answer in S3's error dialect: HTTP status, S3 code, message. */
export class S3Error extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function esc(s: string | number): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** `<Name>value</Name>` with the value escaped. */
export function el(name: string, value: string | number | boolean): string {
  return `<${name}>${esc(String(value))}</${name}>`;
}

export function xmlDoc(body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
}

export function errorXml(err: S3Error, resource: string, requestId: string): string {
  return xmlDoc(`<Error>${el('Code', err.code)}${el('Message', err.message)}${el('Resource', resource)}${el('RequestId', requestId)}</Error>`);
}

const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: false, isArray: (name) => name === 'Part' || name === 'Object' });

/** The parts a CompleteMultipartUpload body lists, in its order; throws MalformedXML when it is not one. */
export function readCompleteParts(body: string): { partNumber: number; etag: string }[] {
  let doc: { CompleteMultipartUpload?: { Part?: { PartNumber?: unknown; ETag?: unknown }[] } };
  try {
    doc = parser.parse(body, true);
  } catch {
    throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
  }
  const parts = doc?.CompleteMultipartUpload?.Part;
  if (!Array.isArray(parts) || parts.length === 0) throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
  return parts.map((p) => {
    const n = String(p?.PartNumber ?? '');
    const etag = String(p?.ETag ?? '')
      .replace(/^"|"$/g, '')
      .replace(/^&quot;|&quot;$/g, '');
    if (!/^\d{1,5}$/.test(n) || !etag) throw new S3Error(400, 'MalformedXML', 'Each Part needs a PartNumber and an ETag.');
    return { partNumber: Number(n), etag };
  });
}

/** The keys a DeleteObjects body lists (at most 1000, S3's bound) and whether it asks for a quiet answer. */
export function readDeleteKeys(body: string): { keys: string[]; quiet: boolean } {
  let doc: { Delete?: { Object?: { Key?: unknown }[]; Quiet?: unknown } };
  try {
    doc = parser.parse(body, true);
  } catch {
    throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
  }
  const objects = doc?.Delete?.Object;
  if (!Array.isArray(objects) || objects.length === 0 || objects.length > 1000) {
    throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
  }
  const keys = objects.map((o) => {
    if (typeof o?.Key !== 'string' || o.Key === '') throw new S3Error(400, 'MalformedXML', 'Each Object needs a Key.');
    return o.Key;
  });
  return { keys, quiet: String(doc.Delete?.Quiet ?? '').trim() === 'true' };
}

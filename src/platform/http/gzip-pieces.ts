// gzip answers assembled from pieces: a long-lived shared JsonText (a realm's presences, the answer to
// every client's minute ping) is compressed once and every answer carrying it is that compressed
// stream plus its own short tail, added uncompressed as a stored DEFLATE block. No zlib call per
// answer; per answer only the tail's CRC-32 is computed. It serves the fast path "JSON splicing"
// (platform/db/fast/README.md), whose shared texts it compresses.
//
// A gzip member (RFC 1952) is a 10-byte header, one raw DEFLATE stream (RFC 1951) and a trailer
// (CRC-32 and the uncompressed length, both little-endian). A DEFLATE stream is a series of blocks of
// which only the last is marked final, and a back-reference may only reach into bytes already
// produced: so the prefix deflated on its own, ended by a sync flush (non-final blocks, byte-aligned,
// nothing referring beyond it), followed by stored blocks of the tail, is one valid stream.
import { constants, deflateRawSync } from 'node:zlib';
import { JsonText, SHARED_PIECE_BYTES, splitAtShared } from '../db/fast/json-text.js';

/** ID1 ID2, CM deflate, no flags, no mtime, XFL 0, OS 255 (unknown): the same for every answer. */
const GZIP_HEADER = [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff];

/** A stored block carries at most 65,535 bytes (LEN is 16 bits). */
const STORED_MAX = 0xffff;

/** The table-driven CRC-32 of gzip (reflected polynomial 0xEDB88320); Node 20 has no zlib.crc32. */
function crcTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}
// A constant, made once: the same 1 KB for every caller.
const CRC_TABLE = crcTable();

/** The CRC register before any byte; the CRC of the bytes is the register XOR 0xFFFFFFFF. */
export const CRC_START = 0xffffffff;

/** The CRC register after `bytes`, continuing from `crc` (a register value, CRC_START at the start). */
export function crcUpdate(crc: number, bytes: Uint8Array): number {
  let c = crc;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return c >>> 0;
}

/** A prefix compressed once: the gzip header and its DEFLATE blocks, with what the trailer needs of it. */
export interface GzipPrefix {
  /** Header + non-final DEFLATE blocks ending byte-aligned. Shared by every answer: never written into. */
  readonly head: Buffer;
  /** The CRC register after the prefix's bytes (not yet finished). */
  readonly crc: number;
  /** The prefix's uncompressed length. */
  readonly length: number;
}

/** Compresses `parts` (the prefix, in order) once, for any number of answers to continue. */
export function gzipPrefix(parts: readonly Buffer[]): GzipPrefix {
  const prefix = parts.length === 1 ? parts[0] : Buffer.concat(parts);
  // Z_SYNC_FLUSH rather than Z_FINISH: the blocks stay non-final and end on a byte boundary, so
  // stored blocks can follow them.
  const deflated = deflateRawSync(prefix, { finishFlush: constants.Z_SYNC_FLUSH });
  return { head: Buffer.concat([Buffer.from(GZIP_HEADER), deflated]), crc: crcUpdate(CRC_START, prefix), length: prefix.length };
}

/**
 * The gzip member of prefix + tail as pieces to write in order: the shared compressed prefix, then
 * the tail as stored blocks (the last one final) and the trailer, in one new buffer.
 */
export function gzipWithTail(prefix: GzipPrefix, tail: Buffer): Buffer[] {
  const blocks = Math.max(1, Math.ceil(tail.length / STORED_MAX));
  const out = Buffer.allocUnsafe(blocks * 5 + tail.length + 8);
  let at = 0;
  for (let b = 0; b < blocks; b++) {
    const start = b * STORED_MAX;
    const len = Math.min(STORED_MAX, tail.length - start);
    // BFINAL in bit 0, BTYPE 00 (stored); the rest of the byte is padding up to the boundary.
    out[at] = b === blocks - 1 ? 0x01 : 0x00;
    out.writeUInt16LE(len, at + 1);
    out.writeUInt16LE(~len & 0xffff, at + 3);
    at += 5;
    at += tail.copy(out, at, start, start + len);
  }
  out.writeUInt32LE((crcUpdate(prefix.crc, tail) ^ CRC_START) >>> 0, at);
  // ISIZE: the length modulo 2^32.
  out.writeUInt32LE((prefix.length + tail.length) % 0x1_0000_0000, at + 4);
  return [prefix.head, out];
}

/**
 * Whether an Accept-Encoding value (RFC 9110 section 12.5.3) allows gzip: a `gzip` (or `x-gzip`,
 * its old name) entry decides by its weight, `q=0` refusing; without one, `*` does. Names and the
 * `q` parameter are case-insensitive. A weight that does not parse makes its entry count for nothing.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  if (header === lastHeader) return lastAccepts;
  const accepts = parseAcceptsGzip(header);
  lastHeader = header;
  lastAccepts = accepts;
  return accepts;
}

// The last value read and what it said: a client sends the same value with every request, and the
// parse cost as much as the rest of the gzip assembly. A one-entry memo of a pure function (design
// rule 7).
let lastHeader: string | undefined;
let lastAccepts = false;

function parseAcceptsGzip(header: string): boolean {
  let gzip: boolean | undefined;
  let star: boolean | undefined;
  for (const entry of header.split(',')) {
    const [name, ...params] = entry.split(';');
    const coding = name.trim().toLowerCase();
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    let q = 1;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'q') continue;
      const v = p.slice(eq + 1).trim();
      q = /^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/.test(v) ? Number(v) : Number.NaN;
    }
    if (Number.isNaN(q)) continue;
    if (coding === '*') star = q > 0;
    else gzip = gzip === true || q > 0;
  }
  return gzip ?? star ?? false;
}

/**
 * Distinct texts before one shared JsonText kept compressed: one per endpoint that answers it in its
 * envelope (the presence ping, GET /realm/presence). A further one is answered uncompressed rather
 * than compressed anew, so no request can make the server deflate 34 KB for each answer.
 */
const MAX_HEADS = 4;

// A memo of a pure function (design rule 7): the compressed bytes depend on the text and the head
// alone. Keyed by the JsonText object, so an entry dies with its text (one per realm version).
const compressed = new WeakMap<JsonText, Map<string, GzipPrefix>>();

/**
 * The gzip pieces of the body serializeWithText would write, when its first JsonText member is
 * marked shared and at least SHARED_PIECE_BYTES long: everything up to and including that text is
 * compressed once per text (and per text before it), the rest is added as stored blocks. Undefined
 * when the body has no such member: the caller answers uncompressed.
 */
export function gzipShared(body: Record<string, unknown>): Buffer[] | undefined {
  const split = splitAtShared(body);
  if (!split) return undefined;
  const { head, text, tail } = split;
  let size = 0;
  for (const part of text.parts) size += part.length;
  if (size < SHARED_PIECE_BYTES) return undefined;
  let byHead = compressed.get(text);
  let prefix = byHead?.get(head);
  if (!prefix) {
    if (!byHead) compressed.set(text, (byHead = new Map()));
    if (byHead.size >= MAX_HEADS) return undefined;
    prefix = gzipPrefix([Buffer.from(head), ...text.parts]);
    byHead.set(head, prefix);
  }
  return gzipWithTail(prefix, tail);
}

// DNS message framing: a lean reader for incoming queries and a response writer with name compression.
// dns-packet, the project's codec, encodes record data when a zone is indexed (zone-index.ts), but it
// neither compresses names nor is cheap enough per packet (an object per field), and answers must both
// fit 512 bytes and be produced tens of thousands of times a second, so the message level lives here.

export const TYPE = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  IXFR: 251,
  AXFR: 252,
  MAILB: 253,
  MAILA: 254,
  ANY: 255,
  CAA: 257,
} as const;

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, NOTAUTH: 9 } as const;
/** Extended rcode BADVERS (16) is carried as 1 in the OPT record's upper rcode bits (RFC 6891). */
export const EXTENDED_BADVERS = 1;

export const OPCODE = { QUERY: 0, NOTIFY: 4 } as const;
export const FLAG = { QR: 0x8000, AA: 0x0400, TC: 0x0200, RD: 0x0100 } as const;
export const CLASS_IN = 1;
const MAX_NAME_WIRE = 255;

export interface Edns {
  size: number;
  version: number;
  do: boolean;
}

export interface ParsedQuery {
  id: number;
  flags: number;
  opcode: number;
  /** The question's name occupies bytes [12, qnameEnd) of the message. */
  qnameEnd: number;
  /** As sent (case kept), dotted, no trailing dot, "" for the root. A "." or "\" inside a label is escaped (\046, \092), so such a name never matches a hosted one. */
  name: string;
  lower: string;
  qtype: number;
  qclass: number;
  edns: Edns | null;
  /** Offset of the answer section (after the question), for readers of the other sections (IXFR). */
  afterQuestion: number;
}

/** A query to answer, a header-only error reply to send, or null: nothing to send (no header, or a response). */
export type ParseOutcome = { query: ParsedQuery } | { error: number; id: number; flags: number } | null;

/** Offset just past the name at `off`, or -1 if it runs out of the message or is malformed. */
export function skipName(msg: Buffer, off: number): number {
  let total = 0;
  for (;;) {
    if (off >= msg.length) return -1;
    const len = msg[off];
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) return off + 2 <= msg.length ? off + 2 : -1;
    if (len & 0xc0) return -1;
    total += len + 1;
    if (total >= MAX_NAME_WIRE) return -1;
    off += len + 1;
  }
}

/** End of the uncompressed question name at offset 12, or -1 (pointers make no sense in the first name). */
export function questionNameEnd(msg: Buffer): number {
  let off = 12;
  for (;;) {
    if (off >= msg.length) return -1;
    const len = msg[off];
    if (len === 0) return off + 1;
    if (len > 63) return -1;
    off += len + 1;
    if (off - 12 >= MAX_NAME_WIRE) return -1;
  }
}

function readQuestionName(msg: Buffer, end: number): string {
  let name = '';
  let off = 12;
  while (off < end - 1) {
    const len = msg[off];
    let label = msg.toString('latin1', off + 1, off + 1 + len);
    if (label.includes('.') || label.includes('\\')) label = label.replace(/\\/g, '\\092').replace(/\./g, '\\046');
    name = name ? `${name}.${label}` : label;
    off += len + 1;
  }
  return name;
}

/** ASCII-only lower-casing: DNS compares names case-insensitively in ASCII only (RFC 4343). */
export function asciiLower(s: string): string {
  // toLowerCase also folds non-ASCII letters; only take its result when there are none.
  return /[^\x00-\x7f]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s.toLowerCase();
}

/** Reads a query: header, one question, and an OPT record if there is one; other records are skipped. */
export function parseQuery(msg: Buffer): ParseOutcome {
  if (msg.length < 12) return null;
  const id = msg.readUInt16BE(0);
  const flags = msg.readUInt16BE(2);
  if (flags & FLAG.QR) return null; // never answer a response: two servers could bounce errors forever
  const opcode = (flags >> 11) & 0xf;
  const qd = msg.readUInt16BE(4);
  if (opcode !== OPCODE.QUERY) return { error: RCODE.NOTIMP, id, flags };
  if (qd !== 1) return { error: RCODE.FORMERR, id, flags };
  const qnameEnd = questionNameEnd(msg);
  if (qnameEnd < 0 || qnameEnd + 4 > msg.length) return { error: RCODE.FORMERR, id, flags };
  const qtype = msg.readUInt16BE(qnameEnd);
  const qclass = msg.readUInt16BE(qnameEnd + 2);
  const afterQuestion = qnameEnd + 4;
  let off = afterQuestion;
  let edns: Edns | null = null;
  const rrCount = msg.readUInt16BE(6) + msg.readUInt16BE(8);
  const arCount = msg.readUInt16BE(10);
  for (let i = 0; i < rrCount + arCount; i++) {
    const start = off;
    off = skipName(msg, off);
    if (off < 0 || off + 10 > msg.length) return { error: RCODE.FORMERR, id, flags };
    const type = msg.readUInt16BE(off);
    const rdlen = msg.readUInt16BE(off + 8);
    if (off + 10 + rdlen > msg.length) return { error: RCODE.FORMERR, id, flags };
    if (type === TYPE.OPT) {
      // RFC 6891: only in the additional section, at most once, owned by the root.
      if (i < rrCount || edns || off !== start + 1) return { error: RCODE.FORMERR, id, flags };
      edns = { size: msg.readUInt16BE(off + 2), version: msg[off + 5], do: (msg[off + 6] & 0x80) !== 0 };
    }
    off += 10 + rdlen;
  }
  const name = readQuestionName(msg, qnameEnd);
  return { query: { id, flags, opcode, qnameEnd, name, lower: asciiLower(name), qtype, qclass, edns, afterQuestion } };
}

class Overflow extends Error {}

/** Where a record goes: answer, authority or additional. */
export const SECTION = { ANSWER: 1, AUTHORITY: 2, ADDITIONAL: 3 } as const;

/** Record data as parts: bytes copied as they are, and strings, which are names that may be compressed. */
export type Rdata = ReadonlyArray<Buffer | string>;

/**
 * Builds one message at a time in a reusable scratch buffer. Names are compressed against every name
 * written before (RFC 1035 4.1.4). `mark`/`rollback` undo the records written after a point, which is
 * how truncation and the splitting of zone transfers into messages work.
 */
export class MessageWriter {
  private readonly buf = Buffer.allocUnsafe(65535);
  private len = 0;
  private limit = 65535;
  private readonly counts = [0, 0, 0, 0];
  private readonly names = new Map<string, number>();
  private readonly added: string[] = [];

  begin(id: number, flags: number, limit: number): this {
    this.len = 12;
    this.limit = Math.min(limit, this.buf.length);
    this.counts.fill(0);
    this.names.clear();
    this.added.length = 0;
    this.buf.writeUInt16BE(id, 0);
    this.buf.writeUInt16BE(flags, 2);
    return this;
  }

  get length(): number {
    return this.len;
  }

  setFlags(flags: number): void {
    this.buf.writeUInt16BE(flags, 2);
  }

  setLimit(limit: number): void {
    this.limit = Math.min(limit, this.buf.length);
  }

  /** Copies the question from the query as sent, so its case is echoed. */
  questionFrom(query: Buffer, parsed: ParsedQuery): void {
    const nameLen = parsed.qnameEnd - 12;
    query.copy(this.buf, 12, 12, parsed.qnameEnd + 4);
    // Make the question's name available to compression under its lower-case suffixes.
    if (parsed.lower) {
      let off = 12;
      let rest = parsed.lower;
      for (;;) {
        this.remember(rest, off);
        const dot = rest.indexOf('.');
        if (dot < 0) break;
        off += query[off] + 1;
        rest = rest.slice(dot + 1);
      }
    }
    this.len = 12 + nameLen + 4;
    this.counts[0] = 1;
  }

  question(name: string, qtype: number, qclass = CLASS_IN): void {
    this.writeName(name);
    this.need(4);
    this.buf.writeUInt16BE(qtype, this.len);
    this.buf.writeUInt16BE(qclass, this.len + 2);
    this.len += 4;
    this.counts[0]++;
  }

  mark(): { len: number; added: number; counts: number[] } {
    return { len: this.len, added: this.added.length, counts: [...this.counts] };
  }

  rollback(m: { len: number; added: number; counts: number[] }): void {
    this.len = m.len;
    for (let i = m.added; i < this.added.length; i++) this.names.delete(this.added[i]);
    this.added.length = m.added;
    for (let i = 0; i < 4; i++) this.counts[i] = m.counts[i];
  }

  /** Appends a record; false (and nothing written) if the message would pass its limit. */
  rr(section: number, owner: string, type: number, ttl: number, rdata: Rdata): boolean {
    const m = this.mark();
    try {
      this.writeName(owner);
      this.need(10);
      const b = this.buf;
      b.writeUInt16BE(type, this.len);
      b.writeUInt16BE(CLASS_IN, this.len + 2);
      b.writeUInt32BE(ttl >>> 0, this.len + 4);
      const rdlenAt = this.len + 8;
      this.len += 10;
      for (const part of rdata) {
        if (typeof part === 'string') this.writeName(part);
        else {
          this.need(part.length);
          part.copy(b, this.len);
          this.len += part.length;
        }
      }
      b.writeUInt16BE(this.len - rdlenAt - 2, rdlenAt);
      if (this.len > this.limit) throw new Overflow();
    } catch (err) {
      if (!(err instanceof Overflow)) throw err;
      this.rollback(m);
      return false;
    }
    this.counts[section]++;
    return true;
  }

  /** The OPT pseudo-record (RFC 6891); written last, it may use the room kept back for it. */
  opt(udpSize: number, extendedRcode: number, flagDo: boolean): void {
    if (this.len + 11 > this.buf.length) return;
    const b = this.buf;
    b[this.len] = 0;
    b.writeUInt16BE(TYPE.OPT, this.len + 1);
    b.writeUInt16BE(udpSize, this.len + 3);
    b[this.len + 5] = extendedRcode;
    b[this.len + 6] = 0; // version
    b.writeUInt16BE(flagDo ? 0x8000 : 0, this.len + 7);
    b.writeUInt16BE(0, this.len + 9);
    this.len += 11;
    this.counts[3]++;
  }

  /** A copy of the finished message. */
  finish(): Buffer {
    for (let i = 0; i < 4; i++) this.buf.writeUInt16BE(this.counts[i], 4 + i * 2);
    return Buffer.from(this.buf.subarray(0, this.len));
  }

  private need(n: number): void {
    if (this.len + n > this.buf.length) throw new Overflow();
  }

  private remember(suffix: string, off: number): void {
    if (off < 0x3fff && !this.names.has(suffix)) {
      this.names.set(suffix, off);
      this.added.push(suffix);
    }
  }

  private writeName(name: string): void {
    if (name === '') {
      this.need(1);
      this.buf[this.len++] = 0;
      return;
    }
    let rest = name;
    for (;;) {
      const lower = asciiLower(rest);
      const ptr = this.names.get(lower);
      if (ptr !== undefined) {
        this.need(2);
        this.buf.writeUInt16BE(0xc000 | ptr, this.len);
        this.len += 2;
        return;
      }
      const dot = rest.indexOf('.');
      const label = dot < 0 ? rest : rest.slice(0, dot);
      const bytes = Buffer.byteLength(label);
      if (bytes > 63 || bytes === 0) throw new Error(`cannot encode the name "${name}"`);
      this.need(bytes + 1);
      this.remember(lower, this.len);
      this.buf[this.len] = bytes;
      this.buf.write(label, this.len + 1);
      this.len += bytes + 1;
      if (dot < 0) break;
      rest = rest.slice(dot + 1);
    }
    this.need(1);
    this.buf[this.len++] = 0;
  }
}

/** A reply that carries only the header (and the query's flags that must be echoed): FORMERR, NOTIMP. */
export function headerOnlyReply(id: number, queryFlags: number, rcode: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt16BE(id, 0);
  // Keep opcode and RD; set QR.
  b.writeUInt16BE(FLAG.QR | (queryFlags & 0x7900) | rcode, 2);
  return b;
}

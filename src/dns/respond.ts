// Turns one query message into its reply: parsing, the checks on opcode, class and type, the encoding
// of the resolution with truncation and EDNS, and the cache of encoded UDP answers that keeps the hot
// path to a hash look-up and a copy. Zone transfers are handed back to the caller (TCP only).
import type { Authority, Entry, Resolution } from './answer.js';
import type { ZoneIndex } from './zone-index.js';
import { EXTENDED_BADVERS, FLAG, CLASS_IN, MessageWriter, RCODE, SECTION, TYPE, headerOnlyReply, parseQuery, questionNameEnd, type ParsedQuery } from './wire.js';

/** RFC 9715 / DNS flag day 2020: answers above this over UDP risk fragmentation; clients then use TCP. */
export const DEFAULT_MAX_UDP_PAYLOAD = 1232;
const CACHE_LIMIT = 50_000;

export interface TransferRequest {
  query: ParsedQuery;
  raw: Buffer;
  zone: ZoneIndex;
}

export type Reply = { message: Buffer } | { transfer: TransferRequest } | null;

export interface ResponderOptions {
  authority: Authority;
  /** Addresses allowed to transfer zones (AXFR, IXFR). */
  transferAllowed: (address: string) => boolean;
  maxUdpPayload?: number;
}

export class Responder {
  private readonly writer = new MessageWriter();
  private readonly cache = new Map<string, Buffer>();
  private cacheGeneration = -1;
  private readonly authority: Authority;
  private readonly transferAllowed: (address: string) => boolean;
  readonly maxUdpPayload: number;

  constructor(o: ResponderOptions) {
    this.authority = o.authority;
    this.transferAllowed = o.transferAllowed;
    this.maxUdpPayload = Math.max(512, Math.min(o.maxUdpPayload ?? DEFAULT_MAX_UDP_PAYLOAD, 65535));
  }

  /** The reply to a UDP message, or null for none. */
  udp(msg: Buffer, from: string): Buffer | null {
    if (this.cacheGeneration !== this.authority.generation) {
      this.cache.clear();
      this.cacheGeneration = this.authority.generation;
    }
    const key = cacheKey(msg);
    if (key !== null) {
      const hit = this.cache.get(key);
      if (hit) {
        const out = Buffer.allocUnsafe(hit.length);
        hit.copy(out);
        // The cached reply was made for another query: give it this one's id, RD bit and name's case.
        out[0] = msg[0];
        out[1] = msg[1];
        out[2] = (out[2] & 0xfe) | (msg[2] & 0x01);
        msg.copy(out, 12, 12, questionNameEnd(msg));
        return out;
      }
    }
    const reply = this.reply(msg, from, false);
    if (!reply || !('message' in reply)) return null;
    if (key !== null) {
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(key, reply.message);
    }
    return reply.message;
  }

  /** The reply to a message received over TCP: a message, a transfer to stream, or null. */
  tcp(msg: Buffer, from: string): Reply {
    return this.reply(msg, from, true);
  }

  private reply(msg: Buffer, from: string, tcp: boolean): Reply {
    const parsed = parseQuery(msg);
    if (!parsed) return null;
    if ('error' in parsed) return { message: headerOnlyReply(parsed.id, parsed.flags, parsed.error) };
    const q = parsed.query;
    try {
      return this.answer(msg, q, from, tcp);
    } catch {
      // A bug or a record that cannot be encoded must cost one SERVFAIL, not the server.
      return { message: headerOnlyReply(q.id, q.flags, RCODE.SERVFAIL) };
    }
  }

  private answer(msg: Buffer, q: ParsedQuery, from: string, tcp: boolean): Reply {
    if (q.edns && q.edns.version !== 0) return { message: this.bare(msg, q, RCODE.NOERROR, EXTENDED_BADVERS) };
    if (q.qtype === TYPE.OPT) return { message: this.bare(msg, q, RCODE.FORMERR) };
    if (q.qclass !== CLASS_IN) return { message: this.bare(msg, q, RCODE.REFUSED) };
    if (q.qtype === TYPE.AXFR || q.qtype === TYPE.IXFR) return this.transfer(msg, q, from, tcp);
    if (q.qtype === TYPE.MAILA || q.qtype === TYPE.MAILB) return { message: this.bare(msg, q, RCODE.NOTIMP) };
    const res = this.authority.resolve(q.name, q.lower, q.qtype);
    return { message: this.encode(msg, q, res, tcp) };
  }

  private transfer(msg: Buffer, q: ParsedQuery, from: string, tcp: boolean): Reply {
    if (!this.transferAllowed(from)) return { message: this.bare(msg, q, RCODE.REFUSED) };
    const zone = this.authority.zone(q.lower);
    if (!zone) return { message: this.bare(msg, q, RCODE.NOTAUTH) };
    if (!tcp) {
      // AXFR needs TCP (RFC 5936 4.2); an IXFR over UDP gets the SOA alone, which tells the client to use TCP (RFC 1995 2).
      if (q.qtype === TYPE.AXFR) return { message: this.bare(msg, q, RCODE.NOTIMP) };
      return { message: this.encode(msg, q, { rcode: RCODE.NOERROR, aa: true, answer: [{ name: zone.apex, set: zone.soa }], authority: [], additional: [], referral: false }, false) };
    }
    return { transfer: { query: q, raw: msg, zone } };
  }

  /** A reply with the question and no records (and the OPT record when the query had one). */
  private bare(msg: Buffer, q: ParsedQuery, rcode: number, extendedRcode = 0): Buffer {
    const w = this.writer.begin(q.id, FLAG.QR | (q.flags & FLAG.RD) | rcode, 65535);
    w.questionFrom(msg, q);
    if (q.edns) w.opt(this.maxUdpPayload, extendedRcode, q.edns.do);
    return w.finish();
  }

  private encode(msg: Buffer, q: ParsedQuery, res: Resolution, tcp: boolean): Buffer {
    const size = tcp ? 65535 : q.edns ? Math.max(512, Math.min(q.edns.size, this.maxUdpPayload)) : 512;
    let flags = FLAG.QR | (q.flags & FLAG.RD) | (res.aa ? FLAG.AA : 0) | res.rcode;
    const w = this.writer.begin(q.id, flags, size - (q.edns ? 11 : 0));
    w.questionFrom(msg, q);
    const afterQuestion = w.mark();
    let complete = writeSets(w, SECTION.ANSWER, res.answer) && writeSets(w, SECTION.AUTHORITY, res.authority);
    if (complete) {
      // Glue of a referral is required (RFC 9471); other additional data is a courtesy that may be left out.
      for (const entry of res.additional) if (!writeSets(w, SECTION.ADDITIONAL, [entry]) && res.referral) complete = false;
    }
    if (!complete) {
      w.rollback(afterQuestion);
      flags |= FLAG.TC;
      w.setFlags(flags);
    }
    w.setLimit(65535);
    if (q.edns) w.opt(this.maxUdpPayload, 0, q.edns.do);
    return w.finish();
  }
}

/** Writes whole RRsets; false (with the partial set undone) when one does not fit. */
export function writeSets(w: MessageWriter, section: number, entries: readonly Entry[]): boolean {
  for (const { name, set } of entries) {
    const m = w.mark();
    for (const rdata of set.rdatas) {
      if (!w.rr(section, name, set.type, set.ttl, rdata)) {
        w.rollback(m);
        return false;
      }
    }
  }
  return true;
}

/**
 * The cache key of a plain query (opcode QUERY, one question in class IN, at most an OPT record), or
 * null when the reply may depend on more than the name, type and EDNS size/DO bit: such queries always
 * take the full path. The name is keyed in lower case; ASCII only, since DNS folds nothing else.
 */
export function cacheKey(msg: Buffer): string | null {
  if (msg.length < 17 || (msg[2] & 0xf8) !== 0) return null; // QR set or opcode not QUERY
  if (msg[4] !== 0 || msg[5] !== 1 || msg[6] !== 0 || msg[7] !== 0 || msg[8] !== 0 || msg[9] !== 0 || msg[10] !== 0 || msg[11] > 1) return null;
  const end = questionNameEnd(msg);
  if (end < 0 || end + 4 > msg.length) return null;
  if (msg[end + 2] !== 0 || msg[end + 3] !== CLASS_IN) return null;
  const qtype = msg.readUInt16BE(end);
  if (qtype === TYPE.AXFR || qtype === TYPE.IXFR || qtype === TYPE.OPT) return null;
  let edns = '';
  if (msg[11] === 1) {
    // Only a root-owned OPT, version 0, ending the message.
    const o = end + 4;
    if (o + 11 > msg.length || msg[o] !== 0 || msg[o + 1] !== 0 || msg[o + 2] !== TYPE.OPT || msg[o + 6] !== 0) return null;
    if (o + 11 + msg.readUInt16BE(o + 9) !== msg.length) return null;
    edns = `${msg.readUInt16BE(o + 3)}${msg[o + 7] & 0x80 ? 'd' : ''}`;
  } else if (end + 4 !== msg.length) return null;
  const name = msg.toString('latin1', 12, end);
  if (/[^\x00-\x7f]/.test(name)) return null;
  return `${name.toLowerCase()}${qtype}|${edns}`;
}

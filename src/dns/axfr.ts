// Zone transfers (RFC 5936 AXFR; IXFR answered as a full transfer, the fallback RFC 1995 4 allows):
// the zone's records between two copies of its SOA, split into messages of moderate size.
import dnsPacket from 'dns-packet';
import type { Entry } from './answer.js';
import type { ZoneIndex } from './zone-index.js';
import { FLAG, MessageWriter, RCODE, SECTION, TYPE, type ParsedQuery } from './wire.js';
import { writeSets } from './respond.js';

/** Messages this size keep memory and latency per write small while needing few messages (RFC 5936 allows 64 KiB). */
const TRANSFER_MESSAGE_SIZE = 16_384;

/** RFC 1982 serial arithmetic: is `a` the same as or newer than `b`? */
export function serialAtLeast(a: number, b: number): boolean {
  return a === b || (a - b) >>> 0 < 0x80000000;
}

/** The serial a client put in its IXFR query's authority section (RFC 1995 3), if it is readable. */
export function ixfrClientSerial(raw: Buffer): number | undefined {
  try {
    const p = dnsPacket.decode(raw);
    const soa = p.authorities?.find((a) => a.type === 'SOA');
    return soa && soa.type === 'SOA' ? soa.data.serial : undefined;
  } catch {
    return undefined;
  }
}

/** The zone's RRsets in transfer order: SOA first, then the apex, then every other owner. */
function transferEntries(zone: ZoneIndex): Entry[] {
  const entries: Entry[] = [];
  const apex = zone.nodes.get(zone.apex)!;
  for (const set of apex.values()) if (set.type !== TYPE.SOA) entries.push({ name: zone.apex, set });
  for (const [name, node] of zone.nodes) {
    if (name === zone.apex) continue;
    for (const set of node.values()) entries.push({ name, set });
  }
  return entries;
}

/**
 * The messages of a transfer, made one at a time so a slow reader holds back the work. The question is
 * copied into the first message only (RFC 5936 2.2.1). An IXFR from a client that is up to date gets
 * the SOA alone (RFC 1995 2).
 */
export function* transferMessages(query: ParsedQuery, raw: Buffer, zone: ZoneIndex): Generator<Buffer> {
  const w = new MessageWriter();
  const flags = FLAG.QR | FLAG.AA | (query.flags & FLAG.RD);
  const soa: Entry = { name: zone.apex, set: zone.soa };
  if (query.qtype === TYPE.IXFR) {
    const serial = ixfrClientSerial(raw);
    if (serial !== undefined && serialAtLeast(serial, zone.serial)) {
      w.begin(query.id, flags, 65535).questionFrom(raw, query);
      writeSets(w, SECTION.ANSWER, [soa]);
      yield w.finish();
      return;
    }
  }
  w.begin(query.id, flags, TRANSFER_MESSAGE_SIZE).questionFrom(raw, query);
  let inMessage = 0;
  for (const set of [soa, ...transferEntries(zone), soa]) {
    // An RRset may span messages, so records are added one at a time.
    for (const rdata of set.set.rdatas) {
      if (w.rr(SECTION.ANSWER, set.name, set.set.type, set.set.ttl, rdata)) {
        inMessage++;
        continue;
      }
      if (inMessage > 0) {
        yield w.finish();
        w.begin(query.id, flags, TRANSFER_MESSAGE_SIZE);
        inMessage = 0;
      }
      // A record bigger than the usual message size still fits a message of its own, up to 64 KiB.
      w.setLimit(65535);
      if (!w.rr(SECTION.ANSWER, set.name, set.set.type, set.set.ttl, rdata)) {
        w.begin(query.id, FLAG.QR | (query.flags & FLAG.RD) | RCODE.SERVFAIL, 65535);
        yield w.finish();
        return;
      }
      w.setLimit(TRANSFER_MESSAGE_SIZE);
      inMessage++;
    }
  }
  yield w.finish();
}

// The rules a hosted zone and its records must follow, as pure functions: the dns.* commands check
// every record with them before anything is written, and the zone is built from what they return.
import { isIPv4, isIPv6 } from 'node:net';
import { getPublicSuffix } from 'tldts';
import { infraProblems as P } from './errors.js';

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'SRV', 'CAA', 'PTR'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** TTL bounds in seconds: ACME clients use 120 and 300; below a minute only adds load, above a week nobody can fix a mistake. */
export const TTL_MIN = 60;
export const TTL_MAX = 604_800;
export const TTL_DEFAULT = 3600;
/** Whole TXT value, in UTF-8 bytes (sent on the wire as strings of at most 255 bytes). */
export const TXT_MAX_BYTES = 4000;
export const CAA_VALUE_MAX_BYTES = 1000;
/**
 * Every zone and record is a row kept and served for as long as it exists, so each customer's share
 * is bounded: a runaway script (or a stolen key) cannot grow the store and the served zones without end.
 */
export const MAX_ZONES_PER_CUSTOMER = 1000;
export const MAX_RECORDS_PER_ZONE = 10_000;
const NAME_MAX = 253;
const LABEL_MAX = 63;

/** A record as stored and shown by the API. */
export interface RecordValues {
  lookup: string;
  type: RecordType;
  data: string;
  ttl: number;
  priority: number;
  weight: number;
  port: number;
  caaFlag: number;
  caaTag: string;
}

/** Collects per-field problems so one FAULT can name them all. */
export class Problems {
  readonly fields: Record<string, string> = {};
  add(field: string, problem: string): void {
    this.fields[field] ??= problem;
  }
  get empty(): boolean {
    return Object.keys(this.fields).length === 0;
  }
}

class Bad extends Error {}

/** Keys are matched without case, as clients send domainid, domainId and domainID alike. */
export function pick(obj: Record<string, unknown>, name: string): unknown {
  if (obj[name] !== undefined) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower && obj[k] !== undefined) return obj[k];
  return undefined;
}

function labelsOk(labels: string[], allowUnderscore: boolean): string | null {
  const re = allowUnderscore ? /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/ : /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
  for (const l of labels) {
    if (l === '') return P.emptyLabel();
    if (Buffer.byteLength(l) > LABEL_MAX) return P.labelTooLong({ max: LABEL_MAX });
    if (!re.test(l)) {
      return allowUnderscore ? P.badOwnerLabel({ label: l }) : P.badLabel({ label: l });
    }
  }
  return null;
}

/** A zone name: lower case, no trailing dot, at least two host-name labels. */
export function zoneName(raw: unknown): string {
  if (typeof raw !== 'string' || raw.trim() === '') throw new Bad(P.zoneName());
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  if (name.length > NAME_MAX) throw new Bad(P.nameTooLong({ max: NAME_MAX }));
  const labels = name.split('.');
  if (labels.length < 2) throw new Bad(P.twoLabels());
  const bad = labelsOk(labels, false);
  if (bad) throw new Bad(bad);
  return name;
}

/**
 * The owner name relative to the zone: '' for the apex ("@", "" or the zone name itself). A name
 * given fully qualified (ending in the zone, with or without the trailing dot) is made relative.
 */
export function lookupIn(raw: unknown, zone: string): string {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) raw = String(raw);
  if (typeof raw !== 'string') throw new Bad(P.lookupText());
  let s = raw.trim().toLowerCase();
  if (s === '' || s === '@' || s === zone || s === zone + '.') return '';
  const absolute = s.endsWith('.');
  if (absolute) s = s.slice(0, -1);
  if (s.endsWith('.' + zone)) s = s.slice(0, -(zone.length + 1));
  else if (absolute) throw new Bad(P.outsideZone({ name: raw, zone }));
  const labels = s.split('.');
  const wildcard = labels[0] === '*';
  const bad = labelsOk(wildcard ? labels.slice(1) : labels, true);
  if (bad) throw new Bad(labels.includes('*') ? P.wildcard() : bad);
  if (s.length + 1 + zone.length > NAME_MAX) throw new Bad(P.ownerTooLong({ max: NAME_MAX }));
  return s;
}

/** A host name a record points at (CNAME, NS, MX, SRV, PTR): absolute, stored without the trailing dot. */
function target(raw: string, allowRoot: boolean): string {
  const s = raw.trim().toLowerCase();
  if (s === '.' && allowRoot) return '.';
  const name = s.replace(/\.$/, '');
  if (name === '') throw new Bad(allowRoot ? P.hostOrRoot() : P.host());
  if (name.length > NAME_MAX) throw new Bad(P.nameTooLong({ max: NAME_MAX }));
  const labels = name.split('.');
  if (labels.length < 2) throw new Bad(P.qualifiedHost({ value: raw }));
  const bad = labelsOk(labels, true);
  if (bad) throw new Bad(bad);
  return name;
}

function integer(raw: unknown, min: number, max: number): number {
  const n = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new Bad(P.integerRange({ min, max }));
  if (n < min || n > max) throw new Bad(P.range({ min, max }));
  return n;
}

/** Absent, null and "" all mean "not given". */
const given = (v: unknown) => v !== undefined && v !== null && v !== '';

function text(raw: unknown): string {
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  if (typeof raw !== 'string') throw new Bad(P.text());
  return raw;
}

function recordType(raw: unknown): RecordType {
  if (typeof raw !== 'string' || raw.trim() === '') throw new Bad(P.typeRequired({ types: RECORD_TYPES.join(', ') }));
  const t = raw.trim().toUpperCase();
  if (t === 'AHASHED') throw new Bad(P.ahashed());
  if (!(RECORD_TYPES as readonly string[]).includes(t)) throw new Bad(P.typeUnknown({ types: RECORD_TYPES.join(', ') }));
  return t as RecordType;
}

function caaTag(raw: unknown): string {
  const t = text(raw).trim();
  // RFC 8659 section 4.1: 1 to 15 ASCII letters and digits (issue, issuewild, iodef, or a future tag).
  if (!/^[A-Za-z0-9]{1,15}$/.test(t)) throw new Bad(P.caaTag());
  return t.toLowerCase();
}

const ZONE_FILE_FORMS: Partial<Record<RecordType, RegExp>> = {
  MX: /^\s*(\d+)\s+(\S+)\s*$/,
  SRV: /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s*$/,
  CAA: /^\s*(\d+)\s+([A-Za-z0-9]+)\s+(.+)$/s,
};

/** True when data is the zone-file form of an MX, SRV or CAA record ("10 mail.example.com"), which carries the other parts too. */
export function isZoneFileForm(type: unknown, data: unknown): boolean {
  const re = typeof type === 'string' ? ZONE_FILE_FORMS[type.trim().toUpperCase() as RecordType] : undefined;
  return re !== undefined && typeof data === 'string' && re.test(data);
}

function unquote(s: string): string {
  const t = s.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

/**
 * Checks one record given as the API fields (keys in any case) and returns it as stored. `prefix`
 * names the record in problems ("" for the flat form, "data.0." in a batch). Returns undefined
 * when something is wrong; the problems say what.
 */
export function checkRecord(input: Record<string, unknown>, zone: string, prefix: string, problems: Problems): RecordValues | undefined {
  const before = Object.keys(problems.fields).length;
  const field = <T>(name: string, fn: () => T, fallback: T): T => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof Bad)) throw err;
      problems.add(prefix + name, err.message);
      return fallback;
    }
  };
  const type = field('type', () => recordType(pick(input, 'type')), undefined);
  const lookupRaw = pick(input, 'lookup');
  const lookup = field(
    'lookup',
    () => {
      if (lookupRaw === undefined || lookupRaw === null) throw new Bad(P.lookupRequired());
      return lookupIn(lookupRaw, zone);
    },
    '',
  );
  const ttlRaw = pick(input, 'ttl');
  const ttl = field('ttl', () => (given(ttlRaw) ? integer(ttlRaw, TTL_MIN, TTL_MAX) : TTL_DEFAULT), TTL_DEFAULT);
  const dataRaw = pick(input, 'data');
  let data = field(
    'data',
    () => {
      if (!given(dataRaw)) throw new Bad(P.valueRequired());
      return text(dataRaw);
    },
    '',
  );
  let priority = 0;
  let weight = 0;
  let port = 0;
  let caaFlag = 0;
  let tag = '';
  const num = (name: string, min: number, max: number, dflt: number | undefined): number =>
    field(
      name,
      () => {
        const v = pick(input, name);
        if (given(v)) return integer(v, min, max);
        if (dflt === undefined) throw new Bad(P.requiredFor({ type: String(type), min, max }));
        return dflt;
      },
      0,
    );
  if (type !== undefined && data !== '') {
    switch (type) {
      case 'A':
        data = field(
          'data',
          () => {
            if (!isIPv4(data.trim())) throw new Bad(P.ipv4({ value: data }));
            return data.trim();
          },
          '',
        );
        break;
      case 'AAAA':
        data = field(
          'data',
          () => {
            const a = data.trim().toLowerCase();
            if (!isIPv6(a) || a.includes('%')) throw new Bad(P.ipv6({ value: data }));
            return a;
          },
          '',
        );
        break;
      case 'CNAME':
      case 'NS':
      case 'PTR':
        data = field('data', () => target(data, false), '');
        break;
      case 'MX': {
        // The zone-file form "10 mail.example.com" carries the preference in data.
        const m = ZONE_FILE_FORMS.MX!.exec(data);
        if (m && !given(pick(input, 'priority'))) {
          priority = field('data', () => integer(m[1], 0, 65535), 0);
          data = m[2];
        } else {
          priority = num('priority', 0, 65535, 10);
        }
        data = field('data', () => target(data, true), '');
        break;
      }
      case 'SRV': {
        const m = ZONE_FILE_FORMS.SRV!.exec(data);
        if (m && !given(pick(input, 'port'))) {
          priority = field('data', () => integer(m[1], 0, 65535), 0);
          weight = field('data', () => integer(m[2], 0, 65535), 0);
          port = field('data', () => integer(m[3], 0, 65535), 0);
          data = m[4];
        } else {
          priority = num('priority', 0, 65535, 0);
          weight = num('weight', 0, 65535, 0);
          port = num('port', 0, 65535, undefined);
        }
        data = field('data', () => target(data, true), '');
        break;
      }
      case 'CAA': {
        // The zone-file form: 0 issue "letsencrypt.org".
        const m = ZONE_FILE_FORMS.CAA!.exec(data);
        if (m && !given(pick(input, 'caatag'))) {
          caaFlag = field('data', () => integer(m[1], 0, 255), 0);
          tag = field('data', () => caaTag(m[2]), '');
          data = unquote(m[3]);
        } else {
          caaFlag = num('caaflag', 0, 255, 0);
          tag = field(
            'caatag',
            () => {
              const v = pick(input, 'caatag');
              if (!given(v)) throw new Bad(P.caaTagRequired());
              return caaTag(v);
            },
            '',
          );
        }
        field(
          'data',
          () => {
            if (data === '') throw new Bad(P.caaValueRequired());
            if (Buffer.byteLength(data) > CAA_VALUE_MAX_BYTES) throw new Bad(P.bytes({ max: CAA_VALUE_MAX_BYTES }));
          },
          undefined,
        );
        break;
      }
      case 'TXT':
        field(
          'data',
          () => {
            if (Buffer.byteLength(data) > TXT_MAX_BYTES) throw new Bad(P.bytes({ max: TXT_MAX_BYTES }));
          },
          undefined,
        );
        break;
    }
  }
  if (Object.keys(problems.fields).length > before || type === undefined) return undefined;
  return { lookup, type, data, ttl, priority, weight, port, caaFlag, caaTag: tag };
}

/** Checks a zone name, naming `field` in the problem. */
export function checkZoneName(raw: unknown, field: string, problems: Problems): string | undefined {
  try {
    return zoneName(raw);
  } catch (err) {
    if (!(err instanceof Bad)) throw err;
    problems.add(field, err.message);
    return undefined;
  }
}

/**
 * Reverse zones a customer may host: at most a /24 of IPv4 (three octet labels before in-addr.arpa)
 * or a /48 of IPv6 (twelve nibble labels before ip6.arpa). A wider one would hold other networks'
 * addresses, and since zones are first come, first served, it would lock their holders out.
 */
const REVERSE_ZONES = [
  { suffix: 'in-addr.arpa', labels: 3, width: '/24', example: '2.0.192.in-addr.arpa' },
  { suffix: 'ip6.arpa', labels: 12, width: '/48', example: '0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa' },
] as const;

/**
 * Why no customer may host the zone `name` (as zoneName returns it), or null when one may. Zones are
 * first come, first served and a zone blocks every zone of another customer inside it, so these are
 * refused: the nameserver domain and anything inside it (whoever held it would answer for ns1..ns4,
 * the servers every zone is delegated to); a public suffix, by the Public Suffix List (names below
 * it belong to many unrelated owners); and reverse zones wider than REVERSE_ZONES allows.
 * The List's private section (github.io, blogspot.com ...) counts as well: those suffixes too are
 * shared by many owners, each of whom may want their own zone here, and nothing shows that the
 * customer asking is the operator of the suffix. Names registered under a suffix (user.github.io,
 * example.co.uk) are fine.
 */
export function unhostableZone(name: string, nameserverDomain: string): string | null {
  if (name === nameserverDomain || name.endsWith('.' + nameserverDomain)) {
    return (name === nameserverDomain ? P.nameserverDomain : P.insideNameserverDomain)({ name, domain: nameserverDomain });
  }
  if (getPublicSuffix(name, { allowPrivateDomains: true, extractHostname: false }) === name) {
    return P.publicSuffix({ name });
  }
  for (const r of REVERSE_ZONES) {
    if (!name.endsWith('.' + r.suffix)) continue;
    const labels = name.split('.').length - r.suffix.split('.').length;
    if (labels < r.labels) {
      return P.wideReverse({ name, width: r.width, labels: r.labels, suffix: r.suffix, example: r.example });
    }
  }
  return null;
}

/** Checks that a zone name may be hosted (see unhostableZone), naming `field` in the problem. */
export function checkHostable(name: string, nameserverDomain: string, field: string, problems: Problems): void {
  const why = unhostableZone(name, nameserverDomain);
  if (why) problems.add(field, why);
}

/** Checks an owner name against a zone (see lookupIn), naming `field` in the problem. */
export function checkLookup(raw: unknown, zone: string, field: string, problems: Problems): string | undefined {
  try {
    if (raw === undefined || raw === null) throw new Bad(P.lookupRequired());
    return lookupIn(raw, zone);
  } catch (err) {
    if (!(err instanceof Bad)) throw err;
    problems.add(field, err.message);
    return undefined;
  }
}

/** A record of the zone being changed, with where it came from when it is new or changed. */
export interface ZoneEntry {
  values: RecordValues;
  field?: string;
}

/**
 * The rules between records of one zone: no CNAME at the apex, a CNAME alone at its name (RFC 1034
 * 3.6.2), no NS at the apex (the DNS server makes that set). Only new or changed entries are blamed.
 */
export function checkZoneRules(entries: ZoneEntry[], problems: Problems): void {
  const byName = new Map<string, ZoneEntry[]>();
  for (const e of entries) {
    const list = byName.get(e.values.lookup);
    if (list) list.push(e);
    else byName.set(e.values.lookup, [e]);
  }
  for (const e of entries) {
    if (e.field === undefined) continue;
    const { lookup, type } = e.values;
    if (lookup === '' && type === 'CNAME') problems.add(e.field + 'type', P.cnameAtApex());
    if (lookup === '' && type === 'NS') problems.add(e.field + 'type', P.nsAtApex());
    const others = byName.get(lookup)!.filter((x) => x !== e);
    const where = lookup === '' ? 'the apex' : `"${lookup}"`;
    if (type === 'CNAME' && others.length) {
      problems.add(e.field + 'type', P.cnameNotAlone({ where, types: others.map((x) => x.values.type).join(', ') }));
    } else if (type !== 'CNAME' && others.some((x) => x.values.type === 'CNAME')) {
      problems.add(e.field + 'type', P.besideCname({ where }));
    }
  }
}

/** A TXT value as the strings of at most 255 bytes it is sent as, never splitting a character. */
export function txtStrings(value: string): string[] {
  const out: string[] = [];
  let cur = '';
  let bytes = 0;
  for (const ch of value) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > 255) {
      out.push(cur);
      cur = '';
      bytes = 0;
    }
    cur += ch;
    bytes += n;
  }
  if (cur !== '' || out.length === 0) out.push(cur);
  return out;
}

/** A serial that always grows: today's YYYYMMDD00, or one more than the last when that is higher. */
export function serialBase(nowMs: number): number {
  const d = new Date(nowMs);
  return (d.getUTCFullYear() * 10000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate()) * 100;
}

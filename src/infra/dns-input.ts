// The record dialects of the dns.* commands. RackCorp's clients send records as a list, as a map keyed
// "0", "1" ... or by record id, as one record object, or flat: the request itself is the record and
// `data` its value (acme.sh). Each command's normalise step (command.ts) turns these into one shape, a
// `records` list of record objects with the API's field names, which its schema checks; what each
// form may hold is documented by the `input` schemas here (the OpenAPI document shows them). The
// values of record fields are judged by the DNS rules (dns-rules.ts), which accept what clients send
// (numbers as strings, keys in any case), so their schemas take any JSON scalar and name the rule.
import Type, { type TObject, type TSchema } from 'typebox';
import type { Normaliser } from './command.js';
import { PROBLEM_KEY } from './params.js';
import { infraProblems as P } from './errors.js';
import { pick, Problems, RECORD_TYPES, TTL_DEFAULT, TTL_MAX, TTL_MIN } from './dns-rules.js';

/** The fields of a record, as the API names them (clients may send them in any case). */
export const RECORD_KEYS = ['type', 'lookup', 'data', 'ttl', 'priority', 'weight', 'port', 'caaflag', 'caatag'] as const;

/**
 * Where each canonical record came from and the shape problems found, kept beside the parameters
 * (under a symbol: no request can send it, no schema sees it) for the handler.
 */
export interface RecordShape {
  /**
   * How problems name record i: a prefix ending in "." for a record object ("data.0.", "data.",
   * "records.3."), "" for the flat form; dns.record.delete's records are bare ids, named whole ("id", "data.0").
   */
  at: string[];
  /** Record i's key in a map (a record id in dns.record.update), or its index in a list. */
  keys: string[];
  /** Problems with the shape itself (an empty list, a record that is not an object), in request order. */
  problems: Record<string, string>;
}

const SHAPE = Symbol('dns record shape');

/** The shape the command's normalise step recorded; a handler reached without it is a wiring bug. */
export function shapeOf(params: object): RecordShape {
  const shape = (params as { [SHAPE]?: RecordShape })[SHAPE];
  if (!shape) throw new Error('dns record parameters reached a handler without their normalise step');
  return shape;
}

// ---- schemas -------------------------------------------------------------------------------------

/**
 * A value the DNS rules judge: any JSON scalar (null and "" mean "not given"). Strings and numbers are
 * bounded by the rules (TXT 4000 bytes, names 253 characters, TTL 60 to 604800), not by params.ts's
 * defaults, so that a long name or a huge TTL gets the rules' own answer.
 */
const scalars = () => [Type.String({ maxLength: 16 * 1024 * 1024 }), Type.Number({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE }), Type.Boolean(), Type.Null()];
function scalar(description: string, problem: string): TSchema {
  return Type.Union(scalars(), { description, [PROBLEM_KEY]: problem });
}

const TYPES = RECORD_TYPES.join(', ');
// The problem of each field is the one its rule gives any value of the wrong JSON type (dns-rules.ts).
const u16 = P.integerRange({ min: 0, max: 65535 });
const FIELDS = {
  type: scalar(`record type: ${TYPES}`, P.typeRequired({ types: TYPES })),
  lookup: scalar('owner name relative to the zone ("" or "@" for the apex); a fully qualified name ending in the zone is made relative', P.lookupText()),
  data: scalar('the record value: an address, a host name, TXT text; MX, SRV and CAA also in zone-file form ("10 mail.example.com")', P.text()),
  ttl: scalar(`seconds, ${TTL_MIN} to ${TTL_MAX} (a number or its digits); default ${TTL_DEFAULT}`, P.integerRange({ min: TTL_MIN, max: TTL_MAX })),
  priority: scalar('MX preference or SRV priority, 0 to 65535', u16),
  weight: scalar('SRV weight, 0 to 65535', u16),
  port: scalar('SRV port, 0 to 65535', u16),
  caaflag: scalar('CAA flags, 0 to 255', P.integerRange({ min: 0, max: 255 })),
  caatag: scalar('CAA tag: issue, issuewild, iodef (or another of 1-15 letters and digits)', P.text()),
};
export const DOMAIN_ID = scalar('domain (zone) id, a number or its digits (also domainid, domainID)', P.domainId());
export const ZONE = scalar('zone name such as example.com, instead of domainId', P.zoneName());
const RECORD_ID = scalar('record id, a number or its digits', P.recordId());

/** dns.record.getall's `domain`: a domain id or a zone name. */
export const DOMAIN_OR_ZONE = scalar('domain id or zone name', P.zoneName());

const opt = <T extends Record<string, TSchema>>(fields: T) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof T]: ReturnType<typeof Type.Optional<T[K]>> };

/** One record as dns.record.create takes it; `domainId` or `name` sends it to another zone than the request's. */
const NewRecord = Type.Object(opt({ ...FIELDS, domainId: DOMAIN_ID, name: ZONE }), { description: 'a record' });
/** A change to one record: the fields given replace the stored ones. */
const RecordChange = Type.Object(opt({ id: RECORD_ID, ...FIELDS, domainId: DOMAIN_ID }), { description: 'a record change: id, then the fields to change' });
/** dns.domain.create's first records. */
const ZoneRecord = Type.Object(opt(FIELDS), { description: 'a record' });
const DeleteId = Type.Object({ id: Type.Optional(RECORD_ID) });

/** The accepted forms of a record list: a list, a map keyed by index or record id, or one record object. */
function recordForms(record: TObject, mapKeys: string): TSchema[] {
  return [Type.Array(record, { description: 'a list of records' }), Type.Object({}, { additionalProperties: record, description: `a map of records keyed ${mapKeys}` }), record];
}

/** Canonical: what the handlers get. */
export const CreateRecordsParams = Type.Object({
  records: Type.Array(NewRecord, { description: 'the records, in request order' }),
  domainId: Type.Optional(DOMAIN_ID),
  name: Type.Optional(ZONE),
});
export const UpdateRecordsParams = Type.Object({
  id: Type.Optional(RECORD_ID),
  records: Type.Array(RecordChange, { description: 'the changes, in request order' }),
});
export const DeleteRecordsParams = Type.Object({
  id: Type.Optional(RECORD_ID),
  records: Type.Optional(Type.Array(DeleteId, { description: 'the records to delete, by id' })),
  domainId: Type.Optional(DOMAIN_ID),
  name: Type.Optional(ZONE),
  type: Type.Optional(FIELDS.type),
  lookup: Type.Optional(FIELDS.lookup),
  data: Type.Optional(scalar('deleting by match: only records with this value', P.text())),
});
export const ZoneRecordsParam = Type.Optional(Type.Array(ZoneRecord, { description: 'records to create with the zone' }));

/** What a client may send: documented in the OpenAPI document. */
const CreateInput = Type.Object({
  data: Type.Optional(
    Type.Union([...recordForms(NewRecord, '"0", "1" ...'), ...scalars()], {
      description: 'the records (a list, a map keyed "0", "1" ..., or one record object); or, in the flat form, the value of the one record the request itself describes with the fields below',
    }),
  ),
  domainId: Type.Optional(DOMAIN_ID),
  name: Type.Optional(ZONE),
  ...opt({ type: FIELDS.type, lookup: FIELDS.lookup, ttl: FIELDS.ttl, priority: FIELDS.priority, weight: FIELDS.weight, port: FIELDS.port, caaflag: FIELDS.caaflag, caatag: FIELDS.caatag }),
});
const UpdateInput = Type.Object({
  id: Type.Optional(scalar('record id, when the request changes one record (flat form, or one record object in data)', P.recordId())),
  data: Type.Optional(
    Type.Union([...recordForms(RecordChange, 'by record id'), ...scalars()], {
      description: 'the changes (a map keyed by record id, a list of changes carrying id, or one change object); or, in the flat form, the new value of record `id`',
    }),
  ),
  domainId: Type.Optional(DOMAIN_ID),
  ...opt({ type: FIELDS.type, lookup: FIELDS.lookup, ttl: FIELDS.ttl, priority: FIELDS.priority, weight: FIELDS.weight, port: FIELDS.port, caaflag: FIELDS.caaflag, caatag: FIELDS.caatag }),
});
const DeleteInput = Type.Object(
  {
    id: Type.Optional(RECORD_ID),
    data: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.Union([RECORD_ID, DeleteId]), { description: 'a list of record ids (or objects carrying id)' }),
          Type.Object({}, { additionalProperties: DeleteId, description: 'a map keyed by record id' }),
          ...scalars(),
        ],
        { description: 'the records to delete by id (a list, or a map keyed by record id); or, deleting by match (no id), the record value' },
      ),
    ),
    domainId: Type.Optional(DOMAIN_ID),
    name: Type.Optional(ZONE),
    type: Type.Optional(FIELDS.type),
    lookup: Type.Optional(FIELDS.lookup),
  },
  { description: 'by id, or by match: the zone (domainId or name), type, lookup and optionally data' },
);

// ---- the forms -----------------------------------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

interface Entry {
  at: string;
  key: string;
  raw: Record<string, unknown>;
}

/**
 * The records a request carries under `root`: a list or a map of records, or one record object (an
 * object with a record field); else the request itself is the one record (the flat form).
 */
function entriesOf(params: Record<string, unknown>, root: string, problems: Problems): Entry[] {
  const value = pick(params, root);
  let list: [string, unknown][];
  if (Array.isArray(value)) list = value.map((v, i) => [String(i), v]);
  else if (isObject(value)) {
    if (RECORD_KEYS.some((k) => pick(value, k) !== undefined)) return [{ at: `${root}.`, key: '', raw: value }];
    list = Object.entries(value);
  } else {
    return [{ at: '', key: '', raw: params }];
  }
  if (list.length === 0) problems.add(root, P.noRecords());
  const out: Entry[] = [];
  for (const [key, v] of list) {
    if (!isObject(v)) problems.add(`${root}.${key}`, P.recordObject());
    else out.push({ at: `${root}.${key}.`, key, raw: v });
  }
  return out;
}

/** Field names by their lower-case spelling. */
type Names = ReadonlyMap<string, string>;
const names = (list: readonly string[]): Names => new Map(list.map((n) => [n.toLowerCase(), n]));

/**
 * The named fields of a record object (keys in any case), under the API's names; absent ones left
 * out. One pass over the keys (the flat form's record is the whole request). As `pick` (dns-rules.ts)
 * chose before this step: the lower-case spelling when given, else the first spelling in the request.
 */
function fieldsOf(raw: Record<string, unknown>, wanted: Names): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in raw) {
    const value = raw[key];
    if (value === undefined) continue;
    const lower = key.toLowerCase();
    const name = wanted.get(lower);
    if (name !== undefined && (out[name] === undefined || key === lower)) out[name] = value;
  }
  return out;
}

/** Clears every key of `params` that spells one of `names` in any case (undefined, not deleted: see credentials.ts). */
function clear(params: Record<string, unknown>, names: Names): void {
  for (const key in params) if (names.has(key.toLowerCase())) params[key] = undefined;
}

/** Names a place of the canonical `records` as the request did: ['records', '2', 'ttl'] -> at[2] + 'ttl'. */
function namer(shape: RecordShape): (path: string[]) => string | undefined {
  return (path) => {
    if (path[0] !== 'records' || path.length < 2) return undefined;
    const at = shape.at[Number(path[1])];
    if (at === undefined) return undefined;
    // A bare id (dns.record.delete) is named whole; a record object's field after its prefix.
    return at === '' || at.endsWith('.') ? at + path.slice(2).join('.') : at;
  };
}

function keep(params: Record<string, unknown>, entries: Entry[], problems: Problems): (path: string[]) => string | undefined {
  const shape: RecordShape = { at: entries.map((e) => e.at), keys: entries.map((e) => e.key), problems: problems.fields };
  (params as { [SHAPE]?: RecordShape })[SHAPE] = shape;
  return namer(shape);
}

const FIELD_NAMES = names(RECORD_KEYS);
const NEW_RECORD_NAMES = names([...RECORD_KEYS, 'domainId', 'name']);
const CHANGE_NAMES = names([...RECORD_KEYS, 'domainId']);
const DATA = names(['data']);
const RECORDS = names(['records']);

/** dns.record.create: records from data (list, map, one object) or the flat form. */
export const createRecordsInput: Normaliser = {
  input: CreateInput,
  run(params) {
    const problems = new Problems();
    const entries = entriesOf(params, 'data', problems);
    const records = entries.map((e) => fieldsOf(e.raw, NEW_RECORD_NAMES));
    clear(params, entries.length === 1 && entries[0].at === '' ? FIELD_NAMES : DATA);
    params.records = records;
    return keep(params, entries, problems);
  },
};

/** dns.record.update: changes from data (map keyed by id, list, one object) or the flat form; each gets its record id. */
export const updateRecordsInput: Normaliser = {
  input: UpdateInput,
  run(params) {
    const problems = new Problems();
    const entries = entriesOf(params, 'data', problems);
    const single = entries.length === 1 && (entries[0].at === '' || entries[0].at === 'data.');
    const records = entries.map((e) => {
      const record = fieldsOf(e.raw, CHANGE_NAMES);
      // The id: the record's own, else the request's (one record), else its key in a map of records.
      const id = pick(e.raw, 'id') ?? (single ? params.id : /^\d+$/.test(e.key) ? e.key : undefined);
      return id === undefined ? record : { id, ...record };
    });
    clear(params, entries.length === 1 && entries[0].at === '' ? CHANGE_NAMES : DATA);
    params.records = records;
    return keep(params, entries, problems);
  },
};

/** dns.record.delete: ids from `id` or from data (a list or map of ids); without them, a delete by match. */
export const deleteRecordsInput: Normaliser = {
  input: DeleteInput,
  run(params) {
    const problems = new Problems();
    const data = pick(params, 'data');
    let entries: Entry[] = [];
    let ids: unknown[] | undefined;
    if (params.id !== undefined) {
      entries = [{ at: 'id', key: '', raw: {} }];
      ids = [params.id];
    } else if (Array.isArray(data) || isObject(data)) {
      const list: [string, unknown][] = Array.isArray(data) ? data.map((v, i) => [String(i), v]) : Object.entries(data);
      entries = list.map(([key]) => ({ at: `data.${key}`, key, raw: {} }));
      ids = list.map(([key, v]) => (isObject(v) ? (pick(v, 'id') ?? (Array.isArray(data) ? undefined : key)) : v));
      if (list.length === 0) problems.add('data', P.noRecordIds());
    }
    // A list or map in data names records by id, never a value to match.
    if (Array.isArray(data) || isObject(data)) clear(params, DATA);
    else if (data !== undefined) params.data = data;
    params.records = ids?.map((id) => (id === undefined ? {} : { id }));
    return keep(params, entries, problems);
  },
};

/** What dns.domain.create's `records` may be: a list or a map of records (or one record object). */
export const ZoneRecordsInput = Type.Optional(Type.Union(recordForms(ZoneRecord, '"0", "1" ...'), { description: 'records to create with the zone: a list or a map of records' }));

/** dns.domain.create's normalise step (its input schema is the command's own, with ZoneRecordsInput). */
export const zoneRecordsInput = {
  run(params: Record<string, unknown>) {
    const problems = new Problems();
    const given = pick(params, 'records');
    let entries: Entry[] = [];
    if (given !== undefined && given !== null) {
      entries = entriesOf(params, 'records', problems);
      if (entries.some((e) => e.at === '')) problems.add('records', P.recordList());
    }
    const records = entries.map((e) => fieldsOf(e.raw, FIELD_NAMES));
    clear(params, RECORDS);
    params.records = given === undefined || given === null ? undefined : records;
    return keep(params, entries, problems);
  },
};

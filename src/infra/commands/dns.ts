// dns.domain.* and dns.record.*: the customer's hosted zones and their records. Every change bumps
// the zone's SOA serial (by one per change) in the transaction that makes it; after the commit the zone
// is refreshed in the ZoneCatalog the DNS server answers from, before the call returns. Record changes
// that touch one zone go through that zone's write batches (dns-batches.ts): concurrent ones share a
// transaction and a catalog update, each still checked and answered on its own.
import Type from 'typebox';
import { sql, type Selectable, type Transaction } from 'kysely';
import { defineCommand, requirePrincipal, type Call, type Command } from '../command.js';
import { infraErrors, infraProblems as P, problemsFault, type InfraError } from '../errors.js';
import { pagingParams } from '../params.js';
import { unixSeconds } from '../../platform/clock.js';
import { isUniqueViolation, type Queryable } from '../../platform/db/database.js';
import type { DnsDomainRow, DnsRecordRow, InfraTables } from '../tables.js';
import {
  checkHostable,
  checkLookup,
  checkRecord,
  checkZoneName,
  checkZoneRules,
  isZoneFileForm,
  MAX_RECORDS_PER_ZONE,
  MAX_ZONES_PER_CUSTOMER,
  pick,
  Problems,
  RECORD_TYPES,
  serialBase,
  type RecordValues,
  type ZoneEntry,
} from '../dns-rules.js';
import {
  createRecordsInput,
  CreateRecordsParams,
  deleteRecordsInput,
  DeleteRecordsParams,
  DOMAIN_ID,
  DOMAIN_OR_ZONE,
  RECORD_KEYS,
  shapeOf,
  updateRecordsInput,
  UpdateRecordsParams,
  ZONE,
  ZoneRecordsInput,
  zoneRecordsInput,
  ZoneRecordsParam,
  type RecordShape,
} from '../dns-input.js';
import { bumpZone, inTransaction, type ZoneEffect } from '../dns-batches.js';

type Trx = Transaction<InfraTables>;
type DomainRow = Selectable<DnsDomainRow>;
type RecordRow = Selectable<DnsRecordRow>;

/** Lists default to everything (LEGO-J looks its zone up in one unfiltered getall). */
const WINDOW_DEFAULT = 50_000;
const Paging = pagingParams(WINDOW_DEFAULT);
const DomainId = Type.Integer({ minimum: 1, description: 'domain (zone) id' });
const ZoneNameParam = Type.String({ description: 'zone name, such as example.com' });
const Status = Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')], { description: 'ACTIVE zones are served; DISABLED ones are kept but not served' });
/** dns.domain.create's parameters besides its first records. */
const NewZone = {
  name: ZoneNameParam,
  customerId: Type.Optional(Type.Integer({ minimum: 1, description: "must be the caller's customer" })),
  status: Type.Optional(Status),
};

// ---- presentation ----------------------------------------------------------------------------

function presentRecord(r: RecordRow, zone: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: r.id,
    domainid: r.domain_id,
    domainId: r.domain_id,
    domainID: r.domain_id,
    // In requests `name` is the zone; the Python client reads a record's `name` as its domain name.
    name: zone,
    lookup: r.lookup,
    type: r.type,
    data: r.data,
    ttl: r.ttl,
  };
  if (r.type === 'MX' || r.type === 'SRV') Object.assign(out, { priority: r.priority, weight: r.weight, port: r.port });
  if (r.type === 'CAA') Object.assign(out, { caaflag: r.caa_flag, caatag: r.caa_tag });
  out.status = 'ACTIVE';
  out.dateCreated = r.date_created;
  out.dateModified = r.date_modified;
  return out;
}

function presentDomain(d: DomainRow, stdName: string, records: RecordRow[]): Record<string, unknown> {
  return {
    id: d.id,
    name: d.name,
    customerid: d.customer_id,
    customerId: d.customer_id,
    customerID: d.customer_id,
    stdname: stdName,
    status: d.status,
    type: 'MASTER',
    serial: String(d.serial),
    lastmodified: d.date_modified,
    dateCreated: d.date_created,
    dateModified: d.date_modified,
    // Never SOA or anything the clients do not know (the Python client refuses unknown types).
    records: records.filter((r) => (RECORD_TYPES as readonly string[]).includes(r.type)).map((r) => presentRecord(r, d.name)),
  };
}

async function presentDomains(db: Queryable<InfraTables>, domains: DomainRow[]): Promise<Record<string, unknown>[]> {
  if (domains.length === 0) return [];
  const ids = domains.map((d) => d.id);
  const records = await db.selectFrom('dns_records').selectAll().where('domain_id', 'in', ids).orderBy('id').execute();
  const customers = await db
    .selectFrom('customers')
    .select(['id', 'std_name'])
    .where('id', 'in', [...new Set(domains.map((d) => d.customer_id))])
    .execute();
  const std = new Map(customers.map((c) => [c.id, c.std_name]));
  const byDomain = new Map<number, RecordRow[]>();
  for (const r of records) {
    const list = byDomain.get(r.domain_id);
    if (list) list.push(r);
    else byDomain.set(r.domain_id, [r]);
  }
  return domains.map((d) => presentDomain(d, std.get(d.customer_id) ?? '', byDomain.get(d.id) ?? []));
}

// ---- helpers ---------------------------------------------------------------------------------

const fault = (problems: Problems): InfraError => problemsFault(problems.fields);

/** An id as clients send it (a number, or digits in a string); none beyond 2^53, which no row has. */
function positiveId(raw: unknown): number | undefined {
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw > 0) return raw;
  if (typeof raw === 'string' && /^\d+$/.test(raw) && Number(raw) > 0 && Number.isSafeInteger(Number(raw))) return Number(raw);
  return undefined;
}

/**
 * Bumps the serial of a zone of the customer and returns the row. On PostgreSQL the UPDATE also
 * locks the row until commit, so concurrent changes of one zone take turns and each reads the
 * records the previous one committed; SQLite runs one transaction at a time anyway.
 */
async function bumpSerial(trx: Trx, call: Call, domainId: number): Promise<DomainRow> {
  const row = await bumpZone(trx, call.services.clock, domainId, requirePrincipal(call).customerId);
  if (!row) throw infraErrors.domainNotFound();
  return row;
}

/** Locks (and bumps) several zones in id order, so two batches never wait on each other crosswise. */
async function lockZones(trx: Trx, call: Call, ids: Iterable<number>): Promise<Map<number, DomainRow>> {
  const out = new Map<number, DomainRow>();
  for (const id of [...new Set(ids)].sort((a, b) => a - b)) out.set(id, await bumpSerial(trx, call, id));
  return out;
}

async function refreshAll(call: Call, names: Iterable<string>): Promise<void> {
  await Promise.all([...new Set(names)].map((n) => call.services.zoneWriter.refresh(n)));
}

/**
 * Runs a change of one zone's records in that zone's next batch (dns-batches.ts): `work` checks with
 * the zone locked and returns its writes. The zone is in the catalog when this resolves.
 */
function inZoneBatch<T>(call: Call, domainId: number, work: (trx: Trx) => Promise<() => Promise<ZoneEffect<T>>>): Promise<T> {
  return call.services.zoneWriter.submit(domainId, (trx) => work(trx));
}

/** A domain of the caller by id or zone name; another customer's answers like a missing one. */
async function ownDomain(call: Call, ref: { id?: unknown; name?: unknown }, field = 'id'): Promise<DomainRow> {
  const { customerId } = requirePrincipal(call);
  const q = call.services.db.kysely.selectFrom('dns_domains').selectAll().where('customer_id', '=', customerId);
  if (ref.id !== undefined) {
    const id = positiveId(ref.id);
    if (id === undefined) throw infraErrors.invalidParameter({ name: field, problem: P.domainId() });
    const row = await q.where('id', '=', id).executeTakeFirst();
    if (!row) throw infraErrors.domainNotFound();
    // Both given: they must name the same zone, or the request is unclear and nothing is done.
    if (ref.name !== undefined && ref.name !== null && ref.name !== '') {
      const problems = new Problems();
      const name = checkZoneName(ref.name, 'name', problems);
      if (name === undefined) throw fault(problems);
      if (name !== row.name) throw infraErrors.invalidParameter({ name: 'name', problem: P.notThatDomain({ name, id, zone: row.name }) });
    }
    return row;
  }
  if (ref.name !== undefined && ref.name !== null && ref.name !== '') {
    const problems = new Problems();
    const name = checkZoneName(ref.name, 'name', problems);
    if (name === undefined) throw fault(problems);
    const row = await q.where('name', '=', name).executeTakeFirst();
    if (!row) throw infraErrors.domainNotFound();
    return row;
  }
  throw infraErrors.missingDomain({ name: field });
}

// ---- batches of records ----------------------------------------------------------------------

/** One record of a request (dns-input.ts made it canonical): how problems name it, its key in a map, its fields. */
interface Entry {
  field: string;
  key: string;
  raw: Record<string, unknown>;
}

/** The canonical records with where each came from; the shape's own problems are added to `problems`. */
function entriesOf(records: Record<string, unknown>[], shape: RecordShape, problems: Problems): Entry[] {
  for (const [field, problem] of Object.entries(shape.problems)) problems.add(field, problem);
  return records.map((raw, i) => ({ field: shape.at[i], key: shape.keys[i], raw }));
}

/** Which domain each new record goes to: its own domainid or name, else the request's. */
async function domainsFor(call: Call, entries: Entry[], params: Record<string, unknown>, problems: Problems): Promise<(DomainRow | undefined)[]> {
  const { customerId } = requirePrincipal(call);
  const refs = entries.map((e) => {
    for (const [src, prefix] of [
      [e.raw, e.field],
      [params, ''],
    ] as const) {
      const id = pick(src, 'domainid');
      // Given is given: null or "" is a bad domain id, not a missing one.
      if (id !== undefined) {
        const n = positiveId(id);
        if (n === undefined) problems.add(prefix + 'domainId', P.domainId());
        return { id: n };
      }
      const name = pick(src, 'name');
      if (name !== undefined && name !== null && name !== '') return { name: checkZoneName(name, prefix + 'name', problems) };
    }
    problems.add(e.field + 'domainId', P.domainRequired());
    return {};
  });
  if (!problems.empty) return [];
  const ids = refs.flatMap((r) => ('id' in r && r.id !== undefined ? [r.id] : []));
  const names = refs.flatMap((r) => ('name' in r && r.name !== undefined ? [r.name] : []));
  const rows = await call.services.db.kysely
    .selectFrom('dns_domains')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where((eb) => eb.or([eb('id', 'in', ids.length ? ids : [0]), eb('name', 'in', names.length ? names : [''])]))
    .execute();
  return refs.map((r) => {
    const row = 'id' in r ? rows.find((d) => d.id === r.id) : rows.find((d) => d.name === (r as { name?: string }).name);
    if (!row) throw infraErrors.namedDomainNotFound({ domain: 'id' in r ? String(r.id) : String((r as { name?: string }).name) });
    return row;
  });
}

function toRow(v: RecordValues) {
  return { lookup: v.lookup, type: v.type, data: v.data, ttl: v.ttl, priority: v.priority, weight: v.weight, port: v.port, caa_flag: v.caaFlag, caa_tag: v.caaTag };
}

function valuesOf(r: RecordRow): RecordValues {
  return {
    lookup: r.lookup,
    type: r.type as RecordValues['type'],
    data: r.data,
    ttl: Number(r.ttl),
    priority: Number(r.priority),
    weight: Number(r.weight),
    port: Number(r.port),
    caaFlag: Number(r.caa_flag),
    caaTag: r.caa_tag,
  };
}

/**
 * Stored records of zones at some owner names, in the order SQLite's index on (domain_id, lookup,
 * type) gives them. The zone rules relate records of one owner name only, so they need no others.
 */
async function recordsAt(db: Queryable<InfraTables>, domainIds: number[], lookups: Iterable<string>): Promise<RecordRow[]> {
  const names = [...new Set(lookups)];
  if (names.length === 0 || domainIds.length === 0) return [];
  const rows = await db.selectFrom('dns_records').selectAll().where('domain_id', 'in', domainIds).where('lookup', 'in', names).execute();
  return rows.sort(indexOrder);
}

function indexOrder(a: RecordRow, b: RecordRow): number {
  if (a.domain_id !== b.domain_id) return a.domain_id - b.domain_id;
  if (a.lookup !== b.lookup) return a.lookup < b.lookup ? -1 : 1;
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  return a.id - b.id;
}

type NewRecord = { domain: DomainRow; values: RecordValues; field: string };

/** The zone rules for new records, against the stored records at their names; throws the FAULT. */
async function checkInserts(trx: Trx, items: NewRecord[]): Promise<void> {
  const domainIds = [...new Set(items.map((i) => i.domain.id))];
  const existing = await recordsAt(
    trx,
    domainIds,
    items.map((i) => i.values.lookup),
  );
  const problems = new Problems();
  // Changes of one zone run one at a time (dns-batches.ts), so the count cannot move under the check.
  const counts = await trx
    .selectFrom('dns_records')
    .select(['domain_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('domain_id', 'in', domainIds)
    .groupBy('domain_id')
    .execute();
  for (const id of domainIds) {
    const mine = items.filter((i) => i.domain.id === id);
    const stored = Number(counts.find((c) => c.domain_id === id)?.n ?? 0);
    if (stored + mine.length > MAX_RECORDS_PER_ZONE) {
      problems.add(mine[0]!.field, P.tooManyRecords({ max: MAX_RECORDS_PER_ZONE, zone: mine[0]!.domain.name }));
      continue;
    }
    checkZoneRules(
      [
        ...existing.filter((r) => r.domain_id === id).map((r): ZoneEntry => ({ values: valuesOf(r) })),
        ...items.filter((i) => i.domain.id === id).map((i): ZoneEntry => ({ values: i.values, field: i.field })),
      ],
      problems,
    );
  }
  if (!problems.empty) throw fault(problems);
}

/** New records into zones, inside the caller's transaction; the zone rules see the stored records too. */
async function insertRecords(trx: Trx, call: Call, items: NewRecord[]): Promise<RecordRow[]> {
  await checkInserts(trx, items);
  return writeInserts(trx, call, items);
}

async function writeInserts(trx: Trx, call: Call, items: NewRecord[]): Promise<RecordRow[]> {
  const now = unixSeconds(call.services.clock);
  const out: RecordRow[] = [];
  for (const i of items) {
    out.push(
      await trx
        .insertInto('dns_records')
        .values({ domain_id: i.domain.id, ...toRow(i.values), date_created: now, date_modified: now })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
  }
  return out;
}

/** Records of the caller by id, with their zone names; a missing or foreign id is not found. */
async function ownRecords(db: Queryable<InfraTables>, customerId: number, ids: number[]): Promise<(RecordRow & { zone: string })[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('dns_records as r')
    .innerJoin('dns_domains as d', 'd.id', 'r.domain_id')
    .selectAll('r')
    .select('d.name as zone')
    .where('d.customer_id', '=', customerId)
    .where('r.id', 'in', ids)
    .execute();
  for (const id of ids) if (!rows.some((r) => r.id === id)) throw infraErrors.recordIdNotFound({ id });
  return rows;
}

function sameData(type: string, stored: string, given: string): boolean {
  if (stored === given) return true;
  if (type === 'TXT' || type === 'CAA') return false;
  // Addresses and host names: case and a trailing dot do not matter.
  return (
    stored.toLowerCase() ===
    given
      .trim()
      .toLowerCase()
      .replace(/(.)\.$/, '$1')
  );
}

// ---- the commands ----------------------------------------------------------------------------

export const dnsCommands: Command[] = [
  defineCommand({
    cmd: 'dns.domain.getall',
    summary: "List the customer's DNS zones with their records",
    rest: { method: 'GET', path: '/dns/domain' },
    params: Type.Object({
      ...Paging,
      name: Type.Optional(Type.String({ description: 'zones whose name contains this, or that contain this name (a fully qualified name finds its zone)' })),
      exactName: Type.Optional(Type.String({ description: 'only the zone with exactly this name' })),
      status: Type.Optional(Status),
    }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      let q = call.services.db.kysely.selectFrom('dns_domains').where('customer_id', '=', customerId);
      if (p.name !== undefined && p.name.trim() !== '') {
        const wanted = p.name.trim().toLowerCase().replace(/\.$/, '');
        // The zone itself and every zone above the name: acme.sh sends the record's full name.
        const labels = wanted.split('.');
        const suffixes = labels.map((_, i) => labels.slice(i).join('.'));
        const like = '%' + wanted.replace(/[\\%_]/g, '\\$&') + '%';
        q = q.where((eb) => eb.or([eb('name', 'in', suffixes), sql<boolean>`name like ${like} escape '\\'`]));
      }
      if (p.exactName !== undefined) q = q.where('name', '=', p.exactName.trim().toLowerCase().replace(/\.$/, ''));
      if (p.status !== undefined) q = q.where('status', '=', p.status);
      const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await q
        .selectAll()
        .orderBy('id')
        .limit(p.resWindow ?? WINDOW_DEFAULT)
        .offset(p.resStart ?? 0)
        .execute();
      const list = await presentDomains(call.services.db.kysely, rows);
      // LEGO-J decodes `domains` as a map keyed by id; the Python client and DOCS read `data` and `matches`.
      const domains = Object.fromEntries(list.map((d) => [String(d.id), d]));
      return { message: 'Domain(s) Retrieved Successfully', data: list, matches: Number(total.n), top: { domains } };
    },
  }),
  defineCommand({
    cmd: 'dns.domain.get',
    summary: 'One DNS zone of the customer, with its records',
    rest: { method: 'GET', path: '/dns/domain/{id}' },
    params: Type.Object({ id: Type.Optional(DomainId), name: Type.Optional(ZoneNameParam) }),
    async handler(call, p) {
      const row = await ownDomain(call, p);
      const [domain] = await presentDomains(call.services.db.kysely, [row]);
      // LEGO-J reads the domain's fields at the top level of a command-style answer.
      return { message: 'Domain Retrieved Successfully', data: domain, top: { ...domain, domain } };
    },
  }),
  defineCommand({
    cmd: 'dns.domain.create',
    summary: 'Host a DNS zone; optionally with its first records',
    rest: { method: 'POST', path: '/dns/domain' },
    params: Type.Object({ ...NewZone, records: ZoneRecordsParam }),
    normalise: { input: Type.Object({ ...NewZone, records: ZoneRecordsInput }), run: zoneRecordsInput.run },
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      if (p.customerId !== undefined && p.customerId !== customerId) throw infraErrors.customerNotFound();
      const problems = new Problems();
      const name = checkZoneName(p.name, 'name', problems);
      if (name !== undefined) checkHostable(name, call.services.nameserverDomain, 'name', problems);
      if (name === undefined || !problems.empty) throw fault(problems);
      const entries = entriesOf(p.records ?? [], shapeOf(p), problems);
      const values = entries.map((e) => checkRecord(e.raw, name, e.field, problems));
      if (!problems.empty) throw fault(problems);
      const db = call.services.db;
      const now = unixSeconds(call.services.clock);
      let row: DomainRow;
      try {
        row = await inTransaction(db, async (trx) => {
          const taken = await trx.selectFrom('dns_domains').select(['id', 'customer_id']).where('name', '=', name).executeTakeFirst();
          if (taken) throw infraErrors.invalidParameter({ name: 'name', problem: taken.customer_id === customerId ? P.hostedHere({ name, id: taken.id }) : P.hosted({ name }) });
          // A zone inside or above another customer's zone would take over part of its names.
          const labels = name.split('.');
          const above = labels.slice(1).map((_, i) => labels.slice(i + 1).join('.'));
          const clash = await trx
            .selectFrom('dns_domains')
            .select('name')
            .where('customer_id', '!=', customerId)
            .where((eb) => eb.or([eb('name', 'in', above.length ? above : ['']), eb('name', 'like', '%.' + name)]))
            .executeTakeFirst();
          if (clash) throw infraErrors.invalidParameter({ name: 'name', problem: P.zoneClash({ name }) });
          const owned = await trx
            .selectFrom('dns_domains')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('customer_id', '=', customerId)
            .executeTakeFirstOrThrow();
          if (Number(owned.n) >= MAX_ZONES_PER_CUSTOMER) throw infraErrors.invalidParameter({ name: 'name', problem: P.tooManyZones({ max: MAX_ZONES_PER_CUSTOMER }) });
          const floor = await trx.selectFrom('dns_serial_floors').select('serial').where('name', '=', name).executeTakeFirst();
          const serial = Math.max(serialBase(call.services.clock.now()), floor ? Number(floor.serial) + 1 : 0);
          const created = await trx
            .insertInto('dns_domains')
            .values({ customer_id: customerId, name, serial, status: p.status ?? 'ACTIVE', date_created: now, date_modified: now })
            .returningAll()
            .executeTakeFirstOrThrow();
          if (entries.length) {
            await insertRecords(
              trx,
              call,
              entries.map((e, i) => ({ domain: created, values: values[i]!, field: e.field })),
            );
          }
          return created;
        });
      } catch (err) {
        // Two creates of one name racing: the loser meets the UNIQUE constraint.
        if (isUniqueViolation(err)) throw infraErrors.invalidParameter({ name: 'name', problem: P.hosted({ name }) });
        throw err;
      }
      await refreshAll(call, [name]);
      const [domain] = await presentDomains(db.kysely, [row]);
      return { message: 'Domain Created Successfully', data: domain, top: { ...domain, domain } };
    },
  }),
  defineCommand({
    cmd: 'dns.domain.update',
    summary: 'Change a zone: status ACTIVE (served) or DISABLED (kept, not served); always bumps the serial',
    rest: { method: 'PUT', path: '/dns/domain/{id}' },
    params: Type.Object({ id: Type.Optional(DomainId), name: Type.Optional(ZoneNameParam), status: Type.Optional(Status) }),
    async handler(call, p) {
      const found = await ownDomain(call, p);
      const row = await inTransaction(call.services.db, async (trx) => {
        await bumpSerial(trx, call, found.id);
        if (p.status === undefined) return trx.selectFrom('dns_domains').selectAll().where('id', '=', found.id).executeTakeFirstOrThrow();
        return trx.updateTable('dns_domains').set({ status: p.status }).where('id', '=', found.id).returningAll().executeTakeFirstOrThrow();
      });
      await refreshAll(call, [row.name]);
      const [domain] = await presentDomains(call.services.db.kysely, [row]);
      return { message: 'Domain Updated Successfully', data: domain, top: { ...domain, domain } };
    },
  }),
  defineCommand({
    cmd: 'dns.domain.delete',
    summary: 'Stop hosting a zone and delete its records',
    rest: { method: 'DELETE', path: '/dns/domain/{id}' },
    params: Type.Object({ id: Type.Optional(DomainId), name: Type.Optional(ZoneNameParam) }),
    async handler(call, p) {
      const found = await ownDomain(call, p);
      await inTransaction(call.services.db, async (trx) => {
        // Locks the zone (changes in flight finish first) and gives the serial the next zone of this name must exceed.
        const last = await bumpSerial(trx, call, found.id);
        await trx.deleteFrom('dns_records').where('domain_id', '=', found.id).execute();
        await trx.deleteFrom('dns_domains').where('id', '=', found.id).execute();
        await trx
          .insertInto('dns_serial_floors')
          .values({ name: found.name, serial: last.serial })
          .onConflict((oc) => oc.column('name').doUpdateSet({ serial: last.serial }))
          .execute();
      });
      await refreshAll(call, [found.name]);
      return { message: 'Domain Deleted Successfully', data: { id: found.id, name: found.name } };
    },
  }),
  defineCommand({
    cmd: 'dns.record.getall',
    summary: "List the customer's DNS records, by zone, lookup and type",
    rest: { method: 'GET', path: '/dns/records' },
    params: Type.Object({
      ...Paging,
      domainId: Type.Optional(DOMAIN_ID),
      name: Type.Optional(ZONE),
      domain: Type.Optional(DOMAIN_OR_ZONE),
      lookup: Type.Optional(Type.String({ description: 'owner name relative to the zone ("" or "@" for the apex)' })),
      type: Type.Optional(Type.String({ description: 'record type' })),
    }),
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      const params = p as Record<string, unknown>;
      let q = call.services.db.kysely.selectFrom('dns_records as r').innerJoin('dns_domains as d', 'd.id', 'r.domain_id').where('d.customer_id', '=', customerId);
      let zone: DomainRow | undefined;
      const given = (v: unknown) => v !== undefined && v !== null && v !== '';
      const idRef = pick(params, 'domainid');
      if (idRef !== undefined) zone = await ownDomain(call, { id: idRef }, 'domainId');
      else if (given(p.domain)) zone = await ownDomain(call, positiveId(p.domain) !== undefined ? { id: p.domain } : { name: p.domain }, 'domain');
      else if (given(p.name)) zone = await ownDomain(call, { name: p.name }, 'name');
      if (zone) q = q.where('r.domain_id', '=', zone.id);
      if (p.lookup !== undefined) {
        let lookup = p.lookup.trim().toLowerCase();
        if (zone) {
          const problems = new Problems();
          const relative = checkLookup(p.lookup, zone.name, 'lookup', problems);
          if (relative === undefined) throw fault(problems);
          lookup = relative;
        } else if (lookup === '@') lookup = '';
        q = q.where('r.lookup', '=', lookup);
      }
      if (p.type !== undefined && p.type !== '') q = q.where('r.type', '=', p.type.trim().toUpperCase());
      const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const rows = await q
        .selectAll('r')
        .select('d.name as zone')
        .orderBy('r.id')
        .limit(p.resWindow ?? WINDOW_DEFAULT)
        .offset(p.resStart ?? 0)
        .execute();
      const records = rows.map((r) => presentRecord(r, r.zone));
      return { message: 'Record(s) Retrieved Successfully', data: records, matches: Number(total.n), top: { records } };
    },
  }),
  defineCommand({
    cmd: 'dns.record.get',
    summary: 'One DNS record of the customer',
    rest: { method: 'GET', path: '/dns/records/{id}' },
    params: Type.Object({ id: Type.Integer({ minimum: 1, description: 'record id' }) }),
    async handler(call, p) {
      const [row] = await ownRecords(call.services.db.kysely, requirePrincipal(call).customerId, [p.id]);
      const record = presentRecord(row, row.zone);
      return { message: 'Record Retrieved Successfully', data: record, top: { record } };
    },
  }),
  defineCommand({
    cmd: 'dns.record.create',
    summary: 'Add records to zones: data is a list or map of records, or the request is one record (data = its value)',
    rest: { method: 'POST', path: '/dns/records' },
    params: CreateRecordsParams,
    normalise: createRecordsInput,
    async handler(call, p) {
      const params = p as Record<string, unknown>;
      const problems = new Problems();
      const entries = entriesOf(p.records, shapeOf(p), problems);
      const domains = problems.empty ? await domainsFor(call, entries, params, problems) : [];
      if (!problems.empty) throw fault(problems);
      const items = entries.map((e, i) => ({ domain: domains[i]!, values: checkRecord(e.raw, domains[i]!.name, e.field, problems)!, field: e.field }));
      if (!problems.empty) throw fault(problems);
      let rows: RecordRow[];
      if (new Set(items.map((i) => i.domain.id)).size === 1) {
        rows = await inZoneBatch(call, items[0].domain.id, async (trx) => {
          await checkInserts(trx, items);
          return async () => {
            const out = await writeInserts(trx, call, items);
            return { value: out, upserts: out };
          };
        });
      } else {
        rows = await inTransaction(call.services.db, async (trx) => {
          const locked = await lockZones(
            trx,
            call,
            items.map((i) => i.domain.id),
          );
          return insertRecords(
            trx,
            call,
            items.map((i) => ({ ...i, domain: locked.get(i.domain.id)! })),
          );
        });
        await refreshAll(
          call,
          items.map((i) => i.domain.name),
        );
      }
      const name = new Map(items.map((i) => [i.domain.id, i.domain.name]));
      const records = rows.map((r) => presentRecord(r, name.get(r.domain_id)!));
      // LEGO-J and the Python client read the new record's id from data[0].
      return { message: 'Record(s) Created Successfully', data: records, top: { records } };
    },
  }),
  defineCommand({
    cmd: 'dns.record.update',
    summary: 'Change records: data is a map keyed by record id (or a list of records with id), or id plus the fields to change',
    rest: { method: 'PUT', path: '/dns/records/{id}' },
    params: UpdateRecordsParams,
    normalise: updateRecordsInput,
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      const problems = new Problems();
      const entries = entriesOf(p.records, shapeOf(p), problems);
      const ids = entries.map((e) => {
        // The normalise step gave each change its record id: its own, the request's, or its key in the map.
        const raw = e.raw.id;
        const id = positiveId(raw);
        if (id === undefined) problems.add(e.field + 'id', raw === undefined ? P.recordIdRequired() : P.recordId());
        return id ?? 0;
      });
      if (new Set(ids).size !== ids.length) problems.add('data', P.recordTwice());
      if (!problems.empty) throw fault(problems);
      const before = await ownRecords(call.services.db.kysely, customerId, ids);
      const byId = new Map(before.map((r) => [r.id, r]));
      // Fields not given keep their values; the merged record is checked as a whole.
      const merged = entries.map((e, i) => {
        const old = byId.get(ids[i])!;
        const domainRef = pick(e.raw, 'domainid');
        if (domainRef !== undefined) {
          const domainId = positiveId(domainRef);
          if (domainId === undefined) problems.add(e.field + 'domainId', P.domainId());
          else if (domainId !== old.domain_id) problems.add(e.field + 'domainId', P.recordMoves());
        }
        const raw: Record<string, unknown> = {
          lookup: old.lookup,
          type: old.type,
          data: old.data,
          ttl: old.ttl,
          priority: old.priority,
          weight: old.weight,
          port: old.port,
          caaflag: old.caa_flag,
          caatag: old.caa_tag,
        };
        const newType = pick(e.raw, 'type') ?? old.type;
        const newData = pick(e.raw, 'data');
        // A zone-file style value ("10 mail.example.com") brings its own priority, weight, port or CAA tag.
        if (isZoneFileForm(newType, newData)) for (const k of ['priority', 'weight', 'port', 'caaflag', 'caatag']) delete raw[k];
        for (const k of RECORD_KEYS) {
          const v = pick(e.raw, k);
          if (v !== undefined) raw[k] = v;
        }
        return checkRecord(raw, old.zone, e.field, problems);
      });
      if (!problems.empty) throw fault(problems);
      // With the zones locked: read again (a record deleted meanwhile is not found), check the zone
      // rules at the names the records get, and return the writes.
      const zoneIds = [...new Set(before.map((r) => r.domain_id))];
      const lookups = merged.map((v) => v!.lookup);
      const change = async (trx: Trx) => {
        let current: RecordRow[];
        let near: RecordRow[];
        if (zoneIds.length === 1) {
          // One zone, the caller's (records never move between zones): one read finds the records
          // still there and the records at the names they get.
          const found = await trx
            .selectFrom('dns_records')
            .selectAll()
            .where('domain_id', '=', zoneIds[0])
            .where((eb) => eb.or([eb('id', 'in', ids), eb('lookup', 'in', lookups)]))
            .execute();
          const byId = new Map(found.map((r) => [r.id, r]));
          current = ids.map((id) => {
            const row = byId.get(id);
            if (!row) throw infraErrors.recordIdNotFound({ id });
            return row;
          });
          const names = new Set(lookups);
          near = found.filter((r) => names.has(r.lookup));
        } else {
          current = await ownRecords(trx, customerId, ids);
          near = await recordsAt(trx, [...new Set(current.map((r) => r.domain_id))], lookups);
        }
        const domainIds = [...new Set(current.map((r) => r.domain_id))];
        // The changed records are judged at their new names, wherever they are stored now.
        const stored = new Map<number, RecordRow>(near.map((r) => [r.id, r]));
        for (const r of current) stored.set(r.id, r);
        const all = [...stored.values()].sort(indexOrder);
        const changed = new Map(ids.map((id, i) => [id, { values: merged[i]!, field: entries[i].field }]));
        const ruled = new Problems();
        for (const d of domainIds) {
          checkZoneRules(
            all.filter((r) => r.domain_id === d).map((r): ZoneEntry => changed.get(r.id) ?? { values: valuesOf(r) }),
            ruled,
          );
        }
        if (!ruled.empty) throw fault(ruled);
        return async (): Promise<ZoneEffect<RecordRow[]>> => {
          const now = unixSeconds(call.services.clock);
          const out: RecordRow[] = [];
          for (const [i, id] of ids.entries()) {
            out.push(
              await trx
                .updateTable('dns_records')
                .set({ ...toRow(merged[i]!), date_modified: now })
                .where('id', '=', id)
                .returningAll()
                .executeTakeFirstOrThrow(),
            );
          }
          return { value: out, upserts: out };
        };
      };
      let rows: RecordRow[];
      if (zoneIds.length === 1) rows = await inZoneBatch(call, zoneIds[0], change);
      else {
        rows = await inTransaction(call.services.db, async (trx) => {
          await lockZones(trx, call, zoneIds);
          return (await (await change(trx))()).value;
        });
        await refreshAll(
          call,
          before.map((r) => r.zone),
        );
      }
      const zoneOf = new Map(before.map((r) => [r.domain_id, r.zone]));
      const records = rows.map((r) => presentRecord(r, zoneOf.get(r.domain_id)!));
      return { message: 'Record(s) Updated Successfully', data: records, top: { records } };
    },
  }),
  defineCommand({
    cmd: 'dns.record.delete',
    summary: 'Delete records by id (or a list or map of ids), or by match: domain (domainId or name), type, lookup and optionally data',
    rest: { method: 'DELETE', path: '/dns/records/{id}' },
    params: DeleteRecordsParams,
    normalise: deleteRecordsInput,
    async handler(call, p) {
      const { customerId } = requirePrincipal(call);
      const params = p as Record<string, unknown>;
      const problems = new Problems();
      let ids: number[] | undefined;
      // Records by id: `id`, or a list or map of ids in data (the normalise step made them `records`).
      // An id that is given but null or "" is refused: read as absent, it would turn a delete by id
      // into a delete by match.
      if (p.records) {
        const shape = shapeOf(p);
        for (const [field, problem] of Object.entries(shape.problems)) problems.add(field, problem);
        ids = p.records.map((r, i) => {
          const id = positiveId(r.id);
          if (id === undefined) problems.add(shape.at[i], P.recordId());
          return id ?? 0;
        });
        if (!problems.empty) throw fault(problems);
      }
      let deleted: (RecordRow & { zone: string })[];
      if (ids) {
        const found = await ownRecords(call.services.db.kysely, customerId, [...new Set(ids)]);
        // A domain given with the ids must be valid and hold them all: never ignored.
        const domainRef = pick(params, 'domainid');
        if (domainRef !== undefined || p.name !== undefined) {
          const domain = await ownDomain(call, { id: domainRef, name: p.name }, 'domainId');
          const elsewhere = found.find((r) => r.domain_id !== domain.id);
          if (elsewhere) throw infraErrors.recordNotInDomain({ id: elsewhere.id, domainId: domain.id });
        }
        const change = async (trx: Trx) => {
          const current = await ownRecords(
            trx,
            customerId,
            found.map((r) => r.id),
          );
          return async (): Promise<ZoneEffect<typeof current>> => {
            await trx
              .deleteFrom('dns_records')
              .where(
                'id',
                'in',
                current.map((r) => r.id),
              )
              .execute();
            return { value: current, deletes: current.map((r) => r.id) };
          };
        };
        const zoneIds = [...new Set(found.map((r) => r.domain_id))];
        if (zoneIds.length === 1) deleted = await inZoneBatch(call, zoneIds[0], change);
        else {
          deleted = await inTransaction(call.services.db, async (trx) => {
            await lockZones(trx, call, zoneIds);
            return (await (await change(trx))()).value;
          });
          await refreshAll(
            call,
            deleted.map((r) => r.zone),
          );
        }
      } else {
        // acme.sh's form: no id; the zone, type, lookup and value say which record.
        const [domain] = await domainsFor(call, [{ field: '', key: '', raw: {} }], params, problems);
        if (!problems.empty) throw fault(problems);
        const type = typeof p.type === 'string' ? p.type.trim().toUpperCase() : '';
        if (!type) problems.add('type', P.matchTypeRequired());
        const lookup = checkLookup(p.lookup, domain!.name, 'lookup', problems);
        if (!problems.empty || lookup === undefined) throw fault(problems);
        const value = p.data === undefined || p.data === null ? undefined : String(p.data);
        deleted = await inZoneBatch(call, domain!.id, async (trx) => {
          const candidates = await trx.selectFrom('dns_records').selectAll().where('domain_id', '=', domain!.id).where('lookup', '=', lookup).where('type', '=', type).execute();
          const matched = candidates.filter((r) => value === undefined || sameData(type, r.data, value));
          if (matched.length === 0) throw infraErrors.recordNotFound();
          return async () => {
            await trx
              .deleteFrom('dns_records')
              .where(
                'id',
                'in',
                matched.map((r) => r.id),
              )
              .execute();
            return { value: matched.map((r) => ({ ...r, zone: domain!.name })), deletes: matched.map((r) => r.id) };
          };
        });
      }
      return { message: 'Record deleted successfully', data: deleted.map((r) => presentRecord(r, r.zone)) };
    },
  }),
];

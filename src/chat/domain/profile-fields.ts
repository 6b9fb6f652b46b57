// Custom profile fields (Zulip's CustomProfileField and CustomProfileFieldValue): the fields an
// organization defines, in their order, and each user's values. Definitions and values are checked
// as Zulip 10.2 checks them (zerver/views/custom_profile_fields.py, zerver/lib/users.py,
// zerver/lib/validator.py, zerver/lib/external_accounts.py), in the same order and words, so a
// refused request answers what Zulip would answer. Text fields keep a Markdown rendering of their
// value (rendered_value), made when the value is set.
import type { Selectable } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, CustomProfileFieldRow } from '../tables.js';
import {
  choiceKeyBlank,
  externalAccountInvalidType,
  externalAccountNeedsPattern,
  externalAccountPatternUsername,
  invalidChoice,
  profileFieldDuplicateChoices,
  profileFieldInvalidType,
  profileFieldLabelBlank,
  profileFieldNoChoices,
  profileFieldNotEditable,
  profileFieldNotFound,
  profileFieldSummaryLimit,
  profileFieldSummaryUnsupported,
  profileInvalidUserIds,
  profileUserDeactivated,
  profileUserIsBot,
  valueBlank,
  valueKeyMissing,
  valueNotDate,
  valueNotDict,
  valueNotInteger,
  valueNotList,
  valueNotString,
  valueNotUrl,
  valueTooLong,
  valueUnexpectedKeys,
} from '../errors.js';
import { renderMarkdown } from './markdown.js';
import { isAdmin } from './roles.js';
import type { Notice } from '../events/hub.js';

export type ProfileField = Selectable<CustomProfileFieldRow>;

export const FIELD_TYPE = { SHORT_TEXT: 1, LONG_TEXT: 2, SELECT: 3, DATE: 4, URL: 5, USER: 6, EXTERNAL_ACCOUNT: 7, PRONOUNS: 8 } as const;

/** Zulip's display names of the types; register's custom_profile_field_types lists them sorted by name, as Zulip does. */
const TYPE_NAMES: Record<keyof typeof FIELD_TYPE, string> = {
  SHORT_TEXT: 'Text (short)',
  LONG_TEXT: 'Text (long)',
  SELECT: 'List of options',
  DATE: 'Date',
  URL: 'Link',
  USER: 'Users',
  EXTERNAL_ACCOUNT: 'External account',
  PRONOUNS: 'Pronouns',
};

export function customProfileFieldTypes(): Record<string, { id: number; name: string }> {
  const keys = (Object.keys(FIELD_TYPE) as (keyof typeof FIELD_TYPE)[]).sort((a, b) => (TYPE_NAMES[a] < TYPE_NAMES[b] ? -1 : 1));
  return Object.fromEntries(keys.map((k) => [k, { id: FIELD_TYPE[k], name: TYPE_NAMES[k] }]));
}

export const NAME_MAX_LENGTH = 40;
export const HINT_MAX_LENGTH = 80;
/** At most this many fields are shown in profile summaries (Zulip's MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS). */
export const MAX_SUMMARY_FIELDS = 2;
const SHORT_TEXT_MAX = 50;
const LONG_TEXT_MAX = 500;

/**
 * Zulip 10.2's default external accounts: an administrator picks one by subtype and the field takes
 * its name and hint from here (register's realm_default_external_accounts shows them).
 */
export const DEFAULT_EXTERNAL_ACCOUNTS: Record<string, { text: string; url_pattern: string; name: string; hint: string }> = {
  twitter: { text: 'Twitter', url_pattern: 'https://twitter.com/%(username)s', name: 'Twitter username', hint: '' },
  github: { text: 'GitHub', url_pattern: 'https://github.com/%(username)s', name: 'GitHub username', hint: '' },
};

const chars = (s: string) => [...s].length;

export function fieldObject(f: ProfileField): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: Number(f.id),
    name: f.name,
    type: f.field_type,
    hint: f.hint,
    field_data: f.field_data,
    order: Number(f.sort_order),
    required: f.required === 1,
    editable_by_user: f.editable_by_user === 1,
  };
  // Zulip sends the key only when it is true.
  if (f.display_in_profile_summary === 1) out.display_in_profile_summary = true;
  return out;
}

export async function realmFields(db: Queryable<ChatTables>, realmId: number): Promise<ProfileField[]> {
  return db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).orderBy('sort_order').orderBy('id').execute();
}

export async function fieldObjects(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, unknown>[]> {
  return (await realmFields(db, realmId)).map(fieldObject);
}

/** The realm's fields by id, for a request that names many (each looked up here, not in the store). */
export async function fieldsById(db: Queryable<ChatTables>, realmId: number): Promise<Map<number, ProfileField>> {
  return new Map((await realmFields(db, realmId)).map((f) => [Number(f.id), f]));
}

export function fieldIn(fields: ReadonlyMap<number, ProfileField>, id: number): ProfileField {
  const f = fields.get(id);
  if (!f) throw profileFieldNotFound({ id });
  return f;
}

export async function fieldById(db: Queryable<ChatTables>, realmId: number, id: number): Promise<ProfileField> {
  const f = await db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
  if (!f) throw profileFieldNotFound({ id });
  return f;
}

/** Field data as sent: a dict of strings or of dicts of strings (Zulip's check_profile_field_data). */
export type FieldData = Record<string, string | Record<string, string>>;

function isDict(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Zulip's check_dict_only: required keys first, then optional ones, then no other key. */
function checkDictOnly(name: string, value: unknown, required: [string, (n: string, v: unknown) => void][], optional: [string, (n: string, v: unknown) => void][] = []): void {
  if (!isDict(value)) throw valueNotDict({ name });
  for (const [key, check] of required) {
    if (!(key in value)) throw valueKeyMissing({ key, name });
    check(`${name}["${key}"]`, value[key]);
  }
  for (const [key, check] of optional) if (key in value) check(`${name}["${key}"]`, value[key]);
  const known = new Set([...required, ...optional].map(([k]) => k));
  const extra = Object.keys(value).filter((k) => !known.has(k));
  if (extra.length) throw valueUnexpectedKeys({ keys: extra.join(', ') });
}

function requiredString(name: string, v: unknown): void {
  if (typeof v !== 'string') throw valueNotString({ name });
  if (!v.trim()) throw valueBlank({ name });
}

/** Django's URLValidator, closely enough: http(s)/ftp(s), a host with a dot (or localhost, or an address), no spaces. */
function looksLikeUrl(s: string): boolean {
  if (/\s/.test(s) || s.length > 2048) return false;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return false;
  }
  if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol)) return false;
  const host = url.hostname;
  return (
    host === 'localhost' ||
    /^\[[0-9a-f:.]+\]$/i.test(host) ||
    /^(?:[a-z0-9\u00a1-\uffff](?:[a-z0-9\u00a1-\uffff-]{0,61}[a-z0-9\u00a1-\uffff])?\.)+(?:[a-z\u00a1-\uffff-]{2,63}|xn--[a-z0-9]{1,59})\.?$/i.test(host) ||
    /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host)
  );
}

function checkUrl(name: string, v: unknown): string {
  if (typeof v !== 'string') throw valueNotString({ name });
  if (!looksLikeUrl(v)) throw valueNotUrl({ name });
  return v;
}

function checkUrlPattern(name: string, v: unknown): void {
  if (typeof v !== 'string') throw valueNotString({ name });
  if (v.split('%(username)s').length !== 2) throw externalAccountPatternUsername();
  checkUrl(name, v.replace('%(username)s', 'username'));
}

function checkSelectData(data: FieldData): void {
  if (Object.keys(data).length < 1) throw profileFieldNoChoices();
  const texts = new Set<string>();
  for (const [key, value] of Object.entries(data)) {
    if (!key.trim()) throw choiceKeyBlank();
    checkDictOnly('field_data', value, [
      ['text', requiredString],
      ['order', requiredString],
    ]);
    texts.add((value as Record<string, string>).text);
  }
  if (texts.size !== Object.keys(data).length) throw profileFieldDuplicateChoices();
}

function checkExternalAccountData(data: FieldData): void {
  checkDictOnly('field_data', data, [['subtype', requiredString]], [['url_pattern', checkUrlPattern]]);
  const subtype = data.subtype as string;
  if (!(subtype in DEFAULT_EXTERNAL_ACCOUNTS)) {
    if (subtype !== 'custom') throw externalAccountInvalidType();
    if (!('url_pattern' in data)) throw externalAccountNeedsPattern();
  }
}

/** An external account field of one of the default kinds: it takes its name and hint from DEFAULT_EXTERNAL_ACCOUNTS. */
export function isDefaultExternal(type: number, data: FieldData): boolean {
  return type === FIELD_TYPE.EXTERNAL_ACCOUNT && data.subtype !== 'custom';
}

export interface FieldDefinition {
  name: string;
  hint: string;
  type: number;
  data: FieldData;
  summary: boolean;
}

/** Zulip's validate_custom_profile_field, in its order: the field data, the label and hint, the type, the summary. */
export function checkFieldDefinition(d: FieldDefinition): void {
  if (d.type === FIELD_TYPE.SELECT) checkSelectData(d.data);
  else if (d.type === FIELD_TYPE.EXTERNAL_ACCOUNT) checkExternalAccountData(d.data);
  if (!isDefaultExternal(d.type, d.data)) {
    if (!d.name.trim()) throw profileFieldLabelBlank();
    if (chars(d.hint) > HINT_MAX_LENGTH) throw valueTooLong({ name: 'hint', limit: HINT_MAX_LENGTH });
    if (chars(d.name) > NAME_MAX_LENGTH) throw valueTooLong({ name: 'name', limit: NAME_MAX_LENGTH });
  }
  if (!(Object.values(FIELD_TYPE) as number[]).includes(d.type)) throw profileFieldInvalidType();
  if (d.summary && (d.type === FIELD_TYPE.LONG_TEXT || d.type === FIELD_TYPE.USER)) throw profileFieldSummaryUnsupported();
}

/** Refuses a third field shown in profile summaries (`except`: the field being changed). */
export async function checkSummaryRoom(db: Queryable<ChatTables>, realmId: number, except?: number): Promise<void> {
  let q = db
    .selectFrom('custom_profile_fields')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('realm_id', '=', realmId)
    .where('display_in_profile_summary', '=', 1);
  if (except !== undefined) q = q.where('id', '<>', except);
  const { n } = await q.executeTakeFirstOrThrow();
  if (Number(n) >= MAX_SUMMARY_FIELDS) throw profileFieldSummaryLimit({ limit: MAX_SUMMARY_FIELDS });
}

/** The field data a new or changed field stores: the JSON text for list and external account fields, '' for the others. */
export function storedFieldData(type: number, data: FieldData): string {
  return type === FIELD_TYPE.SELECT || type === FIELD_TYPE.EXTERNAL_ACCOUNT ? JSON.stringify(data) : '';
}

export function parseFieldData(text: string): FieldData {
  return text === '' ? {} : (JSON.parse(text) as FieldData);
}

/** Text fields carry a Markdown rendering of their value. */
export function isRenderable(type: number): boolean {
  return type === FIELD_TYPE.SHORT_TEXT || type === FIELD_TYPE.LONG_TEXT;
}

function isIsoDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return d <= days;
}

/**
 * A user's new value for a field, checked by the field's type (Zulip's validate_user_custom_profile_field,
 * the field's name naming the value in errors); answers the text stored.
 */
export async function checkProfileValue(db: Queryable<ChatTables>, realmId: number, field: ProfileField, value: unknown, users: UserFacts = new Map()): Promise<string> {
  const name = field.name;
  const text = (limit: number) => {
    if (typeof value !== 'string') throw valueNotString({ name });
    if (chars(value) > limit) throw valueTooLong({ name, limit });
    return value;
  };
  switch (field.field_type) {
    case FIELD_TYPE.SHORT_TEXT:
    case FIELD_TYPE.EXTERNAL_ACCOUNT:
    case FIELD_TYPE.PRONOUNS:
      return text(SHORT_TEXT_MAX);
    case FIELD_TYPE.LONG_TEXT:
      return text(LONG_TEXT_MAX);
    case FIELD_TYPE.DATE:
      if (typeof value !== 'string') throw valueNotString({ name });
      if (!isIsoDate(value)) throw valueNotDate({ name });
      return value;
    case FIELD_TYPE.URL:
      return checkUrl(name, value);
    case FIELD_TYPE.SELECT: {
      if (typeof value !== 'string') throw valueNotString({ name });
      if (!Object.hasOwn(parseFieldData(field.field_data), value)) throw invalidChoice({ value, field: name });
      return value;
    }
    case FIELD_TYPE.USER:
      return JSON.stringify(await checkUserIds(db, realmId, value, users));
    default:
      throw profileFieldInvalidType();
  }
}

/** Users a request's values name, looked up once per request (null: not in the realm). */
export type UserFacts = Map<number, { is_active: number; is_bot: number } | null>;

/** Zulip's check_valid_user_ids: people of the realm, active, not bots. */
async function checkUserIds(db: Queryable<ChatTables>, realmId: number, value: unknown, known: UserFacts): Promise<number[]> {
  const name = 'User IDs';
  if (!Array.isArray(value)) throw valueNotList({ name });
  value.forEach((v, i) => {
    if (!Number.isInteger(v)) throw valueNotInteger({ name: `${name}[${i}]` });
  });
  const ids = value as number[];
  if (!ids.length) return ids;
  const unknown = [...new Set(ids.filter((id) => !known.has(id)))];
  for (let i = 0; i < unknown.length; i += 500) {
    const part = unknown.slice(i, i + 500);
    const users = await db.selectFrom('chat_users').select(['id', 'is_active', 'is_bot']).where('realm_id', '=', realmId).where('id', 'in', part).execute();
    for (const id of part) known.set(id, null);
    for (const u of users) known.set(Number(u.id), { is_active: u.is_active, is_bot: u.is_bot });
  }
  const found = new Map([...new Set(ids)].flatMap((id) => (known.get(id) ? [[id, known.get(id)!] as const] : [])));
  const invalid = ids.filter((id) => !found.has(id));
  if (invalid.length) throw profileInvalidUserIds({ ids: invalid.join(', ') });
  for (const id of ids) {
    const u = found.get(id)!;
    if (u.is_active !== 1) throw profileUserDeactivated({ id });
    if (u.is_bot === 1) throw profileUserIsBot({ id });
  }
  return ids;
}

/** Members change only the fields editable by users; administrators change any. */
export function checkMayEdit(actor: Pick<ChatUser, 'role'>, field: ProfileField): void {
  if (!isAdmin(actor.role) && field.editable_by_user !== 1) throw profileFieldNotEditable();
}

export interface ProfileValue {
  value: string;
  rendered_value?: string | null;
}

/** The custom_profile_field of a realm_user update event: the new value (null when removed), and the rendering when there is one. */
export type ProfileChange = { id: number; value: string | null; rendered_value?: string };

/** Stores a user's value for a field when it differs from the one stored; answers the change, or null when it stays. */
export async function storeProfileValue(db: Queryable<ChatTables>, userId: number, field: ProfileField, value: string): Promise<ProfileChange | null> {
  const fieldId = Number(field.id);
  const old = await db.selectFrom('custom_profile_field_values').select('value').where('user_id', '=', userId).where('field_id', '=', fieldId).executeTakeFirst();
  if (old && old.value === value) return null;
  const rendered = isRenderable(field.field_type) ? renderMarkdown(value) : null;
  if (old) await db.updateTable('custom_profile_field_values').set({ value, rendered_value: rendered }).where('user_id', '=', userId).where('field_id', '=', fieldId).execute();
  else await db.insertInto('custom_profile_field_values').values({ user_id: userId, field_id: fieldId, value, rendered_value: rendered }).execute();
  return rendered ? { id: fieldId, value, rendered_value: rendered } : { id: fieldId, value };
}

/** Removes a user's value for a field; answers the change, or null when there was none. */
export async function removeProfileValue(db: Queryable<ChatTables>, userId: number, fieldId: number): Promise<ProfileChange | null> {
  const r = await db.deleteFrom('custom_profile_field_values').where('user_id', '=', userId).where('field_id', '=', fieldId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0 ? { id: fieldId, value: null } : null;
}

/**
 * The profile_data of user objects, by user: each value under its field's id, with the rendering
 * for text fields (Zulip's get_custom_profile_field_values). `userIds` narrows it to those users.
 */
export async function profileDataOf(db: Queryable<ChatTables>, realmId: number, userIds?: number[]): Promise<Map<number, Record<string, ProfileValue>>> {
  const out = new Map<number, Record<string, ProfileValue>>();
  if (userIds && !userIds.length) return out;
  let q = db
    .selectFrom('custom_profile_field_values as v')
    .innerJoin('custom_profile_fields as f', 'f.id', 'v.field_id')
    .select(['v.user_id', 'v.field_id', 'v.value', 'v.rendered_value', 'f.field_type'])
    .where('f.realm_id', '=', realmId);
  if (userIds) q = q.where('v.user_id', 'in', userIds);
  for (const r of await q.orderBy('f.sort_order').orderBy('f.id').execute()) {
    const userId = Number(r.user_id);
    let data = out.get(userId);
    if (!data) out.set(userId, (data = {}));
    data[String(r.field_id)] = isRenderable(r.field_type) ? { value: r.value, rendered_value: r.rendered_value } : { value: r.value };
  }
  return out;
}

/** custom_profile_fields: the realm's fields again, in order, to every active user (Zulip's notify_realm_custom_profile_fields). */
export async function profileFieldsNotice(db: Queryable<ChatTables>, realmId: number): Promise<Notice[]> {
  const fields = await fieldObjects(db, realmId);
  const users = await db.selectFrom('chat_users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).execute();
  return [{ type: 'custom_profile_fields', userIds: users.map((u) => Number(u.id)), render: () => ({ type: 'custom_profile_fields', fields }) }];
}

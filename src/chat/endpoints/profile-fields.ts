// Custom profile fields: listing them (everyone), creating, changing, reordering and deleting them
// (administrators), and a user's own values (PATCH/DELETE /users/me/profile_data; administrators set
// anyone's through PATCH /users/{user_id}). Field changes publish the whole list again
// (custom_profile_fields); value changes are realm_user updates with custom_profile_field.
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { adminRequired, botsNotAccepted, profileFieldLabelExists, profileFieldDefaultExternal, profileFieldOrderInvalid } from '../errors.js';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { isAdmin } from '../domain/roles.js';
import {
  checkFieldDefinition,
  checkMayEdit,
  checkProfileValue,
  checkSummaryRoom,
  DEFAULT_EXTERNAL_ACCOUNTS,
  FIELD_TYPE,
  fieldById,
  fieldIn,
  fieldObjects,
  fieldsById,
  isDefaultExternal,
  parseFieldData,
  profileFieldsNotice,
  removeProfileValue,
  storedFieldData,
  storeProfileValue,
  type FieldData,
  type ProfileChange,
  type ProfileField,
  type UserFacts,
} from '../domain/profile-fields.js';
import { realmUserUpdateNotice } from '../events/notices.js';
import type { Notice } from '../events/hub.js';
import { checkRoom } from '../domain/bounds.js';

function requireAdmin(call: ChatCall): ChatUser {
  const me = requireUser(call);
  if (!isAdmin(me.role)) throw adminRequired();
  return me;
}

/** Zulip's check_profile_field_data: a dict of strings, or of dicts of strings (a list field's choices). */
const FieldDataSchema = Type.Record(Type.String(), Type.Union([Type.String(), Type.Record(Type.String(), Type.String())]));

export const getProfileFields = defineEndpoint({
  method: 'GET',
  path: '/realm/profile_fields',
  summary: 'Get all custom profile fields',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    requireUser(call);
    return { custom_fields: await fieldObjects(call.services.db.kysely, call.realm.id) };
  },
});

/** Refuses a label another field of the realm has (Zulip's unique realm and name). */
async function checkLabelFree(db: Queryable<ChatTables>, realmId: number, name: string, except?: number): Promise<void> {
  let q = db.selectFrom('custom_profile_fields').select('id').where('realm_id', '=', realmId).where('name', '=', name);
  if (except !== undefined) q = q.where('id', '<>', except);
  if (await q.executeTakeFirst()) throw profileFieldLabelExists();
}

export const createProfileField = defineEndpoint({
  method: 'POST',
  path: '/realm/profile_fields',
  summary: 'Create a custom profile field',
  auth: 'user',
  params: Type.Object({
    name: Type.String({ default: '' }),
    hint: Type.String({ default: '' }),
    field_type: Type.Integer(),
    field_data: Type.Optional(FieldDataSchema),
    display_in_profile_summary: Type.Boolean({ default: false }),
    required: Type.Boolean({ default: false }),
    editable_by_user: Type.Boolean({ default: true }),
  }),
  async handler(call, p) {
    requireAdmin(call);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    const data = (p.field_data ?? {}) as FieldData;
    const name = p.name.trim();
    const made = await events.write(
      () =>
        db.transaction(async (trx) => {
          if (p.display_in_profile_summary) await checkSummaryRoom(trx, realmId);
          checkFieldDefinition({ name, hint: p.hint, type: p.field_type, data, summary: p.display_in_profile_summary });
          // A default external account takes its label and hint from Zulip's list, and keeps only its subtype.
          const preset = isDefaultExternal(p.field_type, data) ? DEFAULT_EXTERNAL_ACCOUNTS[data.subtype as string] : null;
          const label = preset ? preset.name : name;
          await checkLabelFree(trx, realmId, label);
          await checkRoom(trx, 'profileFieldsPerRealm', realmId, 1);
          const row = await trx
            .insertInto('custom_profile_fields')
            .values({
              realm_id: realmId,
              name: label,
              hint: preset ? preset.hint : p.hint,
              field_type: p.field_type,
              field_data: preset ? JSON.stringify({ subtype: data.subtype }) : storedFieldData(p.field_type, data),
              sort_order: 0,
              display_in_profile_summary: p.display_in_profile_summary ? 1 : 0,
              required: p.required ? 1 : 0,
              editable_by_user: p.editable_by_user ? 1 : 0,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          // New fields come last: their order is their id, as in Zulip.
          await trx.updateTable('custom_profile_fields').set({ sort_order: row.id }).where('id', '=', row.id).execute();
          return Number(row.id);
        }),
      () => profileFieldsNotice(db.kysely, realmId),
    );
    return { id: made };
  },
});

/** Whether a change leaves a default external account's label, hint and data as they are (only its summary flag may change). */
function onlySummaryChanges(field: ProfileField, name?: string, hint?: string, data?: FieldData): boolean {
  if (name !== undefined && name !== field.name) return false;
  if (hint !== undefined && hint !== field.hint) return false;
  if (data !== undefined && JSON.stringify(sortedKeys(data)) !== JSON.stringify(sortedKeys(parseFieldData(field.field_data)))) return false;
  return true;
}

function sortedKeys(v: unknown): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
  );
}

export const updateProfileField = defineEndpoint({
  method: 'PATCH',
  path: '/realm/profile_fields/{field_id}',
  summary: 'Update a custom profile field',
  auth: 'user',
  params: Type.Object({
    field_id: Type.Integer(),
    name: Type.Optional(Type.String()),
    hint: Type.Optional(Type.String()),
    field_data: Type.Optional(FieldDataSchema),
    display_in_profile_summary: Type.Optional(Type.Boolean()),
    required: Type.Optional(Type.Boolean()),
    editable_by_user: Type.Optional(Type.Boolean()),
  }),
  async handler(call, p) {
    requireAdmin(call);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    const name = p.name?.trim();
    const data = p.field_data as FieldData | undefined;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const field = await fieldById(trx, realmId, p.field_id);
          if (p.display_in_profile_summary) await checkSummaryRoom(trx, realmId, Number(field.id));
          const current = parseFieldData(field.field_data);
          if (isDefaultExternal(field.field_type, current) && !onlySummaryChanges(field, name, p.hint, data)) throw profileFieldDefaultExternal();
          const merged = {
            name: name ?? field.name,
            hint: p.hint ?? field.hint,
            type: field.field_type,
            data: data ?? current,
            summary: p.display_in_profile_summary ?? field.display_in_profile_summary === 1,
          };
          checkFieldDefinition(merged);
          if (name !== undefined) await checkLabelFree(trx, realmId, name, Number(field.id));
          const set: Partial<Record<string, string | number>> = {};
          if (name !== undefined) set.name = name;
          if (p.hint !== undefined) set.hint = p.hint;
          if (p.required !== undefined) set.required = p.required ? 1 : 0;
          if (p.editable_by_user !== undefined) set.editable_by_user = p.editable_by_user ? 1 : 0;
          if (p.display_in_profile_summary !== undefined) set.display_in_profile_summary = p.display_in_profile_summary ? 1 : 0;
          if (field.field_type === FIELD_TYPE.SELECT || field.field_type === FIELD_TYPE.EXTERNAL_ACCOUNT) {
            // Choices a list field loses take the users' values that held them along.
            if (data !== undefined && field.field_type === FIELD_TYPE.SELECT) {
              const gone = Object.keys(current).filter((k) => !Object.hasOwn(data, k));
              if (gone.length) await trx.deleteFrom('custom_profile_field_values').where('field_id', '=', Number(field.id)).where('value', 'in', gone).execute();
            }
            if (data !== undefined || field.field_data === '') set.field_data = JSON.stringify(data ?? {});
          }
          if (Object.keys(set).length) await trx.updateTable('custom_profile_fields').set(set).where('id', '=', Number(field.id)).execute();
        }),
      // Zulip announces the list again even when nothing changed.
      () => profileFieldsNotice(db.kysely, realmId),
    );
    return {};
  },
});

export const reorderProfileFields = defineEndpoint({
  method: 'PATCH',
  path: '/realm/profile_fields',
  summary: 'Reorder custom profile fields',
  auth: 'user',
  params: Type.Object({ order: Type.Array(Type.Integer()) }),
  async handler(call, p) {
    requireAdmin(call);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    // Each field takes its place in the list (the last one where an id repeats, as Zulip's mapping does).
    const place = new Map(p.order.map((id, i) => [id, i]));
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const fields = await trx.selectFrom('custom_profile_fields').select('id').where('realm_id', '=', realmId).execute();
          if (fields.some((f) => !place.has(Number(f.id)))) throw profileFieldOrderInvalid();
          for (const f of fields)
            await trx
              .updateTable('custom_profile_fields')
              .set({ sort_order: place.get(Number(f.id))! })
              .where('id', '=', f.id)
              .execute();
        }),
      () => profileFieldsNotice(db.kysely, realmId),
    );
    return {};
  },
});

export const deleteProfileField = defineEndpoint({
  method: 'DELETE',
  path: '/realm/profile_fields/{field_id}',
  summary: 'Delete a custom profile field',
  auth: 'user',
  params: Type.Object({ field_id: Type.Integer() }),
  async handler(call, p) {
    requireAdmin(call);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const field = await fieldById(trx, realmId, p.field_id);
          // The users' values go with the field.
          await trx.deleteFrom('custom_profile_field_values').where('field_id', '=', Number(field.id)).execute();
          await trx.deleteFrom('custom_profile_fields').where('id', '=', Number(field.id)).execute();
        }),
      () => profileFieldsNotice(db.kysely, realmId),
    );
    return {};
  },
});

export interface ProfileDataEntry {
  id: number;
  value: string | number[] | null;
}

/**
 * Sets a user's values (the caller holds the transaction): an empty or null value removes the
 * value (administrators' PATCH /users/{user_id}); every other is checked first, then stored.
 * Answers the changes, one realm_user update each.
 */
export async function applyProfileData(trx: Queryable<ChatTables>, realmId: number, actor: ChatUser, targetId: number, entries: ProfileDataEntry[]): Promise<ProfileChange[]> {
  const fields = await fieldsById(trx, realmId);
  const users: UserFacts = new Map();
  // Every entry is checked; a field named again takes its last value.
  const last = new Map<number, { field: ProfileField; value: string | null }>();
  for (const e of entries) {
    const field = fieldIn(fields, e.id);
    checkMayEdit(actor, field);
    const removes = e.value === null || e.value === '' || (Array.isArray(e.value) && e.value.length === 0);
    last.delete(e.id);
    last.set(e.id, { field, value: removes ? null : await checkProfileValue(trx, realmId, field, e.value, users) });
  }
  const changes: ProfileChange[] = [];
  for (const [id, k] of last) {
    const c = k.value === null ? await removeProfileValue(trx, targetId, id) : await storeProfileValue(trx, targetId, k.field, k.value);
    if (c) changes.push(c);
  }
  return changes;
}

async function profileChangeNotices(db: Queryable<ChatTables>, realmId: number, userId: number, changes: ProfileChange[]): Promise<Notice[]> {
  const out: Notice[] = [];
  for (const c of changes) out.push(...(await realmUserUpdateNotice(db, realmId, userId, { custom_profile_field: c })));
  return out;
}

export const updateOwnProfileData = defineEndpoint({
  method: 'PATCH',
  path: '/users/me/profile_data',
  summary: 'Update own custom profile field values',
  auth: 'user',
  params: Type.Object({ data: Type.Array(Type.Object({ id: Type.Integer(), value: Type.Union([Type.String(), Type.Array(Type.Integer())]) }, { additionalProperties: false })) }),
  async handler(call, p) {
    const me = requireUser(call);
    if (me.is_bot === 1) throw botsNotAccepted();
    const { db, events } = call.services;
    const realmId = call.realm.id;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          // Here an empty value is a value like any other (Zulip removes values only through DELETE).
          // Every entry is checked; a field named again takes its last value.
          const fields = await fieldsById(trx, realmId);
          const users: UserFacts = new Map();
          const checked = new Map<number, { field: ProfileField; value: string }>();
          for (const e of p.data) {
            const field = fieldIn(fields, e.id);
            checkMayEdit(me, field);
            checked.delete(e.id);
            checked.set(e.id, { field, value: await checkProfileValue(trx, realmId, field, e.value, users) });
          }
          const changes: ProfileChange[] = [];
          for (const c of checked.values()) {
            const change = await storeProfileValue(trx, me.id, c.field, c.value);
            if (change) changes.push(change);
          }
          return changes;
        }),
      (changes) => profileChangeNotices(db.kysely, realmId, me.id, changes),
    );
    return {};
  },
});

export const removeOwnProfileData = defineEndpoint({
  method: 'DELETE',
  path: '/users/me/profile_data',
  summary: 'Remove own custom profile field values',
  auth: 'user',
  params: Type.Object({ data: Type.Array(Type.Integer()) }),
  async handler(call, p) {
    const me = requireUser(call);
    if (me.is_bot === 1) throw botsNotAccepted();
    const { db, events } = call.services;
    const realmId = call.realm.id;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const fields = await fieldsById(trx, realmId);
          for (const id of p.data) checkMayEdit(me, fieldIn(fields, id));
          const changes: ProfileChange[] = [];
          for (const id of new Set(p.data)) {
            const c = await removeProfileValue(trx, me.id, id);
            if (c) changes.push(c);
          }
          return changes;
        }),
      (changes) => profileChangeNotices(db.kysely, realmId, me.id, changes),
    );
    return {};
  },
});

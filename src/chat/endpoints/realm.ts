// Organization settings: the realm's own settings (PATCH /realm, administrators), its deactivation
// (POST /realm/deactivate, owners), linkifiers
// (listing for everyone; adding, changing, removing and reordering for administrators) and custom
// emoji (listing, deactivating). Linkifier and emoji changes publish the whole list again
// (realm_linkifiers, realm_emoji) after the commit, as Zulip does; settings one event each.
import Type, { type TSchema } from 'typebox';
import type { Updateable } from 'kysely';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import { adminOrEmojiAuthorRequired, adminRequired, linkifierExists, linkifierNotFound, linkifierOrderDuplicates, linkifierOrderIncomplete, ownerRequired, realmEmojiNotFound } from '../errors.js';
import type { ChatTables, RealmRow } from '../tables.js';
import type { Queryable } from '../../platform/db/database.js';
import { isAdmin, ROLE } from '../domain/roles.js';
import { setRealmDeactivated } from '../domain/realm.js';
import { checkGroupSettingUpdate, sameGroupSetting, type GroupSettingUpdate } from '../domain/groups.js';
import { REALM_GROUP_SETTING_NAMES, REALM_GROUP_SETTINGS, realmGroupValues, realmRow, SIMPLE_SETTINGS, type SimpleSettingName, type SimpleValue } from '../domain/realm-settings.js';
import { checkLinkifier, linkifierObjects } from '../domain/linkifiers.js';
import { activeRealmEmoji, realmEmojiObjects } from '../domain/realm-emoji.js';
import { linkifiersNotice, realmEmojiNotice, realmSettingsNotices, type RealmSettingChange } from '../events/realm-notices.js';
import { GroupSettingUpdateSchema } from './channels.js';
import { checkRoom } from '../domain/bounds.js';

function requireAdmin(call: ChatCall): void {
  if (!isAdmin(requireUser(call).role)) throw adminRequired();
}

const SIMPLE_NAMES = Object.keys(SIMPLE_SETTINGS) as SimpleSettingName[];

function realmSettingParams(): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const name of SIMPLE_NAMES) out[name] = Type.Optional(SIMPLE_SETTINGS[name].param);
  for (const name of REALM_GROUP_SETTING_NAMES) out[name] = Type.Optional(GroupSettingUpdateSchema);
  return out;
}

/**
 * Zulip's PATCH /realm (real in Zulip, which its web app uses, though absent from its OpenAPI
 * document) for the settings Keel has: administrators, and owners alone for who creates and manages
 * user groups. Every value is checked before anything is written, so a refused request changes
 * nothing. Each setting that really changes is one realm event (update, or update_dict: see
 * SIMPLE_SETTINGS) to every active user after the commit. The answer follows Zulip's update_realm:
 * the changed settings keyed by name, their new value, except that string settings answer
 * "updated" rather than the text; an unchanged setting is left out.
 */
export const updateRealm = defineEndpoint({
  method: 'PATCH',
  path: '/realm',
  summary: 'Update realm settings',
  auth: 'user',
  params: Type.Object(realmSettingParams()),
  async handler(call, p) {
    requireAdmin(call);
    const me = requireUser(call);
    const given = p as Record<string, unknown>;
    const groupUpdates = REALM_GROUP_SETTING_NAMES.filter((n) => given[n] !== undefined);
    if (me.role !== ROLE.owner && groupUpdates.some((n) => 'ownerOnly' in REALM_GROUP_SETTINGS[n])) throw ownerRequired();
    const wanted: [SimpleSettingName, SimpleValue][] = SIMPLE_NAMES.filter((n) => given[n] !== undefined).map((n) => [n, SIMPLE_SETTINGS[n].check(given[n], n)]);
    const { db, events } = call.services;
    const realmId = call.realm.id;
    const changes = await events.write(
      () =>
        db.transaction(async (trx) => {
          const row = await realmRow(trx, realmId);
          const set: Updateable<RealmRow> = {};
          const changed: RealmSettingChange[] = [];
          for (const [name, value] of wanted) {
            const s = SIMPLE_SETTINGS[name];
            if (s.read(row) === value) continue;
            Object.assign(set, s.write(value));
            changed.push({ name, value, dict: 'dict' in s });
          }
          const current = await realmGroupValues(trx, row);
          for (const name of groupUpdates) {
            const value = await checkGroupSettingUpdate(trx, realmId, name, given[name] as GroupSettingUpdate, current[name], REALM_GROUP_SETTINGS[name]);
            if (sameGroupSetting(value, current[name])) continue;
            set[name] = JSON.stringify(value);
            changed.push({ name, value, dict: true });
          }
          if (changed.length) await trx.updateTable('realms').set(set).where('id', '=', realmId).execute();
          return changed;
        }),
      (changed) => realmSettingsNotices(db.kysely, realmId, changed),
    );
    return Object.fromEntries(changes.map((c) => [c.name, typeof c.value === 'string' ? 'updated' : c.value]));
  },
});

async function checkUnique(db: Queryable<ChatTables>, realmId: number, pattern: string, urlTemplate: string, exceptId?: number): Promise<void> {
  const clash = await db.selectFrom('realm_linkifiers').select('id').where('realm_id', '=', realmId).where('pattern', '=', pattern).where('url_template', '=', urlTemplate).executeTakeFirst();
  if (clash && clash.id !== exceptId) throw linkifierExists();
}

/** Runs a linkifier change for an administrator and sends realm_linkifiers once it is committed. */
async function linkifierWrite<T>(call: ChatCall, work: (trx: Queryable<ChatTables>) => Promise<T>): Promise<T> {
  requireAdmin(call);
  const { db, events } = call.services;
  return events.write(
    () => db.transaction(work),
    () => linkifiersNotice(db.kysely, call.realm.id),
  );
}

export const getLinkifiers = defineEndpoint({
  method: 'GET',
  path: '/realm/linkifiers',
  summary: 'Get linkifiers',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    return { linkifiers: await linkifierObjects(call.services.db.kysely, call.realm.id) };
  },
});

const linkifierParams = { pattern: Type.String(), url_template: Type.String() };

export const addLinkifier = defineEndpoint({
  method: 'POST',
  path: '/realm/filters',
  summary: 'Add a linkifier',
  auth: 'user',
  params: Type.Object(linkifierParams),
  async handler(call, p) {
    const realmId = call.realm.id;
    const id = await linkifierWrite(call, async (trx) => {
      checkLinkifier(p.pattern, p.url_template);
      await checkUnique(trx, realmId, p.pattern, p.url_template);
      await checkRoom(trx, 'linkifiersPerRealm', realmId, 1);
      const last = await trx
        .selectFrom('realm_linkifiers')
        .select((eb) => eb.fn.max('sort_order').as('max'))
        .where('realm_id', '=', realmId)
        .executeTakeFirst();
      // New linkifiers go last (Zulip's default order).
      const sort_order = last?.max === null || last?.max === undefined ? 0 : Number(last.max) + 1;
      const row = await trx.insertInto('realm_linkifiers').values({ realm_id: realmId, pattern: p.pattern, url_template: p.url_template, sort_order }).returning('id').executeTakeFirstOrThrow();
      return row.id;
    });
    return { id };
  },
});

async function linkifierById(db: Queryable<ChatTables>, realmId: number, id: number) {
  const row = await db.selectFrom('realm_linkifiers').select('id').where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
  if (!row) throw linkifierNotFound();
  return row;
}

export const updateLinkifier = defineEndpoint({
  method: 'PATCH',
  path: '/realm/filters/{filter_id}',
  summary: 'Update a linkifier',
  auth: 'user',
  params: Type.Object({ filter_id: Type.Integer(), ...linkifierParams }),
  async handler(call, p) {
    await linkifierWrite(call, async (trx) => {
      await linkifierById(trx, call.realm.id, p.filter_id);
      checkLinkifier(p.pattern, p.url_template);
      await checkUnique(trx, call.realm.id, p.pattern, p.url_template, p.filter_id);
      await trx.updateTable('realm_linkifiers').set({ pattern: p.pattern, url_template: p.url_template }).where('id', '=', p.filter_id).execute();
    });
    return {};
  },
});

export const removeLinkifier = defineEndpoint({
  method: 'DELETE',
  path: '/realm/filters/{filter_id}',
  summary: 'Remove a linkifier',
  auth: 'user',
  params: Type.Object({ filter_id: Type.Integer() }),
  async handler(call, p) {
    await linkifierWrite(call, async (trx) => {
      await linkifierById(trx, call.realm.id, p.filter_id);
      await trx.deleteFrom('realm_linkifiers').where('id', '=', p.filter_id).execute();
    });
    return {};
  },
});

export const reorderLinkifiers = defineEndpoint({
  method: 'PATCH',
  path: '/realm/linkifiers',
  summary: 'Reorder linkifiers',
  auth: 'user',
  params: Type.Object({ ordered_linkifier_ids: Type.Array(Type.Integer()) }),
  async handler(call, p) {
    const ids = p.ordered_linkifier_ids;
    await linkifierWrite(call, async (trx) => {
      if (new Set(ids).size !== ids.length) throw linkifierOrderDuplicates();
      const existing = (await linkifierObjects(trx, call.realm.id)).map((l) => l.id);
      if (existing.length !== ids.length || !ids.every((id) => existing.includes(id))) {
        throw linkifierOrderIncomplete();
      }
      for (const [i, id] of ids.entries()) await trx.updateTable('realm_linkifiers').set({ sort_order: i }).where('id', '=', id).execute();
    });
    return {};
  },
});

export const getCustomEmoji = defineEndpoint({
  method: 'GET',
  path: '/realm/emoji',
  summary: 'Get all custom emoji',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    return { emoji: await realmEmojiObjects(call.services.db.kysely, call.realm.id) };
  },
});

export const deactivateCustomEmoji = defineEndpoint({
  method: 'DELETE',
  path: '/realm/emoji/{emoji_name}',
  summary: 'Deactivate custom emoji',
  auth: 'user',
  params: Type.Object({ emoji_name: Type.String() }),
  async handler(call, p) {
    const me = requireUser(call);
    const { db, events } = call.services;
    await events.write(
      () =>
        db.transaction(async (trx) => {
          const emoji = await activeRealmEmoji(trx, call.realm.id, p.emoji_name);
          // Zulip answers a missing emoji with 404 since feature level 190.
          if (!emoji) throw realmEmojiNotFound({ name: p.emoji_name });
          // Only administrators may remove someone else's emoji.
          if (!isAdmin(me.role) && emoji.author_id !== me.id) throw adminOrEmojiAuthorRequired();
          await trx.updateTable('realm_emoji').set({ deactivated: 1 }).where('id', '=', emoji.id).execute();
        }),
      () => realmEmojiNotice(db.kysely, call.realm.id),
    );
    return {};
  },
});

/**
 * Zulip's POST /realm/deactivate (its deactivate_realm, organization owners only: else "Must be an
 * organization owner"). The realm and everything in it stay; from the commit on, every
 * authenticated request to it answers 401 REALM_DEACTIVATED and its event queues are ended (parked
 * polls answered BAD_EVENT_QUEUE_ID). Zulip also sends a realm `deactivated` event, which only a
 * parked poll could ever receive; Keel ends the queues instead, with nothing delivered: Zulip
 * documents that clients cannot rely on that event and must act on the authentication error their
 * next request gets, which is what a client told BAD_EVENT_QUEUE_ID meets when it registers again.
 * Zulip's deletion_delay_days (a scheduled deletion of the data) is not served: Keel deletes
 * nothing, and the parameter comes back in ignored_parameters_unsupported.
 */
export const deactivateRealm = defineEndpoint({
  method: 'POST',
  path: '/realm/deactivate',
  summary: 'Deactivate the organization',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    if (requireUser(call).role !== ROLE.owner) throw ownerRequired();
    const { db, events } = call.services;
    const realmId = call.realm.id;
    // The caller authenticated, so the realm was active: a concurrent deactivation changes nothing more.
    await events.write(
      () => setRealmDeactivated(db.kysely, realmId, true),
      () => [],
      () => ({ realmId }),
    );
    return {};
  },
});

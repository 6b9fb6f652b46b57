// Organizations (realms): finding them, making one with its system groups and owner, and the
// first-run set-up (the first realm, whose owner's secrets are printed once).
import type { Database, Queryable } from '../../platform/db/database.js';
import { randomPassword } from '../../platform/auth/secrets.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';
import { subdomainInUse } from '../errors.js';
import type { ApiKeySeal } from './api-keys.js';
import { createSystemGroups } from './groups.js';
import { ROLE } from './roles.js';
import { createUser } from './users.js';
import { ROOT_SUBDOMAIN } from './subdomains.js';
import { checkRealmName } from './realm-settings.js';

export interface ChatInitResult {
  realmUrl: string;
  email: string;
  password: string;
  apiKey: string;
}

/** Zulip shows the empty topic under this name to clients that cannot show "" (seed convention 5). */
export const EMPTY_TOPIC_DISPLAY_NAME = 'general chat';
export const MAX_TOPIC_LENGTH = 60;
export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;

/** The host part of the realm URL, used for the owner's address (owner@<host>). */
export function realmHost(realmUrl: string): string {
  return new URL(realmUrl).hostname;
}

/** The first realm, made by the first-run set-up: the one the root domain serves. */
export async function theRealm(db: Queryable<ChatTables>): Promise<Realm | undefined> {
  return db.selectFrom('realms').selectAll().orderBy('id').executeTakeFirst();
}

/** The realm a subdomain names (ROOT_SUBDOMAIN: the first realm). */
export async function realmBySubdomain(db: Queryable<ChatTables>, subdomain: string): Promise<Realm | undefined> {
  return db.selectFrom('realms').selectAll().where('string_id', '=', subdomain).executeTakeFirst();
}

/**
 * Deactivates a realm, or reactivates it (Zulip's do_deactivate_realm / do_reactivate_realm). Its
 * users, channels and messages stay as they are, as Zulip keeps them so that a reactivation gives
 * everything back; while deactivated, every authenticated request to it is refused (auth.ts).
 * False when the realm was in that state already (nothing changes then).
 */
export async function setRealmDeactivated(db: Queryable<ChatTables>, realmId: number, deactivated: boolean): Promise<boolean> {
  const done = await db
    .updateTable('realms')
    .set({ deactivated: deactivated ? 1 : 0 })
    .where('id', '=', realmId)
    .where('deactivated', '=', deactivated ? 0 : 1)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

export interface NewRealm {
  stringId: string;
  name: string;
  /** The host of the realm's addresses (bots, hidden emails). */
  emailHost: string;
  owner: { email: string; fullName: string; password: string };
}

/**
 * Creates a realm with its system groups and its owner (the first-run set-up and `keel admin
 * create-realm`); the caller holds the transaction. Zulip's errors for a taken subdomain or a bad name.
 */
export async function createRealm(db: Queryable<ChatTables>, r: NewRealm, nowMs: number, sealer: ApiKeySeal): Promise<{ realm: Realm; owner: ChatUser; apiKey: string }> {
  const name = checkRealmName(r.name);
  if (await realmBySubdomain(db, r.stringId)) throw subdomainInUse();
  const now = Math.floor(nowMs / 1000);
  const realm = await db.insertInto('realms').values({ string_id: r.stringId, name, description: '', email_host: r.emailHost, date_created: now }).returningAll().executeTakeFirstOrThrow();
  await createSystemGroups(db, realm.id, now);
  const made = await createUser(db, realm.id, { email: r.owner.email, fullName: r.owner.fullName, password: r.owner.password, role: ROLE.owner }, nowMs, sealer);
  return { realm, owner: made.user, apiKey: made.apiKey };
}

/**
 * First run of Chat: creates the realm, its system groups and owner. Returns null when the realm
 * exists already (nothing changes then).
 */
export async function initialiseChat(db: Database<ChatTables>, nowMs: number, realmUrl: string, sealer: ApiKeySeal): Promise<ChatInitResult | null> {
  const password = randomPassword();
  // One node at a time (several may start at once on one PostgreSQL): the second finds it done.
  return db.exclusive(7033, async (trx) => {
    if (await theRealm(trx)) return null;
    const host = realmHost(realmUrl);
    const email = `owner@${host}`;
    const made = await createRealm(trx, { stringId: ROOT_SUBDOMAIN, name: 'Keel', emailHost: host, owner: { email, fullName: 'Owner', password } }, nowMs, sealer);
    return { realmUrl, email, password, apiKey: made.apiKey };
  });
}

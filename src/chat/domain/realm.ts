// The organization (realm) and its first-run set-up: the seal key for API keys, the system groups
// and the owner, whose secrets are printed once.
import { sql } from 'kysely';
import type { Database, Queryable } from '../../platform/db/database.js';
import { randomPassword, randomToken } from '../../platform/auth/secrets.js';
import type { ChatTables, Realm } from '../tables.js';
import { SEAL_KEY_NAME } from './api-keys.js';
import { createSystemGroups } from './groups.js';
import { ROLE } from './roles.js';
import { createUser } from './users.js';

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

export async function theRealm(db: Queryable<ChatTables>): Promise<Realm | undefined> {
  return db.selectFrom('realms').selectAll().orderBy('id').executeTakeFirst();
}

/**
 * First run of Chat: creates the realm, its system groups and owner. Returns null when the realm
 * exists already (nothing changes then).
 */
export async function initialiseChat(db: Database<ChatTables>, nowMs: number, realmUrl: string): Promise<ChatInitResult | null> {
  const password = randomPassword();
  return db.transaction(async (trx) => {
    if (db.engine === 'postgres') await sql`select pg_advisory_xact_lock(7033)`.execute(trx);
    if (await theRealm(trx)) return null;
    const host = realmHost(realmUrl);
    await trx.insertInto('server_secrets').values({ name: SEAL_KEY_NAME, value: randomToken(32) }).execute();
    const realm = await trx
      .insertInto('realms')
      .values({ string_id: '', name: 'Keel', description: '', email_host: host, date_created: Math.floor(nowMs / 1000) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await createSystemGroups(trx, realm.id, Math.floor(nowMs / 1000));
    const email = `owner@${host}`;
    const owner = await createUser(trx, realm.id, { email, fullName: 'Owner', password, role: ROLE.owner }, nowMs);
    return { realmUrl, email, password, apiKey: owner.apiKey };
  });
}

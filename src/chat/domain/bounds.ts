// How much a realm and a user can hold. Zulip sets no count on most of these; Keel does, so that no
// caller (a runaway script, a stolen key) can grow the store without end. The figures sit far above
// what a working organization uses; each bound is checked inside the transaction that would pass it,
// and the refusal names the bound and changes nothing.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';
import { limitReached } from '../errors/catalog.js';

export const BOUNDS = {
  /** Users and bots of a realm, deactivated ones included (they keep their rows and messages). */
  usersPerRealm: 100_000,
  /** Channels of a realm, archived ones included. */
  channelsPerRealm: 10_000,
  /** User groups of a realm, system and deactivated groups included. */
  groupsPerRealm: 10_000,
  linkifiersPerRealm: 1_000,
  alertWordsPerUser: 1_000,
  /** Zulip sends at most 1,000 drafts in register (MAX_DRAFTS_IN_REGISTER); more could never be seen. */
  draftsPerUser: 1_000,
  /** Custom profile fields of a realm (Zulip sets no count; every user object carries their values). */
  profileFieldsPerRealm: 250,
  playgroundsPerRealm: 1_000,
  savedSnippetsPerUser: 1_000,
  /** Devices registered for push notifications; a person has a handful, Zulip sets no count. */
  pushDevicesPerUser: 100,
  /** Pending (not yet delivered) scheduled messages of one user; delivered ones are not counted. */
  scheduledMessagesPerUser: 1_000,
  /** Files a user has uploaded (their bytes are bounded too: domain/uploads.ts UPLOAD_BYTES_PER_USER). */
  attachmentsPerUser: 10_000,
} as const;

const WHERE = {
  usersPerRealm: { table: 'chat_users', column: 'realm_id', scope: 'an organization', things: 'users' },
  channelsPerRealm: { table: 'streams', column: 'realm_id', scope: 'an organization', things: 'channels' },
  groupsPerRealm: { table: 'user_groups', column: 'realm_id', scope: 'an organization', things: 'user groups' },
  linkifiersPerRealm: { table: 'realm_linkifiers', column: 'realm_id', scope: 'an organization', things: 'linkifiers' },
  alertWordsPerUser: { table: 'alert_words', column: 'user_id', scope: 'a user', things: 'alert words' },
  draftsPerUser: { table: 'drafts', column: 'user_id', scope: 'a user', things: 'drafts' },
  profileFieldsPerRealm: { table: 'custom_profile_fields', column: 'realm_id', scope: 'an organization', things: 'custom profile fields' },
  playgroundsPerRealm: { table: 'realm_playgrounds', column: 'realm_id', scope: 'an organization', things: 'code playgrounds' },
  savedSnippetsPerUser: { table: 'saved_snippets', column: 'user_id', scope: 'a user', things: 'saved snippets' },
  pushDevicesPerUser: { table: 'push_devices', column: 'user_id', scope: 'a user', things: 'push devices' },
  scheduledMessagesPerUser: { table: 'scheduled_messages', column: 'sender_id', scope: 'a user', things: 'scheduled messages', pending: 'delivered' },
  attachmentsPerUser: { table: 'attachments', column: 'owner_id', scope: 'a user', things: 'uploaded files' },
} as const;

/**
 * Throws limitReached when one request alone asks for more than the bound: called before the
 * request's items are checked one by one, so an oversized batch costs no work (checkRoom does it too).
 */
export function checkBatchSize(bound: keyof typeof BOUNDS, adding: number): void {
  const { scope, things } = WHERE[bound];
  if (adding > BOUNDS[bound]) throw limitReached({ scope, limit: BOUNDS[bound], things });
}

/** Throws limitReached when adding `adding` rows to the owner's (a realm's or a user's) would pass the bound. */
export async function checkRoom(db: Queryable<ChatTables>, bound: keyof typeof BOUNDS, ownerId: number, adding: number): Promise<void> {
  if (adding <= 0) return;
  checkBatchSize(bound, adding);
  const limit = BOUNDS[bound];
  const where = WHERE[bound];
  const { table, column, scope, things } = where;
  let q = db
    // The casts only satisfy Kysely's typing: the table and column come from WHERE above.
    .selectFrom(table as 'drafts')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where(column as 'user_id', '=', ownerId);
  // Rows that no longer count (a delivered scheduled message) have this column set to 1.
  if ('pending' in where) q = q.where(where.pending as 'user_id', '=', 0);
  const row = await q.executeTakeFirstOrThrow();
  if (Number(row.n) + adding > limit) throw limitReached({ scope, limit, things });
}

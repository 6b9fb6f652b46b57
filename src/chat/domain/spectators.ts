// Spectators: requests with no credentials at all, which may read a realm's web-public channels
// when the realm allows it (Zulip's "public access option"). A spectator is shown as Zulip shows
// one: a guest with user id 0 that no row names, so every user rule applied to it yields only
// what anyone may see (no subscriptions, no received messages, no flags stored).
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';
import { insufficientPermission, notLoggedIn, webPublicDisabled } from '../errors.js';
import { holdsRealmPermission } from './realm-settings.js';
import { ROLE } from './roles.js';
import type { NarrowTerm } from './narrow.js';

/** Zulip's MissingAuthenticationError: no credentials where they are needed. */

/** The user a spectator is read as: Zulip's "Anonymous User", a guest with id 0. */
export function spectatorOf(realm: Realm): ChatUser {
  return {
    id: SPECTATOR_ID,
    realm_id: realm.id,
    email: 'username@example.com',
    email_lower: 'username@example.com',
    delivery_email: 'username@example.com',
    full_name: 'Anonymous User',
    role: ROLE.guest,
    is_active: 1,
    is_bot: 0,
    bot_type: null,
    bot_owner_id: null,
    password_hash: null,
    api_key_hash: '',
    api_key_sealed: '',
    timezone: '',
    avatar_version: 1,
    avatar_path: null,
    // Zulip's defaults for a new user, in the realm's language and with Recent conversations as home.
    settings: JSON.stringify({ default_language: realm.default_language, web_home_view: 'recent_topics' }),
    date_joined: 0,
  };
}

const SPECTATOR_ID = 0;

export const isSpectator = (user: Pick<ChatUser, 'id'>) => user.id === SPECTATOR_ID;

/**
 * Zulip's realm.allow_web_public_streams_access(): spectator access is on and there is a web-public
 * (unarchived) channel to read. Keel's server always allows web-public channels (Zulip's
 * WEB_PUBLIC_STREAMS_ENABLED). A deactivated realm shows nothing to anyone, spectators included.
 */
export async function webPublicAccess(db: Queryable<ChatTables>, realm: Realm): Promise<boolean> {
  if (realm.enable_spectator_access !== 1 || realm.deactivated === 1) return false;
  const one = await db.selectFrom('streams').select('id').where('realm_id', '=', realm.id).where('is_web_public', '=', 1).where('is_archived', '=', 0).limit(1).executeTakeFirst();
  return one !== undefined;
}

const inWebPublicCreators = (db: Queryable<ChatTables>, realm: Realm, user: ChatUser) => holdsRealmPermission(db, realm.id, user, 'can_create_web_public_channel_group');

/** Throws Zulip's error unless the user may make a channel web-public (at creation or by PATCH /streams). */
export async function checkCanCreateWebPublic(db: Queryable<ChatTables>, realm: Realm, user: ChatUser): Promise<void> {
  if (realm.enable_spectator_access !== 1) throw webPublicDisabled();
  if (!(await inWebPublicCreators(db, realm, user))) throw insufficientPermission();
}

/** Whether checkCanCreateWebPublic passes (register's can_create_web_public_streams). */
export async function mayCreateWebPublic(db: Queryable<ChatTables>, realm: Realm, user: ChatUser): Promise<boolean> {
  return realm.enable_spectator_access === 1 && inWebPublicCreators(db, realm, user);
}

/** The operators a spectator's narrow may use (Zulip's is_spectator_compatible). */
const SPECTATOR_OPERATORS = new Set(['channel', 'stream', 'channels', 'streams', 'topic', 'subject', 'sender', 'has', 'search', 'near', 'id', 'with']);

/**
 * Refuses a spectator's GET /messages unless the realm allows spectators, the narrow says it is a
 * web-public query (a non-negated `channels:web-public` term: a client whose credentials went
 * missing gets the authentication error, not an empty answer) and uses only spectator operators.
 */
export async function checkSpectatorNarrow(db: Queryable<ChatTables>, realm: Realm, terms: NarrowTerm[]): Promise<void> {
  if (!(await webPublicAccess(db, realm))) throw notLoggedIn();
  const webPublic = terms.some((t) => (t.operator === 'channels' || t.operator === 'streams') && t.operand === 'web-public' && !t.negated);
  if (!webPublic || terms.some((t) => !SPECTATOR_OPERATORS.has(t.operator))) throw notLoggedIn();
}

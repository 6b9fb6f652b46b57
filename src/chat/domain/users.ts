// Chat users: creating them, finding them, and the user object of the API.
import { createHash } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { emailInUse, invalidEmail, nameInvalidCharacters, nameTooLong, nameTooShort, placeholderAddressReserved } from '../errors.js';
import { issueApiKey, type ApiKeySeal } from './api-keys.js';
import { systemGroupId } from './groups.js';
import { directGroupsForRole, ROLE } from './roles.js';
import { canSeeRealEmail, displayEmail, EMAIL_VISIBILITY, looksLikePlaceholder, placeholderUserId, roleSeesEmail } from './user-rules.js';
import { sql } from 'kysely';
import { isSpectator } from './spectators.js';
import { subscribe } from './channels.js';
import { checkRoom } from './bounds.js';
import { newUserSettings } from './realm-rules.js';

/** Zulip writes date_joined as an ISO time with microseconds and an explicit +00:00 offset. */
export function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000+00:00');
}

/**
 * Users who never uploaded an avatar are shown by the hash-based avatar service, as in Zulip (the
 * hash of the real address; `medium` is the 500-pixel size).
 */
export function gravatarUrl(email: string, version: number, medium = false): string {
  const hash = createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon${medium ? '&s=500' : ''}&version=${version}`;
}

/**
 * Whether the user's API email is their real address (Zulip's email_address_is_realm_public). The
 * stored `email` is the real address exactly when the visibility is "everyone" (createUser and
 * setEmailVisibility keep it so), which spares hot paths (message lists) parsing settings.
 */
export function addressIsPublic(user: Pick<ChatUser, 'email' | 'delivery_email'>): boolean {
  return user.email === user.delivery_email;
}

/**
 * The avatar URL a requester sees: null when the client computes gravatars itself (client_gravatar),
 * which it can only do from a public address; a hidden address's hash is sent as a URL instead.
 */
export function avatarUrlFor(user: Pick<ChatUser, 'email' | 'delivery_email' | 'avatar_version' | 'avatar_path'>, clientGravatar: boolean, medium = false): string | null {
  // An uploaded avatar (endpoints/images.ts) is always a URL, whatever the client computes itself.
  if (user.avatar_path) return uploadedAvatarUrl(user.avatar_path, user.avatar_version, medium);
  return clientGravatar && addressIsPublic(user) ? null : gravatarUrl(user.delivery_email, user.avatar_version, medium);
}

/** Zulip's avatar_source: U for an uploaded avatar, G for the hash-based one. */
export const avatarSource = (user: Pick<ChatUser, 'avatar_path'>): 'U' | 'G' => (user.avatar_path ? 'U' : 'G');

/** Where an uploaded avatar is served (chat/avatars-http.ts), as Zulip's local backend names it. */
export function uploadedAvatarUrl(path: string, version: number, medium = false): string {
  return `/user_avatars/${path}${medium ? '-medium' : ''}.png?version=${version}`;
}

/** The user's email_address_visibility setting (Zulip's default for new users: everyone; bots always everyone). */
export function emailVisibility(user: Pick<ChatUser, 'settings' | 'is_bot'>): number {
  if (user.is_bot === 1) return EMAIL_VISIBILITY.everyone;
  const v = (JSON.parse(user.settings) as { email_address_visibility?: unknown }).email_address_visibility;
  return typeof v === 'number' ? v : EMAIL_VISIBILITY.everyone;
}

export interface Viewer {
  id: number;
  role: number;
}

export interface UserObjectOptions {
  clientGravatar: boolean;
  includeProfileFields: boolean;
  viewer?: Viewer;
  /** The users' custom profile field values (profile-fields.ts profileDataOf); none where absent. */
  profileData?: ReadonlyMap<number, Record<string, unknown>>;
}

export function userObject(user: ChatUser, opts: UserObjectOptions): Record<string, unknown> {
  // Spectators (no viewer, or the spectator's stand-in) never see a real address, as in Zulip's format_user_row.
  const viewer = opts.viewer && !isSpectator(opts.viewer) ? opts.viewer : undefined;
  const seesEmail = viewer !== undefined && canSeeRealEmail(viewer, user.id, emailVisibility(user), user.is_bot === 1);
  const out: Record<string, unknown> = {
    user_id: user.id,
    delivery_email: seesEmail ? user.delivery_email : null,
    email: user.email,
    full_name: user.full_name,
    date_joined: isoWithOffset(user.date_joined),
    is_active: user.is_active === 1,
    is_owner: user.role === ROLE.owner,
    is_admin: user.role <= ROLE.administrator,
    is_guest: user.role === ROLE.guest,
    is_bot: user.is_bot === 1,
    bot_type: user.bot_type,
    role: user.role,
    timezone: user.timezone,
    avatar_url: avatarUrlFor(user, opts.clientGravatar),
    avatar_version: user.avatar_version,
  };
  // Zulip gives bot_owner_id only for bots, and profile data only for people when asked.
  if (user.is_bot === 1) out.bot_owner_id = user.bot_owner_id;
  else if (opts.includeProfileFields) out.profile_data = opts.profileData?.get(user.id) ?? {};
  return out;
}

/** The Bot object of realm_bot events and register's realm_bots (generic bots: no services). */
export function botObject(bot: ChatUser, apiKey: string): Record<string, unknown> {
  return {
    email: bot.email,
    user_id: bot.id,
    full_name: bot.full_name,
    bot_type: bot.bot_type,
    is_active: bot.is_active === 1,
    api_key: apiKey,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    avatar_url: avatarUrlFor(bot, false),
    services: [],
    owner_id: bot.bot_owner_id,
  };
}

export async function userById(db: Queryable<ChatTables>, realmId: number, id: number): Promise<ChatUser | undefined> {
  return db.selectFrom('chat_users').selectAll().where('realm_id', '=', realmId).where('id', '=', id).executeTakeFirst();
}

/**
 * The user whose API email (real or placeholder, as every client sees it) this is: Zulip's get_user,
 * for addresses clients send in API calls (recipients, principals, narrows).
 */
export async function userByEmail(db: Queryable<ChatTables>, realmId: number, email: string): Promise<ChatUser | undefined> {
  return db.selectFrom('chat_users').selectAll().where('realm_id', '=', realmId).where('email_lower', '=', email.trim().toLowerCase()).executeTakeFirst();
}

/**
 * The user whose real address this is, whatever its visibility: Zulip's get_user_by_delivery_email,
 * for logging in and registering only (never to answer another user). Compared by the engine's own
 * lower(), on both sides, so the unique index of migration 20 serves it and agrees with it.
 */
export async function userByDeliveryEmail(db: Queryable<ChatTables>, realmId: number, email: string): Promise<ChatUser | undefined> {
  return db.selectFrom('chat_users').selectAll().where('realm_id', '=', realmId).where(sql<string>`lower(delivery_email)`, '=', sql<string>`lower(${email.trim()})`).executeTakeFirst();
}

const EMAIL = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+$/;

/** Zulip's checks on a full name: trimmed, 1..100 characters, no control characters. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name === '') throw nameTooShort();
  if ([...name].length > 100) throw nameTooLong();
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f*`\\>"@]/.test(name)) throw nameInvalidCharacters();
  return name;
}

export interface NewUser {
  email: string;
  fullName: string;
  password: string | null;
  role: number;
  isBot?: boolean;
  botType?: number | null;
  botOwnerId?: number | null;
  /** Whether a person joins the realm's default channels (default true; an invitation may say no). */
  defaultChannels?: boolean;
}

/** Creates a user with its API key and role groups; the caller holds the transaction. */
export async function createUser(db: Queryable<ChatTables>, realmId: number, u: NewUser, nowMs: number, sealer: ApiKeySeal): Promise<{ user: ChatUser; apiKey: string }> {
  const email = u.email.trim();
  if (!EMAIL.test(email)) throw invalidEmail({ email });
  const realm = await db.selectFrom('realms').select('email_host').where('id', '=', realmId).executeTakeFirstOrThrow();
  // user<id>@<realm host> is the API email of users who hide theirs: nobody's real address may take it.
  if (looksLikePlaceholder(email, realm.email_host)) throw placeholderAddressReserved({ email });
  if (await userByDeliveryEmail(db, realmId, email)) throw emailInUse();
  // And nobody's API email either (a stored `email` is unique per realm).
  if (await userByEmail(db, realmId, email)) throw emailInUse();
  await checkRoom(db, 'usersPerRealm', realmId, 1);
  const fullName = checkFullName(u.fullName);
  const key = issueApiKey(sealer);
  const passwordHash = u.password === null ? null : await hashPassword(u.password);
  const made = await db
    .insertInto('chat_users')
    .values({
      realm_id: realmId,
      email,
      email_lower: email.toLowerCase(),
      delivery_email: email,
      full_name: fullName,
      role: u.role,
      is_active: 1,
      is_bot: u.isBot ? 1 : 0,
      bot_type: u.isBot ? (u.botType ?? 1) : null,
      bot_owner_id: u.isBot ? (u.botOwnerId ?? null) : null,
      password_hash: passwordHash,
      api_key_hash: key.api_key_hash,
      api_key_sealed: key.api_key_sealed,
      timezone: '',
      avatar_version: 1,
      // New users start from the realm's defaults; later default changes do not reach them.
      settings: JSON.stringify(await newUserSettings(db, realmId)),
      date_joined: nowMs,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  // A hidden address needs the id for its placeholder, so it is set once the row exists (as in Zulip).
  const apiEmail = displayEmail(made.id, email, emailVisibility(made), made.is_bot === 1, realm.email_host);
  const user = apiEmail === email ? made : { ...made, email: apiEmail, email_lower: apiEmail.toLowerCase() };
  if (user !== made) await db.updateTable('chat_users').set({ email: user.email, email_lower: user.email_lower }).where('id', '=', user.id).execute();
  for (const name of directGroupsForRole(u.role)) {
    await db
      .insertInto('user_group_members')
      .values({ group_id: await systemGroupId(db, realmId, name), user_id: user.id })
      .execute();
  }
  // New people join the realm's default channels, as in Zulip (bots subscribe themselves).
  if (!u.isBot && u.defaultChannels !== false) {
    const defaults = await db.selectFrom('default_streams').select('stream_id').where('realm_id', '=', realmId).execute();
    for (const d of defaults) await subscribe(db, user.id, d.stream_id);
  }
  return { user, apiKey: key.apiKey };
}

/**
 * GET/PATCH /users/{email}: the placeholder user<id>@<host> finds anyone; a real address finds
 * the user only when the viewer may see it (Zulip 10, feature level 302).
 */
export async function userByApiEmail(db: Queryable<ChatTables>, realmId: number, realmHost: string, viewer: Viewer, email: string): Promise<ChatUser | undefined> {
  const id = placeholderUserId(email, realmHost);
  if (id !== null) return userById(db, realmId, id);
  const user = await userByDeliveryEmail(db, realmId, email);
  // Only among the users whose setting shows the address to the viewer's role (Zulip's
  // access_user_by_email: one's own hidden address finds nobody either); a public address is the
  // API email, found here too.
  if (user && roleSeesEmail(viewer.role, emailVisibility(user))) return user;
  return undefined;
}

/**
 * Stores the API email that goes with a new email_address_visibility (the caller holds the
 * transaction): it changes only between "everyone" and the rest, and never for a bot. Returns the
 * new API email, or null when it stays.
 */
export async function setApiEmailForVisibility(db: Queryable<ChatTables>, user: ChatUser, realmHost: string, visibility: number): Promise<string | null> {
  const apiEmail = displayEmail(user.id, user.delivery_email, visibility, user.is_bot === 1, realmHost);
  if (apiEmail === user.email) return null;
  await db.updateTable('chat_users').set({ email: apiEmail, email_lower: apiEmail.toLowerCase() }).where('id', '=', user.id).execute();
  return apiEmail;
}

/** Active human owners: the last of them cannot be demoted or deactivated. */
export async function activeOwnerCount(db: Queryable<ChatTables>, realmId: number): Promise<number> {
  const r = await db
    .selectFrom('chat_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('role', '=', ROLE.owner)
    .where('is_active', '=', 1)
    .where('is_bot', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function activeHumanCount(db: Queryable<ChatTables>, realmId: number): Promise<number> {
  const r = await db
    .selectFrom('chat_users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('is_active', '=', 1)
    .where('is_bot', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Changes a user's role and moves them between the role system groups with it. */
export async function setRole(db: Queryable<ChatTables>, realmId: number, userId: number, role: number): Promise<void> {
  await db.updateTable('chat_users').set({ role }).where('id', '=', userId).execute();
  const roleGroups = await db.selectFrom('user_groups').select('id').where('realm_id', '=', realmId).where('is_system_group', '=', 1).where('name', 'like', 'role:%').execute();
  await db
    .deleteFrom('user_group_members')
    .where('user_id', '=', userId)
    .where(
      'group_id',
      'in',
      roleGroups.map((g) => g.id),
    )
    .execute();
  for (const name of directGroupsForRole(role)) {
    await db
      .insertInto('user_group_members')
      .values({ group_id: await systemGroupId(db, realmId, name), user_id: userId })
      .execute();
  }
}

// Invitations (Zulip 10.2's zerver/views/invite.py, zerver/actions/invites.py and the confirmation
// links of confirmation/models.py): who may invite and manage invitations, the addresses and the
// channels and groups an invitation may name, the daily limit, the invitations a user sees, the
// mail, and the account an accepted invitation makes. An e-mail invitation is used once; a reusable
// link stays usable until it expires or is revoked.
import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../platform/db/database.js';
import type { Mail } from '../../platform/mail/mailer.js';
import type { ChatTables, ChatUser, Invite, Realm, Stream, UserGroup } from '../tables.js';
import {
  adminRequired,
  botsNotAccepted,
  insufficientPermission,
  inviteCannotSubscribeOthers,
  inviteInvalidChannel,
  invitesAccountTooNew,
  invitesDailyLimit,
  limitReached,
  notAllowedForGuests,
  ownerRequired,
} from '../errors.js';
import { isAdmin, isGuest, ROLE } from './roles.js';
import { canAccessContent, streamById, subscribe } from './channels.js';
import { holdsRealmPermission } from './realm-settings.js';
import { inGroupSetting, parseGroupSetting } from './groups.js';
import { groupForUpdate } from './user-groups.js';
import { createUser, type NewUser } from './users.js';
import { checkNameUnique } from './realm-rules.js';
import type { ApiKeySeal } from './api-keys.js';
import { checkBatchSize } from './bounds.js';

/** Zulip's confirmation statuses. */
export const INVITE_STATUS = { active: 0, used: 1, revoked: 2 } as const;
/** Zulip's INVITATION_LINK_VALIDITY_DAYS (10), in minutes: the expiry when none is asked for. */
export const DEFAULT_INVITE_MINUTES = 10 * 24 * 60;
/** Zulip's INVITES_DEFAULT_REALM_DAILY_MAX: e-mails a realm may send in 24 hours (sends and resends). */
export const MAX_INVITES_PER_DAY = 100;
/** Keel's bound on a realm's open (active) invitations and links; Zulip sets none. */
export const MAX_OPEN_INVITES = 10_000;
/** Zulip's INVITES_MIN_USER_AGE_DAYS: without invite_required, younger members may not invite. */
const MIN_INVITER_AGE_MS = 3 * 86_400_000;
/** Zulip's PASSWORD_MIN_LENGTH; the upper bound is Keel's (the hash's cost). */
export const PASSWORD_LENGTH = { min: 6, max: 100 } as const;

/** Zulip's generate_key: 15 random bytes in lower-case base32, 24 characters. */
export function newConfirmationKey(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(15);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** What a confirmation key may look like (a request's path segment is checked before any query). */
export const CONFIRMATION_KEY = /^[a-z0-9]{24}$/;

/** The link an invitation's mail or GET /invites names: /join/<key>/ for links, /accounts/do_confirm/<key> for e-mail. */
export function inviteUrl(realmUrl: string, invite: Pick<Invite, 'is_multiuse' | 'confirmation_key'>): string {
  return invite.is_multiuse === 1 ? `${realmUrl}/join/${invite.confirmation_key}/` : `${realmUrl}/accounts/do_confirm/${invite.confirmation_key}`;
}

/** Zulip's get_invitee_emails_set: split on commas and newlines, `Name <address>` gives the address, trimmed, once each. */
export function parseInviteeEmails(raw: string): string[] {
  const out = new Set<string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    out.add((named ? named[1] : part).trim());
  }
  return [...out];
}

const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN = /^((?!-)[A-Za-z0-9-]{1,63}(?<!-)\.)+[A-Za-z]{2,63}$|^localhost$/;

/** Whether an address passes Django's validate_email, as Zulip checks invitees (dot-atom local part, a real domain). */
export function validEmail(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0) return false;
  const local = email.slice(0, at);
  return local.length <= 64 && LOCAL.test(local) && DOMAIN.test(email.slice(at + 1));
}

/** The per-address reasons of Zulip's InvitationError (validate_email_is_valid, get_existing_user_errors). */
export const SKIP_REASON = { invalid: 'Invalid address.', member: 'Already has an account.', deactivated: 'Account has been deactivated.' } as const;

/** require_member_or_admin: invitations are for members and administrators, not guests or bots. */
export function requireInviter(user: ChatUser): void {
  if (isGuest(user.role)) throw notAllowedForGuests();
  if (user.is_bot === 1) throw botsNotAccepted();
}

/** check_role_based_permissions: only owners invite owners; administrators, moderators and owners need an administrator. */
export function checkInviteRole(user: ChatUser, invitedAs: number, requireAdmin: boolean): void {
  if (invitedAs === ROLE.owner && user.role !== ROLE.owner) throw ownerRequired();
  if (requireAdmin && !isAdmin(user.role)) throw adminRequired();
}

/** Whether creating an invitation as this role needs an administrator (owners are checked apart). */
export const roleNeedsAdmin = (invitedAs: number): boolean => invitedAs === ROLE.owner || invitedAs === ROLE.administrator || invitedAs === ROLE.moderator;

/** The realm permission a new e-mail invitation (can_invite_users_group) or link (create_multiuse_invite_group) needs. */
export async function checkMayInvite(db: Queryable<ChatTables>, realmId: number, user: ChatUser, kind: 'email' | 'link'): Promise<void> {
  const setting = kind === 'email' ? 'can_invite_users_group' : 'create_multiuse_invite_group';
  if (!(await holdsRealmPermission(db, realmId, user, setting))) throw insufficientPermission();
}

/**
 * access_streams_for_invite: every channel must be one the inviter may read, and one they may add
 * subscribers to unless it is a default channel (Zulip 10, feature level 342).
 */
export async function checkInviteChannels(db: Queryable<ChatTables>, realmId: number, user: ChatUser, ids: number[]): Promise<Stream[]> {
  // No realm has more channels than this: a longer list costs no query.
  checkBatchSize('channelsPerRealm', new Set(ids).size);
  const streams: Stream[] = [];
  for (const id of new Set(ids)) {
    const s = await streamById(db, realmId, id);
    if (!s || !(await canAccessContent(db, user, s))) throw inviteInvalidChannel({ channel_id: id });
    streams.push(s);
  }
  if (!streams.length) return streams;
  const defaults = new Set((await db.selectFrom('default_streams').select('stream_id').where('realm_id', '=', realmId).execute()).map((r) => r.stream_id));
  const realmWide = isAdmin(user.role) || (await holdsRealmPermission(db, realmId, user, 'can_add_subscribers_group'));
  for (const s of streams) {
    if (realmWide || defaults.has(s.id)) continue;
    if (isGuest(user.role) || !(await inGroupSetting(db, user.id, parseGroupSetting(s.can_add_subscribers_group)))) throw inviteCannotSubscribeOthers();
  }
  return streams;
}

/** access_user_groups_for_invite: groups the inviter may add members to (can_add_members_group, or managing them). */
export async function checkInviteGroups(db: Queryable<ChatTables>, realmId: number, user: ChatUser, ids: number[]): Promise<UserGroup[]> {
  checkBatchSize('groupsPerRealm', new Set(ids).size);
  const groups: UserGroup[] = [];
  for (const id of new Set(ids)) groups.push(await groupForUpdate(db, realmId, user, id, ['can_add_members_group']));
  return groups;
}

/** check_invite_limit, always on in Keel: at most MAX_INVITES_PER_DAY invitation e-mails per realm in 24 hours. */
export async function checkDailyLimit(db: Queryable<ChatTables>, realmId: number, nowSeconds: number, adding: number): Promise<void> {
  const row = await db
    .selectFrom('invite_sends')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('realm_id', '=', realmId)
    .where('sent_at', '>', nowSeconds - 86_400)
    .executeTakeFirstOrThrow();
  if (Number(row.n) + adding > MAX_INVITES_PER_DAY) throw invitesDailyLimit({ errors: [] });
}

/** Without invite_required, Zulip keeps members younger than three days from inviting (spam through open realms). */
export function checkInviterAge(realm: Pick<Realm, 'invite_required'>, user: ChatUser, nowMs: number): void {
  if (realm.invite_required !== 1 && !isAdmin(user.role) && user.date_joined > nowMs - MIN_INVITER_AGE_MS) throw invitesAccountTooNew({ errors: [] });
}

/** Keel's bound on open invitations, checked in the transaction that would pass it. */
export async function checkOpenRoom(db: Queryable<ChatTables>, realmId: number, adding: number): Promise<void> {
  const row = await db
    .selectFrom('invites')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('realm_id', '=', realmId)
    .where('status', '=', INVITE_STATUS.active)
    .executeTakeFirstOrThrow();
  if (Number(row.n) + adding > MAX_OPEN_INVITES) throw limitReached({ scope: 'an organization', limit: MAX_OPEN_INVITES, things: 'open invitations' });
}

/** get_existing_user_errors: addresses (compared without case) that belong to a user of the realm already. */
export async function existingUserErrors(db: Queryable<ChatTables>, realmId: number, emails: string[]): Promise<[string, string, boolean][]> {
  if (!emails.length) return [];
  const rows = await db
    .selectFrom('chat_users')
    .select(['delivery_email', 'is_active'])
    .where('realm_id', '=', realmId)
    .where(
      (eb) => eb.fn('lower', ['delivery_email']),
      'in',
      emails.map((e) => e.toLowerCase()),
    )
    .execute();
  const found = new Map(rows.map((r) => [r.delivery_email.toLowerCase(), r.is_active === 1]));
  const out: [string, string, boolean][] = [];
  for (const email of emails) {
    const active = found.get(email.toLowerCase());
    if (active !== undefined) out.push([email, active ? SKIP_REASON.member : SKIP_REASON.deactivated, !active]);
  }
  return out;
}

/** An invitation's expiry in Unix seconds (null: never), from the minutes asked for. */
export function expiryOf(nowSeconds: number, minutes: number | null): number | null {
  return minutes === null ? null : nowSeconds + minutes * 60;
}

const live = (nowSeconds: number) => (i: Invite) => i.expires_at === null || Number(i.expires_at) >= nowSeconds;

/**
 * do_get_invites_controlled_by_user: open, unexpired invitations the user manages (their own;
 * administrators every one of the realm), e-mail invitations first, each kind in id order.
 */
export async function invitesFor(db: Queryable<ChatTables>, user: ChatUser, nowSeconds: number, realmUrl: string): Promise<Record<string, unknown>[]> {
  let q = db.selectFrom('invites').selectAll().where('realm_id', '=', user.realm_id).where('status', '=', INVITE_STATUS.active);
  if (!isAdmin(user.role)) q = q.where('referred_by', '=', user.id);
  const rows = (await q.orderBy('is_multiuse').orderBy('id').execute()).filter(live(nowSeconds));
  return rows.map((i) => {
    const common = {
      id: i.id,
      invited_by_user_id: i.referred_by,
      invited: Number(i.invited_at),
      expiry_date: i.expires_at === null ? null : Number(i.expires_at),
      invited_as: i.invited_as,
      notify_referrer_on_join: i.notify_referrer_on_join === 1,
      is_multiuse: i.is_multiuse === 1,
    };
    return i.is_multiuse === 1 ? { ...common, link_url: inviteUrl(realmUrl, i) } : { ...common, email: i.email };
  });
}

/** Who hears invites_changed: the realm's active administrators, and the invitation's creator (Zulip's notify_invites_changed). */
export async function invitationManagers(db: Queryable<ChatTables>, realmId: number, referrerId?: number): Promise<number[]> {
  const admins = await db.selectFrom('chat_users').select('id').where('realm_id', '=', realmId).where('is_active', '=', 1).where('is_bot', '=', 0).where('role', '<=', ROLE.administrator).execute();
  const ids = new Set(admins.map((a) => a.id));
  if (referrerId !== undefined) {
    const r = await db.selectFrom('chat_users').select(['id', 'is_active']).where('id', '=', referrerId).executeTakeFirst();
    if (r?.is_active === 1) ids.add(r.id);
  }
  return [...ids].sort((a, b) => a - b);
}

/** An e-mail invitation's or link's row in the realm, by id and kind. */
export async function inviteById(db: Queryable<ChatTables>, realmId: number, id: number, multiuse: boolean): Promise<Invite | undefined> {
  return db
    .selectFrom('invites')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where('id', '=', id)
    .where('is_multiuse', '=', multiuse ? 1 : 0)
    .executeTakeFirst();
}

/** access_invite_by_id's permission: the creator, or an administrator (an owner for an owner's invitation). */
export function checkMayManage(user: ChatUser, invite: Invite): void {
  if (invite.referred_by !== user.id) checkInviteRole(user, invite.invited_as, true);
}

/** The invitation e-mail: Zulip's subject, and the link. */
export function invitationMail(realm: Realm, referrer: ChatUser, link: string, to: string, expiresAt: number | null): Mail {
  const until = expiresAt === null ? 'It does not expire.' : `It expires on ${new Date(expiresAt * 1000).toUTCString()}.`;
  const text = [
    `${referrer.full_name} (${referrer.delivery_email}) invites you to ${realm.name}, an organization on this Zulip-compatible chat server.`,
    '',
    'Open this link to create your account:',
    `    ${link}`,
    '',
    `${until} If you did not expect this mail, ignore it: nothing happens unless the link is opened.`,
    '',
  ].join('\n');
  return { from: { name: realm.name, address: `noreply@${realm.email_host}` }, to, subject: `${referrer.full_name} has invited you to join ${realm.name}`, text };
}

/** Why an invitation cannot be accepted now, or null when it can. */
export function inviteUnusable(invite: Invite | undefined, realmId: number, nowSeconds: number): 'missing' | 'used' | 'revoked' | 'expired' | null {
  if (!invite || invite.realm_id !== realmId) return 'missing';
  if (invite.status === INVITE_STATUS.revoked) return 'revoked';
  if (invite.status === INVITE_STATUS.used) return 'used';
  if (!live(nowSeconds)(invite)) return 'expired';
  return null;
}

export interface Accepted {
  user: ChatUser;
  /** The referrer to tell (notify_referrer_on_join, still active), if any. */
  notify: ChatUser | null;
  referrerId: number;
}

/**
 * Makes the invited account inside the caller's transaction: the role, the invitation's channels
 * (and the default ones if asked), its groups; an e-mail invitation becomes used, and other open
 * e-mail invitations to the same address are revoked (Zulip's revoke_preregistration_users). The
 * caller has checked the invitation is usable (and checks again here, under the transaction).
 */
export async function acceptInvite(
  db: Queryable<ChatTables>,
  realm: Realm,
  inviteId: number,
  who: Pick<NewUser, 'email' | 'fullName' | 'password'>,
  nowMs: number,
  sealer: ApiKeySeal,
): Promise<Accepted | 'used' | 'revoked' | 'expired' | 'missing'> {
  const invite = await db.selectFrom('invites').selectAll().where('id', '=', inviteId).executeTakeFirst();
  const why = inviteUnusable(invite, realm.id, Math.floor(nowMs / 1000));
  if (why || !invite) return why ?? 'missing';
  await checkNameUnique(db, realm, who.fullName.trim(), null);
  const { user } = await createUser(
    db,
    realm.id,
    { email: who.email, fullName: who.fullName, password: who.password, role: invite.invited_as, defaultChannels: invite.include_realm_default_subscriptions === 1 },
    nowMs,
    sealer,
  );
  for (const id of JSON.parse(invite.stream_ids) as number[]) {
    const s = await streamById(db, realm.id, id);
    // A channel archived since, or a private one a guest could not be in: left out, as Zulip skips them.
    if (s && s.is_archived === 0) await subscribe(db, user.id, s.id);
  }
  for (const id of JSON.parse(invite.group_ids) as number[]) {
    const g = await db.selectFrom('user_groups').select(['id', 'deactivated']).where('id', '=', id).where('realm_id', '=', realm.id).executeTakeFirst();
    if (!g || g.deactivated === 1) continue;
    const there = await db.selectFrom('user_group_members').select('user_id').where('group_id', '=', g.id).where('user_id', '=', user.id).executeTakeFirst();
    if (!there) await db.insertInto('user_group_members').values({ group_id: g.id, user_id: user.id }).execute();
  }
  if (invite.is_multiuse === 0) {
    await db.updateTable('invites').set({ status: INVITE_STATUS.used, created_user_id: user.id }).where('id', '=', invite.id).execute();
  }
  await db
    .updateTable('invites')
    .set({ status: INVITE_STATUS.revoked })
    .where('realm_id', '=', realm.id)
    .where('is_multiuse', '=', 0)
    .where('status', '=', INVITE_STATUS.active)
    .where('email_lower', '=', user.delivery_email.toLowerCase())
    .execute();
  let notify: ChatUser | null = null;
  if (invite.notify_referrer_on_join === 1) {
    const r = await db.selectFrom('chat_users').selectAll().where('id', '=', invite.referred_by).executeTakeFirst();
    if (r && r.is_active === 1) notify = r;
  }
  return { user, notify, referrerId: invite.referred_by };
}

/** What the Notification Bot tells the referrer (Zulip's text). */
export function acceptedNote(user: Pick<ChatUser, 'full_name' | 'email'>): string {
  return `${user.full_name} <\`${user.email}\`> accepted your invitation to join Zulip!`;
}

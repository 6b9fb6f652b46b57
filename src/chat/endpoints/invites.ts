// Invitations: POST /invites (e-mail), POST /invites/multiuse (reusable links), GET /invites,
// DELETE /invites/{invite_id}, DELETE /invites/multiuse/{invite_id}, POST /invites/{invite_id}/resend
// (Zulip 10.2's zerver/views/invite.py; rules in domain/invites.ts). Each change is an
// invites_changed event to the realm's administrators and the invitation's creator. The mail goes
// out after the commit (the outbox, or SMTP: platform/mail/); the accepting side is chat/pages.ts.
import Type from 'typebox';
import { defineEndpoint, requireUser, type ChatCall } from '../endpoint.js';
import type { Invite } from '../tables.js';
import { inviteNoEmails, invitationAlreadyRevoked, invitesNobody, invitesNotValidated, invitesSomeSkipped, noSuchInvitation, paramNotInList } from '../errors.js';
import { ROLES } from '../domain/roles.js';
import {
  checkDailyLimit,
  checkInviteChannels,
  checkInviteGroups,
  checkInviterAge,
  checkInviteRole,
  checkMayInvite,
  checkMayManage,
  checkOpenRoom,
  DEFAULT_INVITE_MINUTES,
  existingUserErrors,
  expiryOf,
  INVITE_STATUS,
  invitationMail,
  invitationManagers,
  inviteById,
  invitesFor,
  inviteUrl,
  newConfirmationKey,
  parseInviteeEmails,
  requireInviter,
  roleNeedsAdmin,
  SKIP_REASON,
  validEmail,
} from '../domain/invites.js';
import { realmRow } from '../domain/realm-settings.js';
import type { Notice } from '../events/hub.js';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables } from '../tables.js';

/** The longest expiry Keel takes (100 years): the expiry time must fit the store's integers. */
const MAX_EXPIRY_MINUTES = 100 * 365 * 24 * 60;

const inviteParams = {
  invite_expires_in_minutes: Type.Union([Type.Integer({ minimum: 1, maximum: MAX_EXPIRY_MINUTES }), Type.Null()], { default: DEFAULT_INVITE_MINUTES }),
  invite_as: Type.Integer({ default: 400 }),
  group_ids: Type.Array(Type.Integer(), { default: [] }),
  include_realm_default_subscriptions: Type.Boolean({ default: false }),
};

/** invites_changed, to who manages the invitation (notify_invites_changed). */
export async function invitesChangedNotice(db: Queryable<ChatTables>, realmId: number, referrerId?: number): Promise<Notice[]> {
  const userIds = await invitationManagers(db, realmId, referrerId);
  const event = { type: 'invites_changed' };
  return [{ type: 'invites_changed', userIds, render: () => event }];
}

function checkInviteAs(invitedAs: number): void {
  if (!ROLES.includes(invitedAs)) throw paramNotInList({ name: 'invite_as', var_name: 'invite_as' });
}

/** Sends (or keeps) an invitation's mail; a failure is logged, never answered: the invitation stands and can be resent. */
async function mailInvite(call: ChatCall, invite: Invite): Promise<void> {
  const { db, mailer, log } = call.services;
  const referrer = await db.kysely.selectFrom('chat_users').selectAll().where('id', '=', invite.referred_by).executeTakeFirstOrThrow();
  const mail = invitationMail(call.realm, referrer, inviteUrl(call.services.realmUrl(call.realm), invite), invite.email!, invite.expires_at === null ? null : Number(invite.expires_at));
  try {
    await mailer.send(mail);
  } catch (err) {
    log.error('invitation mail failed', { invite: invite.id, error: (err as Error).message });
  }
}

export const sendInvites = defineEndpoint({
  method: 'POST',
  path: '/invites',
  summary: 'Send invitations',
  auth: 'user',
  params: Type.Object({
    invitee_emails: Type.String(),
    stream_ids: Type.Array(Type.Integer()),
    notify_referrer_on_join: Type.Boolean({ default: true }),
    ...inviteParams,
  }),
  async handler(call, p) {
    const me = requireUser(call);
    requireInviter(me);
    const { db, events, clock } = call.services;
    checkInviteAs(p.invite_as);
    await checkMayInvite(db.kysely, call.realm.id, me, 'email');
    checkInviteRole(me, p.invite_as, roleNeedsAdmin(p.invite_as));
    if (!p.invitee_emails) throw inviteNoEmails();
    const emails = parseInviteeEmails(p.invitee_emails);
    const streams = await checkInviteChannels(db.kysely, call.realm.id, me, p.stream_ids);
    const groups = await checkInviteGroups(db.kysely, call.realm.id, me, p.group_ids);
    const nowMs = clock.now();
    const now = Math.floor(nowMs / 1000);
    const { made, skipped } = await events.write(
      () =>
        db.transaction(async (trx) => {
          // As do_invite_users: the daily limit before anything else (so a huge list costs nothing),
          // then the inviter's age, then every address.
          await checkDailyLimit(trx, call.realm.id, now, emails.length);
          checkInviterAge(await realmRow(trx, call.realm.id), me, nowMs);
          const invalid: [string, string, boolean][] = emails.filter((e) => !validEmail(e)).map((e) => [e, SKIP_REASON.invalid, false]);
          const taken = await existingUserErrors(
            trx,
            call.realm.id,
            emails.filter((e) => validEmail(e)),
          );
          if (invalid.length) throw invitesNotValidated({ errors: [...invalid, ...taken] });
          if (taken.length === emails.length) throw invitesNobody({ errors: taken });
          const takenSet = new Set(taken.map(([e]) => e));
          const good = emails.filter((e) => !takenSet.has(e));
          await checkOpenRoom(trx, call.realm.id, good.length);
          const rows: Invite[] = [];
          for (const email of good) {
            rows.push(
              await trx
                .insertInto('invites')
                .values({
                  realm_id: call.realm.id,
                  referred_by: me.id,
                  is_multiuse: 0,
                  email,
                  email_lower: email.toLowerCase(),
                  invited_as: p.invite_as,
                  stream_ids: JSON.stringify(streams.map((s) => s.id)),
                  group_ids: JSON.stringify(groups.map((g) => g.id)),
                  include_realm_default_subscriptions: p.include_realm_default_subscriptions ? 1 : 0,
                  notify_referrer_on_join: p.notify_referrer_on_join ? 1 : 0,
                  confirmation_key: newConfirmationKey(),
                  invited_at: now,
                  expires_at: expiryOf(now, p.invite_expires_in_minutes),
                  created_user_id: null,
                })
                .returningAll()
                .executeTakeFirstOrThrow(),
            );
            await trx.insertInto('invite_sends').values({ realm_id: call.realm.id, sent_at: now }).execute();
          }
          return { made: rows, skipped: taken };
        }),
      () => invitesChangedNotice(db.kysely, call.realm.id, me.id),
    );
    for (const invite of made) await mailInvite(call, invite);
    if (skipped.length) throw invitesSomeSkipped({ errors: skipped });
    return {};
  },
});

export const createInviteLink = defineEndpoint({
  method: 'POST',
  path: '/invites/multiuse',
  summary: 'Create a reusable invitation link',
  auth: 'user',
  params: Type.Object({ stream_ids: Type.Array(Type.Integer(), { default: [] }), ...inviteParams }),
  async handler(call, p) {
    const me = requireUser(call);
    requireInviter(me);
    const { db, events, clock } = call.services;
    checkInviteAs(p.invite_as);
    await checkMayInvite(db.kysely, call.realm.id, me, 'link');
    checkInviteRole(me, p.invite_as, roleNeedsAdmin(p.invite_as));
    const streams = await checkInviteChannels(db.kysely, call.realm.id, me, p.stream_ids);
    const groups = await checkInviteGroups(db.kysely, call.realm.id, me, p.group_ids);
    const now = Math.floor(clock.now() / 1000);
    const invite = await events.write(
      () =>
        db.transaction(async (trx) => {
          await checkOpenRoom(trx, call.realm.id, 1);
          return trx
            .insertInto('invites')
            .values({
              realm_id: call.realm.id,
              referred_by: me.id,
              is_multiuse: 1,
              email: null,
              email_lower: null,
              invited_as: p.invite_as,
              stream_ids: JSON.stringify(streams.map((s) => s.id)),
              group_ids: JSON.stringify(groups.map((g) => g.id)),
              include_realm_default_subscriptions: p.include_realm_default_subscriptions ? 1 : 0,
              // A link's joins are told to its creator, as Zulip's do (its PreregistrationUser defaults to notifying).
              notify_referrer_on_join: 1,
              confirmation_key: newConfirmationKey(),
              invited_at: now,
              expires_at: expiryOf(now, p.invite_expires_in_minutes),
              created_user_id: null,
            })
            .returningAll()
            .executeTakeFirstOrThrow();
        }),
      () => invitesChangedNotice(db.kysely, call.realm.id, me.id),
    );
    return { invite_link: inviteUrl(call.services.realmUrl(call.realm), invite) };
  },
});

export const getInvites = defineEndpoint({
  method: 'GET',
  path: '/invites',
  summary: 'Get all invitations',
  auth: 'user',
  params: Type.Object({}),
  async handler(call) {
    const me = requireUser(call);
    requireInviter(me);
    const now = Math.floor(call.services.clock.now() / 1000);
    return { invites: await invitesFor(call.services.db.kysely, me, now, call.services.realmUrl(call.realm)) };
  },
});

/** Revokes an open invitation (the caller has found and checked it); invites_changed after the commit. */
async function revoke(call: ChatCall, invite: Invite): Promise<void> {
  const { db, events } = call.services;
  await events.write(
    () => db.transaction((trx) => trx.updateTable('invites').set({ status: INVITE_STATUS.revoked }).where('id', '=', invite.id).execute()),
    () => invitesChangedNotice(db.kysely, call.realm.id, invite.referred_by),
  );
}

export const revokeEmailInvite = defineEndpoint({
  method: 'DELETE',
  path: '/invites/{invite_id}',
  summary: 'Revoke an email invitation',
  auth: 'user',
  params: Type.Object({ invite_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    requireInviter(me);
    const invite = await inviteById(call.services.db.kysely, call.realm.id, p.invite_id, false);
    // A used or revoked invitation is no longer one to manage.
    if (!invite || invite.status !== INVITE_STATUS.active) throw noSuchInvitation();
    checkMayManage(me, invite);
    await revoke(call, invite);
    return {};
  },
});

export const revokeInviteLink = defineEndpoint({
  method: 'DELETE',
  path: '/invites/multiuse/{invite_id}',
  summary: 'Revoke a reusable invitation link',
  auth: 'user',
  params: Type.Object({ invite_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    requireInviter(me);
    const invite = await inviteById(call.services.db.kysely, call.realm.id, p.invite_id, true);
    if (!invite) throw noSuchInvitation();
    checkMayManage(me, invite);
    if (invite.status === INVITE_STATUS.revoked) throw invitationAlreadyRevoked();
    await revoke(call, invite);
    return {};
  },
});

export const resendEmailInvite = defineEndpoint({
  method: 'POST',
  path: '/invites/{invite_id}/resend',
  summary: 'Resend an email invitation',
  auth: 'user',
  params: Type.Object({ invite_id: Type.Integer() }),
  async handler(call, p) {
    const me = requireUser(call);
    requireInviter(me);
    const { db, clock } = call.services;
    const invite = await inviteById(db.kysely, call.realm.id, p.invite_id, false);
    if (!invite || invite.status !== INVITE_STATUS.active) throw noSuchInvitation();
    checkMayManage(me, invite);
    const now = Math.floor(clock.now() / 1000);
    await db.transaction(async (trx) => {
      await checkDailyLimit(trx, call.realm.id, now, 1);
      await trx.insertInto('invite_sends').values({ realm_id: call.realm.id, sent_at: now }).execute();
    });
    await mailInvite(call, invite);
    return {};
  },
});

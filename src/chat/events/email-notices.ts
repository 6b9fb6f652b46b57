// The realm_user events of a change of email_address_visibility, as Zulip's do_change_user_setting
// sends them: delivery_email (the real address, or null) to each active user who gains or loses
// sight of it; then, when the API email itself changes (to or from "everyone"), new_email and the
// avatar (a client computing gravatars from the old public address needs the URL now) to everyone.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { canSeeRealEmail } from '../domain/user-rules.js';
import { avatarSource, avatarUrlFor } from '../domain/users.js';
import type { Notice } from './hub.js';
import { activeUsers, realmUserUpdateNotice } from './notices.js';

/** `user` as it was before the change; `newApiEmail` is null when the API email stayed the same. */
export async function emailVisibilityNotices(db: Queryable<ChatTables>, user: ChatUser, before: number, after: number, newApiEmail: string | null): Promise<Notice[]> {
  const gain: number[] = [];
  const lose: number[] = [];
  for (const v of await activeUsers(db, user.realm_id)) {
    const viewer = { id: Number(v.id), role: v.role };
    const saw = canSeeRealEmail(viewer, user.id, before, user.is_bot === 1);
    const sees = canSeeRealEmail(viewer, user.id, after, user.is_bot === 1);
    if (sees && !saw) gain.push(viewer.id);
    if (saw && !sees) lose.push(viewer.id);
  }
  const deliveryNotice = (userIds: number[], email: string | null): Notice => {
    const event = { type: 'realm_user', op: 'update', person: { user_id: user.id, delivery_email: email } };
    return { type: 'realm_user', userIds, render: () => event };
  };
  const out: Notice[] = [];
  if (gain.length) out.push(deliveryNotice(gain, user.delivery_email));
  if (lose.length) out.push(deliveryNotice(lose, null));
  if (newApiEmail !== null) {
    out.push(...(await realmUserUpdateNotice(db, user.realm_id, user.id, { new_email: newApiEmail })));
    out.push(
      ...(await realmUserUpdateNotice(db, user.realm_id, user.id, {
        avatar_source: avatarSource(user),
        avatar_url: avatarUrlFor(user, false),
        avatar_url_medium: avatarUrlFor(user, false, true),
        avatar_version: user.avatar_version,
      })),
    );
  }
  return out;
}

// Who may do what with a channel: read its messages, know it exists, post to it, administer it.
// The messages code calls these too, so every endpoint applies the same rules (Zulip 10's).
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Stream } from '../tables.js';
import { noPostPermission, notAuthorizedToSend } from '../errors.js';
import { inGroupSetting, parseGroupSetting } from './groups.js';
import { isAdmin, isGuest } from './roles.js';

export async function isSubscribed(db: Queryable<ChatTables>, userId: number, streamId: number): Promise<boolean> {
  const row = await db.selectFrom('subscriptions').select('id').where('user_id', '=', userId).where('stream_id', '=', streamId).where('active', '=', 1).executeTakeFirst();
  return !!row;
}

/**
 * Whether the user may read the channel's messages: web-public channels to all, subscribers, public
 * channels to non-guests, and a private channel to those who may subscribe to it or add others.
 */
export async function canAccessContent(db: Queryable<ChatTables>, user: ChatUser, stream: Stream): Promise<boolean> {
  if (stream.is_web_public === 1) return true;
  // Decided without a query where the subscription does not matter (a member and a public channel).
  if (stream.invite_only === 0 && !isGuest(user.role)) return true;
  if (await isSubscribed(db, user.id, stream.id)) return true;
  if (isGuest(user.role)) return false;
  if (stream.invite_only === 0) return true;
  return (await inGroupSetting(db, user.id, parseGroupSetting(stream.can_subscribe_group))) || inGroupSetting(db, user.id, parseGroupSetting(stream.can_add_subscribers_group));
}

/** Whether the user may administer the channel: organization administrators and its can_administer_channel_group. */
export async function canAdminister(db: Queryable<ChatTables>, user: ChatUser, stream: Stream): Promise<boolean> {
  if (isAdmin(user.role)) return true;
  return inGroupSetting(db, user.id, parseGroupSetting(stream.can_administer_channel_group));
}

/** Whether the user may know the channel exists: content access, or administering it. */
export async function canSeeMetadata(db: Queryable<ChatTables>, user: ChatUser, stream: Stream): Promise<boolean> {
  return (await canAccessContent(db, user, stream)) || (stream.invite_only === 1 && (await canAdminister(db, user, stream)));
}

/** Throws Zulip's error unless the user may post to the channel now. */
export async function checkCanPost(db: Queryable<ChatTables>, user: ChatUser, stream: Stream): Promise<void> {
  if (stream.is_archived === 1) throw notAuthorizedToSend({ name: stream.name });
  if (!(await inGroupSetting(db, user.id, parseGroupSetting(stream.can_send_message_group)))) {
    throw noPostPermission();
  }
}

// Loads what a message's Markdown refers to (users, groups, channels by name) before rendering, and
// turns what rendering found into each recipient's mention flags.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { canAccessContent } from './channels.js';
import { FLAG } from './flags.js';
import type { MarkdownContext, MentionGroup, MentionUser, Rendered } from './markdown.js';
import { realmLinkifiers } from './linkifiers.js';
import { realmEmojiObject } from './realm-emoji.js';
import { settingOf } from './user-settings.js';

/** Every user id in a group, its subgroups included, however deep. */
async function groupMembers(db: Queryable<ChatTables>, groupId: number): Promise<number[]> {
  const seen = new Set<number>();
  const members = new Set<number>();
  let frontier = [groupId];
  while (frontier.length) {
    frontier.forEach((g) => seen.add(g));
    for (const r of await db.selectFrom('user_group_members').select('user_id').where('group_id', 'in', frontier).execute()) members.add(r.user_id);
    const subs = await db.selectFrom('user_group_subgroups').select('subgroup_id').where('group_id', 'in', frontier).execute();
    frontier = subs.map((s) => s.subgroup_id).filter((g) => !seen.has(g));
  }
  return [...members];
}

/**
 * Only the names the content could refer to are looked up, so rendering costs nothing extra without
 * them. The viewer is the sender: their translate_emoticons setting applies.
 */
export async function loadMarkdownContext(db: Queryable<ChatTables>, realmId: number, viewer: ChatUser, content: string, realmUrl?: string): Promise<MarkdownContext> {
  const ctx: MarkdownContext = {
    usersByName: new Map(),
    usersById: new Map(),
    groups: new Map(),
    channels: new Map(),
    realmUrl: realmUrl?.replace(/\/+$/, ''),
    translateEmoticons: settingOf(viewer, 'translate_emoticons') === true,
  };
  const userNames = new Set<string>();
  const userIds = new Set<number>();
  for (const m of content.matchAll(/@_?\*\*([^*\n]+?)\*\*/g)) {
    const pipe = /^(.*)\|(\d+)$/.exec(m[1]);
    if (pipe) userIds.add(Number(pipe[2]));
    else userNames.add(m[1].toLowerCase());
  }
  const groupNames = new Set([...content.matchAll(/@_?\*([^*\n]+?)\*(?!\*)/g)].map((m) => m[1]));
  const channelNames = new Set([...content.matchAll(/#\*\*([^*\n]+?)\*\*/g)].map((m) => m[1].split('>')[0].toLowerCase()));
  if (userNames.size || userIds.size) {
    // Deactivated users too: their mentions render silent, as Zulip's do.
    let q = db.selectFrom('chat_users').select(['id', 'full_name', 'is_active']).where('realm_id', '=', realmId);
    q = q.where((eb) => eb.or([...(userIds.size ? [eb('id', 'in', [...userIds])] : []), ...(userNames.size ? [eb(eb.fn('lower', ['full_name']), 'in', [...userNames])] : [])]));
    for (const u of await q.execute()) {
      const user: MentionUser = { id: u.id, full_name: u.full_name, isActive: u.is_active === 1 };
      ctx.usersById.set(u.id, user);
      const key = u.full_name.toLowerCase();
      ctx.usersByName.set(key, [...(ctx.usersByName.get(key) ?? []), user]);
    }
  }
  if (groupNames.size) {
    // System groups (role:*) are not mentionable by name.
    const rows = await db
      .selectFrom('user_groups')
      .select(['id', 'name'])
      .where('realm_id', '=', realmId)
      .where('is_system_group', '=', 0)
      .where('deactivated', '=', 0)
      .where('name', 'in', [...groupNames])
      .execute();
    for (const g of rows) ctx.groups.set(g.name, { id: g.id, name: g.name, memberIds: await groupMembers(db, g.id) } satisfies MentionGroup);
  }
  ctx.linkifiers = await realmLinkifiers(db, realmId);
  const emojiNames = [...new Set([...content.matchAll(/:([\p{L}\p{N}\p{M}_+-]+):/gu)].map((m) => m[1]))];
  if (emojiNames.length) {
    const rows = await db.selectFrom('realm_emoji').selectAll().where('realm_id', '=', realmId).where('deactivated', '=', 0).where('name', 'in', emojiNames).execute();
    ctx.realmEmoji = new Map(rows.map((e) => [e.name, String(realmEmojiObject(e).source_url)]));
  }
  if (channelNames.size) {
    const rows = await db
      .selectFrom('streams')
      .selectAll()
      .where('realm_id', '=', realmId)
      .where('name_lower', 'in', [...channelNames])
      .execute();
    // A private channel the sender cannot see is not linked (its name would leak nothing new, but Zulip refuses it).
    for (const s of rows) if (await canAccessContent(db, viewer, s)) ctx.channels.set(s.name_lower, { id: s.id, name: s.name });
  }
  return ctx;
}

/** Whether rendering found any mention: without one every recipient's mention bits are 0. */
export function hasMentions(r: Rendered): boolean {
  return r.mentionedUserIds.length > 0 || r.mentionedGroupIds.length > 0 || r.streamWildcard || r.topicWildcard;
}

/** The mention flag bits a recipient gets from a rendered message. */
export function mentionFlagger(r: Rendered, ctx: MarkdownContext): (userId: number, topicParticipants: Set<number>) => number {
  const mentioned = new Set(r.mentionedUserIds);
  for (const g of ctx.groups.values()) if (r.mentionedGroupIds.includes(g.id)) g.memberIds.forEach((id) => mentioned.add(id));
  return (userId, topicParticipants) => {
    let bits = mentioned.has(userId) ? FLAG.mentioned : 0;
    if (r.streamWildcard) bits |= FLAG.stream_wildcard_mentioned;
    // @**topic** reaches only those who took part in the topic (Zulip counts senders).
    if (r.topicWildcard && topicParticipants.has(userId)) bits |= FLAG.topic_wildcard_mentioned;
    return bits;
  };
}

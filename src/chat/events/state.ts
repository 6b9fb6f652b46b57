// The initial state POST /register returns, for the fetch_event_types this slice supports. It is
// read inside SnapshotGate.snapshot(), together with creating the queue (see gate.ts).
import { sql } from 'kysely';
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser, Realm } from '../tables.js';
import { FLAG } from '../domain/flags.js';
import { displayTopic } from '../domain/topics.js';
import { avatarSource, avatarUrlFor, botObject, userObject } from '../domain/users.js';
import type { ApiKeySeal } from '../domain/api-keys.js';
import { channelFields } from '../domain/channels.js';
import { canSeeMetadata } from '../domain/channel-access.js';
import { spectatorSubscriptionObjects, subscriptionObjects, withInheritedNotifications } from '../domain/subscriptions.js';
import { isSpectator, mayCreateWebPublic } from '../domain/spectators.js';
import { isAdmin, isGuest, ROLE } from '../domain/roles.js';
import { groupObjects } from '../domain/user-groups.js';
import { linkifierObjects } from '../domain/linkifiers.js';
import { realmEmojiObjects } from '../domain/realm-emoji.js';
import { emojiDataFile } from '../domain/emoji.js';
import { EMPTY_TOPIC_DISPLAY_NAME, MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../domain/realm.js';
import { presenceAnswer, type PresenceStore } from '../domain/presence.js';
import { allStatuses } from '../domain/user-status.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from '../version.js';
import { receivedSql } from '../domain/receipt.js';
import { realmPermissions, realmSettingsState } from '../domain/realm-settings.js';
import { systemGroupIds } from '../domain/groups.js';
import { EMPTY_FEATURE_STATE, fixedRealmState } from './fixed-state.js';
import { alertWords } from '../domain/alert-words.js';
import { legacySettingsFields, realmDefaultsObject, userSettingsObject } from '../domain/user-settings.js';
import { draftsOf, MAX_DRAFTS_IN_REGISTER } from '../domain/drafts.js';
import { pendingScheduled } from '../domain/scheduled-messages.js';
import { mutedTopicsOf, mutedUsersOf, userTopicsOf } from '../domain/muting.js';
import { customProfileFieldTypes, fieldObjects, profileDataOf } from '../domain/profile-fields.js';
import { playgroundObjects } from '../domain/playgrounds.js';
import { snippetsOf } from '../domain/saved-snippets.js';
import { MAX_FILE_UPLOAD_SIZE_MIB } from '../domain/uploads.js';

/** The fetch_event_types this slice fills in; others are ignored, as Zulip ignores unknown ones. */
export const SUPPORTED_STATE = [
  'zulip_version',
  'realm',
  'realm_user',
  'subscription',
  'message',
  'update_message_flags',
  'stream',
  'default_streams',
  'user_groups',
  'presence',
  'recent_private_conversations',
  'user_status',
  'alert_words',
  'starred_messages',
  'custom_profile_fields',
  'scheduled_messages',
  'realm_bot',
  'user_settings',
  'update_display_settings',
  'update_global_notifications',
  'realm_user_settings_defaults',
  'drafts',
  'muted_users',
  'user_topic',
  'muted_topics',
  'realm_user_groups',
  'realm_linkifiers',
  'realm_filters',
  'realm_emoji',
  'realm_playgrounds',
  'saved_snippets',
  ...Object.keys(EMPTY_FEATURE_STATE),
] as const;

/** Long-poll client timeout: above the heartbeat interval, as Zulip promises. */
export const LONGPOLL_TIMEOUT_SECONDS = 90;

export interface StateRequest {
  realm: Realm;
  realmUrl: string;
  /** The user, or a spectator (domain/spectators.ts): then only what anyone may see. */
  me: ChatUser;
  fetch: Set<string>;
  clientGravatar: boolean;
  includeSubscribers: boolean;
  emptyTopicName: boolean;
  /** The queue's client_capabilities (archived_channels, notification_settings_null, ...). */
  capabilities: Record<string, boolean>;
  nowMs: number;
  /** Presence lives in memory, not in the tables db reads. */
  presence: PresenceStore;
  /** Shows bots' API keys to those who administer them (realm_bots). */
  apiKeySeal: ApiKeySeal;
  /** A push notification service is configured (--push-url): realm_push_notifications_enabled. */
  pushEnabled?: boolean;
  slimPresence: boolean;
  presenceHistoryLimitDays?: number;
  /** The client_capabilities flag: without it, settings also come as the legacy top-level fields. */
  userSettingsObject: boolean;
  /** The largest upload (ChatServices.maxFileUploadMib); MAX_FILE_UPLOAD_SIZE_MIB when not given. */
  maxFileUploadMib?: number;
}

export async function initialState(db: Queryable<ChatTables>, r: StateRequest): Promise<Record<string, unknown>> {
  const { me, fetch } = r;
  const now = Math.floor(r.nowMs / 1000);
  const spectator = isSpectator(me);
  // Zulip serves a spectator linkifiers in URL-template form whatever it declared.
  const caps = spectator ? { ...r.capabilities, linkifier_url_template: true } : r.capabilities;
  const archived = caps.archived_channels === true;
  // Always present, whatever was asked: clients read these to know whom they talk to.
  // The seed (001, POST /register) promises the limits, the empty-topic display name and the feature
  // level in every answer, whatever `fetch_event_types` asks; it names the feature level
  // `service_feature_level`, sent beside Zulip's own name for it.
  const out: Record<string, unknown> = {
    zulip_version: ZULIP_VERSION,
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    service_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_merge_base: '',
    event_queue_longpoll_timeout_seconds: LONGPOLL_TIMEOUT_SECONDS,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_topic_length: MAX_TOPIC_LENGTH,
    max_file_upload_size_mib: r.maxFileUploadMib ?? MAX_FILE_UPLOAD_SIZE_MIB,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
  };
  if (fetch.has('realm')) {
    const groups = await systemGroupIds(db, r.realm.id);
    const settings = await realmSettingsState(db, r.realm.id, groups);
    Object.assign(out, {
      realm_url: r.realmUrl,
      realm_uri: r.realmUrl,
      server_emoji_data_url: `${r.realmUrl}${emojiDataFile().path}`,
      max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
      max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
      server_presence_ping_interval_seconds: 60,
      server_presence_offline_threshold_seconds: 140,
      // -1 is Zulip's "keep forever" (the realm has no retention policy).
      realm_message_retention_days: -1,
      // What PATCH /realm changes: name, description, language, who may edit, move and delete
      // messages, create channels, subscribe others, create and manage groups (domain/realm-settings.ts).
      ...settings,
      ...fixedRealmState(r.realm, groups, settings),
      ...(r.pushEnabled === true && { realm_push_notifications_enabled: true }),
      server_typing_started_expiry_period_milliseconds: 45_000,
      server_typing_stopped_wait_period_milliseconds: 5_000,
      server_typing_started_wait_period_milliseconds: 10_000,
      // Zulip's WEB_PUBLIC_STREAMS_ENABLED: Keel's server always allows them; realm_enable_spectator_access decides.
      server_web_public_streams_enabled: true,
    });
  }
  if (fetch.has('realm_user')) {
    const users = await db.selectFrom('chat_users').selectAll().where('realm_id', '=', r.realm.id).orderBy('id').execute();
    const viewer = { id: me.id, role: me.role };
    // Every user's custom profile field values (Zulip's register includes them for people), never for spectators.
    const profileData = spectator ? undefined : await profileDataOf(db, r.realm.id);
    // user_avatar_url_field_optional lets a server leave avatar_url out "at its sole discretion" (Zulip
    // does for long-idle users of huge realms, whose clients then ask GET /avatar/{user_id}); Keel
    // serves no such route, so it always sends the URL.
    const shown = (u: ChatUser) => userObject(u, { clientGravatar: r.clientGravatar, includeProfileFields: !spectator, viewer, profileData });
    const may = await realmPermissions(db, r.realm.id, me, ['can_create_public_channel_group', 'can_create_private_channel_group', 'can_add_subscribers_group', 'can_invite_users_group']);
    Object.assign(out, {
      realm_users: users.filter((u) => u.is_active === 1).map(shown),
      realm_non_active_users: users.filter((u) => u.is_active !== 1).map(shown),
      cross_realm_bots: [],
      // The caller's own identity, as Zulip returns it with realm_user.
      user_id: me.id,
      email: me.email,
      delivery_email: me.delivery_email,
      full_name: me.full_name,
      is_admin: isAdmin(me.role),
      is_owner: me.role === ROLE.owner,
      is_moderator: me.role === ROLE.moderator,
      is_guest: isGuest(me.role),
      // What the caller may do, as Zulip computes it from the realm's permission settings (the ones
      // endpoints/channels.ts and domain/invites.ts check).
      can_create_streams: may.can_create_public_channel_group || may.can_create_private_channel_group,
      can_create_public_streams: may.can_create_public_channel_group,
      can_create_private_streams: may.can_create_private_channel_group,
      can_create_web_public_streams: await mayCreateWebPublic(db, r.realm, me),
      can_subscribe_other_users: may.can_add_subscribers_group,
      can_invite_others_to_realm: may.can_invite_users_group,
      avatar_source: avatarSource(me),
      avatar_url: avatarUrlFor(me, false),
      avatar_url_medium: avatarUrlFor(me, false, true),
    });
  }
  if (fetch.has('subscription') || fetch.has('stream')) {
    // Archived channels only for clients that declared archived_channels (Zulip 10, feature levels 315 and 362).
    let q = db.selectFrom('streams').selectAll().where('realm_id', '=', r.realm.id);
    if (!archived) q = q.where('is_archived', '=', 0);
    const streams = await q.orderBy('name_lower').execute();
    const visible = [];
    for (const s of streams) if (await canSeeMetadata(db, me, s)) visible.push(s);
    if (fetch.has('subscription') && spectator) {
      // What a spectator may see (the web-public channels) as if subscribed; nothing else.
      Object.assign(out, { subscriptions: await spectatorSubscriptionObjects(db, visible, now), unsubscribed: [], never_subscribed: [] });
    } else if (fetch.has('subscription')) {
      const own = async (active: boolean) => {
        const subs = await subscriptionObjects(db, me.id, now, { active, includeSubscribers: r.includeSubscribers, includeArchived: archived });
        return caps.notification_settings_null === true ? subs : withInheritedNotifications(subs, me);
      };
      const subscriptions = await own(true);
      const unsubscribed = await own(false);
      const known = new Set([...subscriptions, ...unsubscribed].map((s) => s.stream_id));
      const never = [];
      for (const s of visible) {
        if (known.has(s.id) || (s.invite_only === 1 && !isAdmin(me.role))) continue;
        const fields = await channelFields(db, s, now);
        if (r.includeSubscribers)
          fields.subscribers = (await db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', s.id).where('active', '=', 1).orderBy('user_id').execute()).map((x) => x.user_id);
        never.push(fields);
      }
      Object.assign(out, { subscriptions, unsubscribed, never_subscribed: never });
    }
    if (fetch.has('stream')) {
      const list = [];
      for (const s of visible) list.push(await channelFields(db, s, now));
      out.streams = list;
    }
  }
  if (fetch.has('realm_bot')) {
    // The bots the user may administer: all of them for administrators, else their own.
    let q = db.selectFrom('chat_users').selectAll().where('realm_id', '=', r.realm.id).where('is_bot', '=', 1);
    if (!isAdmin(me.role)) q = q.where('bot_owner_id', '=', me.id);
    const bots = await q.orderBy('id').execute();
    out.realm_bots = bots.map((b) => botObject(b, r.apiKeySeal.unseal(b.api_key_sealed)));
  }
  if (fetch.has('default_streams')) {
    // Zulip: a spectator may not see every default channel, so it is told of none.
    out.realm_default_streams = spectator ? [] : (await db.selectFrom('default_streams').select('stream_id').where('realm_id', '=', r.realm.id).orderBy('stream_id').execute()).map((d) => d.stream_id);
  }
  // Zulip's key is realm_user_groups; Keel also took user_groups before it knew that.
  if (fetch.has('realm_user_groups') || fetch.has('user_groups')) {
    out.realm_user_groups = await groupObjects(db, r.realm.id, { includeDeactivated: caps.include_deactivated_groups === true });
  }
  // Clients that do not understand URL templates get no linkifiers at all (feature level 176).
  // Linkifiers use RFC 6570 URL templates: a client that did not say it reads them gets none.
  if (fetch.has('realm_linkifiers')) out.realm_linkifiers = caps.linkifier_url_template === true ? await linkifierObjects(db, r.realm.id) : [];
  // The legacy key is always empty since feature level 176.
  if (fetch.has('realm_filters')) out.realm_filters = [];
  if (fetch.has('realm_emoji')) out.realm_emoji = await realmEmojiObjects(db, r.realm.id);
  if (fetch.has('message')) {
    // The newest message the user received: a row of theirs, or a channel message in one of their spans.
    const max = (
      await sql<{ id: number }>`select m.id from messages m
      left join user_messages um on um.message_id = m.id and um.user_id = ${me.id}
      where ${receivedSql(me.id)} order by m.id desc limit 1`.execute(db)
    ).rows[0];
    out.max_message_id = max ? Number(max.id) : -1;
  }
  if (fetch.has('update_message_flags') || fetch.has('message')) out.unread_msgs = await unreadMessages(db, me, r.emptyTopicName);
  if (fetch.has('presence') && spectator) {
    Object.assign(out, { presences: {}, server_timestamp: r.nowMs / 1000, presence_last_update_id: -1 });
  } else if (fetch.has('presence')) {
    Object.assign(out, await presenceAnswer(r.presence, r.realm.id, r.nowMs, { slim: r.slimPresence, historyLimitDays: r.presenceHistoryLimitDays }));
  }
  if (fetch.has('user_status')) out.user_status = spectator ? {} : await allStatuses(db, r.realm.id);
  if (fetch.has('recent_private_conversations')) out.recent_private_conversations = await recentDirect(db, me.id);
  if (fetch.has('alert_words')) out.alert_words = await alertWords(db, me.id);
  if (fetch.has('starred_messages')) {
    out.starred_messages = (await sql<{ id: number }>`select message_id as id from user_messages where user_id = ${me.id} and (flags & ${FLAG.starred}) <> 0 order by message_id`.execute(db)).rows.map(
      (x) => Number(x.id),
    );
  }
  // Spectators see no profiles, so no fields either (as Zulip); the types are for everyone.
  if (fetch.has('custom_profile_fields')) Object.assign(out, { custom_profile_fields: spectator ? [] : await fieldObjects(db, r.realm.id), custom_profile_field_types: customProfileFieldTypes() });
  if (fetch.has('realm_playgrounds')) out.realm_playgrounds = await playgroundObjects(db, r.realm.id);
  // A spectator has no snippets of its own.
  if (fetch.has('saved_snippets')) out.saved_snippets = spectator ? [] : await snippetsOf(db, me.id);
  if (fetch.has('scheduled_messages')) out.scheduled_messages = spectator ? [] : await pendingScheduled(db, me.id);
  for (const [key, empty] of Object.entries(EMPTY_FEATURE_STATE)) if (fetch.has(key)) Object.assign(out, structuredClone(empty));
  Object.assign(out, await preferencesState(db, r));
  return out;
}

const PREFERENCE_STATE = ['user_settings', 'update_display_settings', 'update_global_notifications', 'realm_user_settings_defaults', 'drafts', 'muted_users', 'user_topic', 'muted_topics'];

/** The user's own preferences: settings, the realm's defaults, drafts, muted users and topics. */
async function preferencesState(db: Queryable<ChatTables>, r: StateRequest): Promise<Record<string, unknown>> {
  const { fetch } = r;
  const out: Record<string, unknown> = {};
  if (!PREFERENCE_STATE.some((t) => fetch.has(t))) return out;
  // The row as committed now: the authenticated one may predate a settings change.
  const me = (await db.selectFrom('chat_users').selectAll().where('id', '=', r.me.id).executeTakeFirst()) ?? r.me;
  if (fetch.has('user_settings')) out.user_settings = userSettingsObject(me);
  if (!r.userSettingsObject) {
    if (fetch.has('update_display_settings')) Object.assign(out, legacySettingsFields(me, 'display'));
    if (fetch.has('update_global_notifications')) Object.assign(out, legacySettingsFields(me, 'notification'));
  }
  if (fetch.has('realm_user_settings_defaults')) out.realm_user_settings_defaults = await realmDefaultsObject(db, r.realm.id);
  if (fetch.has('drafts')) out.drafts = await draftsOf(db, me.id, MAX_DRAFTS_IN_REGISTER);
  if (fetch.has('muted_users')) out.muted_users = await mutedUsersOf(db, me.id);
  if (fetch.has('user_topic')) {
    out.user_topics = (await userTopicsOf(db, me.id)).map((t) => ({ ...t, topic_name: displayTopic(t.topic_name, r.emptyTopicName) }));
  }
  if (fetch.has('muted_topics')) out.muted_topics = (await mutedTopicsOf(db, me.id)).map(([s, t, at]) => [s, displayTopic(t, r.emptyTopicName), at]);
  return out;
}

interface Unread {
  id: number;
  stream_id: number | null;
  topic: string;
  sender_id: number;
  direct_key: string | null;
  flags: number;
}

/** unread_msgs: the user's unread copies, in subscribed channels (Zulip's rule) and direct messages. */
async function unreadMessages(db: Queryable<ChatTables>, me: ChatUser, emptyTopicName: boolean): Promise<Record<string, unknown>> {
  // Received (a row, or a subscription span: domain/receipt.ts) and not read; a span without a row is unread.
  const rows = (
    await sql<Unread>`select m.id, m.stream_id, m.topic, m.sender_id, r.direct_key, coalesce(um.flags, 0) as flags from messages m
    join recipients r on r.id = m.recipient_id
    left join user_messages um on um.message_id = m.id and um.user_id = ${me.id}
    where ${receivedSql(me.id)} and (coalesce(um.flags, 0) & ${FLAG.read}) = 0
      and (m.stream_id is null or exists (select 1 from subscriptions s where s.stream_id = m.stream_id and s.user_id = ${me.id} and s.active = 1))
    order by m.id`.execute(db)
  ).rows.map((x) => ({ ...x, id: Number(x.id), flags: Number(x.flags) }));
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  for (const m of rows) {
    if (m.flags & (FLAG.mentioned | FLAG.stream_wildcard_mentioned | FLAG.topic_wildcard_mentioned)) mentions.push(m.id);
    if (m.stream_id !== null) {
      const key = `${m.stream_id}\u0000${m.topic.toLowerCase()}`;
      let g = streams.get(key);
      if (!g) streams.set(key, (g = { stream_id: Number(m.stream_id), topic: displayTopic(m.topic, emptyTopicName), unread_message_ids: [] }));
      g.unread_message_ids.push(m.id);
      continue;
    }
    const ids = m.direct_key!.split(',').map(Number);
    if (ids.length <= 2) {
      const other = ids.find((id) => id !== me.id) ?? me.id;
      (pms.get(other) ?? pms.set(other, []).get(other)!).push(m.id);
    } else {
      (huddles.get(m.direct_key!) ?? huddles.set(m.direct_key!, []).get(m.direct_key!)!).push(m.id);
    }
  }
  return {
    count: rows.length,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: false,
  };
}

/** Direct conversations by their latest message, newest first (Zulip keeps the latest 1000). */
async function recentDirect(db: Queryable<ChatTables>, meId: number): Promise<Record<string, unknown>[]> {
  const rows = (
    await sql<{ direct_key: string; max_id: number }>`select r.direct_key, max(m.id) as max_id from user_messages um
    join messages m on m.id = um.message_id join recipients r on r.id = m.recipient_id
    where um.user_id = ${meId} and m.stream_id is null group by r.direct_key order by max(m.id) desc limit 1000`.execute(db)
  ).rows;
  return rows.map((x) => ({
    max_message_id: Number(x.max_id),
    user_ids: x.direct_key
      .split(',')
      .map(Number)
      .filter((id) => id !== meId),
  }));
}

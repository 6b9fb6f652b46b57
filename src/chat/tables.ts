// Row types of the Chat tables, as Kysely sees them (DDL: chat/migrations/, from 003_chat_core.ts on).
// Booleans are stored as 0/1 integers.
import type { Generated, Selectable } from 'kysely';

export interface RealmRow {
  id: Generated<number>;
  string_id: string;
  name: string;
  description: string;
  email_host: string;
  date_created: number;
  // Who may edit, move and delete messages (migration 012). Limits in seconds, null for none;
  // group settings as JSON group-setting values, null for Zulip's default group (message-rules.ts).
  allow_message_editing: Generated<number>;
  message_content_edit_limit_seconds: Generated<number | null>;
  move_messages_within_stream_limit_seconds: Generated<number | null>;
  move_messages_between_streams_limit_seconds: Generated<number | null>;
  message_content_delete_limit_seconds: Generated<number | null>;
  /** 'all', 'moves' or 'none'. */
  message_edit_history_visibility_policy: Generated<string>;
  can_move_messages_between_topics_group: Generated<string | null>;
  can_move_messages_between_channels_group: Generated<string | null>;
  can_resolve_topics_group: Generated<string | null>;
  can_delete_any_message_group: Generated<string | null>;
  can_delete_own_message_group: Generated<string | null>;
  // Migration 14: the description as HTML (server_settings), the organization language, and the
  // group permissions over user groups (null for Zulip's default group: realm-settings.ts).
  rendered_description: Generated<string>;
  default_language: Generated<string>;
  can_create_groups: Generated<string | null>;
  can_manage_all_groups: Generated<string | null>;
  // Migration 15: spectator (web-public) access, and who may make channels web-public.
  enable_spectator_access: Generated<number>;
  can_create_web_public_channel_group: Generated<string | null>;
  // Migration 16: who may create public and private channels and subscribe others.
  can_create_public_channel_group: Generated<string | null>;
  can_create_private_channel_group: Generated<string | null>;
  can_add_subscribers_group: Generated<string | null>;
  // Migration 17: 1 while the realm is deactivated (domain/realm.ts setRealmDeactivated).
  deactivated: Generated<number>;
  // Migration 18: topics required for channel messages; members' own name and email changes refused.
  mandatory_topics: Generated<number>;
  name_changes_disabled: Generated<number>;
  email_changes_disabled: Generated<number>;
  require_unique_names: Generated<number>;
  direct_message_initiator_group: Generated<string | null>;
  direct_message_permission_group: Generated<string | null>;
  // Migration 27: whether GET /messages/{id}/read_receipts answers (domain/read-receipts.ts).
  enable_read_receipts: Generated<number>;
  // Migration 29: who may invite by e-mail and make reusable links; whether joining needs an invitation.
  can_invite_users_group: Generated<string | null>;
  create_multiuse_invite_group: Generated<string | null>;
  invite_required: Generated<number>;
}

export interface ChatUserRow {
  id: Generated<number>;
  realm_id: number;
  email: string;
  email_lower: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: number;
  is_bot: number;
  bot_type: number | null;
  bot_owner_id: number | null;
  password_hash: string | null;
  api_key_hash: string;
  /** The API key encrypted with the server's chat key (see domain/api-keys.ts); only auth reads it. */
  api_key_sealed: string;
  timezone: string;
  avatar_version: number;
  settings: string;
  /** Milliseconds since the epoch (date_joined is an ISO time with fractions on the wire). */
  date_joined: number;
}

export interface UserGroupRow {
  id: Generated<number>;
  realm_id: number;
  name: string;
  description: string;
  is_system_group: number;
  deactivated: number;
  date_created: number;
  creator_id: number | null;
  /** Group-setting values as JSON (see domain/groups.ts); null for system groups, whose settings are fixed. */
  can_add_members_group: string | null;
  can_join_group: string | null;
  can_leave_group: string | null;
  can_manage_group: string | null;
  can_mention_group: string | null;
  can_remove_members_group: string | null;
}

/** A linkifier: a pattern (Python regex syntax) and an RFC 6570 URL template; applied by sort_order. */
export interface RealmLinkifierRow {
  id: Generated<number>;
  realm_id: number;
  pattern: string;
  url_template: string;
  sort_order: number;
}

/** A custom emoji; the image is in the file store under file_name. */
export interface RealmEmojiRow {
  id: Generated<number>;
  realm_id: number;
  name: string;
  author_id: number | null;
  file_name: string;
  is_animated: number;
  deactivated: number;
  date_created: number;
}

export interface RecipientRow {
  id: Generated<number>;
  /** 'stream' or 'direct'. */
  kind: string;
  /** For direct conversations: the sorted participant ids joined by commas. */
  direct_key: string | null;
}

export interface StreamRow {
  id: Generated<number>;
  realm_id: number;
  recipient_id: number;
  name: string;
  name_lower: string;
  description: string;
  rendered_description: string;
  invite_only: number;
  is_web_public: number;
  history_public_to_subscribers: number;
  message_retention_days: number | null;
  creator_id: number | null;
  is_archived: number;
  /** Group-setting values as JSON: a group id, or {direct_members, direct_subgroups}. */
  can_add_subscribers_group: string;
  can_remove_subscribers_group: string;
  can_administer_channel_group: string;
  can_send_message_group: string;
  can_subscribe_group: string;
  date_created: number;
}

export interface SubscriptionRow {
  id: Generated<number>;
  user_id: number;
  stream_id: number;
  active: number;
  color: string;
  is_muted: number;
  pin_to_top: number;
  desktop_notifications: number | null;
  email_notifications: number | null;
  push_notifications: number | null;
  audible_notifications: number | null;
  wildcard_mentions_notify: number | null;
}

export interface MessageRow {
  id: Generated<number>;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  stream_id: number | null;
  topic: string;
  content: string;
  rendered_content: string;
  /** The lexemes search matches (platform/db/fulltext.ts searchText of topic and rendered_content). */
  search_text: string;
  client: string;
  /** Unix seconds. */
  date_sent: number;
  /** JSON list of edit history entries, newest first (the message object's edit_history); null if never edited. */
  edit_history: Generated<string | null>;
  /** Unix seconds of the last content edit, and of the last move. */
  last_edit_time: Generated<number | null>;
  last_moved_time: Generated<number | null>;
}

export interface ReactionRow {
  id: Generated<number>;
  message_id: number;
  user_id: number;
  /** unicode_emoji, realm_emoji or zulip_extra_emoji. */
  reaction_type: string;
  emoji_code: string;
  emoji_name: string;
}

export interface UserMessageRow {
  user_id: number;
  message_id: number;
  flags: number;
}

/** Unix seconds; written in batches from the in-memory presence map (domain/presence.ts). */
export interface UserPresenceRow {
  user_id: number;
  realm_id: number;
  last_active_time: number | null;
  last_connected_time: number;
  last_update_id: number;
}

export interface UserStatusRow {
  user_id: number;
  realm_id: number;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  /** Unix seconds of the last change. */
  timestamp: number;
}

/** A range of message ids a subscriber received in a channel: after < id <= until (open while subscribed). */
export interface SubscriptionSpanRow {
  user_id: number;
  stream_id: number;
  after_message_id: number;
  until_message_id: number | null;
}

/**
 * An event queue saved by a graceful shutdown (chat/events/persist.ts). JSON in the text columns;
 * booleans as 0/1; times are clock milliseconds.
 */
export interface SavedQueueRow {
  queue_id: string;
  user_id: number;
  realm_id: number;
  /** JSON list, or null for every type. */
  event_types: string | null;
  narrow: string;
  all_public_streams: number;
  apply_markdown: number;
  client_gravatar: number;
  client_capabilities: string;
  acknowledged_id: number;
  next_event_id: number;
  /** JSON list of the unacknowledged events, as the queue would send them. */
  events: string;
  last_activity: number;
  saved_at: number;
}

/** A synchronised draft; `to_ids` is a JSON list (a channel id, or user ids). Unix seconds. */
export interface DraftRow {
  id: Generated<number>;
  user_id: number;
  /** '', 'stream' or 'private'. */
  type: string;
  to_ids: string;
  topic: string;
  content: string;
  last_edit_time: number;
}

/** A topic's visibility policy for a user: 1 muted, 2 unmuted, 3 followed (0 is no row). */
export interface UserTopicRow {
  user_id: number;
  stream_id: number;
  topic: string;
  topic_lower: string;
  visibility_policy: number;
  /** Unix seconds. */
  last_updated: number;
}

/** An uploaded file (migration 26); the bytes are in the file store under path_id. create_time in Unix seconds. */
export interface AttachmentRow {
  id: Generated<number>;
  realm_id: number;
  owner_id: number;
  /** `<realm id>/<random>/<sanitised file name>`: the key in the file store and the tail of its URL. */
  path_id: string;
  file_name: string;
  content_type: string | null;
  size: number;
  create_time: number;
  is_realm_public: Generated<number>;
  is_web_public: Generated<number>;
}

/** Migration 27: a realm's custom profile field; field_data is the JSON text Zulip sends ('' for none). */
export interface CustomProfileFieldRow {
  id: Generated<number>;
  realm_id: number;
  name: string;
  hint: string;
  field_type: number;
  field_data: string;
  sort_order: number;
  display_in_profile_summary: number;
  required: number;
  editable_by_user: number;
}

/** A realm data export (migration 31): Zulip's status numbers (1 requested … 5 deleted); times in clock milliseconds. */
export interface RealmExportRow {
  id: Generated<number>;
  realm_id: number;
  acting_user_id: number | null;
  /** 1 public, 2 full with consent (Zulip's export_type). */
  type: number;
  status: number;
  date_requested: number;
  date_started: number | null;
  date_succeeded: number | null;
  date_failed: number | null;
  date_deleted: number | null;
  /** The tarball's key in the file store, once written. */
  export_path: string | null;
  sha256sum_hex: string | null;
  tarball_size_bytes: number | null;
}

export interface ChatTables {
  server_secrets: { name: string; value: string };
  realms: RealmRow;
  chat_users: ChatUserRow;
  user_groups: UserGroupRow;
  user_group_members: { group_id: number; user_id: number };
  user_group_subgroups: { group_id: number; subgroup_id: number };
  recipients: RecipientRow;
  streams: StreamRow;
  subscriptions: SubscriptionRow;
  subscription_spans: SubscriptionSpanRow;
  messages: MessageRow;
  user_messages: UserMessageRow;
  reactions: ReactionRow;
  default_streams: { realm_id: number; stream_id: number };
  user_presence: UserPresenceRow;
  user_status: UserStatusRow;
  chat_event_queues: SavedQueueRow;
  realm_linkifiers: RealmLinkifierRow;
  realm_emoji: RealmEmojiRow;
  alert_words: { id: Generated<number>; realm_id: number; user_id: number; word: string; word_lower: string };
  /** The settings JSON new users of the realm start with (only what an administrator set). */
  realm_user_settings_defaults: { realm_id: number; settings: string };
  drafts: DraftRow;
  /** Unix seconds. */
  muted_users: { user_id: number; muted_user_id: number; date_muted: number };
  user_topics: UserTopicRow;
  attachments: AttachmentRow;
  attachment_messages: { attachment_id: number; message_id: number };
  custom_profile_fields: CustomProfileFieldRow;
  custom_profile_field_values: { user_id: number; field_id: number; value: string; rendered_value: string | null };
  realm_playgrounds: { id: Generated<number>; realm_id: number; name: string; pygments_language: string; url_template: string };
  /** date_created in Unix seconds. */
  saved_snippets: { id: Generated<number>; realm_id: number; user_id: number; title: string; content: string; date_created: number };
  push_devices: PushDeviceRow;
  invites: InviteRow;
  invite_sends: { id: Generated<number>; realm_id: number; sent_at: number };
  channel_email_addresses: ChannelEmailAddressRow;
  scheduled_messages: ScheduledMessageRow;
  realm_exports: RealmExportRow;
}

export type ChatUser = Selectable<ChatUserRow>;
export type Realm = Selectable<RealmRow>;
export type Stream = Selectable<StreamRow>;
export type Message = Selectable<MessageRow>;
export type UserGroup = Selectable<UserGroupRow>;

/** A device registered for push notifications (migration 28); kind 1 is APNs, 2 FCM. */
export interface PushDeviceRow {
  id: Generated<number>;
  user_id: number;
  kind: number;
  token: string;
  token_hash: string;
  ios_app_id: string | null;
  /** Unix seconds. */
  last_updated: number;
}

/** An e-mail invitation or reusable link (migration 29; domain/invites.ts). Times in Unix seconds. */
export interface InviteRow {
  id: Generated<number>;
  realm_id: number;
  referred_by: number;
  is_multiuse: number;
  /** E-mail invitations only. */
  email: string | null;
  email_lower: string | null;
  invited_as: number;
  /** JSON arrays of ids. */
  stream_ids: string;
  group_ids: string;
  include_realm_default_subscriptions: number;
  notify_referrer_on_join: number;
  confirmation_key: string;
  invited_at: number;
  /** Null: never expires. */
  expires_at: number | null;
  /** 0 active, 1 used, 2 revoked (Zulip's confirmation statuses). */
  status: Generated<number>;
  created_user_id: number | null;
}
export type Invite = Selectable<InviteRow>;

/** A channel's e-mail token for one creator and sender (migration 29; Zulip's ChannelEmailAddress). */
export interface ChannelEmailAddressRow {
  id: Generated<number>;
  realm_id: number;
  stream_id: number;
  creator_id: number;
  sender_id: number;
  email_token: string;
  date_created: number;
}
/** A scheduled message (migration 30): `kind` 'stream' or 'private'; `to_ids` a direct message's recipients as Zulip lists them. */
export interface ScheduledMessageRow {
  id: Generated<number>;
  realm_id: number;
  sender_id: number;
  kind: string;
  stream_id: number | null;
  /** Comma-separated user ids (direct messages), '' for a channel message. */
  to_ids: string;
  topic: string;
  content: string;
  rendered_content: string;
  client: string;
  /** Unix seconds. */
  scheduled_timestamp: number;
  read_by_sender: number;
  delivered: Generated<number>;
  delivered_message_id: number | null;
  failed: Generated<number>;
  failure_message: string | null;
}
export type ScheduledMessage = Selectable<ScheduledMessageRow>;
// Migration 28 (uploaded images, endpoints/images.ts): declared here, merged into the row types above.
export interface ChatUserRow {
  /** The uploaded avatar's files in the file store (`avatars/<path>.png` ...); null for the hash-based one. */
  avatar_path: Generated<string | null>;
}
export interface RealmRow {
  /** 'G' (hash-based) or 'U' (uploaded), and the version in the icon's URL. */
  icon_source: Generated<string>;
  icon_version: Generated<number>;
  /** 'D' (Zulip's default) or 'U' (uploaded), for the day and the night logo. */
  logo_source: Generated<string>;
  logo_version: Generated<number>;
  night_logo_source: Generated<string>;
  night_logo_version: Generated<number>;
}
// Migration 35 (browser sessions, domain/sessions.ts): declared here, merged into ChatTables above.
export interface ChatSessionRow {
  id: Generated<number>;
  /** SHA-256 (hex) of the `sessionid` cookie's token. */
  token_hash: string;
  user_id: number;
  realm_id: number;
  /** Unix milliseconds. */
  created_at: number;
  expires_at: number;
}
export interface ChatTables {
  chat_sessions: ChatSessionRow;
}

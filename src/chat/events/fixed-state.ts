// The parts of POST /register's state that no table holds: the realm settings and server facts
// whose value follows from what Keel serves and how it decides, and the keys of features Keel does
// not serve, at their empty values. Clients (the mobile app's snapshot parser above all) expect every
// key of the `realm` section; a key left out is worse than an honest "off".
import type { Realm } from '../tables.js';
import { DEFAULT_EXTERNAL_ACCOUNTS } from '../domain/profile-fields.js';
import { realmIconUrl, realmLogoUrl } from '../domain/images.js';

/** When this process started (Zulip's SERVER_GENERATION): clients put it in error reports. */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/** Zulip's legacy policy numbers, for the deprecated `*_policy` keys derived from group settings. */
const CREATE_WEB_PUBLIC_POLICY: Record<string, number> = { 'role:administrators': 2, 'role:moderators': 4, 'role:nobody': 6, 'role:owners': 7 };
/**
 * Zulip's CommonPolicyEnum, for create_public/private_stream_policy. A setting the old numbers cannot
 * say (owners, nobody, a custom group) is shown as the nearest stricter one, administrators only.
 */
const COMMON_POLICY: Record<string, number> = { 'role:members': 1, 'role:administrators': 2, 'role:fullmembers': 3, 'role:moderators': 4 };
const ADMINS_ONLY = 2;

/**
 * The `realm` section's keys Keel decides by fixed rules. `groups` are the realm's system groups by
 * name; `settings` the realm settings as register shows them (realm-settings.ts), from which the
 * deprecated policy numbers are derived.
 */
export function fixedRealmState(realm: Realm, groups: Map<string, number>, settings: Record<string, unknown>): Record<string, unknown> {
  const group = (name: string) => groups.get(name)!;
  // The system group a group setting holds, by name; undefined for a custom (anonymous) group.
  const systemName = (setting: string) => [...groups].find(([, id]) => id === settings[setting])?.[0];
  const commonPolicy = (setting: string) => COMMON_POLICY[systemName(setting) ?? ''] ?? ADMINS_ONLY;
  return {
    realm_date_created: realm.date_created,
    // Zulip's defaults: no realm is deleted sooner than 14 days after deactivation, none has a limit.
    server_min_deactivated_realm_deletion_days: 14,
    server_max_deactivated_realm_deletion_days: null,
    // Keel's fixed rules: members create bots (endpoints/bots.ts); wildcard mentions are not
    // restricted; everyone sees every user of the realm.
    realm_can_create_bots_group: group('role:members'),
    realm_can_create_write_only_bots_group: group('role:members'),
    realm_can_mention_many_users_group: group('role:everyone'),
    realm_can_access_all_users_group: group('role:everyone'),
    // Zulip's default, which Keel does not let realms change (endpoints/images.ts).
    realm_can_add_custom_emoji_group: group('role:members'),
    realm_can_manage_billing_group: group('role:nobody'),
    realm_can_summarize_topics_group: group('role:nobody'),
    // The deprecated policy numbers of the channel settings and of the rules above (1: everyone may mention many).
    realm_create_public_stream_policy: commonPolicy('realm_can_create_public_channel_group'),
    realm_create_private_stream_policy: commonPolicy('realm_can_create_private_channel_group'),
    realm_create_web_public_stream_policy: CREATE_WEB_PUBLIC_POLICY[systemName('realm_can_create_web_public_channel_group') ?? 'role:owners'] ?? 7,
    realm_wildcard_mention_policy: 1,
    // Accounts are made by administrators (`keel admin`, POST /users) and by invitation (domain/invites.ts); Keel stores no avatars.
    // (Whether members change their own name and email, whether names are unique and whether topics
    // are required are realm settings: domain/realm-settings.ts.)
    realm_emails_restricted_to_domains: false,
    realm_disallow_disposable_email_addresses: true,
    realm_avatar_changes_disabled: false,
    realm_waiting_period_threshold: 0,
    realm_presence_disabled: false,
    realm_enable_guest_user_indicator: true,
    realm_enable_guest_user_dm_warning: true,
    realm_default_code_block_language: '',
    realm_bot_domain: realm.email_host,
    realm_authentication_methods: { Email: { enabled: true, available: true } },
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_is_zephyr_mirror_realm: false,
    // Keel sends no email, pushes no notifications, embeds no previews, calls and GIFs.
    realm_digest_emails_enabled: false,
    realm_digest_weekday: 1,
    settings_send_digest_emails: false,
    realm_send_welcome_emails: false,
    realm_message_content_allowed_in_email_notifications: true,
    realm_push_notifications_enabled: false,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_inline_image_preview: true,
    realm_inline_url_embed_preview: false,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: [],
    realm_video_chat_provider: 0,
    realm_available_video_chat_providers: { disabled: { name: 'None', id: 0 } },
    realm_jitsi_server_url: null,
    server_jitsi_server_url: null,
    realm_giphy_rating: 0,
    giphy_rating_options: { disabled: { name: 'GIPHY integration disabled', id: 0 } },
    server_can_summarize_topics: false,
    // Uploaded (endpoints/images.ts), else Zulip's defaults: a Gravatar identicon, Zulip's logo.
    realm_icon_url: realmIconUrl(realm),
    realm_icon_source: realm.icon_source,
    realm_logo_url: realmLogoUrl(realm, false),
    realm_logo_source: realm.logo_source,
    realm_night_logo_url: realmLogoUrl(realm, true),
    realm_night_logo_source: realm.night_logo_source,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    max_avatar_file_size_mib: 5,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    // A self-hosted server without a plan or organization type, and no automated announcements.
    realm_upload_quota_mib: null,
    realm_org_type: 0,
    realm_plan_type: 1,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: '',
    realm_want_advertise_in_communities_directory: false,
    realm_moderation_request_channel_id: -1,
    realm_new_stream_announcements_stream_id: -1,
    realm_signup_announcements_stream_id: -1,
    realm_zulip_update_announcements_stream_id: -1,
    // Zulip's default external account types for custom profile fields.
    realm_default_external_accounts: structuredClone(DEFAULT_EXTERNAL_ACCOUNTS),
    development_environment: false,
    server_generation: SERVER_GENERATION,
    server_needs_upgrade: false,
    // PATCH /settings' password rule (endpoints/settings.ts), as Zulip's settings state it.
    password_min_length: 6,
    password_max_length: 100,
    password_min_guesses: 10000,
  };
}

/** The fetch_event_types of features Keel does not serve, each with its empty state. */
export const EMPTY_FEATURE_STATE: Record<string, Record<string, unknown>> = {
  realm_domains: { realm_domains: [] },
  default_stream_groups: { realm_default_stream_groups: [] },
  onboarding_steps: { onboarding_steps: [], navigation_tour_video_url: null },
  stop_words: { stop_words: [] },
  realm_embedded_bots: { realm_embedded_bots: [] },
  realm_incoming_webhook_bots: { realm_incoming_webhook_bots: [] },
  video_calls: { has_zoom_token: false },
  giphy: { giphy_api_key: '' },
  realm_billing: { realm_billing: { has_pending_sponsorship_request: false } },
};

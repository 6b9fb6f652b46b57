// Personal settings (PATCH /settings, POST /register user_settings) and the realm's defaults for new
// users (PATCH /realm/user_settings_defaults): one catalogue with each setting's type, allowed
// values, Zulip's default, and the legacy event that announced it before feature level 89.
// A user's settings JSON holds only what was set for them (by themselves, or copied from the realm
// defaults when they joined); anything absent reads as Zulip's default.
import type { Queryable } from '../../platform/db/database.js';
import type { ChatTables, ChatUser } from '../tables.js';
import { invalidBatchingPeriod, invalidNotificationSound, paramInvalid, paramNotInList, paramNotTimezone } from '../errors.js';

type Kind = 'boolean' | 'integer' | 'string';

/** Which pre-level-89 event announced a change (its register field's "Present if" in the YAML). */
type Legacy = 'display' | 'notification' | null;

interface Setting {
  kind: Kind;
  fallback: boolean | number | string;
  /** Allowed values, checked with Zulip's "Invalid <name>" error. */
  values?: readonly (number | string)[];
  legacy: Legacy;
  /** Not settable through PATCH /realm/user_settings_defaults (still shown in the defaults). */
  userOnly?: boolean;
}

const bool = (fallback: boolean, legacy: Legacy = null): Setting => ({ kind: 'boolean', fallback, legacy });
const oneOf = (fallback: number, values: readonly number[], legacy: Legacy = null): Setting => ({ kind: 'integer', fallback, values, legacy });
const POLICY_1_TO_3 = [1, 2, 3] as const;
const POLICY_1_TO_4 = [1, 2, 3, 4] as const;

export const EMOJISETS = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
] as const;

export const NOTIFICATION_SOUNDS = ['chime', 'ding', 'zulip'] as const;

/** Language codes a user may choose; their English names come from Intl. */
export const LANGUAGES = [
  'ar',
  'be',
  'bg',
  'bn',
  'ca',
  'cs',
  'cy',
  'da',
  'de',
  'el',
  'en',
  'en-gb',
  'eo',
  'es',
  'fa',
  'fi',
  'fr',
  'gl',
  'gu',
  'hi',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'lt',
  'ml',
  'mn',
  'nl',
  'no',
  'pl',
  'pt',
  'pt-br',
  'pt-pt',
  'ro',
  'ru',
  'si',
  'sr',
  'sv',
  'ta',
  'te',
  'tl',
  'tr',
  'uk',
  'uz',
  'vi',
  'zh-hans',
  'zh-hant',
] as const;

const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language' });

export function languageName(code: string): string {
  return (
    LANGUAGE_NAMES.of(
      code
        .replace(/-(gb|br|pt)$/, (s) => s.toUpperCase())
        .replace(/-hans$/, '-Hans')
        .replace(/-hant$/, '-Hant'),
    ) ?? code
  );
}

/** Zulip 10's defaults (zerver/models: UserBaseSettings), in the order the register response lists them. */
export const SETTINGS: Record<string, Setting> = {
  twenty_four_hour_time: bool(false, 'display'),
  web_mark_read_on_scroll_policy: oneOf(1, POLICY_1_TO_3),
  web_channel_default_view: oneOf(1, [1, 2]),
  starred_message_counts: bool(true, 'display'),
  receives_typing_notifications: bool(true),
  web_suggest_update_timezone: bool(true),
  fluid_layout_width: bool(false, 'display'),
  high_contrast_mode: bool(false, 'display'),
  web_font_size_px: { kind: 'integer', fallback: 16, legacy: null },
  web_line_height_percent: { kind: 'integer', fallback: 140, legacy: null },
  color_scheme: oneOf(1, POLICY_1_TO_3, 'display'),
  translate_emoticons: bool(false, 'display'),
  display_emoji_reaction_users: bool(true),
  default_language: { kind: 'string', fallback: 'en', values: LANGUAGES, legacy: 'display', userOnly: true },
  web_home_view: { kind: 'string', fallback: 'inbox', values: ['recent_topics', 'inbox', 'all_messages'], legacy: 'display' },
  web_escape_navigates_to_home_view: bool(true),
  left_side_userlist: bool(false, 'display'),
  emojiset: { kind: 'string', fallback: 'google', values: EMOJISETS.map((e) => e.key), legacy: 'display' },
  demote_inactive_streams: oneOf(1, POLICY_1_TO_3, 'display'),
  user_list_style: oneOf(2, POLICY_1_TO_3),
  web_animate_image_previews: { kind: 'string', fallback: 'on_hover', values: ['always', 'on_hover', 'never'], legacy: null },
  web_stream_unreads_count_display_policy: oneOf(2, POLICY_1_TO_3),
  hide_ai_features: bool(false),
  // Kept in chat_users.timezone (the user object shows it); listed here for its checks and events.
  timezone: { kind: 'string', fallback: '', legacy: 'display', userOnly: true },
  enter_sends: bool(false, 'display'),
  enable_drafts_synchronization: bool(true, 'display'),
  enable_stream_desktop_notifications: bool(false, 'notification'),
  enable_stream_email_notifications: bool(false, 'notification'),
  enable_stream_push_notifications: bool(false, 'notification'),
  enable_stream_audible_notifications: bool(false, 'notification'),
  notification_sound: { kind: 'string', fallback: 'zulip', legacy: 'notification' },
  enable_desktop_notifications: bool(true, 'notification'),
  enable_sounds: bool(true, 'notification'),
  enable_followed_topic_desktop_notifications: bool(true),
  enable_followed_topic_email_notifications: bool(true),
  enable_followed_topic_push_notifications: bool(true),
  enable_followed_topic_audible_notifications: bool(true),
  email_notifications_batching_period_seconds: { kind: 'integer', fallback: 120, legacy: 'notification' },
  enable_offline_email_notifications: bool(true, 'notification'),
  enable_offline_push_notifications: bool(true, 'notification'),
  enable_online_push_notifications: bool(true, 'notification'),
  enable_digest_emails: bool(true, 'notification'),
  enable_marketing_emails: bool(true, 'notification'),
  enable_login_emails: bool(true, 'notification'),
  message_content_in_email_notifications: bool(true, 'notification'),
  pm_content_in_desktop_notifications: bool(true, 'notification'),
  wildcard_mentions_notify: bool(true, 'notification'),
  enable_followed_topic_wildcard_mentions_notify: bool(true),
  desktop_icon_count_display: oneOf(1, POLICY_1_TO_4, 'notification'),
  realm_name_in_email_notifications_policy: oneOf(1, POLICY_1_TO_3, 'notification'),
  automatically_follow_topics_policy: oneOf(3, POLICY_1_TO_4),
  automatically_unmute_topics_in_muted_streams_policy: oneOf(2, POLICY_1_TO_4),
  automatically_follow_topics_where_mentioned: bool(true),
  presence_enabled: bool(true, 'notification'),
  send_private_typing_notifications: bool(true),
  send_stream_typing_notifications: bool(true),
  send_read_receipts: bool(true),
  allow_private_data_export: { ...bool(false), userOnly: true },
  email_address_visibility: oneOf(1, [1, 2, 3, 4, 5]),
  web_navigate_to_sent_message: bool(true),
};

export const SETTING_NAMES = Object.keys(SETTINGS);
/** What PATCH /realm/user_settings_defaults accepts. */
export const DEFAULTS_SETTING_NAMES = SETTING_NAMES.filter((n) => !SETTINGS[n].userOnly);

export type SettingValue = boolean | number | string;

/** Zulip's checks on one value (its type already decoded); answers the value to store. */
export function checkSetting(name: string, value: SettingValue): SettingValue {
  const s = SETTINGS[name];
  // Zulip checks default_language by hand (zerver/views/user_settings.py), the other lists with
  // check_int_in / check_string_in validators, whose message says why.
  if (s.values && !s.values.includes(value as never)) throw (name === 'default_language' ? paramInvalid : paramNotInList)({ name, var_name: name });
  if (name === 'timezone' && !isTimezone(value as string)) throw paramNotTimezone({ name, var_name: name });
  if (name === 'notification_sound' && value !== 'none' && !NOTIFICATION_SOUNDS.includes(value as never)) throw invalidNotificationSound({ sound: String(value) });
  if (name === 'email_notifications_batching_period_seconds' && ((value as number) < 60 || (value as number) > 7 * 24 * 3600)) {
    throw invalidBatchingPeriod({ seconds: String(value) });
  }
  return value;
}

function isTimezone(name: string): boolean {
  if (name === '') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export function storedSettings(json: string): Record<string, SettingValue> {
  return JSON.parse(json) as Record<string, SettingValue>;
}

/** One setting of a user, or Zulip's default. */
export function settingOf(user: Pick<ChatUser, 'settings' | 'timezone'>, name: string): SettingValue {
  if (name === 'timezone') return user.timezone;
  const v = storedSettings(user.settings)[name];
  return v ?? SETTINGS[name].fallback;
}

/** The user_settings object of POST /register. */
export function userSettingsObject(user: Pick<ChatUser, 'settings' | 'timezone'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) out[name] = settingOf(user, name);
  return { ...out, available_notification_sounds: [...NOTIFICATION_SOUNDS], emojiset_choices: EMOJISETS.map((e) => ({ ...e })) };
}

/** The legacy top-level register fields for clients without user_settings_object. */
export function legacySettingsFields(user: Pick<ChatUser, 'settings' | 'timezone'>, which: 'display' | 'notification'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) if (SETTINGS[name].legacy === which) out[name] = settingOf(user, name);
  if (which === 'display') out.emojiset_choices = EMOJISETS.map((e) => ({ ...e }));
  else out.available_notification_sounds = [...NOTIFICATION_SOUNDS];
  return out;
}

export function legacyEventOf(name: string): Legacy {
  return SETTINGS[name]?.legacy ?? null;
}

export async function realmDefaultsStored(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, SettingValue>> {
  const row = await db.selectFrom('realm_user_settings_defaults').select('settings').where('realm_id', '=', realmId).executeTakeFirst();
  return row ? storedSettings(row.settings) : {};
}

/** realm_user_settings_defaults of POST /register: every default, as set or Zulip's. */
export async function realmDefaultsObject(db: Queryable<ChatTables>, realmId: number): Promise<Record<string, unknown>> {
  const stored = await realmDefaultsStored(db, realmId);
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) if (name !== 'timezone') out[name] = stored[name] ?? SETTINGS[name].fallback;
  return { ...out, available_notification_sounds: [...NOTIFICATION_SOUNDS], emojiset_choices: EMOJISETS.map((e) => ({ ...e })) };
}

export async function saveRealmDefaults(db: Queryable<ChatTables>, realmId: number, settings: Record<string, SettingValue>): Promise<void> {
  const json = JSON.stringify(settings);
  const found = await db.updateTable('realm_user_settings_defaults').set({ settings: json }).where('realm_id', '=', realmId).executeTakeFirst();
  if (Number(found.numUpdatedRows) === 0) await db.insertInto('realm_user_settings_defaults').values({ realm_id: realmId, settings: json }).execute();
}
